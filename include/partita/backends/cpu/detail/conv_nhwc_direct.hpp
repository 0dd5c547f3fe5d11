#pragma once
/// cpu conv2d of few input channels (a network's first layer) writing NHWC directly: a
/// position's output channels in the vector lanes, every input value broadcast.
#include <algorithm>
#include <cstddef>

#include "partita/backends/cpu/detail/conv.hpp"
#include "partita/backends/cpu/detail/conv_channels_last.hpp"
#include "partita/backends/cpu/detail/epilogue.hpp"

namespace partita::detail::cpu {

/// True for the convolutions that write NHWC directly, a position's output channels in the
/// vector lanes and every input value broadcast: one group of at most four input channels (a
/// network's first layer, RGB or grey), whose few taps leave a GEMM little depth.
constexpr bool nhwc_direct(const conv_geometry& g) { return g.groups == 1 && g.c <= 4; }

/// Positions per block of a direct convolution computing `vectors` output channel vectors at
/// once: as many accumulators as leave registers for the weights and the broadcast value.
constexpr int direct_positions(int vectors) { return std::max(1, std::min(8, (W >= 16 ? 26 : 12) / vectors)); }

/// Output row `r` of one image of a direct convolution (`nhwc_direct`), output channel vectors
/// [v0, v0 + VB): `x` is the input image, its element (ci, ih, iw) at ci · cs + ih · hs + iw · ws
/// (planar or NHWC); `w` packed by `pack_nhwc_taps`; `e` with a column bias (padded), an NHWC
/// residual image or none, and activation A. Interior positions run QB at a time with every
/// tap unrolled; positions whose taps reach into the padding skip those taps one by one.
template <int VB, int QB, activation A>
inline void direct_nhwc_row(const conv_geometry& g, const float* x, std::ptrdiff_t cs, std::ptrdiff_t hs,
                            std::ptrdiff_t ws, const float* w, const epilogue& e, float* y, int r, int v0) {
  const int pitch = padded_channels(g.o);
  const int n_last = g.o - (v0 + VB - 1) * W;  // lanes of the last vector that are channels
  const column_range cols = interior_columns(g);
  int i0 = 0, i1 = g.kh;  // kernel rows inside the image
  while (i0 < i1 && r * g.sh - g.ph + i0 * g.dh < 0) ++i0;
  while (i1 > i0 && r * g.sh - g.ph + (i1 - 1) * g.dh >= g.h) --i1;
  const float* wv0 = w + v0 * W;
  const std::ptrdiff_t y_row = static_cast<std::ptrdiff_t>(r) * g.ow * g.o;
  const auto finish = [&](vec acc, int q, int v) {
    const std::ptrdiff_t at = y_row + static_cast<std::ptrdiff_t>(q) * g.o + (v0 + v) * W;
    if (e.bias) acc = acc + simd::load(e.bias + (v0 + v) * W);
    store_nhwc<A>(acc, e.residual ? e.residual + at : nullptr, y + at, v + 1 < VB ? W : n_last, e.lo, e.hi);
  };
  const auto one = [&](int q) {
    vec acc[std::size_t{VB}];
    for (int v = 0; v < VB; ++v) acc[v] = simd::splat(0.f);
    const int iw = q * g.sw - g.pw;
    for (int ci = 0; ci < g.c; ++ci)
      for (int i = i0; i < i1; ++i)
        for (int j = 0; j < g.kw; ++j) {
          const int col = iw + j * g.dw;
          if (col < 0 || col >= g.w) continue;
          const vec xv = simd::splat(x[ci * cs + (r * g.sh - g.ph + i * g.dh) * hs + col * ws]);
          const float* wt = wv0 + ((ci * g.kh + i) * g.kw + j) * pitch;
          for (int v = 0; v < VB; ++v) acc[v] = simd::fma(xv, simd::load(wt + v * W), acc[v]);
        }
    for (int v = 0; v < VB; ++v) finish(acc[v], q, v);
  };
  int q = 0;
  for (; q < cols.lo; ++q) one(q);
  for (; q + QB <= cols.hi; q += QB) {
    vec acc[std::size_t{QB}][std::size_t{VB}];
    for (int u = 0; u < QB; ++u)
      for (int v = 0; v < VB; ++v) acc[u][v] = simd::splat(0.f);
    const std::ptrdiff_t step = g.sw * ws;
    for (int ci = 0; ci < g.c; ++ci)
      for (int i = i0; i < i1; ++i) {
        const float* xr = x + ci * cs + (r * g.sh - g.ph + i * g.dh) * hs + (q * g.sw - g.pw) * ws;
        const float* wr = wv0 + (ci * g.kh + i) * g.kw * pitch;
        for (int j = 0; j < g.kw; ++j) {
          vec wk[std::size_t{VB}];
#pragma GCC unroll 4
          for (int v = 0; v < VB; ++v) wk[v] = simd::load(wr + j * pitch + v * W);
          const float* xj = xr + j * g.dw * ws;
#pragma GCC unroll 8
          for (int u = 0; u < QB; ++u) {
            const vec xv = simd::splat(xj[u * step]);
#pragma GCC unroll 4
            for (int v = 0; v < VB; ++v) acc[u][v] = simd::fma(xv, wk[v], acc[u][v]);
          }
        }
      }
#pragma GCC unroll 8
    for (int u = 0; u < QB; ++u)
#pragma GCC unroll 4
      for (int v = 0; v < VB; ++v) finish(acc[u][v], q + u, v);
  }
  for (; q < g.ow; ++q) one(q);
}

/// Output rows [r0, r1) of one image of a direct convolution (`direct_nhwc_row`), every output
/// channel; `nhwc_in` says the input's layout.
template <activation A>
inline void direct_nhwc_rows(const conv_geometry& g, const float* x, bool nhwc_in, const float* w, const epilogue& e,
                             float* y, int r0, int r1) {
  constexpr int V = 4;
  const std::ptrdiff_t cs = nhwc_in ? 1 : static_cast<std::ptrdiff_t>(g.h) * g.w;
  const std::ptrdiff_t hs = nhwc_in ? static_cast<std::ptrdiff_t>(g.w) * g.c : g.w, ws = nhwc_in ? g.c : 1;
  const int vectors = padded_channels(g.o) / W;
  for (int r = r0; r < r1; ++r)
    for (int v0 = 0; v0 < vectors; v0 += V) {
      // The last group of vectors may be narrower: each width has its own unrolled kernel.
      switch (std::min(V, vectors - v0)) {
        case 1: direct_nhwc_row<1, direct_positions(1), A>(g, x, cs, hs, ws, w, e, y, r, v0); break;
        case 2: direct_nhwc_row<2, direct_positions(2), A>(g, x, cs, hs, ws, w, e, y, r, v0); break;
        case 3: direct_nhwc_row<3, direct_positions(3), A>(g, x, cs, hs, ws, w, e, y, r, v0); break;
        default: direct_nhwc_row<4, direct_positions(4), A>(g, x, cs, hs, ws, w, e, y, r, v0); break;
      }
    }
}

}  // namespace partita::detail::cpu
