// cpu conv2d, alone and fused, against the reference over shapes that exercise every tail:
// odd sizes, strides, padding, dilation, groups, batches, rectangular windows.
#include <doctest/doctest.h>

#include "models/conformance.hpp"

using namespace partita;

namespace {

template <std::int64_t N, std::int64_t C, std::int64_t H, std::int64_t W, std::int64_t O, std::int64_t KH, std::int64_t KW,
          conv2d_attrs A>
using conv_net = model<conv2d<input<"x", f32, N, C, H, W>, weight<"w", f32, O, C / A.groups, KH, KW>, A>>;

}  // namespace

TEST_CASE("conv2d 3x3, stride 1, padding 1, odd sizes (channel and column tails)") {
  CHECK_CONFORMS(conv_net<1, 3, 11, 13, 5, 3, 3, conv2d_attrs{.padding = {1, 1}}>);
}

TEST_CASE("conv2d 3x3, stride 2, padding 1") {
  CHECK_CONFORMS(conv_net<1, 4, 15, 17, 9, 3, 3, conv2d_attrs{.stride = {2, 2}, .padding = {1, 1}}>);
}

TEST_CASE("conv2d 5x5, padding 2, one input channel (LeNet's first layer)") {
  CHECK_CONFORMS(conv_net<1, 1, 28, 28, 6, 5, 5, conv2d_attrs{.padding = {2, 2}}>);
}

TEST_CASE("conv2d dilated, batch of two") {
  CHECK_CONFORMS(conv_net<2, 5, 9, 10, 7, 3, 3, conv2d_attrs{.padding = {2, 2}, .dilation = {2, 2}}>);
}

TEST_CASE("conv2d grouped and depthwise") {
  CHECK_CONFORMS(conv_net<1, 6, 8, 9, 4, 3, 3, conv2d_attrs{.padding = {1, 1}, .groups = 2}>);
  CHECK_CONFORMS(conv_net<1, 8, 10, 7, 8, 3, 3, conv2d_attrs{.stride = {2, 2}, .padding = {1, 1}, .groups = 8}>);
}

TEST_CASE("conv2d 1x1, stride 1 and 2") {
  CHECK_CONFORMS(conv_net<1, 16, 7, 7, 24, 1, 1, conv2d_attrs{}>);
  CHECK_CONFORMS(conv_net<1, 16, 14, 14, 20, 1, 1, conv2d_attrs{.stride = {2, 2}}>);
}

TEST_CASE("conv2d 7x7 stride 2 padding 3 (ResNet's stem), rectangular window and strides") {
  CHECK_CONFORMS(conv_net<1, 3, 32, 30, 16, 7, 7, conv2d_attrs{.stride = {2, 2}, .padding = {3, 3}}>);
  CHECK_CONFORMS(conv_net<1, 3, 12, 11, 5, 2, 3, conv2d_attrs{.stride = {2, 1}, .padding = {0, 1}}>);
  CHECK_CONFORMS(conv_net<1, 2, 9, 16, 3, 4, 1, conv2d_attrs{.stride = {3, 2}, .padding = {1, 0}, .dilation = {2, 1}}>);
}

TEST_CASE("conv2d without padding: the last tile's columns past the input are dropped") {
  CHECK_CONFORMS(conv_net<1, 4, 6, 37, 3, 3, 3, conv2d_attrs{}>);
}

namespace fused {
using x = input<"x", f32, 1, 6, 9, 11>;
using w = weight<"w", f32, 10, 6, 3, 3>;
using b = weight<"b", f32, 10>;
using conv = conv2d<x, w, {.padding = {1, 1}}>;
using conv_bias = bias_add<conv, b>;
template <class X>
using bn = batch_norm<X, weight<"bn.gamma", f32, 10>, weight<"bn.beta", f32, 10>, weight<"bn.mean", f32, 10>,
                      weight<"bn.var", f32, 10>>;
using res = input<"res", f32, 1, 10, 9, 11>;
}  // namespace fused

TEST_CASE("fused conv2d composites match the reference, and are formed") {
  using namespace fused;
  using n1 = model<relu<conv_bias>>;
  static_assert(count_functions<compiled<n1, cpu>::module, "cpu.conv2d_bias_act"> == 1);
  static_assert(compiled<n1, cpu>::num_steps == 1);
  CHECK_CONFORMS(n1);
  using n2 = model<relu<add<conv_bias, res>>>;
  static_assert(count_functions<compiled<n2, cpu>::module, "cpu.conv2d_bias_add_act"> == 1);
  CHECK_CONFORMS(n2);
  using n3 = model<add<res, conv_bias>>;  // the residual first
  static_assert(count_functions<compiled<n3, cpu>::module, "cpu.conv2d_bias_add"> == 1);
  CHECK_CONFORMS(n3);
  using n4 = model<relu<bn<conv>>>;  // batch norm folded into the weights at bind
  static_assert(count_functions<compiled<n4, cpu>::module, "cpu.conv2d_bias_act"> == 1);
  CHECK_CONFORMS(n4);
  using n5 = model<clip<bn<conv_bias>, 0.f, 0.5f>>;
  CHECK_CONFORMS(n5);
  CHECK_CONFORMS(model<sigmoid<conv_bias>>);
  CHECK_CONFORMS(model<partita::tanh<add<conv, res>>>);
  CHECK_CONFORMS(model<relu<conv>>);
  CHECK_CONFORMS(model<conv_bias>);
}

TEST_CASE("a conv2d whose weight is an input is packed at every run") {
  using net = model<relu<conv2d<input<"x", f32, 1, 3, 7, 7>, input<"w", f32, 5, 3, 3, 3>, {.padding = {1, 1}}>>>;
  CHECK_CONFORMS(net);
}

TEST_CASE("a broadcast add after conv2d is not fused, and still right") {
  using namespace fused;
  using net = model<add<conv_bias, input<"r", f32, 1, 10, 1, 1>>>;
  static_assert(count_functions<compiled<net, cpu>::module, "cpu.conv2d_bias_add"> == 0);
  CHECK_CONFORMS(net);
}

TEST_CASE("conv2d large enough for two threads: split by output positions, then by output channels") {
  CHECK_CONFORMS(model<relu<conv2d<input<"x", f32, 1, 32, 30, 30>, weight<"w", f32, 48, 32, 3, 3>, {.padding = {1, 1}}>>>);
  CHECK_CONFORMS(model<relu<add<conv2d<input<"x", f32, 1, 64, 5, 5>, weight<"w", f32, 72, 64, 3, 3>, {.padding = {1, 1}}>,
                                input<"r", f32, 1, 72, 5, 5>>>>);
}

TEST_CASE("small images take the channel-vectorized path: 7x7, 10x10, residual, groups, stride, batch, threads") {
  // 7x7 and 10x10 outputs waste most position lanes, so these vectorize over output channels.
  CHECK_CONFORMS(model<relu<add<bias_add<conv2d<input<"x", f32, 1, 32, 7, 7>, weight<"w", f32, 64, 32, 3, 3>, {.padding = {1, 1}}>,
                                         weight<"b", f32, 64>>,
                                input<"r", f32, 1, 64, 7, 7>>>>);
  CHECK_CONFORMS(conv_net<1, 6, 14, 14, 16, 5, 5, conv2d_attrs{}>);  // LeNet's second layer: 16 channels, one vector
  CHECK_CONFORMS(model<relu<conv2d<input<"x", f32, 1, 64, 10, 10>, weight<"w", f32, 16, 64, 3, 3>, {.padding = {1, 1}}>>>);
  CHECK_CONFORMS(conv_net<2, 8, 13, 13, 40, 3, 3, conv2d_attrs{.stride = {2, 2}, .padding = {1, 1}, .groups = 2}>);
  CHECK_CONFORMS(conv_net<1, 16, 9, 9, 37, 3, 3, conv2d_attrs{.padding = {1, 1}}>);  // a channel tail
}
