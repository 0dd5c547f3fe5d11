#pragma once
/// `shape`, a tensor shape of up to `max_rank` (6) dimensions, usable at compile time.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace partita {

/// Largest tensor rank the IR admits.
inline constexpr int max_rank = 6;

/// Most elements a tensor may have: 2^48, a pebibyte of f32 (four times what 48-bit addresses
/// reach). Below it, a tensor's bytes and a plan's sums of them stay far from 64-bit overflow.
inline constexpr std::int64_t max_elements = std::int64_t{1} << 48;

/// A static tensor shape: `shape{2, {512, 784}}`. A structural type, so it can be a template
/// argument and a member of constexpr tables.
struct shape {
  int rank = 0;
  std::array<std::int64_t, max_rank> dims{};

  constexpr std::int64_t operator[](int i) const { return dims[static_cast<std::size_t>(i)]; }
  constexpr std::int64_t elements() const {
    std::int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= dims[static_cast<std::size_t>(i)];
    return n;
  }
  /// True when the product of the dimensions is at most `max_elements`, computed without
  /// overflowing (a model's shape checks call it before anything multiplies the dimensions).
  constexpr bool countable() const {
    std::int64_t n = 1;
    for (int i = 0; i < rank; ++i) {
      const std::int64_t d = dims[static_cast<std::size_t>(i)];
      if (d > 0 && n > max_elements / d) return false;
      n *= d > 0 ? d : 0;
    }
    return true;
  }
  /// Dimension counted from the back: `back(0)` is the innermost one.
  constexpr std::int64_t back(int i) const { return dims[static_cast<std::size_t>(rank - 1 - i)]; }
  friend constexpr bool operator==(const shape&, const shape&) = default;
};

/// `shape_of<1, 784>` is `shape{2, {1, 784}}`.
template <std::int64_t... D>
inline constexpr shape shape_of{static_cast<int>(sizeof...(D)), {D...}};

/// `[1, 784]`.
inline std::string to_string(const shape& s) {
  std::string r = "[";
  for (int i = 0; i < s.rank; ++i) {
    if (i) r += ", ";
    r += std::to_string(s[i]);
  }
  r += "]";
  return r;
}

/// A shape as a type, so that the compiler prints it in diagnostics: `dims<512, 700>`.
template <std::int64_t... D>
struct dims {};

namespace detail {
template <shape S, std::size_t... I>
auto dims_of_impl(std::index_sequence<I...>) -> dims<S.dims[I]...>;
}  // namespace detail

/// The `dims<...>` type of a constexpr shape.
template <shape S>
using dims_of = decltype(detail::dims_of_impl<S>(std::make_index_sequence<static_cast<std::size_t>(S.rank)>{}));

}  // namespace partita
