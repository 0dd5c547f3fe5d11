#pragma once
/// cpu conv2d of a few input channels, stride 1, planar in and out: output positions of a row in
/// the vector lanes, a block of output channels in registers, every tap a constant offset.
// A first layer on a planar image (LeNet's 1 → 6 5×5 on 28×28) is a GEMM of depth c·kh·kw ≤ 100
// whose positions, computed in the padded planes' row pitch, straddle output rows: `conv_tiles`
// spent more on its tile scatter, its run-time depth loop and a panel of 8 channels for 6 than
// on the FMAs. Here each output row is computed in blocks of up to three vectors of positions
// by up to 24 / NV output channels, the taps unrolled at compile time (each one NV loads from
// the padded planes and a broadcast weight per channel), and stored straight from the registers
// through the bias, residual and activation.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "partita/backends/cpu/detail/conv/conv.hpp"
#include "partita/backends/cpu/detail/conv/conv_channels_last.hpp"
#include "partita/backends/cpu/detail/state.hpp"

namespace partita::detail::cpu {

/// True for the conv2d steps `planar_direct_conv` runs: one group, stride 1, at most four input
/// channels and a depth of at most 100, output rows at least half a vector wide, and at most
/// 2^20 output floats per image. Against the GEMM's tiles it wins on every such layer measured
/// (LeNet's 1 → 6 5×5, first layers of 3 channels up to 128×128 and 224×224 by 16), but VGG's
/// 3 → 64 on 224×224 (12.8 MB out) lost, a row's blocks writing all 64 output planes in turn
/// (likely more write streams than the prefetchers follow). Bands of rows written one block of
/// channels at a time fixed that layer but slowed the others, for a reason not found, so larger
/// outputs keep the GEMM's tiles.
constexpr bool planar_direct(const conv_geometry& g) {
  return g.groups == 1 && g.sh == 1 && g.sw == 1 && g.c <= 4 && g.k <= 100 && 2 * g.ow >= W &&
         static_cast<std::int64_t>(g.o) * g.oh * g.ow <= std::int64_t{1} << 20;
}

/// Vectors of positions per block of a row: the whole row up to three vectors, else blocks of
/// two or three, whichever leaves fewer lanes idle.
constexpr int planar_direct_vectors(const conv_geometry& g) {
  const int v = (g.ow + W - 1) / W;
  if (v <= 3) return v;
  const int waste2 = (v + 1) / 2 * 2 - v, waste3 = (v + 2) / 3 * 3 - v;
  return waste3 < waste2 ? 3 : 2;
}

/// Output channels per block: NV · OB accumulators, 24 of AVX-512's 32 registers or 12 of 16.
constexpr int planar_direct_channels(int nv) { return (W >= 16 ? 24 : 12) / nv; }

/// Output row `r`, positions [col, col + NV·W) (the lanes past the row are not stored), output
/// channels [o0, o0 + OB) of one image: `planes` is its padded copy (`conv_copy_input`), `w`
/// the OIHW weights, `e` the bias (per channel) and residual (planar, like `y`), activation A.
template <conv_geometry G, int NV, int OB, activation A>
inline void planar_direct_block(const float* planes, const float* w, const epilogue& e, float* y, int r, int col,
                                int o0) {
  constexpr std::ptrdiff_t out_plane = static_cast<std::ptrdiff_t>(G.oh) * G.ow;
  vec acc[std::size_t{OB}][std::size_t{NV}];
#pragma GCC unroll 24
  for (int j = 0; j < OB; ++j) {
    const vec b = simd::splat(e.bias ? e.bias[o0 + j] : 0.f);
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[j][v] = b;
  }
  const float* base = planes + static_cast<std::ptrdiff_t>(r) * G.wq + col;
  const float* wo = w + static_cast<std::ptrdiff_t>(o0) * G.k;
  // Clang unrolled every tap and issued all of their weight broadcasts first, spilling them
  // to a 5.7 KB stack frame: it keeps the kernel rows a loop (LeNet-5 built with clang++-19 is
  // the case). GCC keeps its schedule with every tap unrolled.
#pragma GCC unroll 4
  for (int ci = 0; ci < G.c; ++ci)
#if defined(__clang__)
#pragma clang loop unroll(disable)
#else
#pragma GCC unroll 11
#endif
    for (int i = 0; i < G.kh; ++i)
#pragma GCC unroll 11
      for (int jx = 0; jx < G.kw; ++jx) {
        const int tap = (ci * G.kh + i) * G.kw + jx;
        const float* src = base + static_cast<std::ptrdiff_t>(ci) * static_cast<std::ptrdiff_t>(G.plane_set) +
                           static_cast<std::ptrdiff_t>(i * G.dh) * G.wq + jx * G.dw;
        vec xv[std::size_t{NV}];
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) xv[v] = simd::load(src + v * W);
#pragma GCC unroll 24
        for (int j = 0; j < OB; ++j) {
          const vec wv = simd::splat(wo[j * G.k + tap]);
#pragma GCC unroll 3
          for (int v = 0; v < NV; ++v) acc[j][v] = simd::fma(xv[v], wv, acc[j][v]);
        }
      }
#pragma GCC unroll 24
  for (int j = 0; j < OB; ++j)
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      const int n = std::min(W, G.ow - col - v * W);
      if (n <= 0) break;
      const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(o0 + j) * out_plane + static_cast<std::ptrdiff_t>(r) * G.ow +
                                col + v * W;
      store_nhwc<A>(acc[j][v], e.residual ? e.residual + at : nullptr, y + at, n, e.lo, e.hi);
    }
}

/// Output rows [r0, r1) of one image, every block of positions and of output channels.
template <conv_geometry G, activation A>
inline void planar_direct_rows(const float* planes, const float* w, const epilogue& e, float* y, int r0, int r1) {
  constexpr int NV = planar_direct_vectors(G), OB = planar_direct_channels(NV);
  constexpr int full = G.o / OB * OB, rest = G.o - full;
  for (int r = r0; r < r1; ++r)
    for (int col = 0; col < G.ow; col += NV * W) {
      for (int o0 = 0; o0 < full; o0 += OB) planar_direct_block<G, NV, OB, A>(planes, w, e, y, r, col, o0);
      if constexpr (rest > 0) planar_direct_block<G, NV, rest, A>(planes, w, e, y, r, col, full);
    }
}

/// A `planar_direct` conv2d of NCHW `x` into NCHW `y`, image by image: the image copied into
/// padded planes (the shared scratch, `geo.buffer_floats`), then its rows split across threads.
/// `w` holds the OIHW weights, `e` the bias per channel and the activation's bounds (A), and
/// `residual` is NCHW like `y`, or null.
template <conv_geometry G, activation A>
inline void planar_direct_conv(state& st, const float* x, const float* w, const float* residual, const epilogue& e,
                               float* y) {
  constexpr std::ptrdiff_t in_image = static_cast<std::ptrdiff_t>(G.c) * G.h * G.w;
  constexpr std::ptrdiff_t out_image = static_cast<std::ptrdiff_t>(G.o) * G.oh * G.ow;
  const int tasks = tasks_for(2.0 * G.o * G.k * G.oh * G.ow, st.workers(), G.oh);
  float* buf = st.shared_scratch();
  for (int b = 0; b < G.batch; ++b) {
    conv_copy_input(G, x + b * in_image, buf, 0, G.c);
    epilogue eb = e;
    eb.residual = residual ? residual + b * out_image : nullptr;
    st.parallel(tasks, [&](int t) {
      planar_direct_rows<G, A>(buf, w, eb, y + b * out_image, G.oh * t / tasks, G.oh * (t + 1) / tasks);
    });
  }
}

}  // namespace partita::detail::cpu
