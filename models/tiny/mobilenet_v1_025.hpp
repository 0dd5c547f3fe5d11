#pragma once
// Visual wake words: the MobileNetV1 of MLPerf Tiny at width 0.25, on 96×96 RGB images, 2 classes
// (person or not): a 3×3 stem of 8 channels at stride 2, thirteen depthwise-separable blocks
// (8 → 256 channels, four of them halving the resolution), average pooling, a dense layer.
#include <models/tiny/layers.hpp>

namespace models::tiny {

/// The network over layer set L (layers.hpp).
template <class L>
struct mobilenet_v1_025_layers {
  using x = in<L, input<"image", f32, 1, 3, 96, 96>>;
  using stem = conv_relu<L, x, "stem", 8, 3, 3, 2, 1>;  // 48×48
  using b1 = separable<L, stem, "block1", 8, 16, 1>;
  using b2 = separable<L, b1, "block2", 16, 32, 2>;  // 24×24
  using b3 = separable<L, b2, "block3", 32, 32, 1>;
  using b4 = separable<L, b3, "block4", 32, 64, 2>;  // 12×12
  using b5 = separable<L, b4, "block5", 64, 64, 1>;
  using b6 = separable<L, b5, "block6", 64, 128, 2>;  // 6×6
  using b7 = separable<L, b6, "block7", 128, 128, 1>;
  using b8 = separable<L, b7, "block8", 128, 128, 1>;
  using b9 = separable<L, b8, "block9", 128, 128, 1>;
  using b10 = separable<L, b9, "block10", 128, 128, 1>;
  using b11 = separable<L, b10, "block11", 128, 128, 1>;
  using b12 = separable<L, b11, "block12", 128, 256, 2>;  // 3×3
  using b13 = separable<L, b12, "block13", 256, 256, 1>;
  using logits = fc<L, flat<L, global_pool<L, b13>>, "classifier", 2, 256>;
};

/// Input "image" f32[1, 3, 96, 96]; output the 2 class probabilities.
using mobilenet_v1_025 = model<out<f32_layers, mobilenet_v1_025_layers<f32_layers>::logits>>;
/// The same network in int8 (QDQ): input "image" f32[1, 3, 96, 96], quantized inside; output the
/// 2 logits, dequantized.
using mobilenet_v1_025_int8 = model<out<int8_layers, mobilenet_v1_025_layers<int8_layers>::logits>>;

}  // namespace models::tiny
