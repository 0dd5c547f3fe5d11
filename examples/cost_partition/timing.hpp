#pragma once
#include <memory>

#include "../resnet18/measure.hpp"

#include "variants.hpp"

template <class Exe>
double cost_example::time_ms(const partita::weight_set& weights, const std::vector<float>& image, std::vector<float>& logits,
                             int runs) {
  auto exe = std::make_unique<Exe>();
  exe->bind(weights);
  return resnet18::median_ms(*exe, image, logits, runs);
}
