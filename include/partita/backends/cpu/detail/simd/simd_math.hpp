#pragma once
/// The cpu backend's transcendental functions on simd::vec, each with its measured error.
// Each function's error is its largest distance in ulps (counted in the ordering of float bit
// patterns) from the reference: the double formula its comment gives, computed with <cmath>
// and rounded to float. Measured with AVX2 + FMA over every float with 2^-4 <= |x| < 128 and
// every 17th bit pattern elsewhere; tests/test_cpu_math.cpp checks the bounds on a sweep, and
// AVX-512 builds meet the same bounds.
// (The two-float steps need a fused multiply-add, as x86-64 with FMA3 or AVX-512 and ARM64
// have; without one, xsimd's fma rounds twice and the bounds of gelu, gelu_tanh and erf go.)
// Each formula is also what the function gives at NaN and ±Inf. Subnormal inputs and results
// are computed, not flushed (unless the caller sets FTZ/DAZ).
#include <cstdint>
#include <type_traits>

#include "partita/backends/cpu/detail/simd/simd.hpp"
#include "partita/backends/cpu/detail/simd/simd_gelu_table.hpp"

namespace partita::detail::simd {

/// e^x. 1 ulp. Reference `std::exp(x)`: 0 at -inf and below -103.97, +inf at +inf and above
/// 88.7228, subnormal results in between (exp(-100) = 3.7e-44).
inline vec exp(const vec& x);

/// Natural logarithm (xsimd's). 1 ulp, subnormal inputs included. Reference `std::log(x)`:
/// -inf at ±0, NaN below 0, +inf at +inf.
inline vec log(const vec& x);

/// Error function. 1 ulp. Reference `std::erf(x)`: ±1 at ±inf.
inline vec erf(const vec& x);

/// Hyperbolic tangent (xsimd's). 1 ulp. Reference `std::tanh(x)`: ±1 at ±inf.
inline vec tanh(const vec& x);

/// Logistic sigmoid. 2 ulp. Reference `1 / (1 + std::exp(-x))`: 0 at -inf, 1 at +inf,
/// subnormal results down to x = -103.97.
inline vec sigmoid(const vec& x);

/// x · sigmoid(x). 3 ulp. Reference `x / (1 + std::exp(-x))`: +inf at +inf, NaN at -inf
/// (-inf / inf), -0 below about -110.
inline vec silu(const vec& x);

/// GELU, exact: x · Φ(x). 5 ulp; 2 on AVX-512 for vectors whose lanes all have |x| < 3.9375.
/// Reference `0.5 * x * std::erfc(-x / std::numbers::sqrt2)`, the same function as
/// 0.5·x·(1 + erf(x/√2)) without its cancellation for x < 0: +inf at +inf, NaN at -inf
/// (-inf · 0), tiny or subnormal for x down to -14.2, -0 below.
inline vec gelu(const vec& x);

/// GELU, tanh approximation: 0.5·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³). 3 ulp.
/// Reference `x / (1 + std::exp(-2 * u))` (1 + tanh(u) = 2 / (1 + e^(-2u)), without its
/// cancellation for x < 0), u as written, in double: +inf at +inf, NaN at -inf (-inf / inf).
inline vec gelu_tanh(const vec& x);

/// Square root, correctly rounded. 0 ulp. Reference `std::sqrt(x)`: NaN below -0.
inline vec sqrt(const vec& x);

/// 1 / √x, a division after the square root (the approximate instruction is not used). 1 ulp.
/// Reference `1 / std::sqrt(x)`: +inf at +0, -inf at -0, 0 at +inf, NaN below -0.
inline vec rsqrt(const vec& x);

namespace math_detail {

using ivec = xsimd::batch<std::int32_t, arch>;
using mask = xsimd::batch_bool<float, arch>;

// c0 + x·(c1 + x·(c2 + ...)), by fused multiply-adds.
inline vec poly(const vec&, float c) { return vec(c); }
template <class... C>
inline vec poly(const vec& x, float c0, float c1, C... c) {
  return fma(poly(x, c1, c...), x, vec(c0));
}

// The same polynomial by Estrin's scheme: pairs c_i + c_(i+1)·x in parallel, then the pairs by
// x², x⁴, ...: about log2(degree) dependent FMAs instead of the degree, for the long fits whose
// latency bounds the functions (a vector's erf is one chain of dependent operations).
template <std::size_t N>
inline vec poly_estrin(const vec& x, const float (&c)[N]) {
  vec level[(N + 1) / 2];
  for (std::size_t i = 0; i < N / 2; ++i) level[i] = fma(vec(c[2 * i + 1]), x, vec(c[2 * i]));
  if constexpr (N % 2 == 1) level[N / 2] = vec(c[N - 1]);
  std::size_t n = (N + 1) / 2;
  vec p = x * x;
  while (n > 1) {
    for (std::size_t i = 0; i < n / 2; ++i) level[i] = fma(level[2 * i + 1], p, level[2 * i]);
    if (n % 2 == 1) level[n / 2] = level[n - 1];
    n = (n + 1) / 2;
    p = p * p;
  }
  return level[0];
}

// v · 2^k for integral k in [-160, 128], as two factors 2^(h - 80) and 2^(k - h + 80) with
// h = (k + 160) / 2, both normal floats, so that a result below 2^-126 is rounded once, as a
// subnormal. (A k that came from NaN gives garbage factors, but then v is NaN.)
inline vec times_pow2(const vec& v, const ivec& k) {
  using uvec = xsimd::batch<std::uint32_t, arch>;
  const ivec h = xsimd::bitwise_cast<ivec>(xsimd::bitwise_cast<uvec>(k + ivec(160)) >> 1);
  const vec f1 = xsimd::bitwise_cast<vec>((h + ivec(127 - 80)) << 23);
  const vec f2 = xsimd::bitwise_cast<vec>((k - h + ivec(127 + 80)) << 23);
  return v * f1 * f2;
}

// k where `keep` holds, 0 elsewhere.
inline ivec where(const mask& keep, const ivec& k) {
  return xsimd::bitwise_cast<ivec>(xsimd::select(keep, xsimd::bitwise_cast<vec>(k), vec(0.f)));
}

// e^(hi + lo) = p · 2^k, p in [1/√2, √2], k integral, for hi in [-110, 89] and |lo| well under
// ulp(hi) (a second part carries what hi's rounding lost). k = hi·log2(e) rounded by adding
// 1.5·2^23 (k is then the low bits); Cody-Waite reduction with ln 2 as a 9-bit head (k · head
// exact) and a tail; e^r = 1 + r + r²·g(r), g a degree-5 fit on |r| <= ln(2)/2.
struct exp_parts {
  vec p;
  ivec k;
};
inline exp_parts exp_split(const vec& hi, const vec& lo) {
  const vec shifter = vec(0x1.8p23f);
  const vec big = fma(hi, vec(0x1.715476p+0f), shifter);
  const vec k = big - shifter;
  vec r = fnma(k, vec(0x1.63p-1f), hi);
  r = fnma(k, vec(-0x1.bd0106p-13f), r) + lo;
  const vec g = poly(r, 0x1p-1f, 0x1.555556p-3f, 0x1.5554eap-5f, 0x1.1110c6p-7f, 0x1.6d4326p-10f, 0x1.a1517ap-13f);
  return {fma(g, r * r, r) + vec(1.f), xsimd::bitwise_cast<ivec>(big) - xsimd::bitwise_cast<ivec>(shifter)};
}

// m · sigmoid(v), v = hi + lo, from e^-|v| so that nothing overflows: m / (1 + e^-v) for v >= 0,
// and m·e^v / (1 + e^v) for v < 0 with the power of two applied last (a subnormal result is
// rounded once). e^-|v| under 2^-158 (|v| > 110) counts as 0; NaN stays NaN.
inline vec times_sigmoid(const vec& m, const vec& hi, const vec& lo) {
  const mask neg = hi < vec(0.f);
  const vec h = -xsimd::abs(hi);
  const exp_parts e = exp_split(at_least(h, vec(-110.f)), xsimd::select(neg, lo, -lo));
  const vec p = xsimd::select(h < vec(-110.f), vec(0.f), e.p);
  const vec den = vec(1.f) + times_pow2(p, e.k);
  return times_pow2(xsimd::select(neg, m * p, m) / den, where(neg, e.k));
}

// The upper tail of the standard normal, Q(y) = erfc(y/√2)/2 = e^(-y²/2)·S(y), for y in
// [0, 14.5], as m · 2^k; s + s_lo = y² exactly (an FMA gives what its rounding lost), so that
// e^(-y²/2) keeps its relative accuracy where Q is tiny. S(y) = G(t)·t, t = 1/d, d = 1 + y/4,
// G a degree-9 fit in t - 0.6081; t is carried as a head and a tail (what the rounding of d and
// of the division lost), so that neither loses y's low bits.
struct tail_parts {
  vec m;
  ivec k;
};
inline tail_parts normal_tail(const vec& y, const vec& s, const vec& s_lo) {
  const exp_parts e = exp_split(s * vec(-0.5f), s_lo * vec(-0.5f));
  const vec quarter_y = y * vec(0.25f), d = vec(1.f) + quarter_y;
  const vec d_lo = (vec(1.f) - d) + quarter_y;
  const vec t = vec(1.f) / d;
  const vec t_lo = t * (fnma(d, t, vec(1.f)) - d_lo * t);  // 1/(d + d_lo) - t
  const vec u = (t - vec(0x1.3759f2p-1f)) + t_lo;
  static constexpr float fit[] = {0x1.d04d7ep-3f, 0x1.9ba348p-2f, 0x1.0d2864p-1f, 0x1.ee824ap-2f, 0x1.0c838cp-2f,
                                  0x1.98782ap-7f, -0x1.6b0a84p-4f, -0x1.0c0366p-5f, 0x1.c7676cp-6f, 0x1.fac3c4p-7f};
  const vec g = poly_estrin(u, fit);
  return {fma(g, t, g * t_lo) * e.p, e.k};
}

}  // namespace math_detail

inline vec exp(const vec& x) {
  const auto e = math_detail::exp_split(at_most(at_least(x, vec(-104.f)), vec(89.f)), vec(0.f));
  return math_detail::times_pow2(e.p, e.k);
}

inline vec erf(const vec& x) {
  using namespace math_detail;
  // |x| <= 0.9: x·(2/√π + x²·E(x²)), E a degree-5 fit, 2/√π as a head and a tail. Above:
  // 1 - 2·Q(|x|·√2), with |x|·√2 capped at 6, where 1 - 2·Q rounds to 1 (NaN stays NaN).
  const vec a = xsimd::abs(x);
  const vec z = x * x;
  const vec e =
      poly(z, -0x1.812746p-2f, 0x1.ce2efcp-4f, -0x1.b8246ap-6f, 0x1.55a62ep-8f, -0x1.b24592p-11f, 0x1.78616p-14f);
  const vec small = fma(x, vec(0x1.20dd76p+0f), x * fma(z, e, vec(-0x1.f7ac92p-25f)));
  const vec y = at_most(a * vec(0x1.6a09e6p+0f), vec(6.f)), s = y * y;
  const tail_parts q = normal_tail(y, s, fms(y, y, s));
  const vec big = fnma(vec(2.f), times_pow2(q.m, q.k), vec(1.f));
  return xsimd::copysign(xsimd::select(a <= vec(0.9f), small, big), x);  // erf(-0) = -0
}

inline vec sigmoid(const vec& x) {
  // 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below: e^-|x| neither overflows nor, rounded
  // to a subnormal, loses more than the result does.
  const vec e = exp(-xsimd::abs(x));
  return xsimd::select(x >= vec(0.f), vec(1.f), e) / (vec(1.f) + e);
}

inline vec silu(const vec& x) { return math_detail::times_sigmoid(x, x, vec(0.f)); }

namespace math_detail {
// GELU on any lanes and any target, from normal_tail.
inline vec gelu_general(const vec& x) {
  // x·Q(|x|) for x < 0, x - x·Q(x) for x >= 0; beyond 14.5, where x·Q(|x|) rounds to 0, x·0
  // (NaN at -inf) and x.
  const vec y = xsimd::abs(x), s = x * x;
  const tail_parts q = normal_tail(at_most(y, vec(14.5f)), s, fms(x, x, s));
  const mask neg = x < vec(0.f);
  const vec q_or_xq = times_pow2(xsimd::select(neg, x * q.m, q.m), q.k);
  const vec near = xsimd::select(neg, q_or_xq, fnma(x, q_or_xq, x));
  return xsimd::copysign(xsimd::select(y > vec(14.5f), xsimd::select(neg, x * vec(0.f), x), near), x);  // gelu(-0) = -0
}
}  // namespace math_detail

inline vec gelu(const vec& x) {
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  // Where every lane has |x| < 3.9375 (N(0, 1) activations: all but one vector in a thousand),
  // Q(|x|) comes from the table of simd_gelu_table.hpp: y = |x| = (i + h) / 8, i = 8y rounded
  // to nearest, h = 8y - i; each coefficient is one two-register permute by i, the polynomial
  // six FMAs; then x·Q for x < 0 (the sign bit, so -0 gives -0) and x - x·Q otherwise. 2 ulp
  // (every float of the range checked), a third of gelu_general's time; the other vectors
  // (NaN and ±inf included) go to it.
  const __m512 t8 = _mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(8.f));
  if (_mm512_cmp_ps_mask(t8, _mm512_set1_ps(31.5f), _CMP_LT_OQ) == 0xFFFF) {
    using math_detail::gelu_tail_table;
    constexpr int degree = std::extent_v<decltype(gelu_tail_table), 0> - 1;
    constexpr int nearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;  // whatever MXCSR says
    const __m512 h = _mm512_reduce_ps(t8, nearest);
    const __m512i i = _mm512_cvt_roundps_epi32(t8, nearest);
    const auto coefficient = [&](int n) {
      return _mm512_permutex2var_ps(_mm512_load_ps(gelu_tail_table[n]), i, _mm512_load_ps(gelu_tail_table[n] + 16));
    };
    __m512 q = coefficient(degree);
#pragma GCC unroll 8
    for (int n = degree - 1; n >= 0; --n) q = _mm512_fmadd_ps(q, h, coefficient(n));
    const __mmask16 negative = _mm512_movepi32_mask(_mm512_castps_si512(x));
    return vec(_mm512_mask_blend_ps(negative, _mm512_fnmadd_ps(x, q, x), _mm512_mul_ps(x, q)));
  }
#endif
  return math_detail::gelu_general(x);
}

inline vec gelu_tanh(const vec& x) {
  // v = 2u = x·(A + B·x²), A = 2√(2/π), B = 0.044715·A, in two-float arithmetic (heads and
  // tails of the constants, of x², of the sum and of the product): e^-v must keep its relative
  // accuracy for |v| up to 110, where a plain float v would be off by 100 ulps.
  using namespace math_detail;
  const vec s = x * x, s_lo = fms(x, x, s);
  const vec b = vec(0x1.2444f2p-4f);
  const vec p = b * s, p_lo = fms(b, s, p) + fma(b, s_lo, vec(0x1.49b16ap-29f) * s);
  const vec a = vec(0x1.988454p+0f);
  const vec m = a + p, z = m - a;
  const vec m_lo = ((a - (m - z)) + (p - z)) + (p_lo + vec(-0x1.857936p-25f));
  const vec v = x * m, v_lo = fma(x, m_lo, fms(x, m, v));
  return times_sigmoid(x, v, v_lo);
}

inline vec sqrt(const vec& x) { return xsimd::sqrt(x); }

inline vec rsqrt(const vec& x) { return vec(1.f) / xsimd::sqrt(x); }

// xsimd's log and tanh; GCC 12 reports `_mm512_undefined_ps` inside them as uninitialized
// wherever they are inlined (see simd.hpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
inline vec log(const vec& x) { return xsimd::log(x); }
inline vec tanh(const vec& x) { return xsimd::tanh(x); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace partita::detail::simd
