#pragma once
/// The register-blocked GEMM micro-kernel shared by cpu dense and conv2d.
// The register-blocked GEMM core shared by dense and conv2d: C[MR×NR] (+)= A[MR×k] · B[k×NR]
// with NR = NV vectors, the accumulators held in registers for the whole k loop.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "partita/backends/cpu/detail/gemm/epilogue.hpp"
#include "partita/backends/cpu/detail/simd/simd.hpp"

namespace partita::detail::cpu {

using simd::vec;
inline constexpr int W = simd::width;

/// How the micro-kernel reads A and B:
/// - A packed: `a[k * MR + m]` (conv weights, packed at bind); otherwise rows `a[m * lda + k]`
///   (dense activations, read in place);
/// - B indirect: row k at `b + boff[k]` (stride-1 convolution straight from the padded input);
///   otherwise `b + k * ldb` (packed weight panels, packed im2col panels, 1×1 inputs).
/// Steps of the depth ahead that a one- or two-row micro-kernel prefetches its B rows: 24, 3 KB
/// of a panel with AVX and 6 KB with AVX-512. Weights that come from memory want enough misses
/// in flight (MobileNetV2's 1280 -> 1000 classifier, evicted from L3 by the rest of the network,
/// is faster at 32 steps and more than at 8). Weights in L3 want few: W1 (784 -> 512 -> 512 -> 10)
/// is faster at 8 to 24 steps than at 48 and slower at 96 on Zen 5, where MobileNetV2 does not
/// mind; 24 serves both (measurements: benchmarks/results/ and the history of this comment).
inline constexpr int gemv_prefetch = 24;

/// The cache lines of `floats` floats from `p`, shared out among `parts` callers: which lines
/// part `i` of them asks for (the start and the count). Kernels that prefetch the next weights
/// while they work (`small_conv_tile`, `pointwise_tile`) ask for one line per step of their
/// depth loop and for any left over after it.
/// One- and two-row micro-kernels, which stream B and take no share (`lines` 0), read `start`
/// as where the stream goes on after this B (the next panel in the caller's order), whose first
/// rows their last steps ask for; null: the memory right after B. (Two fields, not three: with
/// a third, even unused, the struct no longer travels in two registers, which slowed the
/// BERT-style encoder measurably in an alternated A/B run.)
struct prefetch_share {
  const char* start = nullptr;
  int lines = 0;
};
inline prefetch_share share_of(const float* p, std::ptrdiff_t floats, std::ptrdiff_t i, std::ptrdiff_t parts) {
  const std::ptrdiff_t total = (floats * static_cast<std::ptrdiff_t>(sizeof(float)) + simd::line_bytes - 1) / simd::line_bytes;
  const std::ptrdiff_t l0 = total * i / parts, l1 = total * (i + 1) / parts;
  return {reinterpret_cast<const char*>(p) + l0 * simd::line_bytes, static_cast<int>(l1 - l0)};
}

/// C[MR×NR] (+)= A · B over `kc` depths, then the epilogue `e` where given. The first
/// `pf.lines` depth steps each ask for one cache line from `pf.start` on into L2 (lines beyond
/// the depth after the loop): a share of the weights the caller reads next.
template <int MR, int NV, bool APacked, bool BIndirect>
inline void micro_kernel(int kc, const float* __restrict a, std::ptrdiff_t lda, const float* __restrict b,
                         std::ptrdiff_t ldb, const std::int32_t* __restrict boff, float* __restrict c,
                         std::ptrdiff_t ldc, bool load_c, const epilogue* e, int mr = MR, prefetch_share pf = {}) {
  // Rows from `mr` on are computed (A is padded) but neither loaded, nor stored, nor given a residual.
  vec acc[std::size_t{MR}][std::size_t{NV}];
#pragma GCC unroll 16
  for (int m = 0; m < MR; ++m)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[m][v] = load_c && m < mr ? simd::load(c + m * ldc + v * W) : simd::splat(0.f);

  const auto depth_step = [&](int k) __attribute__((always_inline)) {
    const float* bk = BIndirect ? b + boff[k] : b + k * ldb;
    if constexpr (MR <= 2 && !BIndirect) {
      // One or two rows (a dense layer at batch 1 or 2) stream B, the weights, from L3 or
      // memory with few FMAs per byte: ask for each cache line of the row `gemv_prefetch`
      // steps ahead (an address as an integer: past the panel's end it is no pointer to form);
      // the last steps ask for the first rows of the panel read next (`pf.start`), which in a
      // run of reversed order lies before this one. The batch-1 MLP (W1) is the workload this
      // serves: its rows are all weight stream.
      const int r = k + gemv_prefetch;
      const std::uintptr_t ahead =
          r < kc || !pf.start ? reinterpret_cast<std::uintptr_t>(b) + static_cast<std::uintptr_t>(r * ldb) * sizeof(float)
                              : reinterpret_cast<std::uintptr_t>(pf.start) + static_cast<std::uintptr_t>((r - kc) * ldb) * sizeof(float);
#pragma GCC unroll 4
      for (int line = 0; line < NV * W; line += simd::line_floats)
        __builtin_prefetch(reinterpret_cast<const void*>(ahead + static_cast<std::uintptr_t>(line) * sizeof(float)));
    }
    vec bv[std::size_t{NV}];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) bv[v] = simd::load(bk + v * W);
#pragma GCC unroll 16
    for (int m = 0; m < MR; ++m) {
      const vec av = simd::splat(APacked ? a[k * MR + m] : a[m * lda + k]);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) acc[m][v] = simd::fma(av, bv[v], acc[m][v]);
    }
  };
  // Two loops, the steps that ask for a line and the rest (as in `small_conv_tile`).
  int k = 0;
  for (const int with = std::min(kc, pf.lines); k < with; ++k) {
    __builtin_prefetch(pf.start + static_cast<std::ptrdiff_t>(k) * simd::line_bytes, 0, 2);
    depth_step(k);
  }
  for (; k < kc; ++k) depth_step(k);
  for (int l = kc; l < pf.lines; ++l)
    __builtin_prefetch(pf.start + static_cast<std::ptrdiff_t>(l) * simd::line_bytes, 0, 2);

  if (e) {
    if (e->bias) {
      if (e->bias_per_row) {
#pragma GCC unroll 16
        for (int m = 0; m < MR; ++m) {
          const vec bm = simd::splat(e->bias[m]);
#pragma GCC unroll 8
          for (int v = 0; v < NV; ++v) acc[m][v] = acc[m][v] + bm;
        }
      } else {
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) {
          const vec bv = simd::load(e->bias + v * W);
#pragma GCC unroll 16
          for (int m = 0; m < MR; ++m) acc[m][v] = acc[m][v] + bv;
        }
      }
    }
    if (e->residual) {
#pragma GCC unroll 16
      for (int m = 0; m < MR; ++m)
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v)
          if (m < mr) acc[m][v] = acc[m][v] + simd::load(e->residual + m * e->ld_residual + v * W);
    }
    if (e->act != activation::none && !is_transcendental(e->act)) {
#pragma GCC unroll 16
      for (int m = 0; m < MR; ++m)
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) acc[m][v] = activate(acc[m][v], e->act, e->lo, e->hi);
    }
  }
#pragma GCC unroll 16
  for (int m = 0; m < MR; ++m)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v)
      if (m < mr) simd::store(c + m * ldc + v * W, acc[m][v]);
  // Expensive activations run over the stored tile, which is in L1, in one call.
  if (e && is_transcendental(e->act)) transcendental_rows(c, ldc, mr < MR ? mr : MR, NV, e->act);
}

/// A tile narrower than NR columns (`gemm_tile`), through a local tile, so that nothing outside
/// the valid rows and columns of C, the bias or the residual is read or written.
template <int MR, int NV, bool APacked, bool BIndirect>
inline void gemm_narrow_tile(int kc, const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb,
                             const std::int32_t* boff, float* c, std::ptrdiff_t ldc, int mr, int nr, bool load_c,
                             const epilogue* e, prefetch_share pf) {
  constexpr int NR = NV * W;
  alignas(64) float t[std::size_t{MR * NR}];
  alignas(64) float r[std::size_t{MR * NR}];
  alignas(64) float bias[std::size_t{MR > NR ? MR : NR}];
  if (load_c)
    for (int m = 0; m < mr; ++m) std::memcpy(t + m * NR, c + m * ldc, sizeof(float) * static_cast<std::size_t>(nr));
  epilogue local;
  if (e) {
    local = *e;
    if (e->bias) {
      std::fill(bias, bias + (MR > NR ? MR : NR), 0.f);
      std::memcpy(bias, e->bias, sizeof(float) * static_cast<std::size_t>(e->bias_per_row ? mr : nr));
      local.bias = bias;
    }
    if (e->residual) {
      for (int m = 0; m < mr; ++m)
        std::memcpy(r + m * NR, e->residual + m * e->ld_residual, sizeof(float) * static_cast<std::size_t>(nr));
      local.residual = r;
      local.ld_residual = NR;
    }
  }
  micro_kernel<MR, NV, APacked, BIndirect>(kc, a, lda, b, ldb, boff, t, NR, load_c, e ? &local : nullptr, MR, pf);
  for (int m = 0; m < mr; ++m) std::memcpy(c + m * ldc, t + m * NR, sizeof(float) * static_cast<std::size_t>(nr));
}

/// One tile of `mr ≤ MR` rows and `nr ≤ NR` columns: tiles of full width go straight to C,
/// narrower ones through a local tile (`gemm_narrow_tile`). (A and B must be readable for the
/// full tile: packed panels are zero-padded, row-read A is padded by the caller, and a row bias
/// must be readable for MR rows.) The full-width branch is this small function's whole work, so
/// that callers inline it: with the local tiles in the same function GCC did not, and W2's
/// dense steps, which pass a prefetch share, ran slower for the call.
template <int MR, int NV, bool APacked, bool BIndirect>
inline void gemm_tile(int kc, const float* a, std::ptrdiff_t lda, const float* b, std::ptrdiff_t ldb,
                      const std::int32_t* boff, float* c, std::ptrdiff_t ldc, int mr, int nr, bool load_c,
                      const epilogue* e, prefetch_share pf = {}) {
  if (nr == NV * W) micro_kernel<MR, NV, APacked, BIndirect>(kc, a, lda, b, ldb, boff, c, ldc, load_c, e, mr, pf);
  else gemm_narrow_tile<MR, NV, APacked, BIndirect>(kc, a, lda, b, ldb, boff, c, ldc, mr, nr, load_c, e, pf);
}

/// Epilogue pointers moved to the tile at row `m0`, column `n0` of an output with leading
/// dimension `ldc` (the residual has the output's layout).
inline epilogue tile_epilogue(const epilogue& e, int m0, int n0, std::ptrdiff_t ldc) {
  epilogue t = e;
  if (e.bias) t.bias = e.bias + (e.bias_per_row ? m0 : n0);
  if (e.residual) {
    t.residual = e.residual + m0 * ldc + n0;
    t.ld_residual = ldc;
  }
  return t;
}

}  // namespace partita::detail::cpu
