#pragma once
// Keyword spotting: the DS-CNN of MLPerf Tiny (after Zhang et al., "Hello Edge"), on 49 frames of
// 10 MFCC features, 12 classes: a 10×4 convolution with stride 2, four depthwise-separable blocks
// of 64 channels, global average pooling, a dense layer and softmax.
#include <models/tiny/layers.hpp>

namespace models::tiny {

/// The network over layer set L (layers.hpp).
template <class L>
struct ds_cnn_layers {
  using x = in<L, input<"mfcc", f32, 1, 1, 49, 10>>;
  // TensorFlow's 'same' padding for a 10×4 window at stride 2 on 49×10: 4 rows above, 5 below.
  using stem = typename L::template conv_relu<x, "stem", 64, 1, 10, 4,
                                              conv2d_attrs{.stride = {2, 2}, .padding = {4, 1}, .padding_end = {5, 1}}>;
  using b1 = separable<L, stem, "block1", 64, 64, 1>;
  using b2 = separable<L, b1, "block2", 64, 64, 1>;
  using b3 = separable<L, b2, "block3", 64, 64, 1>;
  using b4 = separable<L, b3, "block4", 64, 64, 1>;
  using logits = fc<L, flat<L, global_pool<L, b4>>, "classifier", 12, 64>;
};

/// Input "mfcc" f32[1, 1, 49, 10]; output the 12 class probabilities.
using ds_cnn = model<out<f32_layers, ds_cnn_layers<f32_layers>::logits>>;
/// The same network in int8 (QDQ): input "mfcc" f32[1, 1, 49, 10], quantized inside; output the
/// 12 logits, dequantized.
using ds_cnn_int8 = model<out<int8_layers, ds_cnn_layers<int8_layers>::logits>>;

}  // namespace models::tiny
