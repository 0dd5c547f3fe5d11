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

/// `N` integers uniform in [-limit, limit] from the same LCG.
template <class T, std::size_t N>
constexpr std::array<T, N> uniform_integers(std::uint32_t seed, int limit) {
  std::array<T, N> v{};
  std::uint32_t s = seed;
  for (T& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<T>(static_cast<int>((s >> 8) % static_cast<std::uint32_t>(2 * limit + 1)) - limit);
  }
  return v;
}

/// The weight table of `Net`: every weight it declares, with seeded values. Float kernels (rank 2
/// and more) are uniform in ±√3/√fan-in, so activations stay of order one through deep stacks;
/// float vectors (biases) in ±0.1. Quantized weights (int8_layers) hold the same range: i8
/// values uniform in ±127, "<w>.scale" one scale per output channel, the float range over 127
/// times a factor in [0.75, 1.25), and "<w>.zp" zeros.
template <class Net>
struct seeded_weights {
  static constexpr const auto& slots = partita::detail::step_calls<Net, partita::reference>::plan.weights;

  /// The float range of the kernel called `name` (its fan-in's He-like scale).
  static constexpr float kernel_range(std::string_view name) {
    for (const auto& slot : slots)
      if (slot.name == name) return 1.7320508f * inverse_sqrt(static_cast<float>(slot.shp.elements() / slot.shp[0]));
    return 1.f;
  }

  template <std::size_t I>
  static constexpr auto make() {
    constexpr std::string_view name = slots[I].name;
    constexpr auto n = static_cast<std::size_t>(slots[I].shp.elements());
    constexpr std::uint32_t seed = name_seed(name);
    if constexpr (slots[I].type == partita::dtype::i8) {
      if constexpr (name.ends_with(".zp")) return std::array<std::int8_t, n>{};
      else return uniform_integers<std::int8_t, n>(seed, 127);
    } else if constexpr (name.ends_with(".scale")) {
      std::array<float, n> v = uniform<n>(seed, 0.25f);
      const float base = kernel_range(name.substr(0, name.size() - 6)) / 127.f;
      for (float& f : v) f = base * (1.f + f);
      return v;
    } else if constexpr (slots[I].shp.rank < 2) {
      return uniform<n>(seed, 0.1f);
    } else {
      return uniform<n>(seed, kernel_range(name));
    }
  }
  // 64-byte aligned, as bind aligns every weight (partita::alignment).
  template <std::size_t I>
  alignas(64) static constexpr auto values = make<I>();

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
