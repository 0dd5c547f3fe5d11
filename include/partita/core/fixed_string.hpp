#pragma once
/// `fixed_string`, a string usable as a template argument.
#include <algorithm>
#include <cstddef>
#include <string_view>

namespace partita {

/// A string usable as a template argument: `input<"x", f32, 1, 784>`.
template <std::size_t N>
struct fixed_string {
  char chars[N]{};

  constexpr fixed_string() = default;
  constexpr fixed_string(const char (&s)[N]) { std::copy_n(s, N, chars); }

  static constexpr std::size_t size() { return N - 1; }
  constexpr std::string_view view() const { return {chars, N - 1}; }
  constexpr operator std::string_view() const { return view(); }

  template <std::size_t M>
  constexpr bool operator==(const fixed_string<M>& o) const {
    return view() == o.view();
  }
};

template <std::size_t N>
fixed_string(const char (&)[N]) -> fixed_string<N>;

/// `cat(prefix, ".weight")`: a name joined with a literal at compile time, for the weights of a
/// layer whose prefix is a template argument (`weight<cat(P, ".bias"), f32, 64>`).
template <std::size_t N, std::size_t M>
constexpr fixed_string<N + M - 1> cat(const fixed_string<N>& a, const char (&b)[M]) {
  fixed_string<N + M - 1> r{};
  for (std::size_t i = 0; i + 1 < N; ++i) r.chars[i] = a.chars[i];
  for (std::size_t i = 0; i < M; ++i) r.chars[N - 1 + i] = b[i];
  return r;
}

namespace detail {
/// Copies a compile-time string_view into a fixed_string of exactly its length, so that a name
/// computed by a constexpr pass can travel as a template argument (for example in a diagnostic).
template <std::size_t Len>
constexpr fixed_string<Len + 1> to_fixed(std::string_view s) {
  fixed_string<Len + 1> r{};
  for (std::size_t i = 0; i < Len && i < s.size(); ++i) r.chars[i] = s[i];
  return r;
}
}  // namespace detail

}  // namespace partita
