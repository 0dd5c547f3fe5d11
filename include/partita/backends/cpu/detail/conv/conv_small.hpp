#pragma once
/// cpu conv2d for small images, vectorized over output channels.
// conv2d on small images (7×7, 14×14, ...), where vectors of output positions would be mostly
// padding: vectors of output channels instead. The weights are packed like dense weights (panels
// of NR output channels), each of MR output positions is broadcast from the phase-split input
// copy (see conv.hpp) at a compile-time offset, and each tile is transposed into NCHW as it is
// stored, with the residual and the activation.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "partita/backends/cpu/detail/conv/conv.hpp"

namespace partita::detail::cpu {

/// The positions per tile (4 to 8) that waste the fewest lanes on `n` positions, with `nv`
/// vectors of channels: MR × NV accumulators, NV weight vectors and a broadcast must fit in the
/// vector registers (32 with AVX-512, 16 with AVX2), or the tile spills to the stack.
constexpr int small_conv_rows(int n, int nv) {
  const int registers = W >= 16 ? 32 : 16;
  const int most = std::max(4, std::min(8, (registers - nv - 1) / nv));
  int best = most;
  double best_eff = 0;
  for (int mr = most; mr >= 4; --mr) {
    const double eff = static_cast<double>(n) / (((n + mr - 1) / mr) * mr);
    if (eff > best_eff + 1e-9) {
      best = mr;
      best_eff = eff;
    }
  }
  return best;
}

/// Fraction of the computed lanes that are useful, for the position-vectorized path (conv.hpp)
/// and for this one with NV vectors of channels.
constexpr double positions_efficiency(const conv_geometry& g) {
  const int nr = conv_block::nr, mr = conv_block::mr;
  const double pos = static_cast<double>(g.oh * g.ow) / (((g.npos + nr - 1) / nr) * nr);
  const double ch = static_cast<double>(g.og) / (((g.og + mr - 1) / mr) * mr);
  return pos * ch;
}
constexpr double channels_efficiency(const conv_geometry& g, int nv) {
  const int nr = nv * W, mr = small_conv_rows(g.oh * g.ow, nv);
  const int n = g.oh * g.ow;
  const double pos = static_cast<double>(n) / (((n + mr - 1) / mr) * mr);
  const double ch = static_cast<double>(g.og) / (((g.og + nr - 1) / nr) * nr);
  return pos * ch;
}

/// Offsets in the phase-split copy of every output position (row-major), for broadcasting.
template <std::size_t N>
constexpr std::array<std::int32_t, N> position_offsets(const conv_geometry& g) {
  std::array<std::int32_t, N> off{};
  std::size_t i = 0;
  for (int oh = 0; oh < g.oh; ++oh)
    for (int ow = 0; ow < g.ow; ++ow) off[i++] = oh * g.wq + ow;
  return off;
}

/// tile (+)= rows · w over `k` depths (`accumulate`: add to the tile's current values). The
/// first `prefetch_lines` iterations each ask for one cache line from `prefetch` on into L2;
/// lines beyond the depth are asked for after the loop.
template <int MR, int NV>
inline void small_conv_tile(int k, const float* const* rows, const std::int32_t* __restrict boff,
                            const float* __restrict w, bool accumulate, const float* bias, float* __restrict tile,
                            const char* prefetch = nullptr, int prefetch_lines = 0) {
  constexpr int NR = NV * W;
  vec acc[std::size_t{MR}][std::size_t{NV}];
#pragma GCC unroll 16
  for (int m = 0; m < MR; ++m)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[m][v] = accumulate ? simd::load(tile + m * NR + v * W) : simd::splat(0.f);
  const float* r[std::size_t{MR}];
#pragma GCC unroll 16
  for (int m = 0; m < MR; ++m) r[m] = rows[m];
  const auto depth_step = [&](int kk) __attribute__((always_inline)) {
    const std::int32_t o = boff[kk];
    vec bv[std::size_t{NV}];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) bv[v] = simd::load(w + kk * NR + v * W);
#pragma GCC unroll 16
    for (int m = 0; m < MR; ++m) {
      const vec av = simd::splat(r[m][o]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[m][v] = simd::fma(av, bv[v], acc[m][v]);
    }
  };
  // Two loops, the depths that ask for a line and the rest, as in `pointwise_tile`, where clang
  // kept the test of a single loop in every step and lost a third of the speed (GCC splits
  // such a loop itself).
  int kk = 0;
  for (const int with = std::min(k, prefetch_lines); kk < with; ++kk) {
    __builtin_prefetch(prefetch + kk * simd::line_bytes, 0, 2);
    depth_step(kk);
  }
  for (; kk < k; ++kk) depth_step(kk);
  for (int l = k; l < prefetch_lines; ++l) __builtin_prefetch(prefetch + l * simd::line_bytes, 0, 2);
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v) {
    const vec b = bias ? simd::load(bias + v * W) : simd::splat(0.f);
#pragma GCC unroll 16
    for (int m = 0; m < MR; ++m) simd::store(tile + m * NR + v * W, acc[m][v] + b);
  }
}

/// Depth per pass over a weight panel: its slice (kc × NR floats) stays in L1 for every tile.
inline constexpr int small_conv_depth = 128;

/// Floats of per-thread scratch `small_conv_tiles` needs: one tile per position tile.
constexpr std::size_t small_conv_scratch(int positions, int mr, int nv) {
  return static_cast<std::size_t>((positions + mr - 1) / mr) * static_cast<std::size_t>(mr * nv * W);
}

/// Channel panels [p0, p1) × position tiles [t0, t1) of group `gr` of one image. The bias must
/// be readable for NR channels past the last one; `tiles` holds `small_conv_scratch` floats.
///
/// The packed weights are read once, in order, and on small images they are most of the data:
/// a 512-channel 3×3 layer on 7×7 has 9.4 MB of them, which inside a network come from memory
/// (the layers before evicted them). While the tiles work on one depth block, each asks for its
/// share of the next block's lines, so that the block is in L2 when they reach it (with cold
/// caches, that layer then runs close to its time with the weights already in cache).
template <int MR, int NV>
inline void small_conv_tiles(const conv_geometry& g, const std::int32_t* boff, const std::int32_t* pos,
                             const float* packed, const float* buf, float* y, const epilogue& e, int gr, int p0, int p1,
                             int t0, int t1, float* tiles) {
  constexpr int NR = NV * W;
  const int n = g.oh * g.ow;
  const int panels = (g.og + NR - 1) / NR;
  const float* bgroup = buf + static_cast<std::size_t>(gr) * static_cast<std::size_t>(g.cg) * g.plane_set;
  for (int p = p0; p < p1; ++p) {
    const int o0 = gr * g.og + p * NR;
    const int nc = std::min(NR, g.og - p * NR);
    const float* w = packed + (static_cast<std::ptrdiff_t>(gr) * panels + p) * static_cast<std::ptrdiff_t>(g.k) * NR;
    for (int k0 = 0; k0 < g.k; k0 += small_conv_depth) {
      const int kc = std::min(small_conv_depth, g.k - k0);
      const bool last = k0 + kc == g.k;
      // The next block: the rest of this panel's depth, else the next panel's first block.
      const float* next = w + static_cast<std::ptrdiff_t>(k0 + kc) * NR;
      const std::ptrdiff_t next_floats =
          !last ? static_cast<std::ptrdiff_t>(std::min(small_conv_depth, g.k - k0 - kc)) * NR
                : (p + 1 < p1 ? static_cast<std::ptrdiff_t>(std::min(small_conv_depth, g.k)) * NR : 0);
      for (int t = t0; t < t1; ++t) {
        const int q0 = t * MR;
        const int mr = std::min(MR, n - q0);
        const float* rows[std::size_t{MR}];
        for (int m = 0; m < MR; ++m) rows[m] = bgroup + pos[q0 + std::min(m, mr - 1)];
        const prefetch_share pf = share_of(next, next_floats, t - t0, t1 - t0);
        small_conv_tile<MR, NV>(kc, rows, boff + k0, w + static_cast<std::size_t>(k0) * NR, k0 > 0,
                                last && e.bias ? e.bias + o0 : nullptr, tiles + (t - t0) * MR * NR, pf.start,
                                pf.lines);
      }
    }
    // Each channel's positions of a tile are contiguous in NCHW: gathered from the tile's column,
    // then the residual and the activation are applied a vector at a time.
    constexpr int col_floats = (MR + W - 1) / W * W;
    for (int t = t0; t < t1; ++t) {
      const int q0 = t * MR;
      const int mr = std::min(MR, n - q0);
      const float* tile = tiles + (t - t0) * MR * NR;
      for (int c = 0; c < nc; ++c) {
        float* dst = y + static_cast<std::ptrdiff_t>(o0 + c) * n + q0;
        const float* res = e.residual ? e.residual + static_cast<std::ptrdiff_t>(o0 + c) * n + q0 : nullptr;
        alignas(64) float col[static_cast<std::size_t>(col_floats)] = {};
#pragma GCC unroll 8
        for (int m = 0; m < MR; ++m) col[m] = tile[m * NR + c];
        for (int m0 = 0; m0 < mr; m0 += W) {
          const int len = std::min(W, mr - m0);
          vec v = simd::load(col + m0);
          if (res) v = v + (len == W ? simd::load(res + m0) : simd::load_first(res + m0, len));
          v = activate(v, e.act, e.lo, e.hi);
          if (len == W) simd::store(dst + m0, v);
          else simd::store_first(dst + m0, v, len);
        }
      }
    }
  }
}

}  // namespace partita::detail::cpu
