#pragma once
/// cpu conv2d of one group and at most four input channels (a network's first layer, RGB or
/// grey) writing NHWC directly: a position's output channels in the vector lanes, every input
/// value broadcast, the input (planar or NHWC) read in place.
#include <algorithm>
#include <cstddef>

#include "partita/backends/cpu/detail/conv/conv.hpp"
#include "partita/backends/cpu/detail/conv/conv_channels_last.hpp"
#include "partita/backends/cpu/detail/gemm/epilogue.hpp"

namespace partita::detail::cpu {

/// True for the convolutions that write NHWC directly, a position's output channels in the
/// vector lanes and every input value broadcast: one group of at most four input channels (a
/// network's first layer, RGB or grey), whose few taps leave a GEMM little depth.
constexpr bool nhwc_direct(const conv_geometry& g) { return g.groups == 1 && g.c <= 4; }

/// Positions per block of a direct convolution computing `vectors` output channel vectors at
/// once: as many accumulators as leave registers for the weights and the broadcast value (with
/// AVX, 4 vectors by 2 positions: 3 positions spilled the weights into every FMA's operand).
constexpr int direct_positions(int vectors) {
  return std::max(1, std::min(8, ((W >= 16 ? 32 : 16) - 1 - vectors) / vectors));
}

/// Output positions [q, q + N) of row `r` of one image of a direct convolution
/// (`nhwc_direct`), output channel vectors [v0, v0 + VB): `x` is the input image (NHWC where
/// NhwcIn, else planar), `w` packed by `pack_nhwc_taps`, `e` with a column bias (padded), an
/// NHWC residual image or none; `y` is the output image. Kernel rows [i0, i1) lie inside the
/// image. Where Q0 ≥ 0 the block starts at that compile-time column, and the taps that fall
/// into the padding are left out (`tap_in_row`); blocks in between read every tap with no test.
template <conv_geometry G, bool NhwcIn, int VB, int N, int Q0, activation A>
inline void direct_nhwc_block(const float* x, const float* w, const epilogue& e, float* y, int r, int i0, int i1,
                              int q, int v0) {
  constexpr conv_geometry g = G;
  constexpr std::ptrdiff_t cs = NhwcIn ? 1 : static_cast<std::ptrdiff_t>(g.h) * g.w;
  constexpr std::ptrdiff_t hs = NhwcIn ? static_cast<std::ptrdiff_t>(g.w) * g.c : g.w, ws = NhwcIn ? g.c : 1;
  constexpr int pitch = padded_channels(g.o);
  if constexpr (Q0 >= 0) q = Q0;
  vec acc[std::size_t{N}][std::size_t{VB}];
#pragma GCC unroll 8
  for (int u = 0; u < N; ++u)
#pragma GCC unroll 4
    for (int v = 0; v < VB; ++v) acc[u][v] = simd::splat(0.f);
  const float* wv = w + v0 * W;
  // Only the positions and vectors of one tap unrolled. Unrolling the taps as well, GCC loaded
  // the weights of several taps ahead and ran out of registers (MobileNetV2's 3 → 32 stem and
  // ResNet's 7×7 stem both slowed).
#pragma GCC unroll 1
  for (int ci = 0; ci < g.c; ++ci)
#pragma GCC unroll 1
    for (int i = i0; i < i1; ++i) {
      // An index, not a pointer: a border block's first column lies before the row.
      const std::ptrdiff_t xr = ci * cs + (r * g.sh - g.ph + i * g.dh) * hs + (q * g.sw - g.pw) * ws;
      const float* wr = wv + (ci * g.kh + i) * g.kw * pitch;
#pragma GCC unroll 1
      for (int j = 0; j < g.kw; ++j) {
        // Held in registers: folded into each FMA's operand, the weights were read again for
        // every position (see `simd::hold`).
        vec wk[std::size_t{VB}];
#pragma GCC unroll 4
        for (int v = 0; v < VB; ++v) {
          wk[v] = simd::load(wr + j * pitch + v * W);
          simd::hold(wk[v]);
        }
#pragma GCC unroll 8
        for (int u = 0; u < N; ++u) {
          if (Q0 >= 0 && !tap_in_row(g, Q0 + u, j)) continue;  // border blocks only
          const vec xv = simd::splat(x[xr + (u * g.sw + j * g.dw) * ws]);
#pragma GCC unroll 4
          for (int v = 0; v < VB; ++v) acc[u][v] = simd::fma(xv, wk[v], acc[u][v]);
        }
      }
    }
  // The epilogue's fields in registers: stores to `y` could alias them.
  const float* const bias = e.bias;
  const float* const residual = e.residual;
  const float lo = e.lo, hi = e.hi;
  const int n_last = g.o - (v0 + VB - 1) * W;  // lanes of the last vector that are channels
  const std::ptrdiff_t y_row = static_cast<std::ptrdiff_t>(r) * g.ow * g.o;
#pragma GCC unroll 8
  for (int u = 0; u < N; ++u)
#pragma GCC unroll 4
    for (int v = 0; v < VB; ++v) {
      const std::ptrdiff_t at = y_row + static_cast<std::ptrdiff_t>(q + u) * g.o + (v0 + v) * W;
      const vec s = bias ? acc[u][v] + simd::load(bias + (v0 + v) * W) : acc[u][v];
      store_nhwc<A>(s, residual ? residual + at : nullptr, y + at, v + 1 < VB ? W : n_last, lo, hi);
    }
}

/// Columns [Q0, Q1) of `direct_nhwc_row` as compile-time blocks of at most QB positions.
template <conv_geometry G, bool NhwcIn, int VB, int QB, int Q0, int Q1, activation A>
inline void direct_nhwc_fixed(const float* x, const float* w, const epilogue& e, float* y, int r, int i0, int i1,
                              int v0) {
  if constexpr (Q0 < Q1) {
    constexpr int n = std::min(QB, Q1 - Q0);
    direct_nhwc_block<G, NhwcIn, VB, n, Q0, A>(x, w, e, y, r, i0, i1, Q0, v0);
    direct_nhwc_fixed<G, NhwcIn, VB, QB, Q0 + n, Q1, A>(x, w, e, y, r, i0, i1, v0);
  }
}

/// Asks for every input row that output row `r` of a direct convolution reads, every
/// channel's, into L1. A network's input comes from memory: it was written before the last
/// run, whose weights and activations pushed it out of the caches, and a row of output reads
/// its rows a few lines at a time across several planes, which the hardware prefetchers did
/// not fetch ahead of the loads: MobileNetV2's 3 -> 32 stem waited on them inside the network;
/// ResNet-18's 7×7 stem, which does 11 times the work per input row, does not mind. Rows the
/// row before also read are asked for again (the row's stores and weights evict some, and
/// leaving them out measured slower). Always inlined, as the `simd` prefetch helpers it calls:
/// GCC judges a function made of prefetches alone free of effects and drops calls to it that
/// it does not inline.
template <conv_geometry G, bool NhwcIn>
[[gnu::always_inline]] inline void prefetch_input_rows(const float* x, int r) {
  constexpr conv_geometry g = G;
  constexpr std::ptrdiff_t row_floats = NhwcIn ? static_cast<std::ptrdiff_t>(g.w) * g.c : g.w;
  constexpr std::ptrdiff_t plane = NhwcIn ? 0 : static_cast<std::ptrdiff_t>(g.h) * g.w;
  constexpr int planes = NhwcIn ? 1 : g.c;
  for (int i = 0; i < g.kh; ++i) {
    const int ih = r * g.sh - g.ph + i * g.dh;
    if (ih < 0 || ih >= g.h) continue;
    for (int ci = 0; ci < planes; ++ci) simd::prefetch_for_load(x + ci * plane + ih * row_floats, row_floats);
  }
}

/// Output rows ahead of the one computed whose input a direct convolution asks for
/// (`prefetch_input_rows`); 1 and 2 measured alike or slower, 4 (into L2) no faster than none.
inline constexpr int direct_rows_ahead = 3;

/// Output row `r` of one image of a direct convolution (`nhwc_direct`), output channel vectors
/// [v0, v0 + VB), as blocks of `direct_positions(VB)` (`direct_nhwc_block`). As in
/// `depthwise_nhwc_row`, the geometry is a template argument, and the first block and those
/// that reach past the last interior column start at compile-time columns; those in between
/// start at run time and read every tap. With the geometry as run-time values, border
/// positions one at a time testing each tap, and the weights read again by every FMA,
/// MobileNetV2's 3 → 32 stem ran at half the FMA peak.
template <conv_geometry G, bool NhwcIn, int VB, activation A>
inline void direct_nhwc_row(const float* x, const float* w, const epilogue& e, float* y, int r, int v0) {
  constexpr conv_geometry g = G;
  constexpr int QB = direct_positions(VB);
  constexpr row_blocks blocks = make_row_blocks(g, QB);
  constexpr int left = blocks.left, fixed_from = blocks.fixed_from;
  int i0 = 0, i1 = g.kh;  // kernel rows inside the image
  while (i0 < i1 && r * g.sh - g.ph + i0 * g.dh < 0) ++i0;
  while (i1 > i0 && r * g.sh - g.ph + (i1 - 1) * g.dh >= g.h) --i1;
  // One copy of the blocks for every row, the kernel rows inside the image run-time bounds of
  // a loop that is not unrolled: a second copy for the rows that read all of them had cost
  // ResNet-18's build 12 KB of code and about a second of GCC's time, and ran alike.
  direct_nhwc_fixed<G, NhwcIn, VB, QB, 0, left, A>(x, w, e, y, r, i0, i1, v0);
  for (int q = left; q < fixed_from; q += QB) direct_nhwc_block<G, NhwcIn, VB, QB, -1, A>(x, w, e, y, r, i0, i1, q, v0);
  direct_nhwc_fixed<G, NhwcIn, VB, QB, fixed_from, g.ow, A>(x, w, e, y, r, i0, i1, v0);
}

/// Output channel vectors per pass of `direct_nhwc_row` over a row. With AVX, two vectors by
/// 6 positions had been chosen where four vectors' weights outgrow half of L1 (ResNet-18's 7×7
/// stem, 147 taps, 18.8 KB a pass): four by 3 positions spilled, and GCC folded every weight
/// load into the FMAs. With the weights held in registers, four vectors by 2 positions measure
/// alike on that stem (inside W5, against two by 6), and MobileNetV2's 3×3 stem needs them
/// (`direct_nhwc_row`).
inline constexpr int direct_vectors = 4;

/// Output rows [r0, r1) of one image of a direct convolution (`direct_nhwc_row`), every output
/// channel, `direct_vectors` at a time (the last group may be narrower).
template <conv_geometry G, bool NhwcIn, activation A>
inline void direct_nhwc_rows(const float* x, const float* w, const epilogue& e, float* y, int r0, int r1) {
  constexpr int V = direct_vectors, vectors = padded_channels(G.o) / W, whole = vectors / V * V;
  for (int r = r0 + 1; r < std::min(r1, r0 + direct_rows_ahead); ++r) prefetch_input_rows<G, NhwcIn>(x, r);
  for (int r = r0; r < r1; ++r) {
    if (r + direct_rows_ahead < r1) prefetch_input_rows<G, NhwcIn>(x, r + direct_rows_ahead);
    for (int v0 = 0; v0 < whole; v0 += V) direct_nhwc_row<G, NhwcIn, V, A>(x, w, e, y, r, v0);
    if constexpr (whole < vectors) direct_nhwc_row<G, NhwcIn, vectors - whole, A>(x, w, e, y, r, whole);
  }
}

}  // namespace partita::detail::cpu
