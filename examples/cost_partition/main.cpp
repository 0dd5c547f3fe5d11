// ResNet-18 on oneDNN and cpu, partitioned three ways: the eager flow (`partition`: oneDNN
// claims everything it supports, in priority order), the cost-based search with the built-in
// estimates (`cost_partition`), and the search with costs measured on a machine by the tune tool
// (`cost_partition_with<cost_config<resnet18_costs>, ...>`, examples/tune). Prints each one's
// partitions and the search's estimate, writes Graphviz pictures (eager.dot, cost.dot,
// measured.dot), runs the three executables on the same weights and image, checks that their
// outputs agree with the eager one's and prints their median latencies.
//
//   example_cost_partition [dot-directory] [runs]      (default ., 15)
//
// Each partitioning is compiled in its own translation unit (eager.cpp, cost.cpp, measured.cpp).
// The measured costs: the header named by the CMake cache variable PARTITA_RESNET18_COSTS if set,
// else resnet18_costs.hpp next to this file, measured on the machine that wrote it (run
// example_tune to measure this one's).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include <models/measure.hpp>
#include <models/random_weights.hpp>

#include "variants.hpp"

using models::max_relative_error;

int main(int argc, char** argv) try {
  const std::filesystem::path dir = argc > 1 ? argv[1] : ".";
  const int runs = argc > 2 ? std::max(1, std::atoi(argv[2])) : 15;
  std::filesystem::create_directories(dir);

  std::vector<cost_example::variant> vs;
  vs.push_back(cost_example::eager());
  vs.push_back(cost_example::cost());
  vs.push_back(cost_example::measured());

  for (const cost_example::variant& v : vs) {
    std::cout << v.name << ": " << v.onednn_partitions << " oneDNN partitions, " << v.cpu_composites << " cpu composites; "
              << v.steps << " steps (" << v.onednn_steps << " onednn, " << v.steps - v.onednn_steps << " cpu)\n";
    if (v.searched)
      std::cout << "  search: estimate " << v.search.ns / 1e6 << " ms (transfers " << v.search.transfer_ns / 1e6 << " ms), "
                << v.search.candidates << " candidates (" << v.search.measured << " measured), " << v.search.states
                << " states, " << v.search.chosen << " chosen, " << v.search.partitions << " partitions\n";
    std::ofstream(dir / (v.name + ".dot")) << v.dot;
  }
  std::cout << "measured costs choose " << (vs[2].printed == vs[1].printed ? "the same" : "a different")
              << " partitioning than the estimates\n";
  std::cout << "wrote";
  for (const cost_example::variant& v : vs) std::cout << ' ' << (dir / (v.name + ".dot")).string();
  std::cout << "\n";

  std::vector<std::vector<float>> storage;
  const partita::weight_set weights = cost_example::weights(storage);
  const std::vector<float> image = models::pseudo_random(3 * 224 * 224, 2024, -2.0f, 2.0f);
  std::vector<std::vector<float>> logits(vs.size(), std::vector<float>(1000));
  std::vector<double> ms;
  for (std::size_t i = 0; i < vs.size(); ++i) ms.push_back(vs[i].time_ms(weights, image, logits[i], runs));

  bool ok = true;
  std::cout << "median latency (" << runs << " runs):";
  for (std::size_t i = 0; i < vs.size(); ++i) std::cout << (i ? ", " : " ") << vs[i].name << ' ' << ms[i] << " ms";
  std::cout << "\nlargest relative difference from eager:";
  for (std::size_t i = 1; i < vs.size(); ++i) {
    const double e = max_relative_error(logits[i], logits[0]);
    ok = ok && e < 1e-3;
    std::cout << (i > 1 ? ", " : " ") << vs[i].name << ' ' << e;
  }
  std::cout << "\n";
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "example_cost_partition: " << e.what() << "\n";
  return 1;
}
