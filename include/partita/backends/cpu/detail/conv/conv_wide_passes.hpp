#pragma once
/// cpu conv2d, the wide kernel in depth passes: small NHWC images whose weights outgrow L2.
// The wide kernel (conv_nhwc_direct.hpp) runs a block of positions over the whole depth of a
// panel, so each output row reads the panel's weights again: from L2 at best, from L3 where a
// panel is larger than L2 can keep beside the rest. Here a panel's sums for the whole image
// stay in L1 instead, and the depth runs in passes (one tap, a slice of its channels) whose
// weights stay in L1 while every row of the image reads them.
#include <algorithm>
#include <cstddef>
#include <utility>

#include "partita/backends/cpu/detail/conv/conv_nhwc_direct.hpp"

namespace partita::detail::cpu {

/// Input channels per depth pass of `wide_nhwc_passes` on an image of `positions`: one tap's
/// slice of a panel, at most 32 KB (256 channels with AVX-512, 512 with AVX) and at most what
/// leaves 40 KB of L1 to it and the panel's sums together, in passes as even as the channels
/// allow.
constexpr int wide_pass_channels(int c, int positions) {
  const int most = std::min(8192, 10240 - positions * wide_panel()) / wide_panel();
  const int passes = (c + most - 1) / most;
  return (c + passes - 1) / passes;
}

/// True for the wide convolutions that run in depth passes (`wide_nhwc_passes`): weights run
/// panel by panel (`wide_pairs_outer`), an image of few rows split by panels, and a panel's
/// sums for the whole image in 32 KB (ResNet-18's layers on 14×14 and 7×7). In the wide kernel
/// each of a 7×7 image's rows reads every weight (9.4 MB for a 512 → 512 3×3) from L2 or L3;
/// in passes each weight comes from L1 for every row, and those layers, strided ones included,
/// run markedly faster.
template <conv_geometry G>
constexpr bool wide_depth_passes() {
  return G.groups == 1 && wide_pairs_outer<G>() && wide_by_panels<G>() && G.oh * G.ow * wide_panel() <= 8192;
}

/// Adds to `sums` (the image's positions × 2 vectors, `wide_panel()` floats apart) kernel row
/// `i` of the panel `wp` (packed by `pack_nhwc_hwio`), VB vectors of it, over every output row;
/// `w_end` ends the weights the caller reads (nothing past it is prefetched).
/// Each tap column J is a template argument, as in `wide_nhwc_row`: the positions it reads
/// inside the image are constants.
template <conv_geometry G, bool NhwcIn, int VB>
inline void wide_pass_kernel_row(const float* x, const float* wp, const float* w_end, float* sums, int i) {
  constexpr std::ptrdiff_t cs = NhwcIn ? 1 : static_cast<std::ptrdiff_t>(G.h) * G.w;
  constexpr std::ptrdiff_t hs = NhwcIn ? static_cast<std::ptrdiff_t>(G.w) * G.c : G.w, ws = NhwcIn ? G.c : 1;
  constexpr int pitch = wide_panel();
  constexpr int blocks = (G.ow + wide_positions(G.ow) - 1) / wide_positions(G.ow);
  constexpr int QN = (G.ow + blocks - 1) / blocks;
  constexpr int CP = wide_pass_channels(G.c, G.oh * G.ow);
  // Positions [Q0, Q0 + QL) of one output row, tap column J, channels [c0, c0 + nc); the first
  // `pf.lines` channels each ask for a line of the next pass's weights.
  const auto block = [&]<int J, int Q0, int QL>(const float* xi, const float* wj, int nc, float* s, prefetch_share pf)
                         __attribute__((always_inline)) {
    constexpr int col0 = Q0 * G.sw - G.pw + J * G.dw;
    constexpr int lo = std::min(QL, std::max(0, (-col0 + G.sw - 1) / G.sw));
    constexpr int hi = std::max(lo, std::min(QL, (G.w - col0 + G.sw - 1) / G.sw));
    if constexpr (lo < hi) {
      vec acc[std::size_t{QL}][std::size_t{VB}];
#pragma GCC unroll 16
      for (int u = lo; u < hi; ++u)
#pragma GCC unroll 4
        for (int v = 0; v < VB; ++v) acc[u][v] = simd::load(s + (Q0 + u) * pitch + v * W);
      const float* x0 = xi + (col0 + lo * G.sw) * ws;
      const auto channel = [&](int ci) __attribute__((always_inline)) {
        wide_channel<lo, hi, G.sw * ws>(acc, x0 + ci * cs, wj + static_cast<std::ptrdiff_t>(ci) * pitch);
      };
      int ci = 0;
#pragma GCC unroll 1
      for (const int with = std::min(nc, pf.lines); ci < with; ++ci) {
        __builtin_prefetch(pf.start + static_cast<std::ptrdiff_t>(ci) * simd::line_bytes, 0, 2);
        channel(ci);
      }
#pragma GCC unroll 1
      for (; ci < nc; ++ci) channel(ci);
      for (int l = nc; l < pf.lines; ++l)
        __builtin_prefetch(pf.start + static_cast<std::ptrdiff_t>(l) * simd::line_bytes, 0, 2);
#pragma GCC unroll 16
      for (int u = lo; u < hi; ++u)
#pragma GCC unroll 4
        for (int v = 0; v < VB; ++v) simd::store(s + (Q0 + u) * pitch + v * W, acc[u][v]);
    }
  };
  // Output rows [r0, r1) read kernel row i inside the image.
  int r0 = 0, r1 = G.oh;
  while (r0 < r1 && r0 * G.sh - G.ph + i * G.dh < 0) ++r0;
  while (r1 > r0 && (r1 - 1) * G.sh - G.ph + i * G.dh >= G.h) --r1;
  const auto column = [&]<int J>() __attribute__((always_inline)) {
    for (int c0 = 0; c0 < G.c; c0 += CP) {
      const int nc = std::min(CP, G.c - c0);
      const float* wj = wp + (static_cast<std::ptrdiff_t>(i * G.kw + J) * G.c + c0) * pitch;
      // The next pass's weights follow these (taps and panels are contiguous), up to `w_end`;
      // the rows share out asking for them, from L3 while this pass's are in L1.
      const std::ptrdiff_t next = std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(CP) * pitch,
                                                           w_end - (wj + static_cast<std::ptrdiff_t>(nc) * pitch));
      for (int r = r0; r < r1; ++r) {
        const float* xi = x + (r * G.sh - G.ph + i * G.dh) * hs + c0 * cs;
        float* s = sums + static_cast<std::ptrdiff_t>(r) * G.ow * pitch;
        const prefetch_share pf = share_of(wj + static_cast<std::ptrdiff_t>(nc) * pitch, next, r - r0, r1 - r0);
        [&]<int... B>(std::integer_sequence<int, B...>) __attribute__((always_inline)) {
          (block.template operator()<J, B * QN, std::min(QN, G.ow - B * QN)>(xi, wj, nc, s,
                                                                               B == 0 ? pf : prefetch_share{}),
           ...);
        }(std::make_integer_sequence<int, blocks>{});
      }
    }
  };
  [&]<int... J>(std::integer_sequence<int, J...>) __attribute__((always_inline)) {
    (column.template operator()<J>(), ...);
  }(std::make_integer_sequence<int, G.kw>{});
}

/// One image of a wide direct convolution (`wide_depth_passes`), output channel vectors
/// [v0, v1) (v0 even), two at a time: the panel's sums for every position, then act(sum + bias
/// + residual) into the NHWC output `y` (`e.residual` a whole NHWC image or null).
template <conv_geometry G, bool NhwcIn, activation A>
inline void wide_nhwc_passes(const float* x, const float* w, const epilogue& e, float* y, int v0, int v1) {
  constexpr int pitch = wide_panel();
  constexpr int vectors = padded_channels(G.o) / W;
  constexpr std::ptrdiff_t y_row = static_cast<std::ptrdiff_t>(G.ow) * G.o;
  alignas(64) float sums[std::size_t{G.oh} * G.ow * pitch];
  const float* w_end = w + static_cast<std::ptrdiff_t>((v1 + 1) / 2) * G.k * pitch;
  for (int v = v0; v < v1; v += 2) {
    const float* wp = w + static_cast<std::ptrdiff_t>(v / 2) * G.k * pitch;
    const int vb = vectors % 2 == 0 || v + 2 <= vectors ? 2 : 1;
    std::fill(sums, sums + G.oh * G.ow * pitch, 0.f);
    for (int i = 0; i < G.kh; ++i) {
      // A last single vector only where the vectors are odd: each width is its own code.
      if (vb == 2) wide_pass_kernel_row<G, NhwcIn, 2>(x, wp, w_end, sums, i);
      else if constexpr (vectors % 2 == 1) wide_pass_kernel_row<G, NhwcIn, 1>(x, wp, w_end, sums, i);
    }
    const int n_last = G.o - (v + vb - 1) * W;
    for (int r = 0; r < G.oh; ++r)
      wide_store<A>(sums + static_cast<std::ptrdiff_t>(r) * G.ow * pitch, G.ow, vb, e.bias ? e.bias + v * W : nullptr,
                    e.residual ? e.residual + r * y_row + v * W : nullptr, e.lo, e.hi, y + r * y_row + v * W, G.o,
                    n_last);
  }
}

}  // namespace partita::detail::cpu
