#pragma once
// Deterministic weights for a model on a microcontroller: constexpr arrays, generated at compile
// time from each weight's name and shape, that the linker keeps in flash; and the model's input.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include <partita/embedded.hpp>

namespace models::tiny {

/// FNV-1a of a weight's name: its values do not depend on where it is declared.
constexpr std::uint32_t name_seed(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (char c : s) h = (h ^ static_cast<std::uint8_t>(c)) * 16777619u;
  return h;
}

/// `N` values in [-scale, scale) from a 32-bit LCG: the same numbers on every machine and compiler.
template <std::size_t N>
constexpr std::array<float, N> uniform(std::uint32_t seed, float scale) {
  std::array<float, N> v{};
  std::uint32_t s = seed;
  for (float& f : v) {
    s = s * 1664525u + 1013904223u;
    f = scale * (2.f * (static_cast<float>(s >> 8) / 16777216.f) - 1.f);
  }
  return v;
}

/// 1/√n, at compile time (Newton's method), for the He-like scale of a layer with fan-in n.
constexpr float inverse_sqrt(float n) {
  float r = 1.f;
  while (r * r * n > 2.f) r *= 0.5f;  // a start from below 1/√n, where Newton converges
  for (int i = 0; i < 30; ++i) r = r * (1.5f - 0.5f * n * r * r);
  return r;
}

/// The weight table of `Net`: every weight it declares, with seeded values. Kernels (rank 2 and
/// more) are uniform in ±√3/√fan-in, so activations stay of order one through deep stacks;
/// vectors (biases) in ±0.1.
template <class Net>
struct seeded_weights {
  static constexpr const auto& slots = partita::detail::step_calls<Net, partita::reference>::plan.weights;

  template <std::size_t I>
  static constexpr float scale_of() {
    const partita::shape& s = slots[I].shp;
    if (s.rank < 2) return 0.1f;
    return 1.7320508f * inverse_sqrt(static_cast<float>(s.elements() / s[0]));
  }
  // 64-byte aligned, as bind aligns every weight (partita::alignment).
  template <std::size_t I>
  alignas(64) static constexpr auto values =
      uniform<static_cast<std::size_t>(slots[I].shp.elements())>(name_seed(slots[I].name), scale_of<I>());

  static constexpr auto tensors = []<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<partita::static_tensor, sizeof...(I)>{
        partita::static_tensor{slots[I].name, slots[I].type, slots[I].shp, values<I>.data()}...};
  }(std::make_index_sequence<slots.size()>{});
};

/// The input every run of the firmware tests feeds `Net`'s first input: uniform in [-1, 1).
template <std::size_t N>
constexpr std::array<float, N> test_input() {
  return uniform<N>(12345u, 1.f);
}

}  // namespace models::tiny
