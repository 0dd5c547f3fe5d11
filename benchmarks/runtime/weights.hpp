#pragma once
// Deterministic pseudo-random weights and inputs for the runtime benchmark: the same numbers on
// every machine and for every implementation (the examples' generator: weights by name), and
// token ids for models whose input is indices.
#include <algorithm>
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

/// Input `i` of `Executable` as indices (token ids), uniform in [0, bound).
template <class Executable>
std::vector<std::int64_t> random_ids(std::int64_t bound, std::uint32_t seed = 7, std::size_t i = 0) {
  const std::vector<float> u =
      models::pseudo_random(static_cast<std::size_t>(Executable::input(i).shp.elements()), seed, 0.0f, 1.0f);
  std::vector<std::int64_t> ids(u.size());
  for (std::size_t k = 0; k < u.size(); ++k)
    ids[k] = std::min(bound - 1, static_cast<std::int64_t>(u[k] * static_cast<float>(bound)));
  return ids;
}

}  // namespace bench
