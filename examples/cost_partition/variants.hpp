#pragma once
// The three partitionings of examples/cost_partition, each compiled in its own translation unit
// (eager.cpp, cost.cpp, measured.cpp: the three ResNet-18 executables build in parallel).
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <partita/partita.hpp>
#include <partita/backends/onednn/onednn.hpp>

#include <models/resnet18.hpp>

namespace cost_example {

/// What main needs of one partitioning.
struct variant {
  std::string name;
  std::string printed;  // print(module)
  std::string dot;      // to_dot(module)
  int onednn_partitions = 0, cpu_composites = 0;
  std::size_t steps = 0, onednn_steps = 0;
  bool searched = false;
  partita::detail::search_stats search{};
  /// Binds `weights`, runs once, then `runs` timed runs; returns the median in ms.
  double (*time_ms)(const partita::weight_set& weights, const std::vector<float>& image, std::vector<float>& logits, int runs) = nullptr;
};

variant eager();
variant cost();
variant measured();

/// Deterministic weights for every variant (the same names in all three).
partita::weight_set weights(std::vector<std::vector<float>>& storage);

template <class Exe>
double time_ms(const partita::weight_set& weights, const std::vector<float>& image, std::vector<float>& logits, int runs);

/// The description of module `M` (partitions, composites, steps, the search's statistics).
template <class M>
variant describe(std::string name) {
  using exe = partita::compiled<M, partita::onednn, partita::cpu>;
  variant v;
  v.name = std::move(name);
  v.printed = partita::print(M{});
  v.dot = partita::to_dot(M{});
  v.onednn_partitions = partita::count_functions<M, "onednn">;
  for (const partita::function_info& f : M::value.functions) v.cpu_composites += partita::composite_backend(f.composite) == "cpu" ? 1 : 0;
  v.steps = exe::num_steps;
  for (std::size_t s = 0; s < exe::num_steps; ++s) v.onednn_steps += exe::step_backend(s) == "onednn" ? 1 : 0;
  if constexpr (requires { M::search; }) {
    v.searched = true;
    v.search = M::search;
  }
  v.time_ms = &time_ms<exe>;
  return v;
}

}  // namespace cost_example
