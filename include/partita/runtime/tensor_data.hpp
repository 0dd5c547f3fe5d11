#pragma once
/// Tensors held by name: data, dtype and shape (`tensor_data`).
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "partita/core/dtype.hpp"

namespace partita {

/// One named tensor as found in a weight source (file or memory), before validation.
struct tensor_data {
  std::string name;
  std::string dtype_name;           // spelled as in safetensors: "F32", "BF16", ...
  std::optional<dtype> type;        // set when Partita knows the dtype
  std::vector<std::int64_t> dims;   // any rank, as stored
  std::span<const std::byte> bytes; // raw little-endian data
};

/// The Partita dtype whose safetensors spelling is `name` ("F32" is `f32`), if there is one.
constexpr std::optional<dtype> dtype_from_safetensors_name(std::string_view name) {
  for (dtype t : {dtype::f32, dtype::f16, dtype::i32, dtype::i8, dtype::i64, dtype::u8, dtype::boolean})
    if (safetensors_name(t) == name) return t;
  return std::nullopt;
}

namespace detail {

// Element count of `dims`, or nullopt when a dimension is negative or the product does not fit
// in 63 bits. Sources are untrusted, so the product is checked before anyone multiplies by an
// element size or allocates.
constexpr std::optional<std::uint64_t> checked_elements(std::span<const std::int64_t> dims) {
  constexpr auto limit = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  bool empty = false;
  for (std::int64_t d : dims) {
    if (d < 0) return std::nullopt;
    empty = empty || d == 0;
  }
  // A zero dimension makes any product valid, however large the other dimensions are.
  if (empty) return 0;
  std::uint64_t n = 1;
  for (std::int64_t d : dims) {
    const auto u = static_cast<std::uint64_t>(d);
    if (n > limit / u) return std::nullopt;
    n *= u;
  }
  return n;
}

// `elements * size` in bytes, or nullopt when it overflows.
constexpr std::optional<std::uint64_t> checked_bytes(std::uint64_t elements, std::uint64_t size) {
  if (size != 0 && elements > std::numeric_limits<std::uint64_t>::max() / size) return std::nullopt;
  return elements * size;
}

// `[2, 3]`, for messages.
inline std::string dims_string(std::span<const std::int64_t> dims) {
  std::string r = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) r += ", ";
    r += std::to_string(dims[i]);
  }
  return r + "]";
}

}  // namespace detail
}  // namespace partita
