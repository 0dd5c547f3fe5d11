// The eager flow: oneDNN claims every op it supports (priority order), cpu takes the rest.
#include <models/random_weights.hpp>

#include "timing.hpp"

using eager_module = partita::partition<models::resnet18::net, partita::onednn, partita::cpu>;

cost_example::variant cost_example::eager() { return describe<eager_module>("eager"); }

partita::weight_set cost_example::weights(std::vector<std::vector<float>>& storage) {
  return models::random_weights<partita::compiled<eager_module, partita::onednn, partita::cpu>>(storage);
}
