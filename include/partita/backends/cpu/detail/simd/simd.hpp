#pragma once
/// The cpu backend's one door to xsimd: the widest float vector and its few operations.
// The one place Partita touches xsimd: a float vector of the widest instruction set the build
// flags enable (-march=native gives AVX-512 where the machine has it), plus the few operations
// the CPU kernels need (exp, tanh and the other transcendental functions: simd_math.hpp).
// Tails are the callers' business: they loop in `width` steps and finish with scalars.
#include <cstddef>
#include <cstdint>
#include <cstring>

// GCC 12 reports `_mm512_undefined_ps` (used inside xsimd's exp and tanh) as (maybe)
// uninitialized wherever they are inlined; the value is intentionally undefined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
// GCC 12's <avx512bwintrin.h> defines _mm512_mask_blend_epi8 and _epi16 as macros
// when not optimizing (-O0, the debug build), casting their arguments straight to the byte and
// word vector types: xsimd's select on batch<int> (inside log, reached by every translation
// unit that includes partita.hpp) passes a class with a conversion to __m512i, which that cast
// cannot take, so -O0 with AVX-512BW did not compile. The same macros, converting to __m512i
// first; with optimization they are functions, which take the conversion, and stay untouched.
#if defined(__GNUC__) && !defined(__clang__) && defined(__AVX512BW__) && !defined(__OPTIMIZE__)
#include <immintrin.h>
#if defined(_mm512_mask_blend_epi8)
#undef _mm512_mask_blend_epi8
#define _mm512_mask_blend_epi8(U, A, W)                                                                    \
  ((__m512i)__builtin_ia32_blendmb_512_mask((__v64qi)(__m512i)(A), (__v64qi)(__m512i)(W), (__mmask64)(U)))
#endif
#if defined(_mm512_mask_blend_epi16)
#undef _mm512_mask_blend_epi16
#define _mm512_mask_blend_epi16(U, A, W)                                                                   \
  ((__m512i)__builtin_ia32_blendmw_512_mask((__v32hi)(__m512i)(A), (__v32hi)(__m512i)(W), (__mmask32)(U)))
#endif
#endif
#include <xsimd/xsimd.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

// xsimd 8.1 divides and takes square roots of NEON floats with the reciprocal estimates and
// Newton steps that 32-bit ARM needs: a quotient 1 ulp off, √+inf a NaN. AArch64 has both as
// correctly rounded instructions, which these specializations of xsimd's NEON kernels use (an
// explicit specialization is found at instantiation, where an added overload would not be:
// xsimd names its kernels qualified, looked up where its operators are defined).
#if defined(__aarch64__) && XSIMD_WITH_NEON64
namespace xsimd::kernel {
template <>
inline batch<float, neon64> div<neon64>(batch<float, neon64> const& lhs, batch<float, neon64> const& rhs,
                                        requires_arch<neon>) noexcept {
  return vdivq_f32(lhs, rhs);
}
template <>
inline batch<float, neon64> sqrt<neon64>(batch<float, neon64> const& arg, requires_arch<neon>) noexcept {
  return vsqrtq_f32(arg);
}
}  // namespace xsimd::kernel
#endif

namespace partita::detail::simd {

/// The instruction set chosen from the build flags.
using arch = xsimd::default_arch;
using vec = xsimd::batch<float, arch>;

/// Floats per vector (16 with AVX-512, 8 with AVX2, 4 with SSE/NEON).
inline constexpr int width = static_cast<int>(vec::size);
/// Bytes and floats per cache line (x86-64's 64), the step of the kernels' prefetches.
inline constexpr int line_bytes = 64;
inline constexpr int line_floats = line_bytes / static_cast<int>(sizeof(float));

/// Asks for the cache lines of [p, p + floats) for writing (PREFETCHW where the target has it,
/// else a read prefetch). A store to a line that another core holds waits for that core to
/// give it up; asked for ahead of the stores, those waits overlap the work in between. Always
/// inlined: GCC judges a function of prefetches alone free of effects ("looping const") and
/// drops the calls to it that it does not inline.
[[gnu::always_inline]] inline void prefetch_for_store(const float* p, std::ptrdiff_t floats) {
  for (std::ptrdiff_t i = 0; i < floats; i += line_floats) __builtin_prefetch(p + i, 1, 3);
}

/// Asks for the cache lines of [p, p + floats) for reading, into L1 (always inlined, as
/// `prefetch_for_store`).
[[gnu::always_inline]] inline void prefetch_for_load(const float* p, std::ptrdiff_t floats) {
  for (std::ptrdiff_t i = 0; i < floats; i += line_floats) __builtin_prefetch(p + i, 0, 3);
}

inline vec load(const float* p) { return vec::load_unaligned(p); }
inline void store(float* p, const vec& v) { v.store_unaligned(p); }
inline vec splat(float x) { return vec(x); }
// Fused multiply-adds, rounded once. xsimd 8.1 has FMA instructions for SSE and AVX but none
// for AVX-512, where its fma is `a * b + c` and the compiler may fuse either product of an
// expression, or neither (-ffp-contract=off): exp and erf, whose two-float steps need the exact
// rounding error of a product, then lost up to 130 ulp. The AVX-512 ones are called here.
/// a · b + c.
inline vec fma(const vec& a, const vec& b, const vec& c) {
#if defined(__AVX512F__)
  return vec(_mm512_fmadd_ps(a, b, c));
#else
  return xsimd::fma(a, b, c);
#endif
}
/// Keeps `v` in a register from here on: the compiler can no longer fold the load that gave it
/// into each instruction that reads it. A kernel that loads a few weight vectors for many
/// FMAs, with registers to spare or not, may otherwise have every FMA read its weight from
/// memory again: GCC 12 did so in the first-layer kernel (`direct_nhwc_row`), whose FMAs then
/// waited on the loads (MobileNetV2's 3 → 32 stem ran at well under its FMA rate).
inline void hold(vec& v) {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
  typename vec::register_type r = v;
  asm("" : "+v"(r));
  v = vec(r);
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
  typename vec::register_type r = v;
  asm("" : "+w"(r));
  v = vec(r);
#endif
}
/// a · b - c.
inline vec fms(const vec& a, const vec& b, const vec& c) {
#if defined(__AVX512F__)
  return vec(_mm512_fmsub_ps(a, b, c));
#else
  return xsimd::fms(a, b, c);
#endif
}
/// c - a · b.
inline vec fnma(const vec& a, const vec& b, const vec& c) {
#if defined(__AVX512F__)
  return vec(_mm512_fnmadd_ps(a, b, c));
#else
  return xsimd::fnma(a, b, c);
#endif
}
inline vec max(const vec& a, const vec& b) { return xsimd::max(a, b); }
inline vec min(const vec& a, const vec& b) { return xsimd::min(a, b); }
// NaN handling. x86's max/min return their second operand when either is NaN, NEON's return
// NaN, xsimd's generic ones compare (false with NaN) and pick the second: with the data second,
// a NaN in it survives on every target. The activations and max pooling must propagate NaN as
// the reference backend does (std::max(x, 0.f) keeps a NaN x). (`a != a` is no NaN test here:
// AVX compares it ordered, false for NaN.)
/// max(x, lo), NaN where x is NaN (relu, clip's lower bound).
inline vec at_least(const vec& x, const vec& lo) { return xsimd::max(lo, x); }
/// min(x, hi), NaN where x is NaN (clip's upper bound).
inline vec at_most(const vec& x, const vec& hi) { return xsimd::min(hi, x); }
/// The larger of a and b, NaN where either is NaN (max pooling).
inline vec max_nan(const vec& a, const vec& b) { return xsimd::select(xsimd::isnan(a), a, xsimd::max(a, b)); }
#if defined(__AVX__)
/// AVX's lane mask for the first `n` (0 ≤ n ≤ 8) lanes: masked loads and stores, which touch
/// no memory in the other lanes (a memcpy of n floats was a library call per tail).
inline __m256i first_lanes(int n) {
  alignas(64) static constexpr std::int32_t ones_then_zeros[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ones_then_zeros + 8 - n));
}
#endif
/// The first `n` (0 ≤ n ≤ width) floats at `p`, the other lanes zero; nothing past them is read.
inline vec load_first(const float* p, int n) {
  // One branch per instruction set, chosen by the preprocessor: in a function that is no
  // template, `if constexpr` still compiles the branch it discards, and AVX's 8-float
  // intrinsics do not take a 16-float vector.
#if defined(__AVX512F__)
  static_assert(width == 16, "AVX-512 builds use 16-float vectors");
  return vec(_mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1u), p));
#elif defined(__AVX__)
  static_assert(width == 8, "AVX builds use 8-float vectors");
  return vec(_mm256_maskload_ps(p, first_lanes(n)));
#else
  alignas(64) float t[width] = {};
  // Lane by lane, bounded by the width where GCC's bounds check sees it: a memcpy of n floats
  // drew -Warray-bounds from callers whose n it cannot bound.
  for (int i = 0; i < n && i < width; ++i) t[i] = p[i];
  return vec::load_aligned(t);
#endif
}
/// The lanes of `mask` (bit l: lane l) from address `p`, the others zero. The memory of lanes
/// outside the mask is not touched and may lie outside any object, so `p` is an address, never
/// a pointer to the whole vector. One instruction with AVX-512, lane by lane otherwise.
inline vec load_masked(std::uintptr_t p, std::uint32_t mask) {
#if defined(__AVX512F__)
  return vec(_mm512_maskz_loadu_ps(static_cast<__mmask16>(mask), reinterpret_cast<const void*>(p)));
#else
  alignas(64) float t[width] = {};
  for (int l = 0; l < width; ++l)
    if (mask >> l & 1u) {
      const std::uintptr_t lane = p + static_cast<std::uintptr_t>(l) * sizeof(float);
      std::memcpy(&t[l], reinterpret_cast<const void*>(lane), sizeof(float));
    }
  return vec::load_aligned(t);
#endif
}
/// Stores the first `n` lanes of `v` at `p`; nothing past them is written.
inline void store_first(float* p, const vec& v, int n) {
#if defined(__AVX512F__)
  _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1u), v);
#elif defined(__AVX__)
  _mm256_maskstore_ps(p, first_lanes(n), v);
#else
  alignas(64) float t[width];
  v.store_aligned(t);
  for (int i = 0; i < n && i < width; ++i) p[i] = t[i];  // lane by lane, as in load_first
#endif
}

namespace lanes {
struct even_index {  // lane i reads lane 2i (mod the width) of its source
  static constexpr unsigned get(unsigned i, unsigned n) { return (2 * i) % n; }
};
struct odd_index {  // lane i reads lane 2i + 1 (mod the width) of its source
  static constexpr unsigned get(unsigned i, unsigned n) { return (2 * i + 1) % n; }
};
struct low_half {
  static constexpr bool get(unsigned i, unsigned n) { return i < n / 2; }
};
}  // namespace lanes
/// The even lanes of `a`, then those of `b`: {a0, a2, ..., b0, b2, ...}, which reads every
/// other float of 2 · width consecutive ones (a stride-2 convolution's phase planes).
inline vec evens(const vec& a, const vec& b) {
  constexpr auto index = xsimd::make_batch_constant<xsimd::batch<std::uint32_t, arch>, lanes::even_index>();
  constexpr auto low = xsimd::make_batch_bool_constant<vec, lanes::low_half>();
  return xsimd::select(low, xsimd::swizzle(a, index), xsimd::swizzle(b, index));
}

/// Splits 2 · width consecutive floats, `a` then `b`, into their even and odd elements:
/// `e` = {a0, a2, ..., b0, b2, ...}, `o` = {a1, a3, ..., b1, b3, ...}.
inline void deinterleave(const vec& a, const vec& b, vec& e, vec& o) {
#if defined(__AVX512F__)
  const __m512i ie = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i io = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  e = vec(_mm512_permutex2var_ps(a, ie, b));
  o = vec(_mm512_permutex2var_ps(a, io, b));
#elif defined(__AVX2__)
  // In-lane shuffles give {a0 a2 b0 b2 | a4 a6 b4 b6}; one 64-bit permute orders the pairs.
  const __m256 se = _mm256_shuffle_ps(a, b, 0x88), so = _mm256_shuffle_ps(a, b, 0xDD);
  e = vec(_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(se), 0xD8)));
  o = vec(_mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(so), 0xD8)));
#else
  e = evens(a, b);
  constexpr auto index = xsimd::make_batch_constant<xsimd::batch<std::uint32_t, arch>, lanes::odd_index>();
  constexpr auto low = xsimd::make_batch_bool_constant<vec, lanes::low_half>();
  o = xsimd::select(low, xsimd::swizzle(a, index), xsimd::swizzle(b, index));
#endif
}

/// The `n` (1 ≤ n ≤ width) floats p[0], p[stride], ..., p[(n - 1) · stride] as the first lanes,
/// the others zero; nothing else is read. One gather where the instruction set has one: a
/// channel of NHWC values as a vector of positions (transposes to and from planar). `stride`
/// · (width - 1) must fit an int.
inline vec load_strided(const float* p, std::ptrdiff_t stride, int n) {
#if defined(__AVX512F__)
  const __m512i index = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                           _mm512_set1_epi32(static_cast<int>(stride)));
  return vec(_mm512_mask_i32gather_ps(_mm512_setzero_ps(), static_cast<__mmask16>((1u << n) - 1u), index, p, 4));
#elif defined(__AVX2__)
  const __m256i index =
      _mm256_mullo_epi32(_mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0), _mm256_set1_epi32(static_cast<int>(stride)));
  return vec(_mm256_mask_i32gather_ps(_mm256_setzero_ps(), p, index, _mm256_castsi256_ps(first_lanes(n)), 4));
#else
  alignas(64) float t[width] = {};
  for (int l = 0; l < n; ++l) t[l] = p[l * stride];
  return vec::load_aligned(t);
#endif
}

/// Sum of the lanes (xsimd 8.1 spells it `hadd`).
inline float sum(const vec& a) { return xsimd::hadd(a); }
/// Largest lane.
inline float max_lane(const vec& a) {
  alignas(64) float t[width];
  a.store_aligned(t);
  float m = t[0];
  for (int i = 1; i < width; ++i) m = t[i] > m ? t[i] : m;
  return m;
}

/// Name of the instruction set, for reports ("avx512bw", "avx2", ...).
inline const char* arch_name() { return arch::name(); }

}  // namespace partita::detail::simd
