#pragma once
// Deterministic weights for ResNet-18 (or any model with torchvision-style names) when no
// trained weights are given: He-style convolution and dense weights, batch norms near identity.
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <partita/partita.hpp>

namespace resnet18 {

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

/// Every weight `Executable` declares; `storage` keeps the data the set refers to.
template <class Executable>
partita::weight_set random_weights(std::vector<std::vector<float>>& storage) {
  partita::weight_set set;
  for (std::size_t i = 0; i < Executable::plan.weights.size(); ++i) {
    const partita::tensor_slot& w = Executable::weight(i);
    const auto n = static_cast<std::size_t>(w.shp.elements());
    const std::string_view name = w.name;
    const auto seed = static_cast<std::uint32_t>(i + 1);
    if (w.shp.rank >= 2) {
      const float bound = std::sqrt(3.0f / static_cast<float>(w.shp.elements() / w.shp[0]));
      storage.push_back(pseudo_random(n, seed, -bound, bound));
    } else if (name.ends_with("running_var")) {
      storage.push_back(pseudo_random(n, seed, 0.5f, 1.5f));
    } else if (name.ends_with(".weight")) {
      storage.push_back(pseudo_random(n, seed, 0.8f, 1.2f));
    } else {
      storage.push_back(pseudo_random(n, seed, -0.1f, 0.1f));
    }
    set.add(std::string(name), storage.back(), std::span(w.shp.dims.data(), static_cast<std::size_t>(w.shp.rank)));
  }
  return set;
}

}  // namespace resnet18
