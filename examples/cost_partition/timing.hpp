#pragma once
#include <algorithm>
#include <chrono>

#include "variants.hpp"

template <class Exe>
double cost_example::time_ms(const partita::weight_set& weights, const std::vector<float>& image, std::vector<float>& logits,
                             int runs) {
  auto exe = std::make_unique<Exe>();
  exe->bind(weights);
  exe->run(image, logits);
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    exe->run(image, logits);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}
