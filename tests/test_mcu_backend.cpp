// The mcu backend (backends/mcu/) obeys the conformance law against the reference: its fused
// convolutions (register tiles, depthwise, grouped), dense layers and epilogues, and the
// reference kernels it runs for every other op.
#include <doctest/doctest.h>

#include <laws/conformance.hpp>

#include <vector>

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

// A residual that broadcasts (a per-channel term) is not fused: the kernels add the residual
// element by element, over the output's shape.
TEST_CASE("mcu leaves an addition that broadcasts to the reference, with the same result") {
  using x = input<"x", f32, 1, 2, 5, 5>;
  using conv = bias_add<conv2d<x, weight<"w", f32, 4, 2, 3, 3>, {.padding = {1, 1}}>, weight<"b", f32, 4>>;
  using net = model<relu<add<conv, weight<"r", f32, 1, 4, 1, 1>>>>;
  using exe_t = compiled<net, mcu>;
  static_assert(exe_t::step_name(0) == "mcu.conv2d_bias");
  std::vector<float> w(4 * 2 * 9), b(4), r(4), in(2 * 25), got(4 * 25), want(4 * 25);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 5) * 0.25f - 0.5f;
  for (std::size_t i = 0; i < 4; ++i) {
    b[i] = 0.1f * static_cast<float>(i);
    r[i] = 0.5f - 0.3f * static_cast<float>(i);
  }
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 7) - 3.f;
  weight_set ws;
  ws.add("w", w, {4, 2, 3, 3}).add("b", b, {4}).add("r", r, {1, 4, 1, 1});
  exe_t on_mcu;
  compiled<net, reference> oracle;
  on_mcu.bind(ws);
  oracle.bind(ws);
  on_mcu.run(in, got);
  oracle.run(in, want);
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
}
