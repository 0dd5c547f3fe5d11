#pragma once
/// The int8 kernels' requantization: an exact int32 sum to a u8 or i8 output, by the project's rule.
// The rule (as ONNX Runtime's CPU provider applies it): with the accumulator acc (the exact sum
// of (x - zx)(w - zw) plus an integer bias) and the float multiplier M = (s_x · s_w) / s_y,
//   q = clamp(round_half_even(float(acc) · M) + zp_y, lo, hi),
// lo and hi being the output type's range narrowed by a fused relu or clip. Clamping the float
// product to [lo - zp_y, hi - zp_y] before rounding gives the same q (the bounds are integers and
// rounding is monotonic) and keeps the conversion to int32 in range, so the scalar and vector
// versions below are one computation, bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "partita/core/dtype.hpp"

#if defined(__AVX2__) && !defined(PARTITA_INT8_PORTABLE)
#include <immintrin.h>
#define PARTITA_INT8_AVX2 1
#else
#define PARTITA_INT8_AVX2 0
#endif

namespace partita::detail::cpu::int8 {

/// The smallest value of a quantized type (u8: 0, i8: -128, i32: its minimum).
constexpr std::int32_t type_min(dtype t) {
  return t == dtype::u8 ? 0 : t == dtype::i8 ? -128 : std::numeric_limits<std::int32_t>::min();
}
/// The largest value of a quantized type (u8: 255, i8: 127, i32: its maximum).
constexpr std::int32_t type_max(dtype t) {
  return t == dtype::u8 ? 255 : t == dtype::i8 ? 127 : std::numeric_limits<std::int32_t>::max();
}

/// round_half_even(v) for a float, as an int64 (v clamped to ±2^40 first: beyond every bound
/// the kernels compare it with). The default rounding mode is to nearest, ties to even.
inline std::int64_t round_to_int(float v) {
  constexpr float big = 1099511627776.f;  // 2^40
  return static_cast<std::int64_t>(std::nearbyint(std::clamp(v, -big, big)));
}

/// The output's bounds [lo, hi]: the type's range narrowed by a fused activation clipping the
/// float result to [act_lo, act_hi] (relu: 0, +inf; none: -inf, +inf), each bound quantized as
/// round_half_even(a / s_y) + zp_y.
struct clamp_bounds {
  std::int32_t lo, hi;
};
inline clamp_bounds output_bounds(dtype y_type, float y_scale, std::int32_t y_zp, float act_lo, float act_hi) {
  std::int64_t lo = type_min(y_type), hi = type_max(y_type);
  if (act_lo > -std::numeric_limits<float>::infinity()) lo = std::max(lo, round_to_int(act_lo / y_scale) + y_zp);
  if (act_hi < std::numeric_limits<float>::infinity()) hi = std::min(hi, round_to_int(act_hi / y_scale) + y_zp);
  return {static_cast<std::int32_t>(lo), static_cast<std::int32_t>(hi)};
}

/// The bias as an integer added to the accumulator: round_half_even(b / (s_x · s_w)), the
/// product in float (exact when the bias was quantized with that scale), saturated to int32.
inline std::int32_t integer_bias(float b, float x_scale, float w_scale) {
  const std::int64_t q = round_to_int(b / (x_scale * w_scale));
  return static_cast<std::int32_t>(
      std::clamp<std::int64_t>(q, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
}

/// The multiplier M = (s_x · s_w) / s_y, in float.
inline float multiplier(float x_scale, float w_scale, float y_scale) { return (x_scale * w_scale) / y_scale; }

/// What requantizes every output of a step but its multiplier: the bounds relative to the
/// output's zero point, as floats (the product is clamped to them before rounding), and the
/// zero point.
struct requant {
  float lo, hi;  // lo - zp_y, hi - zp_y
  std::int32_t zp;
};
inline requant make_requant(clamp_bounds b, std::int32_t y_zp) {
  return {static_cast<float>(b.lo - y_zp), static_cast<float>(b.hi - y_zp), y_zp};
}

/// q for one accumulator (the rule above).
inline std::int32_t requantize(std::int32_t acc, float m, const requant& r) {
  const float v = std::min(std::max(static_cast<float>(acc) * m, r.lo), r.hi);
  return static_cast<std::int32_t>(std::nearbyint(v)) + r.zp;
}

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
