#pragma once
// ResNet-18's candidates for oneDNN and cpu, measured in four parts: each part is its own
// translation unit (resnet18_part<k>.cpp), so the compiles run in parallel and each stays small.
#include <cstddef>
#include <vector>

#include <partita/partita.hpp>
#include <partita/backends/onednn/onednn.hpp>

#include <models/resnet18.hpp>
#include <tools/tune/tune.hpp>

using resnet18_candidates = partita::cost_candidates<partita::cost_config<>, models::resnet18::net, partita::onednn, partita::cpu>;
inline constexpr int resnet18_parts = 4;

/// One sweep over part `Part`: candidates [size * Part / parts, size * (Part + 1) / parts).
template <int Part>
void tune_resnet18_part(std::vector<tune_result>& results, int repetitions) {
  constexpr std::size_t n = resnet18_candidates::size;
  tune_entries<resnet18_candidates, n * Part / resnet18_parts, n * (Part + 1) / resnet18_parts, partita::onednn,
               partita::cpu>(results, repetitions);
}

extern template void tune_resnet18_part<0>(std::vector<tune_result>&, int);
extern template void tune_resnet18_part<1>(std::vector<tune_result>&, int);
extern template void tune_resnet18_part<2>(std::vector<tune_result>&, int);
extern template void tune_resnet18_part<3>(std::vector<tune_result>&, int);
