#pragma once
// The single-core int8 peak the int8 benchmark states its per-layer rates against: independent
// chains of the int8 GEMM's AVX2 step (`vpmaddwd`, then `vpaddd` into an int32 accumulator, as
// qgemm.hpp's micro-kernel does: 4 broadcast pairs of A times 3 vectors of B), 12 chains, more
// than the multiply's latency times its throughput. One `vpmaddwd` on 256 bits is 16
// multiply-adds of 16-bit pairs. Without AVX2 the kernels run scalar code and there is no such
// peak: the probe returns 0.
#include <algorithm>
#include <chrono>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace bench {

#if defined(__AVX2__)
namespace detail {
inline constexpr int madd_rows = 4, madd_vectors = 3;  // the micro-kernel's shape: 12 chains

// `iterations` rounds of the micro-kernel's step: 4 broadcast pairs times 3 vectors, each product
// added into its own int32 accumulator; returns a value that depends on all of them.
[[gnu::noinline]] inline int madd_rounds(long iterations, const int* pairs, short b) {
  __m256i acc[madd_rows][madd_vectors];
  for (int m = 0; m < madd_rows; ++m)
    for (int v = 0; v < madd_vectors; ++v) acc[m][v] = _mm256_set1_epi32(m + v);
  __m256i vb[madd_vectors] = {_mm256_set1_epi16(b), _mm256_set1_epi16(static_cast<short>(b + 1)),
                              _mm256_set1_epi16(static_cast<short>(b + 2))};
  for (long i = 0; i < iterations; ++i) {
    // The vectors look changed to the compiler each round, so that the products are computed
    // every round, not once outside the loop.
    asm("" : "+x"(vb[0]), "+x"(vb[1]), "+x"(vb[2]));
    for (int m = 0; m < madd_rows; ++m) {
      const __m256i va = _mm256_set1_epi32(pairs[m]);
      for (int v = 0; v < madd_vectors; ++v) acc[m][v] = _mm256_add_epi32(acc[m][v], _mm256_madd_epi16(va, vb[v]));
    }
  }
  __m256i s = acc[0][0];
  for (int m = 0; m < madd_rows; ++m)
    for (int v = 0; v < madd_vectors; ++v) s = _mm256_add_epi32(s, acc[m][v]);
  return _mm256_extract_epi32(s, 0) ^ _mm256_extract_epi32(s, 7);
}
}  // namespace detail
#endif

/// Measured multiply-adds per second (in G) of one core's `vpmaddwd` (16 per instruction on 256
/// bits), best of 7 runs of about 20 ms each; 0 without AVX2. Measured once per process.
inline double madd_peak_gmacs() {
#if defined(__AVX2__)
  static const double peak = [] {
    constexpr long iterations = 2'000'000;
    static volatile int pairs[detail::madd_rows] = {0x00030001, 0x00050002, 0x00070004, 0x00090006};
    const int words[detail::madd_rows] = {pairs[0], pairs[1], pairs[2], pairs[3]};  // not constants: nothing folds
    volatile short b = 5;
    volatile int sink = 0;
    double best = 0;
    for (int run = 0; run < 7; ++run) {
      const auto start = std::chrono::steady_clock::now();
      sink = sink + detail::madd_rounds(iterations, words, b);
      const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
      best = std::max(best, 16.0 * detail::madd_rows * detail::madd_vectors * static_cast<double>(iterations) / ns);
    }
    return best;
  }();
  return peak;
#else
  return 0;
#endif
}

}  // namespace bench
