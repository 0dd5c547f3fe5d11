#pragma once
/// cpu quantize (f32 → u8, i8, i32) and dequantize (u8, i8, i32 → f32): ONNX's QuantizeLinear and DequantizeLinear.
// quantize:   q = saturate(round_half_even(x / scale) + zp), the division a true one: a multiply
//             by 1 / scale rounds differently for some x, and ONNX Runtime divides too.
//             NaN gives the type's smallest value (u8: 0, i8: -128, i32: INT32_MIN), whatever
//             its sign and the zero point: what ONNX Runtime 1.32's CPU provider returns.
//             -0.0 and anything that rounds to zero give zp; ±inf and huge values saturate.
// dequantize: y = float(q - zp) · scale, the difference exact (in int64 for i32).
// The vector loops (AVX2) and the scalar ones compute the same thing bit for bit: the float
// quotient is clamped to [min - zp, max - zp] before rounding, which gives the same integer
// as rounding first (the bounds are integers, rounding is monotonic), and the conversions
// round to nearest even, as `std::nearbyint` does in the default rounding mode.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "partita/backends/cpu/detail/int8/requantize.hpp"
#include "partita/backends/reference/quantize_kernels.hpp"
#include "partita/core/dtype.hpp"

namespace partita::detail::cpu::int8 {

/// Quantizes `x`, of extents [outer, axis_len, inner], into `q` of dtype `q_type` (u8, i8 or
/// i32). Per tensor, `scale[0]` and `zp[0]` serve every element; `per_axis`, `scale[a]` and
/// `zp[a]` serve the elements at index a of the middle extent. `zp` holds values of dtype
/// `zp_type` (ONNX makes it `q_type`), or is null for a zero point of 0.
inline void quantize(const float* x, void* q, dtype q_type, std::int64_t outer, std::int64_t axis_len, std::int64_t inner,
                     const float* scale, const void* zp, dtype zp_type, bool per_axis);

/// Dequantizes `q` of dtype `q_type` (u8, i8 or i32), extents [outer, axis_len, inner], into
/// `y`; `scale` and `zp` (of dtype `q_type`, or null for 0) as for `quantize`.
inline void dequantize(const void* q, dtype q_type, float* y, std::int64_t outer, std::int64_t axis_len,
                       std::int64_t inner, const float* scale, const void* zp, bool per_axis);

namespace detail {

/// The dtype of the byte type T (std::uint8_t: u8, std::int8_t: i8).
template <class T>
inline constexpr dtype byte_type = std::is_unsigned_v<T> ? dtype::u8 : dtype::i8;

/// Element `i` of a zero-point array of dtype `t` (0 when there is none).
inline std::int32_t zero_point_at(const void* zp, dtype t, std::int64_t i) {
  return zp ? static_cast<std::int32_t>(reference_kernels::load_integer(zp, t, i)) : 0;
}

/// One value quantized to u8 or i8: the quotient clamped to [lo, hi] = [min - zp, max - zp]
/// (NaN to lo: `max(lo, v)` keeps lo when v is NaN, as `_mm256_max_ps(v, lo)` does), rounded.
inline std::int32_t quantize_byte(float x, float scale, float lo, float hi, std::int32_t zp) {
  const float v = std::min(std::max(lo, x / scale), hi);
  return static_cast<std::int32_t>(std::nearbyint(v)) + zp;
}

/// One value quantized to i32, the sum with the zero point exact and saturated.
inline std::int32_t quantize_int32(float x, float scale, std::int32_t zp) {
  const float v = x / scale;
  if (std::isnan(v)) return std::numeric_limits<std::int32_t>::min();
  const std::int64_t r = round_to_int(v) + zp;
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(r, std::numeric_limits<std::int32_t>::min(),
                                                            std::numeric_limits<std::int32_t>::max()));
}

#if PARTITA_INT8_AVX2
/// Eight bytes of T (u8 or i8) widened to int32 lanes.
template <class T>
inline __m256i widen8(const T* p) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  if constexpr (std::is_unsigned_v<T>) return _mm256_cvtepu8_epi32(b);
  else return _mm256_cvtepi8_epi32(b);
}
/// Stores eight int32 lanes, each in the range of T (u8 or i8), as eight bytes.
template <class T>
inline void store8(T* p, __m256i v) {
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), narrow8<T>(v));
}
#endif

/// `n` floats quantized to T (u8 or i8) with one scale and zero point.
template <class T>
void quantize_run(const float* x, T* q, std::int64_t n, float scale, std::int32_t zp) {
  const float lo = static_cast<float>(std::numeric_limits<T>::min() - zp);
  const float hi = static_cast<float>(std::numeric_limits<T>::max() - zp);
  std::int64_t i = 0;
#if PARTITA_INT8_AVX2
  const __m256 vs = _mm256_set1_ps(scale), vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
  const __m256i vzp = _mm256_set1_epi32(zp);
  for (const std::int64_t whole = n - n % 8; i < whole; i += 8) {
    const __m256 v = _mm256_min_ps(_mm256_max_ps(_mm256_div_ps(_mm256_loadu_ps(x + i), vs), vlo), vhi);
    store8(q + i, _mm256_add_epi32(_mm256_cvtps_epi32(v), vzp));
  }
#endif
  for (; i < n; ++i) q[i] = static_cast<T>(quantize_byte(x[i], scale, lo, hi, zp));
}

/// `n` floats quantized to T (u8 or i8), element i with `scale[i]` and zero point `zp[i]` (of
/// dtype T): a per-axis quantization along the last axis.
template <class T>
void quantize_each(const float* x, T* q, std::int64_t n, const float* scale, const T* zp) {
  constexpr float tmin = static_cast<float>(std::numeric_limits<T>::min());
  constexpr float tmax = static_cast<float>(std::numeric_limits<T>::max());
  std::int64_t i = 0;
#if PARTITA_INT8_AVX2
  const __m256 vmin = _mm256_set1_ps(tmin), vmax = _mm256_set1_ps(tmax);
  for (const std::int64_t whole = zp != nullptr ? n - n % 8 : 0; i < whole; i += 8) {
    const __m256i z = widen8(zp + i);
    const __m256 zf = _mm256_cvtepi32_ps(z);
    const __m256 lo = _mm256_sub_ps(vmin, zf), hi = _mm256_sub_ps(vmax, zf);  // exact: small integers
    const __m256 v = _mm256_min_ps(_mm256_max_ps(_mm256_div_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(scale + i)), lo), hi);
    store8(q + i, _mm256_add_epi32(_mm256_cvtps_epi32(v), z));
  }
#endif
  for (; i < n; ++i) {
    const std::int32_t z = zp != nullptr ? zp[i] : 0;
    q[i] = static_cast<T>(quantize_byte(x[i], scale[i], tmin - static_cast<float>(z), tmax - static_cast<float>(z), z));
  }
}

/// `n` values of T (u8 or i8) dequantized with one scale and zero point.
template <class T>
void dequantize_run(const T* q, float* y, std::int64_t n, float scale, std::int32_t zp) {
  std::int64_t i = 0;
#if PARTITA_INT8_AVX2
  const __m256 vs = _mm256_set1_ps(scale);
  const __m256i vzp = _mm256_set1_epi32(zp);
  for (const std::int64_t whole = n - n % 8; i < whole; i += 8)
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(widen8(q + i), vzp)), vs));
#endif
  for (; i < n; ++i) y[i] = static_cast<float>(static_cast<std::int32_t>(q[i]) - zp) * scale;
}

/// `n` values of T (u8 or i8) dequantized, element i with `scale[i]` and `zp[i]`.
template <class T>
void dequantize_each(const T* q, float* y, std::int64_t n, const float* scale, const T* zp) {
  std::int64_t i = 0;
#if PARTITA_INT8_AVX2
  for (const std::int64_t whole = zp != nullptr ? n - n % 8 : 0; i < whole; i += 8) {
    const __m256i d = _mm256_sub_epi32(widen8(q + i), widen8(zp + i));
    _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(d), _mm256_loadu_ps(scale + i)));
  }
#endif
  for (; i < n; ++i) {
    const std::int32_t z = zp != nullptr ? zp[i] : 0;
    y[i] = static_cast<float>(static_cast<std::int32_t>(q[i]) - z) * scale[i];
  }
}

template <class T>
void quantize_bytes(const float* x, T* q, std::int64_t outer, std::int64_t axis_len, std::int64_t inner, const float* scale,
                    const void* zp, dtype zp_type, bool per_axis) {
  if (!per_axis) {
    quantize_run(x, q, outer * axis_len * inner, scale[0], zero_point_at(zp, zp_type, 0));
  } else if (inner == 1 && (zp == nullptr || zp_type == byte_type<T>)) {
    for (std::int64_t o = 0; o < outer; ++o)
      quantize_each(x + o * axis_len, q + o * axis_len, axis_len, scale, static_cast<const T*>(zp));
  } else {
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t a = 0; a < axis_len; ++a) {
        const std::int64_t at = (o * axis_len + a) * inner;
        quantize_run(x + at, q + at, inner, scale[a], zero_point_at(zp, zp_type, a));
      }
  }
}

template <class T>
void dequantize_bytes(const T* q, float* y, std::int64_t outer, std::int64_t axis_len, std::int64_t inner, const float* scale,
                      const T* zp, bool per_axis) {
  if (!per_axis) {
    dequantize_run(q, y, outer * axis_len * inner, scale[0], zp != nullptr ? zp[0] : 0);
  } else if (inner == 1) {
    for (std::int64_t o = 0; o < outer; ++o) dequantize_each(q + o * axis_len, y + o * axis_len, axis_len, scale, zp);
  } else {
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t a = 0; a < axis_len; ++a) {
        const std::int64_t at = (o * axis_len + a) * inner;
        dequantize_run(q + at, y + at, inner, scale[a], zp != nullptr ? zp[a] : 0);
      }
  }
}

}  // namespace detail

inline void quantize(const float* x, void* q, dtype q_type, std::int64_t outer, std::int64_t axis_len, std::int64_t inner,
                     const float* scale, const void* zp, dtype zp_type, bool per_axis) {
  switch (q_type) {
    case dtype::u8:
      detail::quantize_bytes(x, static_cast<std::uint8_t*>(q), outer, axis_len, inner, scale, zp, zp_type, per_axis);
      return;
    case dtype::i8:
      detail::quantize_bytes(x, static_cast<std::int8_t*>(q), outer, axis_len, inner, scale, zp, zp_type, per_axis);
      return;
    case dtype::i32: {
      // Biases and other small tensors, quantized at bind: no vector loop.
      auto* out = static_cast<std::int32_t*>(q);
      for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t a = 0; a < axis_len; ++a) {
          const std::int64_t c = per_axis ? a : 0, at = (o * axis_len + a) * inner;
          const float s = scale[c];
          const std::int32_t z = detail::zero_point_at(zp, zp_type, c);
          for (std::int64_t i = 0; i < inner; ++i) out[at + i] = detail::quantize_int32(x[at + i], s, z);
        }
      return;
    }
    default: return;
  }
}

inline void dequantize(const void* q, dtype q_type, float* y, std::int64_t outer, std::int64_t axis_len, std::int64_t inner,
                       const float* scale, const void* zp, bool per_axis) {
  switch (q_type) {
    case dtype::u8:
      detail::dequantize_bytes(static_cast<const std::uint8_t*>(q), y, outer, axis_len, inner, scale,
                               static_cast<const std::uint8_t*>(zp), per_axis);
      return;
    case dtype::i8:
      detail::dequantize_bytes(static_cast<const std::int8_t*>(q), y, outer, axis_len, inner, scale,
                               static_cast<const std::int8_t*>(zp), per_axis);
      return;
    case dtype::i32: {
      const auto* in = static_cast<const std::int32_t*>(q);
      for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t a = 0; a < axis_len; ++a) {
          const std::int64_t c = per_axis ? a : 0, at = (o * axis_len + a) * inner;
          const float s = scale[c];
          const std::int64_t z = detail::zero_point_at(zp, dtype::i32, c);
          for (std::int64_t i = 0; i < inner; ++i) y[at + i] = static_cast<float>(in[at + i] - z) * s;
        }
      return;
    }
    default: return;
  }
}

}  // namespace partita::detail::cpu::int8
