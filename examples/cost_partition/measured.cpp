// The cost-based search with the costs the tune tool measured (examples/tune): the header named
// by PARTITA_RESNET18_COSTS if set, else the checked-in resnet18_costs.hpp next to this file.
#include "timing.hpp"

#if defined(PARTITA_RESNET18_COSTS)
#include PARTITA_RESNET18_COSTS
#else
#include "resnet18_costs.hpp"
#endif

cost_example::variant cost_example::measured() {
  using measured_module =
      partita::cost_partition_with<partita::cost_config<resnet18_costs>, models::resnet18::net, partita::onednn, partita::cpu>;
  return describe<measured_module>("measured");
}
