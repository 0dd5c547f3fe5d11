#pragma once
/// Element types (`dtype`) and their sizes and names.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace partita {

/// Element type of a tensor. Arithmetic kernels are `f32`; `i32` and `i64` are also index types
/// (`gather`'s indices, fed to `run` like any input); `u8`, `i8` and `i32` hold quantized values
/// (`quantize`, `dequantize`: docs/quantization.md); `f16` is part of the IR so that
/// half-precision models can be declared and checked; `boolean` (one byte, 0 or 1, `bool` in
/// `run`'s buffers) is what comparisons produce and what `where` and the logical ops read.
enum class dtype : std::uint8_t { f32, f16, i32, i8, i64, u8, boolean };

inline constexpr dtype f32 = dtype::f32;
inline constexpr dtype f16 = dtype::f16;
inline constexpr dtype i32 = dtype::i32;
inline constexpr dtype i8 = dtype::i8;
inline constexpr dtype i64 = dtype::i64;
inline constexpr dtype u8 = dtype::u8;
inline constexpr dtype boolean = dtype::boolean;

/// The C++ type of one element of dtype `D` (an f16 element as its 16 bits):
/// `element_of<dtype::i8>` is `std::int8_t`.
template <dtype D>
struct element_type {
  static_assert(D == dtype::f32, "partita: element_type: a dtype without a C++ element type");
  using type = float;
};
template <>
struct element_type<dtype::f16> {
  using type = std::uint16_t;
};
template <>
struct element_type<dtype::i32> {
  using type = std::int32_t;
};
template <>
struct element_type<dtype::i8> {
  using type = std::int8_t;
};
template <>
struct element_type<dtype::i64> {
  using type = std::int64_t;
};
template <>
struct element_type<dtype::u8> {
  using type = std::uint8_t;
};
template <>
struct element_type<dtype::boolean> {
  using type = bool;
};
template <dtype D>
using element_of = typename element_type<D>::type;

/// Bytes per element.
constexpr std::size_t size_of(dtype t) {
  switch (t) {
    case dtype::f32: return 4;
    case dtype::f16: return 2;
    case dtype::i32: return 4;
    case dtype::i8: return 1;
    case dtype::i64: return 8;
    case dtype::u8: return 1;
    case dtype::boolean: return 1;
  }
  return 0;
}

/// Lower-case name used by the printer: `f32`.
constexpr std::string_view name_of(dtype t) {
  switch (t) {
    case dtype::f32: return "f32";
    case dtype::f16: return "f16";
    case dtype::i32: return "i32";
    case dtype::i8: return "i8";
    case dtype::i64: return "i64";
    case dtype::u8: return "u8";
    case dtype::boolean: return "bool";
  }
  return "?";
}

/// Name used by the safetensors format: `F32`.
constexpr std::string_view safetensors_name(dtype t) {
  switch (t) {
    case dtype::f32: return "F32";
    case dtype::f16: return "F16";
    case dtype::i32: return "I32";
    case dtype::i8: return "I8";
    case dtype::i64: return "I64";
    case dtype::u8: return "U8";
    case dtype::boolean: return "BOOL";
  }
  return "?";
}

/// Whether `t` holds quantized integers: `u8`, `i8` or `i32`.
constexpr bool is_quantized_type(dtype t) { return t == dtype::u8 || t == dtype::i8 || t == dtype::i32; }

/// The smallest and largest value of an integer dtype as `std::int64_t` (0, 0 for the floating ones).
constexpr std::int64_t lowest_of(dtype t) {
  switch (t) {
    case dtype::u8: return 0;
    case dtype::i8: return -128;
    case dtype::i32: return -2147483647 - 1;
    case dtype::i64: return -9223372036854775807 - 1;
    default: return 0;
  }
}
constexpr std::int64_t highest_of(dtype t) {
  switch (t) {
    case dtype::u8: return 255;
    case dtype::boolean: return 1;
    case dtype::i8: return 127;
    case dtype::i32: return 2147483647;
    case dtype::i64: return 9223372036854775807;
    default: return 0;
  }
}

namespace detail {

/// Element `i` of an integer tensor of dtype `t` (u8, i8, i32, i64, or boolean as 0 or 1), widened.
inline std::int64_t load_integer(const void* p, dtype t, std::int64_t i) {
  switch (t) {
    case dtype::u8: return static_cast<const std::uint8_t*>(p)[i];
    case dtype::i8: return static_cast<const std::int8_t*>(p)[i];
    case dtype::i32: return static_cast<const std::int32_t*>(p)[i];
    case dtype::i64: return static_cast<const std::int64_t*>(p)[i];
    case dtype::boolean: return static_cast<const bool*>(p)[i] ? 1 : 0;
    default: return 0;
  }
}

/// Stores `v`, already in range, as element `i` of an integer tensor of dtype `t`.
inline void store_integer(void* p, dtype t, std::int64_t i, std::int64_t v) {
  switch (t) {
    case dtype::u8: static_cast<std::uint8_t*>(p)[i] = static_cast<std::uint8_t>(v); break;
    case dtype::i8: static_cast<std::int8_t*>(p)[i] = static_cast<std::int8_t>(v); break;
    case dtype::i32: static_cast<std::int32_t*>(p)[i] = static_cast<std::int32_t>(v); break;
    case dtype::i64: static_cast<std::int64_t*>(p)[i] = v; break;
    case dtype::boolean: static_cast<bool*>(p)[i] = v != 0; break;
    default: break;
  }
}

}  // namespace detail

}  // namespace partita
