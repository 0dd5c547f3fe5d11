// The tune tool on ResNet-18 with oneDNN and cpu: measures each candidate of the cost-based
// search (`cost_candidates<cost_config<>, models::resnet18::net, onednn, cpu>`) alone on this machine
// and writes the header `cost_partition_with<cost_config<resnet18_costs>, ...>` reads
// (examples/cost_partition). The candidates are compiled in four translation units
// (resnet18_part0.cpp ... resnet18_part3.cpp).
//
//   example_tune [out.hpp] [repetitions] [sweeps]      (default resnet18_costs.hpp, 25, 3)
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "resnet18_parts.hpp"

int main(int argc, char** argv) try {
  const std::string path = argc > 1 ? argv[1] : "resnet18_costs.hpp";
  const int repetitions = argc > 2 ? std::max(1, std::atoi(argv[2])) : 25;
  const int sweeps = argc > 3 ? std::max(1, std::atoi(argv[3])) : 3;
  std::vector<tune_result> results;
  for (int s = 0; s < sweeps; ++s) {
    tune_resnet18_part<0>(results, repetitions);
    tune_resnet18_part<1>(results, repetitions);
    tune_resnet18_part<2>(results, repetitions);
    tune_resnet18_part<3>(results, repetitions);
  }
  const std::vector<handover_result> handovers =
      tune_handovers<resnet18_candidates, partita::onednn, partita::cpu>(repetitions, sweeps);
  std::ofstream out(path);
  write_costs(out, "resnet18_costs", results, repetitions, sweeps, handovers);
  out.close();
  if (!out) throw partita::error("cannot write " + path);
  std::cout << "wrote " << path << ": " << tune_count<resnet18_candidates> << " of " << resnet18_candidates::size
            << " candidates measured\n";
  for (const auto& h : handovers) std::cout << "hand-over " << h.from << " -> " << h.to << ": " << h.ns / 1e3 << " us\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "example_tune: " << e.what() << "\n";
  return 1;
}
