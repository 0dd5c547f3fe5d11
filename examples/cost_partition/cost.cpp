// The cost-based search with the built-in estimates (each backend's `speed`).
#include "timing.hpp"

cost_example::variant cost_example::cost() {
  return describe<partita::cost_partition<models::resnet18::net, partita::onednn, partita::cpu>>("cost");
}
