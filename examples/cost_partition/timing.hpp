#pragma once
#include <memory>

#include <models/measure.hpp>

#include "variants.hpp"

template <class Exe>
double cost_example::time_ms(const partita::weight_set& weights, const std::vector<float>& image, std::vector<float>& logits,
                             int runs) {
  auto exe = std::make_unique<Exe>();
  exe->bind(weights);
  return models::median_ms(*exe, image, logits, runs);
}
