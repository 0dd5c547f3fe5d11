#pragma once
// Visual wake words: the MobileNetV1 of MLPerf Tiny at width 0.25, on 96×96 RGB images, 2 classes
// (person or not): a 3×3 stem of 8 channels at stride 2, thirteen depthwise-separable blocks
// (8 → 256 channels, four of them halving the resolution), average pooling, a dense layer.
#include <models/tiny/layers.hpp>

namespace models::tiny {

struct mobilenet_v1_025_layers {
  using x = input<"image", f32, 1, 3, 96, 96>;
  using stem = conv_relu<x, "stem", 8, 3, 3, 2, 1>;  // 48×48
  using b1 = separable<stem, "block1", 8, 16, 1>;
  using b2 = separable<b1, "block2", 16, 32, 2>;  // 24×24
  using b3 = separable<b2, "block3", 32, 32, 1>;
  using b4 = separable<b3, "block4", 32, 64, 2>;  // 12×12
  using b5 = separable<b4, "block5", 64, 64, 1>;
  using b6 = separable<b5, "block6", 64, 128, 2>;  // 6×6
  using b7 = separable<b6, "block7", 128, 128, 1>;
  using b8 = separable<b7, "block8", 128, 128, 1>;
  using b9 = separable<b8, "block9", 128, 128, 1>;
  using b10 = separable<b9, "block10", 128, 128, 1>;
  using b11 = separable<b10, "block11", 128, 128, 1>;
  using b12 = separable<b11, "block12", 128, 256, 2>;  // 3×3
  using b13 = separable<b12, "block13", 256, 256, 1>;
  using logits = fc<flatten<global_avg_pool2d<b13>>, "classifier", 2, 256>;
};

/// Input "image" f32[1, 3, 96, 96]; output the 2 class probabilities.
using mobilenet_v1_025 = model<softmax<mobilenet_v1_025_layers::logits>>;

}  // namespace models::tiny
