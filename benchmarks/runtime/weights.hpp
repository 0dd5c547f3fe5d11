#pragma once
// Deterministic pseudo-random weights and inputs for the runtime benchmark: the same numbers on
// every machine and for every implementation (the examples' generator: weights by name).
#include <cstddef>
#include <cstdint>
#include <vector>

#include <partita/partita.hpp>

#include <models/random_weights.hpp>

namespace bench {

using models::random_weights;

/// Input `i` of `Executable`, uniform in [-1, 1).
template <class Executable>
std::vector<float> random_input(std::uint32_t seed = 7, std::size_t i = 0) {
  return models::pseudo_random(static_cast<std::size_t>(Executable::input(i).shp.elements()), seed, -1.0f, 1.0f);
}

}  // namespace bench
