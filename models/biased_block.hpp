#pragma once
// The ResNet basic block with biased convolutions and no batch norm (as after folding it), on an
// input "x" f32[1, C, H, W]; weights conv{1,2}.{weight,bias}.
#include <cstdint>

#include <partita/partita.hpp>

namespace models {
using namespace partita;

/// relu(conv2(relu(conv1(x))) + x), each conv 3×3 with padding 1 and a bias:
/// `model<biased_block<64, 56, 56>::out>`.
template <std::int64_t C, std::int64_t H, std::int64_t W>
struct biased_block {
  using x = input<"x", f32, 1, C, H, W>;
  using conv1 = relu<bias_add<conv2d<x, weight<"conv1.weight", f32, C, C, 3, 3>, {.padding = {1, 1}}>,
                              weight<"conv1.bias", f32, C>>>;
  using conv2 = bias_add<conv2d<conv1, weight<"conv2.weight", f32, C, C, 3, 3>, {.padding = {1, 1}}>,
                         weight<"conv2.bias", f32, C>>;
  using out = relu<add<conv2, x>>;
};

}  // namespace models
