#pragma once
/// The int8 kernels' requantization on x86: eight accumulators at a time, by the rule of
/// backend/detail/requantize.hpp, bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "partita/backend/detail/requantize.hpp"
#include "partita/core/dtype.hpp"

#if defined(__AVX2__) && !defined(PARTITA_INT8_PORTABLE)
#include <immintrin.h>
#define PARTITA_INT8_AVX2 1
#else
#define PARTITA_INT8_AVX2 0
#endif

namespace partita::detail::cpu::int8 {

// The rule itself is shared with every backend's integer kernels.
using partita::detail::quant::clamp_bounds;
using partita::detail::quant::integer_bias;
using partita::detail::quant::make_requant;
using partita::detail::quant::multiplier;
using partita::detail::quant::output_bounds;
using partita::detail::quant::requant;
using partita::detail::quant::requantize;
using partita::detail::quant::round_to_int;
using partita::detail::quant::type_max;
using partita::detail::quant::type_min;

#if PARTITA_INT8_AVX2
/// q for eight accumulators: the same operations in the same order (the conversions round to
/// nearest even, as `std::nearbyint` does in the default rounding mode).
inline __m256i requantize8(__m256i acc, __m256 m, __m256 lo, __m256 hi, __m256i zp) {
  const __m256 v = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(acc), m), lo), hi);
  return _mm256_add_epi32(_mm256_cvtps_epi32(v), zp);
}

/// Eight values already in the range of T (u8 or i8) as eight bytes.
template <class T>
inline __m128i narrow8(__m256i q) {
  const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
  if constexpr (sizeof(T) == 1 && static_cast<T>(-1) > 0) return _mm_packus_epi16(w, w);
  else return _mm_packs_epi16(w, w);
}
#endif

}  // namespace partita::detail::cpu::int8
