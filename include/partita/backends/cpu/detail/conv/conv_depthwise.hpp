#pragma once
/// cpu depthwise conv2d (one input channel per group), vectorized along output rows.
// A depthwise convolution does kh·kw multiply-adds per output, too few for a GEMM to pay off.
// Each output channel reads one input channel: that plane is copied, padded and stride-phase
// split (conv.hpp), into the thread's scratch, where it stays in cache while it is used; tap
// (i, j) of output row r is then a contiguous run at a compile-time offset, so a vector of
// output positions is kh·kw FMAs of unaligned loads by broadcast weights. A block of rows ×
// vectors keeps eight accumulators in flight (an FMA's latency times its ports), and the
// epilogue (bias, residual, activation) is applied before the block is stored.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "partita/backends/cpu/detail/conv/conv.hpp"
#include "partita/backends/cpu/detail/gemm/epilogue.hpp"
#include "partita/backends/cpu/detail/state.hpp"

namespace partita::detail::cpu {

/// One conv2d with one input channel per group (channel multiplier og ≥ 1).
constexpr bool is_depthwise(const conv_geometry& g) { return g.groups > 1 && g.cg == 1; }

/// Output rows × vectors of one block.
struct depthwise_blocking {
  int rows = 1, vecs = 1;
};
constexpr depthwise_blocking depthwise_block(const conv_geometry& g) {
  const int vecs = std::min(4, (g.ow + W - 1) / W);
  return {std::max(1, std::min(8 / vecs, g.oh)), vecs};
}

/// Floats of per-thread scratch: one channel's planes, plus what the last vector of a row reads
/// past them (lanes beyond the output width, discarded).
constexpr std::size_t depthwise_scratch(const conv_geometry& g) {
  return g.plane_set + static_cast<std::size_t>((g.ow + W - 1) / W * W + g.kw * g.dw + 64);
}

/// Rows [r0, r1) of output channel `o`'s plane `y` (oh × ow) from its input channel's padded
/// phase planes `plane`; `w` holds the channel's kh·kw weights, `off` the taps' offsets in the
/// planes. Nothing outside those rows of `y` is written.
template <int RB, int VB, int K, activation A>
inline void depthwise_plane(const conv_geometry& g, const std::int32_t* off, const float* plane, const float* w,
                            float bias, const float* residual, float lo, float hi, float* y, int r_begin, int r_end) {
  constexpr int step = VB * W;
  for (int r0 = r_begin; r0 < r_end; r0 += RB) {
    const float* row[std::size_t{RB}];
    // Rows past the last are computed on the last one again and not stored.
#pragma GCC unroll 8
    for (int r = 0; r < RB; ++r) row[r] = plane + static_cast<std::ptrdiff_t>(std::min(r0 + r, r_end - 1)) * g.wq;
    for (int c0 = 0; c0 < g.ow; c0 += step) {
      vec acc[std::size_t{RB}][std::size_t{VB}];
#pragma GCC unroll 8
      for (int r = 0; r < RB; ++r)
#pragma GCC unroll 4
        for (int v = 0; v < VB; ++v) acc[r][v] = simd::splat(bias);
#pragma GCC unroll 25
      for (int k = 0; k < K; ++k) {
        const vec wk = simd::splat(w[k]);
        const std::int32_t o = off[k] + c0;
#pragma GCC unroll 8
        for (int r = 0; r < RB; ++r)
#pragma GCC unroll 4
          for (int v = 0; v < VB; ++v) acc[r][v] = simd::fma(simd::load(row[r] + o + v * W), wk, acc[r][v]);
      }
      const int rows = std::min(RB, r_end - r0);
      for (int r = 0; r < rows; ++r) {
        const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(r0 + r) * g.ow + c0;
        // A row's last vector may be stored whole when its extra lanes land in the rows below,
        // which are stored after it: rows in order, each in one piece (a row wider than a
        // block of vectors is stored a piece at a time, and the next row's first piece would
        // come before this row's last). A masked store costs a dozen cycles.
        const bool spill_ok = g.ow <= step && static_cast<std::ptrdiff_t>(r_end - 1 - r0 - r) * g.ow >= W;
#pragma GCC unroll 4
        for (int v = 0; v < VB; ++v) {
          const int n = std::min(W, g.ow - c0 - v * W);
          if (n <= 0) break;
          const bool whole = n == W || spill_ok;
          vec s = acc[r][v];
          if (residual) s = s + (whole ? simd::load(residual + at + v * W) : simd::load_first(residual + at + v * W, n));
          s = apply<A>(s, lo, hi);
          if (whole) simd::store(y + at + v * W, s);
          else simd::store_first(y + at + v * W, s, n);
        }
      }
    }
  }
}

/// Vectors of output positions of one plane, taken as one run of oh · ow.
constexpr int flat_vectors(const conv_geometry& g) { return (g.oh * g.ow + W - 1) / W; }

/// Small images of a stride-1 depthwise convolution that keeps the width (MobileNet's 7×7 and
/// 14×14 layers), with AVX-512: computed as one run of positions straight from the unpadded
/// input. Output position q and its input at tap (i, j) are then a constant offset apart, and
/// the taps that fall in the padding are masked-out lanes of the load. Row by row, most of
/// each vector was wasted (7 of 16 lanes on 7×7), and the copy into padded planes cost more
/// than the arithmetic.
constexpr bool depthwise_flat(const conv_geometry& g) {
  return W >= 16 && g.sh == 1 && g.sw == 1 && g.ow == g.w && flat_vectors(g) <= 16;
}

/// Tap offsets in the unpadded input and, per tap and vector, the lanes whose input lies in
/// the image (bit l of mask[k · V + v]).
template <int K, int V>
struct flat_taps {
  std::array<std::int32_t, std::size_t{K}> off{};
  std::array<std::uint32_t, std::size_t{K} * V> mask{};
};
template <int K, int V>
constexpr flat_taps<K, V> make_flat_taps(const conv_geometry& g) {
  flat_taps<K, V> t;
  if (g.oh * g.ow == 0) return t;  // not a flat depthwise convolution: no taps
  for (int i = 0, k = 0; i < g.kh; ++i)
    for (int j = 0; j < g.kw; ++j, ++k) {
      const int di = i * g.dh - g.ph, dj = j * g.dw - g.pw;
      t.off[static_cast<std::size_t>(k)] = di * g.w + dj;
      for (int v = 0; v < V; ++v)
        for (int l = 0; l < W; ++l) {
          const int q = v * W + l, r = q / g.ow, c = q % g.ow;
          const bool in = q < g.oh * g.ow && r + di >= 0 && r + di < g.h && c + dj >= 0 && c + dj < g.w;
          if (in) t.mask[static_cast<std::size_t>(k * V + v)] |= 1u << l;
        }
    }
  return t;
}

/// Output channels [o0, o1) of one image on the flat path (`depthwise_flat`): each plane is V
/// vectors of K masked FMAs. A plane's last, partial vector is stored whole where its extra
/// lanes land in the range's next planes, which are written after it.
template <int K, int V, activation A>
inline void depthwise_flat_channels(const conv_geometry& g, const flat_taps<K, V>& taps, const float* x,
                                    const float* w, const float* bias, const float* residual, float lo, float hi,
                                    float* y, int o0, int o1) {
  const int n = g.oh * g.ow, tail = n - (V - 1) * W;
  const std::ptrdiff_t in_plane = static_cast<std::ptrdiff_t>(g.h) * g.w;
  for (int o = o0; o < o1; ++o) {
    const std::uintptr_t plane = reinterpret_cast<std::uintptr_t>(x + static_cast<std::ptrdiff_t>(o / g.og) * in_plane);
    const float* wo = w + static_cast<std::ptrdiff_t>(o) * K;
    vec acc[std::size_t{V}];
    const vec b = simd::splat(bias ? bias[o] : 0.f);
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) acc[v] = b;
#pragma GCC unroll 25
    for (int k = 0; k < K; ++k) {
      const vec wk = simd::splat(wo[k]);
      // In bytes, and negative for taps above or left of the output: unsigned arithmetic on
      // the address wraps to the right place.
      constexpr std::intptr_t f = sizeof(float);
      const std::intptr_t at = static_cast<std::intptr_t>(taps.off[static_cast<std::size_t>(k)]) * f;
#pragma GCC unroll 16
      for (int v = 0; v < V; ++v)
        acc[v] = simd::fma(wk, simd::load_masked(plane + static_cast<std::uintptr_t>(at + v * W * f),
                                                 taps.mask[static_cast<std::size_t>(k * V + v)]),
                           acc[v]);
    }
    float* yo = y + static_cast<std::ptrdiff_t>(o) * n;
    const float* ro = residual ? residual + static_cast<std::ptrdiff_t>(o) * n : nullptr;
    const bool spill = (o1 - o - 1) * n >= W - tail;  // the planes after it in this range take the extra lanes
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) {
      const bool whole = v + 1 < V || tail == W || spill;
      vec s = acc[v];
      if (ro) s = s + (whole ? simd::load(ro + v * W) : simd::load_first(ro + v * W, tail));
      s = apply<A>(s, lo, hi);
      if (whole) simd::store(yo + v * W, s);
      else simd::store_first(yo + v * W, s, tail);
    }
  }
}

/// Zeroes a thread's depthwise scratch (`depthwise_scratch(g)` floats) before its first
/// `depthwise_channels`: the padding and the slack past the planes (read by discarded lanes
/// only) stay zero after that, since every channel's copy writes the same positions, the
/// image's. On small images the padding was most of each copy (a 7×7 plane is padded to 9×9).
inline void zero_depthwise_scratch(const conv_geometry& g, float* scratch) {
  std::fill(scratch, scratch + depthwise_scratch(g), 0.f);
}

/// Channels [c0, c1), output rows [r0, r1), of one image: `x`, `y` and the residual are the
/// image's (NCHW), `w` the weights [o][kh·kw], `bias` one per output channel or null; `scratch`
/// holds depthwise_scratch, zeroed by `zero_depthwise_scratch` and since then used only by
/// calls for the same rows. RB × VB is `depthwise_block(g)`. Only the input rows that the
/// output rows read are copied.
template <int RB, int VB, int K, activation A>
inline void depthwise_channels(const conv_geometry& g, const std::int32_t* off, const float* x, const float* w,
                               const float* bias, const float* residual, float lo, float hi, float* y, int c0, int c1,
                               int r0, int r1, float* scratch) {
  const std::ptrdiff_t in_plane = static_cast<std::ptrdiff_t>(g.h) * g.w;
  const std::ptrdiff_t out_plane = static_cast<std::ptrdiff_t>(g.oh) * g.ow;
  const int ih0 = r0 * g.sh - g.ph, ih1 = (r1 - 1) * g.sh + (g.kh - 1) * g.dh - g.ph + 1;
  for (int c = c0; c < c1; ++c) {
    conv_copy_plane(g, x + c * in_plane, scratch, true, std::max(0, ih0), std::min(g.h, ih1));
    for (int m = 0; m < g.og; ++m) {
      const int o = c * g.og + m;
      depthwise_plane<RB, VB, K, A>(g, off, scratch, w + static_cast<std::ptrdiff_t>(o) * K, bias ? bias[o] : 0.f,
                                    residual ? residual + o * out_plane : nullptr, lo, hi, y + o * out_plane, r0, r1);
    }
  }
}

/// A planar depthwise conv2d step, every image: on the flat path (`depthwise_flat`) split
/// across threads by output channels, as a small image has no rows worth splitting; otherwise
/// by channels, or, for strided layers of 16 output rows or more, by output rows, each thread
/// copying the planes (rows) it reads into its own scratch. `off` holds the taps' offsets in
/// the planes (`conv_offsets`). Its few flops per value moved undercount it: the floats it
/// reads and writes weigh too. A stride-2 layer of 576 channels on 14×14 has 0.5 Mflop, one
/// task by flops alone, and that one core then reads an input both cores wrote (MobileNetV2's
/// such layer takes less than half the time on two tasks). Rows pay for strided layers
/// (MobileNetV2's 96-channel stride-2 layer on 112×112); stride-1 layers split by rows were
/// slower (1×1 → depthwise → 1×1 on 28×28) and keep the channels.
template <conv_geometry G, activation A>
inline void depthwise_planar_step(state& st, const std::int32_t* off, const float* x, const float* w,
                                  const float* residual, const epilogue& e, float* out) {
  constexpr conv_geometry geo = G;
  constexpr int n = geo.oh * geo.ow;
  constexpr double flops =
      2.0 * geo.o * geo.k * n + moved_cost * (static_cast<double>(geo.c) * geo.h * geo.w + static_cast<double>(geo.o) * n);
  const std::ptrdiff_t in_image = static_cast<std::ptrdiff_t>(geo.c) * geo.h * geo.w;
  const std::ptrdiff_t out_image = static_cast<std::ptrdiff_t>(geo.o) * n;
  if constexpr (depthwise_flat(geo)) {
    constexpr int V = flat_vectors(geo);
    static constexpr flat_taps<geo.k, V> taps = make_flat_taps<geo.k, V>(geo);
    const int tasks = tasks_for(flops, st.workers(), geo.o);
    for (int b = 0; b < geo.batch; ++b)
      st.parallel(tasks, [&](int t) {
        depthwise_flat_channels<geo.k, V, A>(geo, taps, x + b * in_image, w, e.bias,
                                             residual ? residual + b * out_image : nullptr, e.lo, e.hi,
                                             out + b * out_image, geo.o * t / tasks, geo.o * (t + 1) / tasks);
      });
  } else {
    constexpr depthwise_blocking blk = depthwise_block(geo);
    constexpr bool by_rows = geo.oh >= 16 && geo.sh > 1;
    const int tasks = tasks_for(flops, st.workers(), by_rows ? geo.oh : geo.c);
    for (int b = 0; b < geo.batch; ++b) {
      st.parallel(tasks, [&](int t) {
        const int c0 = by_rows ? 0 : geo.c * t / tasks, c1 = by_rows ? geo.c : geo.c * (t + 1) / tasks;
        const int r0 = by_rows ? geo.oh * t / tasks : 0, r1 = by_rows ? geo.oh * (t + 1) / tasks : geo.oh;
        zero_depthwise_scratch(geo, st.thread_scratch(t));
        depthwise_channels<blk.rows, blk.vecs, geo.k, A>(geo, off, x + b * in_image, w, e.bias,
                                                         residual ? residual + b * out_image : nullptr, e.lo, e.hi,
                                                         out + b * out_image, c0, c1, r0, r1, st.thread_scratch(t));
      });
    }
  }
}

}  // namespace partita::detail::cpu
