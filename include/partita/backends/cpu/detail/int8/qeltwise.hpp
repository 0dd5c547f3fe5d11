#pragma once
/// cpu int8 elementwise kernels: qadd (QLinearAdd) and qconcat (concatenation with requantization).
// The arithmetic, in float, as ONNX Runtime's QLinearAdd computes it:
//   qadd:    y = clamp(round_half_even((a - za) · (sa / sy) + (b - zb) · (sb / sy)) + zy, lo, hi)
//            the ratios rounded to float once, each product rounded, then the sum (never fused
//            into a multiply-add: `unfused` below keeps the scalar and vector loops equal, bit
//            for bit, whatever -ffp-contract the build uses);
//   qconcat: y = clamp(round_half_even((x - zx) · (sx / sy)) + zy, type's range), a plain copy
//            of the inputs whose scale and zero point are the output's (the formula gives x).
// Rounding is to nearest even (the conversions, and `std::nearbyint` in the default rounding
// mode); the float is clamped to [lo - zy, hi - zy] before it, which gives the same integer.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "partita/backends/cpu/detail/int8/quantize.hpp"
#include "partita/backends/cpu/detail/int8/requantize.hpp"
#include "partita/core/dtype.hpp"

namespace partita::detail::cpu::int8 {

/// A tensor's quantization: real value = (q - zp) · scale.
struct qparams {
  float scale;
  std::int32_t zp;
};

/// y = a + b, all three u8 or i8 (`type`), `n` elements each, with their own quantization, the
/// result clamped to [lo, hi] (the type's range, narrowed by a fused relu or clip: see
/// `output_bounds`).
inline void qadd(const void* a, qparams qa, const void* b, qparams qb, void* y, qparams qy, dtype type, std::int64_t n,
                 std::int32_t lo, std::int32_t hi);

/// Concatenates `count` u8 or i8 tensors `in[i]`, of extents [outer, axis_len[i], inner], along
/// the middle axis into `y` ([outer, Σ axis_len, inner]), each requantized from `qin[i]` to `qy`.
inline void qconcat(const void* const* in, const qparams* qin, const std::int64_t* axis_len, int count, void* y, qparams qy,
                    dtype type, std::int64_t outer, std::int64_t inner);

namespace detail {

/// `v`, which the compiler can no longer fuse with the operation that reads it (an empty asm
/// that claims to change it).
template <class V>
[[gnu::always_inline]] inline V unfused(V v) {
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
  asm("" : "+x"(v));
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
  asm("" : "+w"(v));
#endif
  return v;
}

/// One qadd output: the sum of the rescaled inputs, clamped to [lo, hi] relative to zy (NaN
/// impossible: finite integers and ratios), rounded.
inline std::int32_t qadd_value(std::int32_t a, std::int32_t b, float ra, float rb, const requant& r) {
  const float v = unfused(static_cast<float>(a) * ra) + unfused(static_cast<float>(b) * rb);
  return static_cast<std::int32_t>(std::nearbyint(std::min(std::max(r.lo, v), r.hi))) + r.zp;
}

template <class T>
void qadd_bytes(const T* a, std::int32_t za, float ra, const T* b, std::int32_t zb, float rb, T* y, const requant& r,
                std::int64_t n) {
  std::int64_t i = 0;
#if PARTITA_INT8_AVX2
  const __m256i vza = _mm256_set1_epi32(za), vzb = _mm256_set1_epi32(zb), vzy = _mm256_set1_epi32(r.zp);
  const __m256 vra = _mm256_set1_ps(ra), vrb = _mm256_set1_ps(rb), vlo = _mm256_set1_ps(r.lo), vhi = _mm256_set1_ps(r.hi);
  for (; i + 8 <= n; i += 8) {
    const __m256 pa = unfused(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(widen8(a + i), vza)), vra));
    const __m256 pb = unfused(_mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(widen8(b + i), vzb)), vrb));
    const __m256 v = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(pa, pb), vlo), vhi);
    store8(y + i, _mm256_add_epi32(_mm256_cvtps_epi32(v), vzy));
  }
#endif
  for (; i < n; ++i) y[i] = static_cast<T>(qadd_value(a[i] - za, b[i] - zb, ra, rb, r));
}

/// `n` values of T requantized from (zx, scale ratio m) to the output's zero point and the type's
/// range (`r`).
template <class T>
void rescale_run(const T* x, T* y, std::int64_t n, std::int32_t zx, float m, const requant& r) {
  std::int64_t i = 0;
#if PARTITA_INT8_AVX2
  const __m256i vzx = _mm256_set1_epi32(zx), vzy = _mm256_set1_epi32(r.zp);
  const __m256 vm = _mm256_set1_ps(m), vlo = _mm256_set1_ps(r.lo), vhi = _mm256_set1_ps(r.hi);
  for (; i + 8 <= n; i += 8) {
    const __m256 p = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(widen8(x + i), vzx)), vm);
    store8(y + i, _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(p, vlo), vhi)), vzy));
  }
#endif
  for (; i < n; ++i) {
    const float p = static_cast<float>(x[i] - zx) * m;
    y[i] = static_cast<T>(static_cast<std::int32_t>(std::nearbyint(std::min(std::max(r.lo, p), r.hi))) + r.zp);
  }
}

template <class T>
void qconcat_bytes(const void* const* in, const qparams* qin, const std::int64_t* axis_len, int count, T* y, qparams qy,
                   std::int64_t outer, std::int64_t inner) {
  std::int64_t total = 0;
  for (int i = 0; i < count; ++i) total += axis_len[i];
  const requant r = make_requant({std::numeric_limits<T>::min(), std::numeric_limits<T>::max()}, qy.zp);
  std::int64_t offset = 0;
  for (int i = 0; i < count; ++i) {
    const T* x = static_cast<const T*>(in[i]);
    const std::int64_t run = axis_len[i] * inner;
    const bool same = qin[i].scale == qy.scale && qin[i].zp == qy.zp;
    const float m = qin[i].scale / qy.scale;
    for (std::int64_t o = 0; o < outer; ++o) {
      T* dst = y + o * total * inner + offset;
      if (same) std::memcpy(dst, x + o * run, static_cast<std::size_t>(run));
      else rescale_run(x + o * run, dst, run, qin[i].zp, m, r);
    }
    offset += run;
  }
}

}  // namespace detail

inline void qadd(const void* a, qparams qa, const void* b, qparams qb, void* y, qparams qy, dtype type, std::int64_t n,
                 std::int32_t lo, std::int32_t hi) {
  const float ra = qa.scale / qy.scale, rb = qb.scale / qy.scale;
  const requant r = make_requant({lo, hi}, qy.zp);
  if (type == dtype::u8)
    detail::qadd_bytes(static_cast<const std::uint8_t*>(a), qa.zp, ra, static_cast<const std::uint8_t*>(b), qb.zp, rb,
                       static_cast<std::uint8_t*>(y), r, n);
  else if (type == dtype::i8)
    detail::qadd_bytes(static_cast<const std::int8_t*>(a), qa.zp, ra, static_cast<const std::int8_t*>(b), qb.zp, rb,
                       static_cast<std::int8_t*>(y), r, n);
}

inline void qconcat(const void* const* in, const qparams* qin, const std::int64_t* axis_len, int count, void* y, qparams qy,
                    dtype type, std::int64_t outer, std::int64_t inner) {
  if (type == dtype::u8)
    detail::qconcat_bytes(in, qin, axis_len, count, static_cast<std::uint8_t*>(y), qy, outer, inner);
  else if (type == dtype::i8)
    detail::qconcat_bytes(in, qin, axis_len, count, static_cast<std::int8_t*>(y), qy, outer, inner);
}

}  // namespace partita::detail::cpu::int8
