#pragma once
/// cpu depthwise conv2d on channels-last (NHWC) rows, vectorized along channels: one output row
/// at a time from the input rows its kernel rows read, its positions in blocks whose taps are
/// compile-time offsets.
#include <algorithm>
#include <cstddef>

#include "partita/backends/cpu/detail/conv/conv_channels_last.hpp"

namespace partita::detail::cpu {

/// Output columns of `depthwise_nhwc_row` in one block: `N` positions from `q` (from `Q0`, a
/// compile-time column, when Q0 ≥ 0; then each tap whose column lies in the padding is left
/// out at compile time, and a position with none left keeps its bias), channels [cv, cv + n).
/// Kernel rows [i0, i1) are the ones inside the image.
template <conv_geometry G, activation A, int N, int Q0, bool Tail, bool Full>
inline void depthwise_nhwc_block(const float* const* rows, int i0, int i1, const float* w, const float* bias,
                                 const float* rr, float lo, float hi, float* yr, int q, int cv, int n) {
  constexpr conv_geometry g = G;
  constexpr std::ptrdiff_t c = g.c, pitch = padded_channels(g.c);
  constexpr int KW = g.kw;
  if constexpr (Q0 >= 0) q = Q0;
  const vec b = bias ? simd::load(bias + cv) : simd::splat(0.f);
  vec acc[std::size_t{N}];
#pragma GCC unroll 8
  for (int u = 0; u < N; ++u) acc[u] = b;
  if constexpr (Full) i0 = 0, i1 = g.kh;
  // Input-stationary: each input column of the block is loaded once and feeds every tap that
  // reads it, the kernel row's weights held in registers. Written tap by tap, GCC shared the
  // loads of a stride-1 row among taps itself but kept them all live at once, spilling
  // accumulators (MobileNetV2's large depthwise layers lost to it; the 14×14 and 7×7 ones did
  // not mind).
  constexpr int T = (N - 1) * g.sw + (KW - 1) * g.dw + 1;  // input columns a block's taps read
  const std::ptrdiff_t first = static_cast<std::ptrdiff_t>(q * g.sw - g.pw) * c + cv;  // column 0, maybe padding
#pragma GCC unroll 7
  for (int i = i0; i < i1; ++i) {
    const float* row = rows[i];
    vec wk[std::size_t{KW}];
#pragma GCC unroll 7
    for (int j = 0; j < KW; ++j) wk[j] = simd::load(w + (i * KW + j) * pitch + cv);
#pragma GCC unroll 32
    for (int t = 0; t < T; ++t) {
      if (Q0 >= 0 && !column_in_row(g, Q0 * g.sw - g.pw + t)) continue;  // constant once unrolled
      const float* p = row + (first + t * c);
      const vec xv = Tail ? simd::load_first(p, n) : simd::load(p);
#pragma GCC unroll 7
      for (int j = 0; j < KW; ++j) {
        const int d = t - j * g.dw;  // the position that reads column t through tap j, times the stride
        if (d >= 0 && d % g.sw == 0 && d / g.sw < N) acc[d / g.sw] = simd::fma(xv, wk[j], acc[d / g.sw]);
      }
    }
  }
#pragma GCC unroll 8
  for (int u = 0; u < N; ++u) {
    const std::ptrdiff_t at = (q + u) * c + cv;
    store_nhwc<A>(acc[u], rr ? rr + at : nullptr, yr + at, Tail ? n : W, lo, hi);
  }
}

/// Every channel of a block of `depthwise_nhwc_block`: whole vectors, then the last partial one.
template <conv_geometry G, activation A, int N, int Q0>
inline void depthwise_nhwc_columns(const float* const* rows, int i0, int i1, const float* w, const float* bias,
                                   const float* rr, float lo, float hi, float* yr, int q) {
  constexpr int whole = G.c / W * W;
  const auto run = [&]<bool Full>() {
    for (int cv = 0; cv < whole; cv += W)
      depthwise_nhwc_block<G, A, N, Q0, false, Full>(rows, i0, i1, w, bias, rr, lo, hi, yr, q, cv, W);
    if constexpr (whole < G.c)
      depthwise_nhwc_block<G, A, N, Q0, true, Full>(rows, i0, i1, w, bias, rr, lo, hi, yr, q, whole, G.c - whole);
  };
  if (i0 == 0 && i1 == G.kh) run.template operator()<true>();
  else run.template operator()<false>();
}

/// Columns [Q0, Q1) of `depthwise_nhwc_row` as compile-time blocks of at most QB.
template <conv_geometry G, activation A, int QB, int Q0, int Q1>
inline void depthwise_nhwc_fixed(const float* const* rows, int i0, int i1, const float* w, const float* bias,
                                 const float* rr, float lo, float hi, float* yr) {
  if constexpr (Q0 < Q1) {
    constexpr int n = std::min(QB, Q1 - Q0);
    depthwise_nhwc_columns<G, A, n, Q0>(rows, i0, i1, w, bias, rr, lo, hi, yr, Q0);
    depthwise_nhwc_fixed<G, A, QB, Q0 + n, Q1>(rows, i0, i1, w, bias, rr, lo, hi, yr);
  }
}

/// Output row `r` of a depthwise convolution (one output channel per input channel, G.c of
/// them) on NHWC rows: `rows[i]` is the input row that kernel row i reads, null where it lies
/// in the padding (the non-null ones consecutive). `w` is packed by `pack_nhwc_taps`, `bias`
/// holds padded_channels(c) floats or is null, `rr` is the residual's row or null, `yr` the
/// output row. The row runs in blocks of QB
/// positions, each block every channel vector in turn (so the row is read and written in
/// order) with every tap of a kernel row unrolled: QB accumulators per channel vector hide an
/// FMA's latency on two ports. The first block and those that reach past the last interior
/// column (`interior_columns`) start at compile-time columns, so the taps that fall into the
/// padding are left out with no test at run time; those in between start at run time and read
/// every tap. Where `Shared` (the row lies in a buffer that both cores write, a step's output
/// rather than a thread's scratch), the row's lines are asked for two blocks ahead of the
/// stores (`prefetch_for_store`): the arena reuses memory that the other core wrote at an
/// earlier step, and writing to lines the other core holds waits on them (MobileNetV2's
/// expansion 24 → 144 on 56×56 fused with its stride-2 depthwise layer: without the prefetch the
/// second thread's share took far longer than the first's).
template <conv_geometry G, activation A, bool Shared = true>
inline void depthwise_nhwc_row(const float* const* rows, const float* w, const float* bias, const float* rr, float lo,
                               float hi, float* yr) {
  // The geometry is a template argument: the offsets of a block's taps and positions are then
  // constants in the instructions. As run-time values the compiler kept one pointer per tap and
  // position on the stack and reloaded it for every FMA.
  constexpr conv_geometry g = G;
  constexpr int QB = 8, KH = g.kh;
  constexpr row_blocks blocks = make_row_blocks(g, QB);
  constexpr int left = blocks.left, fixed_from = blocks.fixed_from;
  constexpr std::ptrdiff_t c = g.c;
  int i0 = 0, i1 = KH;  // the kernel rows inside the image
  while (i0 < KH && !rows[i0]) ++i0;
  while (i1 > i0 && !rows[i1 - 1]) --i1;
  if constexpr (Shared) simd::prefetch_for_store(yr, std::min(g.ow, left + 2 * QB) * c);
  depthwise_nhwc_fixed<G, A, QB, 0, left>(rows, i0, i1, w, bias, rr, lo, hi, yr);
  for (int q = left; q < fixed_from; q += QB) {
    if constexpr (Shared)
      if (q + 2 * QB < g.ow) simd::prefetch_for_store(yr + (q + 2 * QB) * c, std::min(QB, g.ow - q - 2 * QB) * c);
    depthwise_nhwc_columns<G, A, QB, -1>(rows, i0, i1, w, bias, rr, lo, hi, yr, q);
  }
  depthwise_nhwc_fixed<G, A, QB, fixed_from, g.ow>(rows, i0, i1, w, bias, rr, lo, hi, yr);
}

/// Output rows [r0, r1) of one NHWC image of a depthwise convolution (`depthwise_nhwc_row`);
/// the residual is an NHWC image like `y`, or null.
template <conv_geometry G, activation A>
inline void depthwise_nhwc_rows(const float* x, const float* w, const float* bias, const float* residual, float lo,
                                float hi, float* y, int r0, int r1) {
  constexpr conv_geometry g = G;
  constexpr std::ptrdiff_t x_row = static_cast<std::ptrdiff_t>(g.w) * g.c;
  constexpr std::ptrdiff_t y_row = static_cast<std::ptrdiff_t>(g.ow) * g.c;
  for (int r = r0; r < r1; ++r) {
    const float* rows[std::size_t{g.kh}];
    for (int i = 0; i < g.kh; ++i) {
      const int ih = r * g.sh - g.ph + i * g.dh;
      rows[i] = ih >= 0 && ih < g.h ? x + ih * x_row : nullptr;
    }
    depthwise_nhwc_row<G, A>(rows, w, bias, residual ? residual + r * y_row : nullptr, lo, hi, y + r * y_row);
  }
}

}  // namespace partita::detail::cpu
