#pragma once
// Image classification: the ResNet-8 of MLPerf Tiny, on 32×32 RGB images (CIFAR-10), 10 classes:
// a 3×3 stem of 16 channels, three residual stacks of 16, 32 and 64 channels (the last two
// halving the resolution, with 1×1 projections), average pooling, a dense layer and softmax.
#include <type_traits>

#include <models/tiny/layers.hpp>

namespace models::tiny {

/// The network over layer set L (layers.hpp).
template <class L>
struct resnet8_layers {
  template <class X, fixed_string P, std::int64_t In, std::int64_t Out, int S>
  struct stack {
    using a = conv_relu<L, X, cat(P, ".conv1"), Out, In, 3, S, 1>;
    using b = conv<L, a, cat(P, ".conv2"), Out, Out, 3, 1, 1>;
    using shortcut = std::conditional_t<S == 1 && In == Out, X, conv<L, X, cat(P, ".proj"), Out, In, 1, S, 0>>;
    using out = add_relu<L, b, shortcut>;
  };
  using x = in<L, input<"image", f32, 1, 3, 32, 32>>;
  using stem = conv_relu<L, x, "stem", 16, 3, 3, 1, 1>;
  using s1 = typename stack<stem, "stack1", 16, 16, 1>::out;
  using s2 = typename stack<s1, "stack2", 16, 32, 2>::out;
  using s3 = typename stack<s2, "stack3", 32, 64, 2>::out;
  using logits = fc<L, flat<L, avg_pool<L, s3, {.size = {8, 8}}>>, "classifier", 10, 64>;
};

/// Input "image" f32[1, 3, 32, 32]; output the 10 class probabilities.
using resnet8 = model<out<f32_layers, resnet8_layers<f32_layers>::logits>>;
/// The same network in int8 (QDQ): input "image" f32[1, 3, 32, 32], quantized inside; output the
/// 10 logits, dequantized.
using resnet8_int8 = model<out<int8_layers, resnet8_layers<int8_layers>::logits>>;

}  // namespace models::tiny
