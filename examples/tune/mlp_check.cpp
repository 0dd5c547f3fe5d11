// Compiles the MLP with the costs example_tune_mlp wrote (mlp_costs.hpp, found in the build
// directory): the header is valid C++ and the search uses its entries.
#include <iostream>

#include <partita/partita.hpp>

#include <models/mlp.hpp>
#include "mlp_costs.hpp"

using measured = partita::cost_partition_with<partita::cost_config<mlp_costs>, models::mlp, partita::cpu>;
static_assert(measured::search.measured > 0, "the search used none of the measured costs");

int main() {
  std::cout << "mlp with measured costs: estimate " << measured::search.ns << " ns, " << measured::search.measured
            << " measured candidates\n";
}
