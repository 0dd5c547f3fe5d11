#pragma once
/// cpu 1×1 conv2d (stride 1, unpadded, one group) from NHWC to NHWC over a run of positions,
/// a position's output channels in the vector lanes and every input value broadcast.
// On NHWC values a 1×1 convolution is a GEMM of the positions [n × c] by the weights [c × o].
// matmul's loops (row blocks, depth passes, a tile epilogue chosen at run time) cost more than
// the product itself where the depth is small (MobileNetV2's expansions, 16 → 96 channels, ran
// far below this kernel's rate through them). This kernel keeps
// nothing but the loop over the depth: each tile of positions × two channel vectors starts
// from the bias, runs every input channel, and stores through its activation (a template
// argument) straight from the registers.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>
#include <utility>

#include "partita/backends/cpu/detail/conv/conv_channels_last.hpp"
#include "partita/backends/cpu/detail/conv/conv_nhwc_direct.hpp"
#include "partita/backends/cpu/detail/gemm/epilogue.hpp"

namespace partita::detail::cpu {

/// True for the 1×1 convolutions that run `pointwise_nhwc`: NHWC in and out, and a depth of at
/// most 2048, whose panel of weights (two vectors per input channel: 256 KB with AVX-512, half
/// that with AVX) stays in L2 for the whole pass over the positions: MobileNetV2's deepest
/// (960 → 320 and 320 → 1280 on 7×7) and ResNet-50's 2048 → 512 on 7×7 run faster so than on
/// matmul's loops; deeper ones keep matmul's depth passes.
constexpr bool nhwc_pointwise(const conv_geometry& g) { return nhwc_reads_in_place(g) && g.groups == 1 && g.c <= 2048; }

/// True for the strided 1×1 convolutions that run `pointwise_nhwc` on their input positions
/// gathered first (`gather_positions`): one group, no padding before, a stride above 1 on some
/// axis, every output position's input inside the image, and a depth of at most 1024 (no
/// deeper strided one has been measured against the kernel it replaces). The
/// wide direct kernel had run them with its blocks of a row: ResNet-18's three downsampling
/// 1×1s ran at about half the FMA peak, and its 7×7 rows (one block of 14 accumulators with
/// AVX, a register too many) ran much slower in clang's build than in GCC's. Gathered, a
/// thread's positions are one run of tiles that may cross rows, as a stride-1 1×1's are.
constexpr bool nhwc_pointwise_strided(const conv_geometry& g) {
  return g.groups == 1 && g.kh == 1 && g.kw == 1 && g.ph == 0 && g.pw == 0 && (g.sh > 1 || g.sw > 1) &&
         g.c <= 1024 && (g.oh - 1) * g.sh < g.h && (g.ow - 1) * g.sw < g.w;
}

/// Floats of one thread's gathered positions (`gather_positions`): the whole output's, since a
/// thread that runs a panel of channels reads every position.
constexpr std::size_t gathered_floats(const conv_geometry& g) {
  return static_cast<std::size_t>(g.oh) * static_cast<std::size_t>(g.ow) * static_cast<std::size_t>(g.c);
}

/// The input positions that output rows [r0, r1) of a strided 1×1 convolution
/// (`nhwc_pointwise_strided`) read, from the NHWC image `x` into `dst`, consecutive as the
/// output's: position (r, q) is read from input position (r · sh, q · sw).
inline void gather_positions(const conv_geometry& g, const float* x, float* dst, int r0, int r1) {
  const std::size_t bytes = static_cast<std::size_t>(g.c) * sizeof(float);
  for (int r = r0; r < r1; ++r) {
    const float* row = x + static_cast<std::ptrdiff_t>(r) * g.sh * g.w * g.c;
    for (int q = 0; q < g.ow; ++q, dst += g.c) std::memcpy(dst, row + static_cast<std::ptrdiff_t>(q) * g.sw * g.c, bytes);
  }
}

/// Panels of two output channel vectors of a 1×1 convolution (`pack_nhwc_hwio`'s).
constexpr int pointwise_panels(const conv_geometry& g) { return (padded_channels(g.o) / W + 1) / 2; }

/// True where the threads of a 1×1 convolution on NHWC split its panels of output channels
/// rather than its rows: images of fewer than 8 rows. MobileNetV2's 7×7 rows split 4 against
/// 3, and each thread read every weight (by panels, two cores come close to twice one core's
/// speed). Its 14×14 layers split by rows, like the chain's other steps: by panels each core
/// read its input from both cores' stores, half of it from the other's L2, and a depthwise
/// layer after it half its input again (slower for MobileNetV2 on two cores).
constexpr bool pointwise_by_panels(const conv_geometry& g) { return g.oh < 8 && pointwise_panels(g) >= 2; }

/// Task `t` of `tasks`' output channel vectors [v0, v1) where `pointwise_by_panels`.
struct pointwise_share {
  int v0 = 0, v1 = 0;
};
constexpr pointwise_share pointwise_share_of(const conv_geometry& g, int t, int tasks) {
  const int panels = pointwise_panels(g);
  return {2 * (panels * t / tasks), std::min(padded_channels(g.o) / W, 2 * (panels * (t + 1) / tasks))};
}

/// True where `pointwise_nhwc` prefetches each pass's weights during the pass before: weights
/// over 128 KB, which inside a network come from L3 or memory (MobileNetV2's 7×7 and 14×14
/// layers gain). Smaller ones stay in L2 between runs, where the prefetches
/// only take load slots.
constexpr bool pointwise_prefetches(int c, int o) {
  return static_cast<std::size_t>(c) * static_cast<std::size_t>(o) * sizeof(float) > (128u << 10);
}

/// The register tiles that one 1×1 convolution's `pointwise_nhwc` may run, known from its
/// geometry at compile time: passes of one, two and three output channel vectors, passes that
/// prefetch the next pass's weights (`pointwise_prefetches`) or not, and the positions of a
/// call: at least `least`, or `exactly` that many where it is above 0. Each kind of pass is a
/// tile for every size from Q/2 to Q and the smaller ones under Q; a model instantiates only
/// the kinds and sizes its convolutions run. ResNet-18's three downsampling convolutions (even
/// vector counts, one of them prefetching; at least 14 positions a call, 49 for the one split
/// by panels) now build nine tiles: seven plain sizes, two prefetching. With every kind for any
/// 1×1 its object file had held 38 tile functions and 90 KB of the kernel, and its build took
/// GCC half as long again as before the channels-last kernels (measured in
/// benchmarks/README.md at cbe6789, "Compile time").
struct pointwise_kernels {
  bool one = true, two = true, three = true;
  bool prefetching = true, plain = true;
  std::ptrdiff_t least = 0, exactly = 0;

  /// These kernels for calls of at least `n` positions.
  constexpr pointwise_kernels at_least(std::ptrdiff_t n) const {
    pointwise_kernels k = *this;
    k.least = n;
    return k;
  }
  /// These kernels for calls of `n` positions, no more and no fewer.
  constexpr pointwise_kernels positions(std::ptrdiff_t n) const {
    pointwise_kernels k = *this;
    k.least = k.exactly = n;
    return k;
  }
};

/// `pointwise_kernels` for `c` input and `o` output channels: two-vector passes where there are
/// two vectors; a one-vector pass where their count is odd (a task's share of panels may end in
/// the lone vector) and a three-vector pass where it is odd and above one; passes prefetching
/// where the weights are large (`pointwise_prefetches`; the last pass, which has nothing to
/// prefetch, runs that tile too, asking for no line) and plain ones elsewhere.
constexpr pointwise_kernels pointwise_kernels_for(int c, int o) {
  const int vectors = padded_channels(o) / W;
  const bool prefetches = pointwise_prefetches(c, o);
  return {.one = vectors % 2 == 1,
          .two = vectors >= 2,
          .three = vectors % 2 == 1 && vectors >= 3,
          .prefetching = prefetches,
          .plain = !prefetches};
}

/// Positions per tile of `pointwise_nhwc`: 24 accumulators for two vectors, leaving registers
/// for the weights and the broadcast value (AVX-512 has 32, AVX 16).
constexpr int pointwise_positions(int vb) { return W >= 16 ? 24 / vb : 12 / vb; }

/// Q positions (`c` floats apart in `x`, `o` in `y` and the residual) by VB output channel
/// vectors from panel `w` on (`pack_nhwc_hwio`'s: two vectors per input channel; a third vector
/// is the next panel's first): act(x · w + bias + residual). `bias` holds VB vectors or is
/// null, the residual is null or NHWC like `y`; the last vector stores `n_last` channels. With
/// Prefetch, the tile also asks for `pf_lines` cache lines from `pf` on (`share_of`), one per
/// input channel and any left over after the depth loop (a test in the loop of every tile had
/// slowed the fused steps' shallow expansions). The depth loop is then two: the input
/// channels that ask for a line, and the rest. With the test inside one loop, GCC split it so
/// itself but clang kept a branch in every step, and MobileNetV2's 14×14 and 7×7 1×1s ran far
/// slower in clang's build.
template <int Q, int VB, activation A, bool Prefetch = false>
inline void pointwise_tile(const float* x, int c, const float* w, const float* bias, const float* residual, float lo,
                           float hi, float* y, std::ptrdiff_t o, int n_last, const char* pf = nullptr,
                           int pf_lines = 0) {
  constexpr int P = wide_panel();
  vec acc[std::size_t{Q}][std::size_t{VB}];
#pragma GCC unroll 3
  for (int v = 0; v < VB; ++v) {
    const vec b = bias ? simd::load(bias + v * W) : simd::splat(0.f);
#pragma GCC unroll 24
    for (int u = 0; u < Q; ++u) acc[u][v] = b;
  }
  const auto depth_step = [&](int ci) __attribute__((always_inline)) {
    vec wk[std::size_t{VB}];
#pragma GCC unroll 3
    for (int v = 0; v < VB; ++v) wk[v] = simd::load(w + (v / 2) * c * P + ci * P + (v % 2) * W);
#pragma GCC unroll 24
    for (int u = 0; u < Q; ++u) {
      const vec xv = simd::splat(x[u * c + ci]);
#pragma GCC unroll 3
      for (int v = 0; v < VB; ++v) acc[u][v] = simd::fma(xv, wk[v], acc[u][v]);
    }
  };
  // Two depth steps per iteration with GCC; one with clang, which kept the unrolled pair's 24
  // accumulators in memory, a store and a load around every FMA (AVX-512: MobileNetV2's 1×1s
  // ran several times slower in clang's build; GCC's runs alike either way).
  int ci = 0;
  if constexpr (Prefetch) {
    const int with = std::min(c, pf_lines);
#if defined(__clang__)
#pragma GCC unroll 1
#else
#pragma GCC unroll 2
#endif
    for (; ci < with; ++ci) {
      __builtin_prefetch(pf + ci * simd::line_bytes);
      depth_step(ci);
    }
  }
#if defined(__clang__)
#pragma GCC unroll 1
#else
#pragma GCC unroll 2
#endif
  for (; ci < c; ++ci) depth_step(ci);
  if constexpr (Prefetch) {
    for (int l = c; l < pf_lines; ++l) __builtin_prefetch(pf + l * simd::line_bytes);
  }
  // The common case, whole vectors and no residual, tested once per tile. Tested at each
  // store, the two tests had slowed GCC's build of a shallow 1×1 (32 -> 192 channels on
  // 28×28); clang's build runs alike either way. (The depthwise and first-layer blocks keep
  // their test per store: with two copies of their stores, the depthwise rows' many
  // compile-time blocks on 28×28 and 14×14 and ResNet-18's 7×7 stem ran slower.)
  if (!residual && n_last >= W) {
#pragma GCC unroll 24
    for (int u = 0; u < Q; ++u)
#pragma GCC unroll 3
      for (int v = 0; v < VB; ++v) simd::store(y + u * o + v * W, apply<A>(acc[u][v], lo, hi));
    return;
  }
  // The general stores (a residual, or a part vector) in a loop that is not unrolled, from the
  // accumulators copied to an array: unrolled, each tile carried Q · VB copies of store_nhwc's
  // tests and masks, a third of the kernel's code and of GCC's time on it; MobileNetV2 runs
  // alike either way.
  vec out[std::size_t{Q * VB}];
#pragma GCC unroll 24
  for (int u = 0; u < Q; ++u)
#pragma GCC unroll 3
    for (int v = 0; v < VB; ++v) out[u * VB + v] = acc[u][v];
#pragma GCC unroll 1
  for (int u = 0; u < Q; ++u)
#pragma GCC unroll 1
    for (int v = 0; v < VB; ++v) {
      const std::ptrdiff_t at = u * o + v * W;
      store_nhwc<A>(out[u * VB + v], residual ? residual + at : nullptr, y + at, v + 1 < VB ? W : n_last, lo, hi);
    }
}

/// A run of n < Q positions as tiles of 2^k positions from the largest below Q down: 4
/// positions are one tile of 8 accumulators, not four of 2, whose FMAs wait on each other's
/// latency.
template <int Q, int VB, activation A>
inline void pointwise_rest(const float* x, int c, const float* w, const float* bias, const float* residual, float lo,
                           float hi, float* y, std::ptrdiff_t o, int n_last, std::ptrdiff_t n) {
  if constexpr (Q > 1) {
    constexpr int T = std::bit_floor(static_cast<unsigned>(Q - 1));
    if (n >= T) {
      pointwise_tile<T, VB, A>(x, c, w, bias, residual, lo, hi, y, o, n_last);
      x += T * c, y += T * o, n -= T;
      if (residual) residual += T * o;
    }
    pointwise_rest<T, VB, A>(x, c, w, bias, residual, lo, hi, y, o, n_last, n);
  }
}

/// `n` consecutive positions of a 1×1 convolution (`nhwc_pointwise`) from NHWC `x` (`c`
/// channels) to NHWC `y` (`o` channels), output channel vectors [v0, v1) (v0 even; all of
/// them by default): `w` packed by `pack_nhwc_hwio`, `bias` padded to whole panels or null,
/// the residual NHWC like `y` or null, activation A. Each panel of two output vectors runs over
/// all the positions before the next, so that its weights stay in L1. An odd number of vectors
/// ends in one pass of three (the last panel and the lone vector after it, tiles of 12 / 3
/// positions with AVX, 24 / 3 with AVX-512): run alone, the lone vector had read the input once
/// more, with a broadcast per FMA (MobileNetV2's projections to 24 and 40 channels were the
/// slower for it). The positions
/// are cut into as few tiles of at most Q as it takes, of sizes that differ by one at most: a
/// full tile and a tile of one position, whose two accumulators keep the FMAs waiting on their
/// latency, had slowed MobileNetV2's 7×7 layers (49 positions, tiles of 6). K names the tiles a
/// call may
/// run (`pointwise_kernels`): the caller's channels and positions must lie within it.
// Not inlined: in the fused expansion's row loop (conv_expand_depthwise.hpp) GCC then kept one
// of the tile's 12 AVX accumulators on the stack, a store and a load per input channel
// (MobileNetV2's 24 -> 144 expansion under a stride-2 depthwise conv2d, the step this slowed
// most). A call per row or per thread's share costs nothing next to its work.
template <activation A, pointwise_kernels K = pointwise_kernels{}>
[[gnu::noinline]] inline void pointwise_nhwc(const float* x, int c, const float* w, int o, const float* bias,
                                             const float* residual, float lo, float hi, float* y, std::ptrdiff_t n,
                                             int v0 = 0, int v1 = -1) {
  if (n <= 0) return;  // a task with no rows; K's sizes assume some positions
  if (v1 < 0) v1 = padded_channels(o) / W;
  // Vectors per pass from vector v on: two, or three where they end an odd count.
  const auto pass_vectors = [&](int v) { return v + 3 == v1 && v1 % 2 == 1 ? 3 : std::min(2, v1 - v); };
  for (int v = v0, vb = pass_vectors(v0); v < v1; v += vb, vb = pass_vectors(v)) {
    const float* wv = w + static_cast<std::ptrdiff_t>(v / 2) * c * wide_panel();
    const float* bv = bias ? bias + v * W : nullptr;
    const std::ptrdiff_t at = v * W;
    // The next pass's weights (its panels: one, or two for three vectors), a slice per tile,
    // where the weights may have left the caches since the last run (`pointwise_prefetches`).
    const int next = v + vb;
    const float* pf = next < v1 ? w + static_cast<std::ptrdiff_t>(next / 2) * c * wide_panel() : nullptr;
    const std::ptrdiff_t pf_floats = next < v1 && pointwise_prefetches(c, o)
                                         ? static_cast<std::ptrdiff_t>((pass_vectors(next) + 1) / 2) * c * wide_panel()
                                         : 0;
    const auto run = [&]<int VB, bool Prefetch>() {
      constexpr int Q = pointwise_positions(VB);
      const int n_last = std::min(W, o - (v + VB - 1) * W);
      if constexpr (K.least < Q) {
        if (n < Q) {
          pointwise_rest<Q, VB, A>(x, c, wv, bv, residual ? residual + at : nullptr, lo, hi, y + at, o, n_last, n);
          return;
        }
      }
      // As few tiles as it takes, of even sizes (from Q/2 up: enough accumulators in flight).
      const std::ptrdiff_t tiles = (n + Q - 1) / Q, size = n / tiles, larger = n % tiles;
      std::ptrdiff_t p = 0, t = 0;
      // The tile's pointers advanced and its arguments held in locals: read through the
      // lambda's references, both compilers reloaded them from the stack and recomputed the
      // pointers for every tile, which an alternated A/B run of MobileNetV2 showed on both.
      const auto tiles_of = [&]<int S>(std::ptrdiff_t count) {
        const float* xt = x + p * c;
        const float* rt = residual ? residual + p * o + at : nullptr;
        float* yt = y + p * o + at;
        const int depth = c;
        const std::ptrdiff_t pitch = o;
        const float* const wt = wv;
        const float* const bt = bv;
        const float l = lo, h = hi;
        const int nl = n_last;
        for (std::ptrdiff_t i = 0; i < count; ++i, xt += S * depth, yt += S * pitch) {
          const prefetch_share share = Prefetch && pf_floats ? share_of(pf, pf_floats, t + i, tiles) : prefetch_share{};
          pointwise_tile<S, VB, A, Prefetch>(xt, depth, wt, bt, rt, l, h, yt, pitch, nl, share.start, share.lines);
          if (rt) rt += S * pitch;
        }
        p += S * count, t += count;
      };
      if constexpr (K.exactly >= Q) {
        // The two sizes of this count of positions only.
        constexpr std::ptrdiff_t k_tiles = (K.exactly + Q - 1) / Q, k_size = K.exactly / k_tiles;
        if constexpr (K.exactly % k_tiles > 0) tiles_of.template operator()<k_size + 1>(K.exactly % k_tiles);
        tiles_of.template operator()<k_size>(k_tiles - K.exactly % k_tiles);
      } else {
        [&]<int... S>(std::integer_sequence<int, S...>) {
          constexpr int lo_size = Q / 2;
          ((size + 1 == lo_size + S ? tiles_of.template operator()<lo_size + S>(larger) : void()), ...);
          ((size == lo_size + S ? tiles_of.template operator()<lo_size + S>(tiles - larger) : void()), ...);
        }(std::make_integer_sequence<int, Q - Q / 2 + 1>{});
      }
    };
    // A pass of prefetching tiles where K has no plain ones asks for no line when its
    // `pf_floats` is 0 (the last pass).
    const auto pass = [&]<int VB>() {
      if constexpr (K.prefetching && K.plain) {
        if (pf_floats) run.template operator()<VB, true>();
        else run.template operator()<VB, false>();
      } else {
        run.template operator()<VB, K.prefetching>();
      }
    };
    if (vb == 3) {
      if constexpr (K.three) pass.template operator()<3>();
    } else if (vb == 2) {
      if constexpr (K.two) pass.template operator()<2>();
    } else if constexpr (K.one) {
      run.template operator()<1, false>();
    }
  }
}

}  // namespace partita::detail::cpu
