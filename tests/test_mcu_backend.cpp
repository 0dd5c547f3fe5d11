// The mcu backend (backends/mcu/) obeys the conformance law against the reference: its fused
// convolutions (register tiles, depthwise, grouped), dense layers and epilogues, and the
// reference kernels it runs for every other op.
#include <doctest/doctest.h>

#include <laws/conformance.hpp>

using namespace partita;

PARTITA_CONFORMANCE_LAW(mcu)

// The composites it forms on the tiny models' layers.
TEST_CASE("mcu fuses convolutions and dense layers with their bias, residual and activation") {
  using x = input<"x", f32, 1, 3, 9, 9>;
  using c = relu<bias_add<conv2d<x, weight<"w", f32, 5, 3, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}}>, weight<"b", f32, 5>>>;
  using r = relu<add<bias_add<conv2d<c, weight<"w2", f32, 5, 5, 3, 3>, {.padding = {1, 1}}>, weight<"b2", f32, 5>>, c>>;
  using d = clip<bias_add<dense<flatten<global_avg_pool2d<r>>, weight<"fc", f32, 3, 5>>, weight<"fcb", f32, 3>>, 0.f, 6.f>;
  using exe = compiled<model<d>, mcu>;
  // The flatten is a view of the pooled values, not a step.
  static_assert(exe::num_steps == 4);
  static_assert(exe::step_name(0) == "mcu.conv2d_bias_act" && exe::step_name(1) == "mcu.conv2d_bias_add_act" &&
                exe::step_name(2) == "global_avg_pool2d" && exe::step_name(3) == "mcu.dense_bias_act");
  CHECK(exe::step_backend(2) == "mcu");
}
