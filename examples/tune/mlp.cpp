// The tune tool on a small model: measures each candidate of the cost-based search over the
// 784-512-512-10 MLP on the cpu backend and writes the measurements as a header.
//
//   example_tune_mlp [out.hpp]        (default mlp_costs.hpp; struct mlp_costs)
#include <fstream>
#include <iostream>
#include <string>

#include <partita/partita.hpp>

#include <models/mlp.hpp>
#include <tools/tune/tune.hpp>

using candidates = partita::cost_candidates<partita::cost_config<>, models::mlp, partita::cpu>;

int main(int argc, char** argv) try {
  const std::string path = argc > 1 ? argv[1] : "mlp_costs.hpp";
  std::ofstream out(path);
  tune<candidates, partita::cpu>(out, "mlp_costs", 25);
  out.close();
  if (!out) throw partita::error("cannot write " + path);
  std::cout << "wrote " << path << ": " << tune_count<candidates> << " of " << candidates::size << " candidates measured\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "example_tune_mlp: " << e.what() << "\n";
  return 1;
}
