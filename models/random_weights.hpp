#pragma once
// Deterministic weights for any model (ResNet-18 and others with torchvision-style names) when no
// trained weights are given: He-style convolution and dense weights, batch norms near identity.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <partita/partita.hpp>

namespace models {

/// `n` values in [lo, hi) from a 32-bit LCG: the same numbers on every machine.
inline std::vector<float> pseudo_random(std::size_t n, std::uint32_t seed, float lo, float hi) {
  std::vector<float> v(n);
  std::uint32_t s = seed;
  for (float& f : v) {
    s = s * 1664525u + 1013904223u;
    f = lo + (hi - lo) * (static_cast<float>(s >> 8) / 16777216.0f);
  }
  return v;
}

/// FNV-1a, so that a weight's values depend on its name, not on its position in a model: every
/// executable of one model (whatever its partitioning) and every peer get the same numbers.
constexpr std::uint32_t name_hash(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  return h;
}

/// Values for weight `name` of shape `shp`: conv and dense weights uniform in ±√3/√fan_in (unit
/// variance through a linear layer), batch-norm gamma in [0.8, 1.2], running_var in [0.5, 1.5],
/// running_mean and biases in ±0.1.
inline std::vector<float> random_weight(std::string_view name, const partita::shape& shp, std::uint32_t seed = 1) {
  const auto n = static_cast<std::size_t>(shp.elements());
  const std::uint32_t s = name_hash(name) ^ seed;
  if (shp.rank >= 2) {
    const float bound = std::sqrt(3.0f / static_cast<float>(shp.elements() / shp[0]));
    return pseudo_random(n, s, -bound, bound);
  }
  if (name.ends_with("running_var")) return pseudo_random(n, s, 0.5f, 1.5f);
  if (name.ends_with(".weight")) return pseudo_random(n, s, 0.8f, 1.2f);  // 1-D: a batch-norm gamma
  return pseudo_random(n, s, -0.1f, 0.1f);
}

/// Every weight `Executable` (a `partita::compiled<...>`) declares; `storage` keeps the data the
/// returned set refers to.
template <class Executable>
partita::weight_set random_weights(std::vector<std::vector<float>>& storage, std::uint32_t seed = 1) {
  partita::weight_set set;
  for (std::size_t i = 0; i < Executable::plan.weights.size(); ++i) {
    const partita::tensor_slot& w = Executable::weight(i);
    storage.push_back(random_weight(w.name, w.shp, seed));
    set.add(std::string(w.name), storage.back(), std::span(w.shp.dims.data(), static_cast<std::size_t>(w.shp.rank)));
  }
  return set;
}

}  // namespace models
