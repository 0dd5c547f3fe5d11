#pragma once
// Image classification: the ResNet-8 of MLPerf Tiny, on 32×32 RGB images (CIFAR-10), 10 classes:
// a 3×3 stem of 16 channels, three residual stacks of 16, 32 and 64 channels (the last two
// halving the resolution, with 1×1 projections), average pooling, a dense layer and softmax.
#include <models/tiny/layers.hpp>

namespace models::tiny {

struct resnet8_layers {
  template <class X, fixed_string P, std::int64_t In, std::int64_t Out, int S>
  struct stack {
    using a = conv_relu<X, cat(P, ".conv1"), Out, In, 3, S, 1>;
    using b = bias_add<conv2d<a, weight<cat(P, ".conv2.w"), f32, Out, Out, 3, 3>, {.padding = {1, 1}}>,
                       weight<cat(P, ".conv2.b"), f32, Out>>;
    using shortcut = std::conditional_t<S == 1 && In == Out, X,
                                        bias_add<conv2d<X, weight<cat(P, ".proj.w"), f32, Out, In, 1, 1>, {.stride = {S, S}}>,
                                                 weight<cat(P, ".proj.b"), f32, Out>>>;
    using out = relu<add<b, shortcut>>;
  };
  using x = input<"image", f32, 1, 3, 32, 32>;
  using stem = conv_relu<x, "stem", 16, 3, 3, 1, 1>;
  using s1 = stack<stem, "stack1", 16, 16, 1>::out;
  using s2 = stack<s1, "stack2", 16, 32, 2>::out;
  using s3 = stack<s2, "stack3", 32, 64, 2>::out;
  using logits = fc<flatten<avg_pool2d<s3, {.size = {8, 8}}>>, "classifier", 10, 64>;
};

/// Input "image" f32[1, 3, 32, 32]; output the 10 class probabilities.
using resnet8 = model<softmax<resnet8_layers::logits>>;

}  // namespace models::tiny
