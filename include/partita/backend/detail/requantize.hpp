#pragma once
/// The requantization rule of the integer kernels: an exact int32 sum to a u8 or i8 output.
// The rule (as ONNX Runtime's CPU provider applies it): with the accumulator acc (the exact sum
// of (x - zx)(w - zw) plus an integer bias) and the float multiplier M = (s_x · s_w) / s_y,
//   q = clamp(round_half_even(float(acc) · M) + zp_y, lo, hi),
// lo and hi being the output type's range narrowed by a fused relu or clip. Clamping the float
// product to [lo - zp_y, hi - zp_y] before rounding gives the same q (the bounds are integers and
// rounding is monotonic) and keeps the conversion to int32 in range, so every backend's scalar
// and vector versions are one computation, bit for bit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "partita/core/dtype.hpp"

namespace partita::detail::quant {

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

/// round_half_even(v) for |v| < 2^22, in float arithmetic only: adding and subtracting 1.5 · 2^23
/// leaves v rounded to an integer by the addition, which rounds to nearest even in the default
/// rounding mode. For cores whose `std::nearbyint` is a library call (ARMv7-M has no VRINT).
inline float round_small(float v) {
  constexpr float magic = 12582912.f;  // 1.5 · 2^23
  return (v + magic) - magic;  // not folded: the compiler may not reassociate without -ffast-math
}

/// round_half_even(v) for any finite float, in float arithmetic only: below 2^23 in magnitude,
/// adding and subtracting 2^23 to |v| rounds it (ulp 1 there); from 2^23 on, v is an integer.
inline float round_even(float v) {
  constexpr float two23 = 8388608.f;
  const float a = v < 0.f ? -v : v;
  const float r = a < two23 ? (a + two23) - two23 : a;
  return v < 0.f ? -r : r;
}

/// `integer_bias` without library calls (no `nearbyint`, no conversion through int64): the same
/// integer for every finite bias and scales.
inline std::int32_t integer_bias_float(float b, float x_scale, float w_scale) {
  const float q = round_even(b / (x_scale * w_scale));
  if (q >= 2147483648.f) return std::numeric_limits<std::int32_t>::max();
  if (q <= -2147483648.f) return std::numeric_limits<std::int32_t>::min();
  return static_cast<std::int32_t>(q);
}

/// `requantize` for a core without a rounding instruction: the clamped product is within
/// ±510, where `round_small` is exact. The same q as `requantize`, bit for bit.
inline std::int32_t requantize_small(std::int32_t acc, float m, const requant& r) {
  const float v = std::min(std::max(static_cast<float>(acc) * m, r.lo), r.hi);
  return static_cast<std::int32_t>(round_small(v)) + r.zp;
}

}  // namespace partita::detail::quant
