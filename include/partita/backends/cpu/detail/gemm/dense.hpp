#pragma once
/// cpu dense as a GEMM over weights packed into panels at bind.
// dense as GEMM: y[M×N] = x[M×K] · wᵀ, the weights packed at bind into panels of NR units
// ([panel][k][NR], zero-padded), the activations read in place.
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "partita/backends/cpu/detail/gemm/gemm.hpp"
#include "partita/backends/cpu/detail/host_cpu.hpp"
#include "partita/backends/cpu/detail/state.hpp"

namespace partita::detail::cpu {

/// Blocking for `M` rows and `N` units: a row or two stream the weights (GEMV: up to 4 vectors
/// of units at a time, fewer for a few units, so that padding does not add weight traffic); more
/// rows use the conv blocking, one vector wide where the units fit one (a classifier of 10
/// units, as W2's last layer, would otherwise compute a second vector of padding).
template <int M, int N>
struct dense_blocking {
  static constexpr int mr = M <= 2 ? M : (W >= 16 ? 8 : 6);
  static constexpr int nv = M <= 2 ? std::min(4, (N + W - 1) / W) : N <= W ? 1 : 2;
  static constexpr int nr = nv * W;
  /// How the depth of a panel is split: one pass up to `whole`, else even passes of at most
  /// `most` (uneven ones had left W2's 784-deep layer a last pass of 16, which loads and stores
  /// C for little work).
  struct depth_passes {
    int whole, most;
  };
  /// The split on `host`. Measured per vendor: with AVX-512 on Intel, passes of 256, whose slice
  /// of the panel (kc × 32 floats, 32 KB) stays in L1 while every row tile reads it (W2's
  /// layers are faster so on Sapphire Rapids than in one pass); on AMD, and on Intel with AVX2,
  /// one pass up to 1024, else passes of 512: with AVX (Zen 3), and with AVX-512 on a Zen 5
  /// core, whose 1 MB L2 holds a whole panel while every row tile reads it, one pass beats
  /// passes of 256 on W2's and W6's dense steps, most on two cores. Another vendor's core gets
  /// the textbook rule from its own L1d: slices of the panel that fill half of it.
  static constexpr depth_passes passes_on(const host_cpu_info& host) {
    if (host.vendor == cpu_vendor::intel && W >= 16) return {256, 256};
    if (host.vendor != cpu_vendor::other) return {1024, 512};
    const int per_row = nr * static_cast<int>(sizeof(float));
    const int slice = static_cast<int>(host.l1d_bytes / 2 / static_cast<std::size_t>(per_row)) / 16 * 16;
    const int kc = slice < 64 ? 64 : slice > 512 ? 512 : slice;
    return {kc, kc};
  }
  /// Depth per pass over a panel for a depth of k on `host`; one or two rows stream the whole
  /// depth, whose weights are read once.
  static constexpr int kc_for(int k, const host_cpu_info& host) {
    const depth_passes d = passes_on(host);
    if (M <= 2 || k <= d.whole) return k < 1 ? 1 : k;
    const int passes = (k + d.most - 1) / d.most;
    return (k + passes - 1) / passes;
  }
  static int kc_for(int k) { return kc_for(k, host_cpu()); }
};

constexpr std::size_t packed_dense_floats(int n, int k, int nr) {
  return static_cast<std::size_t>((n + nr - 1) / nr) * static_cast<std::size_t>(k) * static_cast<std::size_t>(nr);
}

/// Packs w [N×K] into [panel][k][NR].
inline void pack_dense_weights(const float* w, int n, int k, int nr, float* packed) {
  const int panels = (n + nr - 1) / nr;
  for (int p = 0; p < panels; ++p) {
    float* dst = packed + static_cast<std::ptrdiff_t>(p) * k * nr;
    for (int kk = 0; kk < k; ++kk)
      for (int j = 0; j < nr; ++j) {
        const int u = p * nr + j;
        dst[static_cast<std::ptrdiff_t>(kk) * nr + j] = u < n ? w[static_cast<std::ptrdiff_t>(u) * k + kk] : 0.f;
      }
  }
}

/// Unit panels [p0, p1) of y = act(x · wᵀ + bias (+ residual)), from p1 - 1 down to p0 where
/// `reversed`, rows [m_begin, m_end) of it (m_begin a multiple of the row tile, m_end one too or
/// M). `pad` holds MR × K floats for the last rows when M is not a multiple of MR.
/// One or two rows stream every weight once per run: run after run in one order, weights a
/// little larger than L2 all come from L3 (each run evicts the lines the next one reads
/// first); every other run in the opposite order (`state::reverse_order`), a run starts on the
/// panels the last one read last, still in L2. W1's weights (784 → 512 → 512 → 10), a little
/// larger than a Sapphire Rapids core's 2 MB of L2, are the case this is for.
template <int M, int N>
inline void dense_panels(const float* x, int k, const float* packed, int n, float* y, const epilogue& e, int p0, int p1,
                         float* pad, bool reversed = false, int m_begin = 0, int m_end = M) {
  using blk = dense_blocking<M, N>;
  constexpr int MR = blk::mr, NV = blk::nv, NR = blk::nr;
  const int KC = blk::kc_for(k);
  constexpr int tail = M % MR;
  if constexpr (tail != 0) {
    const auto depth = static_cast<std::size_t>(k);
    std::memset(pad, 0, sizeof(float) * static_cast<std::size_t>(MR) * depth);
    std::memcpy(pad, x + static_cast<std::size_t>(M - tail) * depth, sizeof(float) * static_cast<std::size_t>(tail) * depth);
  }
  const int tiles = (m_end - m_begin + MR - 1) / MR;
  for (int i = p0; i < p1; ++i) {
    const int p = reversed ? p0 + p1 - 1 - i : i;
    const int n0 = p * NR;
    const int nr = std::min(NR, n - n0);
    const float* bp = packed + static_cast<std::ptrdiff_t>(p) * k * NR;
    for (int k0 = 0; k0 < k; k0 += KC) {
      const int kc = std::min(KC, k - k0);
      const bool last = k0 + kc == k;
      // Several row tiles share out the prefetch of the slice they read next: the panel's next
      // pass, or the next panel's first (panels are contiguous; this order is never reversed).
      // Asked for from L3 while the current slice is in L1, it is in L2 when the first tile
      // reaches it (W2 and W6 gain, most on one thread). One or two rows stream theirs
      // (`micro_kernel`'s own prefetch).
      const bool ahead = M > 2 && !(last && i + 1 == p1);
      const float* next = bp + static_cast<std::ptrdiff_t>(ahead ? k0 + kc : 0) * NR;
      const int next_k = !ahead ? 0 : last ? KC : std::min(KC, k - k0 - kc);
      const std::ptrdiff_t next_floats = static_cast<std::ptrdiff_t>(next_k) * NR;
      for (int m0 = m_begin, t = 0; m0 < m_end; m0 += MR, ++t) {
        const int mr = std::min(MR, M - m0);
        const float* a = mr == MR ? x + static_cast<std::ptrdiff_t>(m0) * k + k0 : pad + k0;
        const epilogue te = tile_epilogue(e, m0, n0, n);
        prefetch_share pf = share_of(next, next_floats, t, tiles);
        if constexpr (M <= 2)  // where the stream goes on: the next panel in this run's order
          pf.start = i + 1 == p1 ? nullptr
                                 : reinterpret_cast<const char*>(packed + static_cast<std::ptrdiff_t>(reversed ? p - 1 : p + 1) * k * NR);
        const float* b = bp + static_cast<std::ptrdiff_t>(k0) * NR;
        float* c = y + static_cast<std::ptrdiff_t>(m0) * n + n0;
        gemm_tile<MR, NV, false, false>(kc, a, k, b, NR, nullptr, c, n, mr, nr, k0 > 0, last ? &te : nullptr, pf);
      }
    }
  }
}

/// Row tiles each thread needs before a dense step of several rows splits by rows rather than
/// by panels of units, measured with W2 (64 × 784 → 512 → 512 → 10) on two threads. Split by
/// rows, each thread reads every weight panel for its own row tiles only, so each slice of a
/// panel serves fewer tiles from L1 or L2; split by panels, each thread reads every row, half
/// of them from the other core's stores. With the depth in one pass (`kc_for`), the row split
/// at 4 tiles a thread is the faster on both Sapphire Rapids and Zen 5 guests (with passes of
/// 256 over the depth, Zen 5 had preferred panels).
inline constexpr int dense_row_split_tiles = 4;

/// A dense step of M rows and N units on `st`'s threads: y = act(x · wᵀ + bias (+ residual))
/// with the weights `packed` (`pack_dense_weights`), K deep, `e` the epilogue; `step` is the
/// step's index, whose order flag (`state::need_order_flag`) one or two rows need.
template <int M, int N>
inline void dense_step(state& st, const float* x, int k, const float* packed, float* y, const epilogue& e, int step) {
  using blk = dense_blocking<M, N>;
  constexpr int panels = (N + blk::nr - 1) / blk::nr;
  // A few rows stream their weights: count each weight byte as a few flops of work, so that a
  // 1 MB weight matrix is split across cores even at batch 1.
  const double flops = std::max(2.0 * M * N * k, 4.0 * sizeof(float) * N * k);
  const bool reversed = M <= 2 && st.reverse_order(step);
  // Many rows split by rows, each thread then reading every weight for at least
  // `dense_row_split_tiles` row tiles of its own, few rows by panels of units. Split by
  // panels, each thread read the whole input, half of it from the other core's stores where the
  // step before had split its output so (a transformer's dense steps and their layer norms),
  // and wrote half of each row: the BERT-style encoder of 128 tokens (W6, 16 row tiles) runs
  // faster by rows.
  // Split by rows, each thread also reads only its own rows of the input, which the step
  // before left in its core's cache where it split its output alike: a step too small to split
  // for its flops alone still splits for those reads (W2's 64 × 512 → 10 after a row split: on
  // one thread, half its input would come from the other core's cache).
  constexpr int row_tiles = (M + blk::mr - 1) / blk::mr;
  const double row_work = flops + moved_cost * static_cast<double>(M) * k;
  const int row_tasks = M > 2 ? tasks_for(row_work, st.workers(), row_tiles / dense_row_split_tiles) : 1;
  if (row_tasks > 1) {
    st.parallel(row_tasks, [&](int t) {
      const int m0 = row_tiles * t / row_tasks * blk::mr;
      const int m1 = std::min(M, row_tiles * (t + 1) / row_tasks * blk::mr);
      dense_panels<M, N>(x, k, packed, N, y, e, 0, panels, st.thread_scratch(t), reversed, m0, m1);
    });
    return;
  }
  const int tasks = tasks_for(flops, st.workers(), panels);
  st.parallel(tasks, [&](int t) {
    const int p0 = panels * t / tasks, p1 = panels * (t + 1) / tasks;
    dense_panels<M, N>(x, k, packed, N, y, e, p0, p1, st.thread_scratch(t), reversed);
  });
}

}  // namespace partita::detail::cpu
