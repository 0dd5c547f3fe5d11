#pragma once
// Keyword spotting: the DS-CNN of MLPerf Tiny (after Zhang et al., "Hello Edge"), on 49 frames of
// 10 MFCC features, 12 classes: a 10×4 convolution with stride 2, four depthwise-separable blocks
// of 64 channels, global average pooling, a dense layer and softmax.
#include <models/tiny/layers.hpp>

namespace models::tiny {

struct ds_cnn_layers {
  using x = input<"mfcc", f32, 1, 1, 49, 10>;
  // TensorFlow's 'same' padding for a 10×4 window at stride 2 on 49×10: 4 rows above, 5 below.
  using stem = relu<bias_add<conv2d<x, weight<"stem.w", f32, 64, 1, 10, 4>,
                                    {.stride = {2, 2}, .padding = {4, 1}, .padding_end = {5, 1}}>,
                             weight<"stem.b", f32, 64>>>;
  using b1 = separable<stem, "block1", 64, 64, 1>;
  using b2 = separable<b1, "block2", 64, 64, 1>;
  using b3 = separable<b2, "block3", 64, 64, 1>;
  using b4 = separable<b3, "block4", 64, 64, 1>;
  using logits = fc<flatten<global_avg_pool2d<b4>>, "classifier", 12, 64>;
};

/// Input "mfcc" f32[1, 1, 49, 10]; output the 12 class probabilities.
using ds_cnn = model<softmax<ds_cnn_layers::logits>>;

}  // namespace models::tiny
