#pragma once
// The single-core FMA peak the runtime benchmark states its GFLOP/s against: independent chains
// of vector fused multiply-adds on the instruction set the kernels are built for, enough of them
// to cover the FMA latency on every port (a 2-port AVX-512 core needs 2 × 4 in flight; 16 are
// run with 32 registers, 12 with 16).
#include <algorithm>
#include <chrono>

#include <benchmark/benchmark.h>
#include <xsimd/xsimd.hpp>

namespace bench {

namespace detail {
using fma_vec = xsimd::batch<float, xsimd::default_arch>;
inline constexpr int fma_chains = fma_vec::size >= 16 ? 16 : 12;

// `iterations` rounds of `fma_chains` independent FMAs; returns a value that depends on all of them.
[[gnu::noinline]] inline float fma_rounds(long iterations, float a, float b) {
  fma_vec acc[fma_chains];
  for (int k = 0; k < fma_chains; ++k) acc[k] = fma_vec(static_cast<float>(k));
  const fma_vec va(a), vb(b);
  for (long i = 0; i < iterations; ++i)
    for (int k = 0; k < fma_chains; ++k) acc[k] = xsimd::fma(acc[k], va, vb);
  fma_vec s = acc[0];
  for (int k = 1; k < fma_chains; ++k) s += acc[k];
  return xsimd::hadd(s);
}
}  // namespace detail

/// Measured GFLOP/s of one core's FMA units (an FMA counts 2 flops per lane), best of 7 runs of
/// about 20 ms each; measured once per process.
inline double fma_peak_gflops() {
  static const double peak = [] {
    constexpr long iterations = 2'000'000;
    volatile float a = 0.999f, b = 0.001f;  // not constants: the chains cannot be folded
    double best = 0;
    for (int run = 0; run < 7; ++run) {
      const auto start = std::chrono::steady_clock::now();
      benchmark::DoNotOptimize(detail::fma_rounds(iterations, a, b));
      const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
      best = std::max(best, 2.0 * detail::fma_vec::size * detail::fma_chains * static_cast<double>(iterations) / ns);
    }
    return best;
  }();
  return peak;
}

}  // namespace bench
