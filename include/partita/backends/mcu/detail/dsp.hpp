#pragma once
/// Two 16-bit lanes in a 32-bit word, and the dual multiply-accumulate of the Cortex-M DSP extension.
// The int8 kernels multiply int16 values (8-bit values minus their zero points, each in
// [-255, 255]) two at a time: a word holds two of them, low half first, and `dual_mac` adds both
// products to an int32 sum. On a core with the DSP extension (Cortex-M4, M7, M33, M55: GCC and
// Clang define __ARM_FEATURE_DSP) that is one SMLAD, and widening four bytes into two such words
// is one SXTB16 or UXTB16 each; elsewhere the same results come from plain integer code. The sums
// are exact either way: two products are at most 2 · 255² in magnitude. ACLE declares these
// intrinsics under __ARM_FEATURE_SIMD32, which those cores define with __ARM_FEATURE_DSP.
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__ARM_FEATURE_SIMD32) && __ARM_FEATURE_SIMD32
#include <arm_acle.h>
#define PARTITA_MCU_DSP 1
#else
#define PARTITA_MCU_DSP 0
#endif

namespace partita::detail::mcu {

/// Two int16 lanes: `lo` in bits 0-15, `hi` in bits 16-31.
inline std::uint32_t lanes(std::int32_t lo, std::int32_t hi) {
  return static_cast<std::uint32_t>(static_cast<std::uint16_t>(lo)) |
         (static_cast<std::uint32_t>(static_cast<std::uint16_t>(hi)) << 16);
}

/// The low and the high lane of a word, sign-extended.
inline std::int32_t low_lane(std::uint32_t v) { return static_cast<std::int16_t>(v & 0xffffu); }
inline std::int32_t high_lane(std::uint32_t v) { return static_cast<std::int16_t>(v >> 16); }

/// `acc` + low(a) · low(b) + high(a) · high(b): SMLAD.
inline std::int32_t dual_mac(std::uint32_t a, std::uint32_t b, std::int32_t acc) {
#if PARTITA_MCU_DSP
  return __smlad(a, b, acc);
#else
  return acc + low_lane(a) * low_lane(b) + high_lane(a) * high_lane(b);
#endif
}

/// Four bytes from `p`, any alignment (a single load where the core allows unaligned words).
inline std::uint32_t load_word(const void* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

/// Bytes 0 and 2 of `v`, as T (std::int8_t or std::uint8_t) reads them, widened to two lanes:
/// SXTB16 or UXTB16.
template <class T>
inline std::uint32_t widen_even(std::uint32_t v) {
#if PARTITA_MCU_DSP
  if constexpr (std::is_signed_v<T>) return __sxtb16(v);
  else return __uxtb16(v);
#else
  return lanes(static_cast<T>(v & 0xffu), static_cast<T>((v >> 16) & 0xffu));
#endif
}

/// Bytes 1 and 3 of `v`, widened the same way (SXTB16 or UXTB16 of `v` rotated by 8 bits, the
/// rotation folded into the instruction, which the intrinsics cannot express).
template <class T>
inline std::uint32_t widen_odd(std::uint32_t v) {
#if PARTITA_MCU_DSP
  std::uint32_t r;
  if constexpr (std::is_signed_v<T>) asm("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  else asm("uxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
  return r;
#else
  return widen_even<T>((v >> 8) | (v << 24));
#endif
}

/// Both lanes of `v` minus `z`'s (each difference within int16): SSUB16.
inline std::uint32_t sub_lanes(std::uint32_t v, std::uint32_t z) {
#if PARTITA_MCU_DSP
  return static_cast<std::uint32_t>(__ssub16(static_cast<int16x2_t>(v), static_cast<int16x2_t>(z)));
#else
  return lanes(low_lane(v) - low_lane(z), high_lane(v) - high_lane(z));
#endif
}

}  // namespace partita::detail::mcu
