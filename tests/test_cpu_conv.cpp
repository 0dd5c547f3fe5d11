// cpu: the conv2d composites it fuses are formed (batch norm folded, a broadcast residual left
// alone); it obeys the conformance law on conv2d over shapes that exercise every tail: odd sizes,
// strides, padding, dilation, groups, batches, rectangular windows, two threads, small images
// (the depthwise, channels-last, Winograd and pooled models: test_cpu_conv_depthwise.cpp).
#include <string>

#include <doctest/doctest.h>

#include <laws/conformance.hpp>

using namespace partita;
namespace nets = laws::nets;

static_assert(count_functions<compiled<nets::conv_bias_relu, cpu>::module, "cpu.conv2d_bias_act"> == 1);
static_assert(compiled<nets::conv_bias_relu, cpu>::num_steps == 1);
static_assert(count_functions<compiled<nets::conv_bias_add_relu, cpu>::module, "cpu.conv2d_bias_add_act"> == 1);
static_assert(count_functions<compiled<nets::residual_first, cpu>::module, "cpu.conv2d_bias_add"> == 1);
static_assert(count_functions<compiled<nets::conv_bn_relu, cpu>::module, "cpu.conv2d_bias_act"> == 1,
              "batch norm folded into the weights at bind");
static_assert(count_functions<compiled<nets::broadcast_add, cpu>::module, "cpu.conv2d_bias_add"> == 0,
              "a broadcast add after conv2d is not fused");
static_assert(count_functions<compiled<model<nets::expand::d>, cpu>::module, "cpu.conv2d_expand_depthwise"> == 1);
static_assert(count_functions<compiled<model<nets::expand::d2>, cpu>::module, "cpu.conv2d_expand_depthwise"> == 1,
              "hard swish, then no activation, stride 2");
static_assert(count_functions<compiled<model<nets::expand::d4>, cpu>::module, "cpu.conv2d_expand_depthwise"> == 1,
              "batch norms on both stages");
static_assert(count_functions<compiled<model<nets::expand::d5>, cpu>::module, "cpu.conv2d_expand_depthwise"> == 0,
              "a bias and a batch norm on one stage: two steps");
static_assert(count_functions<compiled<model<nets::expand::d, nets::expand::e>, cpu>::module,
                              "cpu.conv2d_expand_depthwise"> == 0,
              "an expansion that is also a result is not fused");
// MobileNetV2's 28×28 expansion, 32 → 192 channels (600 KB), stays in L2 between two steps.
using small_expansion = nets::expand::relu6_1x1<input<"x", f32, 1, 32, 28, 28>, 32, 192>;
static_assert(count_functions<compiled<model<relu<conv2d<small_expansion, weight<"d.w", f32, 192, 1, 3, 3>,
                                                          {.padding = {1, 1}, .groups = 192}>>>,
                                       cpu>::module,
                              "cpu.conv2d_expand_depthwise"> == 0);

// A depthwise convolution and the projection reading it are one step, planar or channels-last;
// not on images of fewer than 8 rows (nhwc::d and p: 7), nor after a fused expansion.
constexpr fixed_string dw_project = "cpu.conv2d_depthwise_project";
static_assert(count_functions<compiled<model<nets::dwp::plain>, cpu>::module, dw_project> == 1 &&
              compiled<model<nets::dwp::plain>, cpu>::num_steps == 1);
static_assert(count_functions<compiled<model<nets::dwp::residual>, cpu>::module, "cpu.conv2d_depthwise_project_add"> == 1,
              "the residual add is fused too");
static_assert(count_functions<compiled<model<nets::dwp::head>, cpu>::module, "cpu.conv2d_depthwise_project_add"> == 1 &&
              count_functions<compiled<model<nets::dwp::head2>, cpu>::module, dw_project> == 1 &&
              count_functions<compiled<model<nets::dwp::head3>, cpu>::module, dw_project> == 1);
static_assert(count_functions<compiled<model<nets::nhwc::head>, cpu>::module, dw_project> == 0);
static_assert(count_functions<compiled<model<nets::nhwc::he>, cpu>::module, dw_project> == 0 &&
              count_functions<compiled<model<nets::nhwc::he>, cpu>::module, "cpu.conv2d_expand_depthwise"> == 1,
              "the expansion claims the depthwise layer first");

// Small images' convolutions fuse the pooling that reads them; ResNet's stem (3.2 MB) does not.
static_assert(count_functions<compiled<nets::lenet, cpu>::module, "cpu.conv2d_bias_act_pool"> == 2);
static_assert(count_functions<compiled<nets::pooled::avg, cpu>::module, "cpu.conv2d_bias_act_pool"> == 1 &&
              count_functions<compiled<nets::pooled::max_bn, cpu>::module, "cpu.conv2d_bias_act_pool"> == 1 &&
              count_functions<compiled<nets::pooled::wide, cpu>::module, "cpu.conv2d_bias_act_pool"> == 1);
static_assert(count_functions<compiled<model<nets::nhwc::mw>, cpu>::module, "cpu.conv2d_bias_act_pool"> == 0,
              "a convolution result of 25080 floats per image keeps its pooling apart");

// One expanded channel (1 MiB) read by a 3×3 convolution of one group: not a depthwise pair.
using one_channel = nets::expand::relu6_1x1<input<"x", f32, 1, 2, 512, 512>, 2, 1>;
static_assert(count_functions<partition<model<bias_add<conv2d<one_channel, weight<"d.w", f32, 1, 1, 3, 3>,
                                                               {.padding = {1, 1}}>,
                                                        weight<"d.b", f32, 1>>>,
                                        cpu>,
                              "cpu.conv2d_expand_depthwise"> == 0);

// The layout plan: values that pass only between steps that read and write channels-last lie
// NHWC; a model result, a view or a planar-only reader keeps a value (and its chain) planar.
template <class Net>
constexpr int nhwc_results() {
  int n = 0;
  for (const plan_step& s : compiled<Net, cpu>::plan.steps) n += s.out.layout == tensor_layout::channels_last ? 1 : 0;
  return n;
}
static_assert(nhwc_results<model<nets::nhwc::head>>() == 7, "every convolution from the first to the pooling");
static_assert(nhwc_results<model<nets::nhwc::head, nets::nhwc::twin>>() == 7, "the twin writes a result: planar");
static_assert(nhwc_results<model<nets::nhwc::hd>>() == 4, "direct first layer, depthwise, 1×1, direct 3×3");
static_assert(nhwc_results<model<nets::nhwc::hd2>>() == 2, "direct first layer, depthwise");
static_assert(nhwc_results<model<nets::nhwc::hr>>() == 4, "direct first layer, three depthwise (one adding a residual)");
static_assert(nhwc_results<model<nets::nhwc::hp>>() == 3 && nhwc_results<model<nets::nhwc::ho>>() == 2,
              "direct first layers, then 1×1s");
static_assert(nhwc_results<model<nets::nhwc::viewed>>() == 0, "a view reads the last convolution");
static_assert(nhwc_results<model<nets::nhwc::he>>() == 3 && nhwc_results<model<nets::nhwc::he2>>() == 3,
              "the 1×1 from the planar input, the fused expansion, the projection");
static_assert(count_functions<compiled<model<nets::nhwc::he>, cpu>::module, "cpu.conv2d_expand_depthwise"> == 1 &&
              count_functions<compiled<model<nets::nhwc::he2>, cpu>::module, "cpu.conv2d_expand_depthwise"> == 1);
static_assert(nhwc_results<model<nets::nhwc::d2>>() == 0, "the chain ends in a result");
static_assert(nhwc_results<nets::cnn>() == 0, "the chain ends in results");
static_assert(nhwc_results<model<nets::nhwc::hw, nets::nhwc::ow, nets::nhwc::gw, nets::nhwc::rw>>() == 7,
              "five wide convolutions, the max and average poolings; the results planar");
static_assert(nhwc_results<model<nets::nhwc::rt>>() == 1, "the block's first convolution; the second writes the result");
static_assert(nhwc_results<model<nets::nhwc::hs>>() == 3, "blocks adding their own input stay channels-last");
static_assert(nhwc_results<model<nets::nhwc::hf>>() == 2 && nhwc_results<model<nets::nhwc::hg>>() == 3,
              "first layers and the 1×1s that prefetch");
static_assert(nhwc_results<model<nets::dwp::head>>() == 2 && nhwc_results<model<nets::dwp::head2>>() == 2 &&
                  nhwc_results<model<nets::dwp::head3>>() == 2,
              "the first layer and the fused projection");
static_assert(nhwc_results<model<nets::dwp::residual>>() == 0, "the caller's input and result");
// Which convolutions gather their positions for the 1×1 kernel: strided 1×1s of one group and
// no padding before, whose last position lies inside the image.
constexpr bool gathers(int kernel, int stride, int pad, int groups = 1, int size = 9) {
  attrs a{};
  a.stride = {stride, stride};
  a.padding = {pad, pad};
  a.groups = groups;
  const int out = (size + 2 * pad - kernel) / stride + 1;
  return detail::cpu::nhwc_pointwise_strided(detail::cpu::make_conv_geometry(
      shape{4, {1, 8, size, size}}, shape{4, {8, 8 / groups, kernel, kernel}}, shape{4, {1, 8, out, out}}, a));
}
static_assert(gathers(1, 2, 0) && gathers(1, 3, 0) && gathers(1, 2, 0, 1, 10));
static_assert(!gathers(1, 1, 0) && !gathers(3, 2, 1) && !gathers(1, 2, 1) && !gathers(1, 2, 0, 2),
              "stride 1 (in place), a 3×3, padding, groups");
static_assert(nhwc_results<model<nets::nhwc::hz>>() == 3 && nhwc_results<model<nets::nhwc::hy>>() == 2,
              "first layers, a strided 3×3, strided 1×1s");
static_assert(nhwc_results<model<flatten<global_avg_pool2d<nets::expand::d>>>>() == 0,
              "a fused expansion reading a model input stays planar");
// The 1×1 register tiles a layer instantiates (`pointwise_kernels_for`), the same with AVX and
// AVX-512: ResNet-18's downsampling 1×1s run passes of two vectors only, plain below 128 KB of
// weights and prefetching above; an odd count of vectors adds the passes of one and three.
constexpr bool tiles_are(detail::cpu::pointwise_kernels k, bool one, bool two, bool three, bool prefetching) {
  return k.one == one && k.two == two && k.three == three && k.prefetching == prefetching && k.plain == !prefetching;
}
static_assert(tiles_are(detail::cpu::pointwise_kernels_for(64, 128), false, true, false, false));
static_assert(tiles_are(detail::cpu::pointwise_kernels_for(256, 512), false, true, false, true));
static_assert(tiles_are(detail::cpu::pointwise_kernels_for(160, 232), detail::simd::width >= 8, true, detail::simd::width >= 8, true),
              "15 or 29 vectors (58 with NEON's 4 floats: an even count, passes of two)");
static_assert(tiles_are(detail::cpu::pointwise_kernels_for(32, 4), true, false, false, false), "one part vector");
static_assert(detail::cpu::pointwise_kernels_for(64, 128).positions(49).exactly == 49 &&
                  detail::cpu::pointwise_kernels_for(64, 128).positions(49).least == 49 &&
                  detail::cpu::pointwise_kernels_for(64, 128).at_least(14).exactly == 0,
              "a call's positions: exactly the image's where split by panels, at least a row's");

TEST_CASE("print(plan) marks the values that lie channels-last") {
  const std::string text = print(compiled<model<nets::nhwc::head>, cpu>::plan);
  CHECK(text.find("(nhwc)") != std::string::npos);
  CHECK(print(compiled<model<nets::nhwc::viewed>, cpu>::plan).find("(nhwc)") == std::string::npos);
}

PARTITA_CONFORMANCE_LAW_PART(cpu, conv_shape_part)
