// cpu: dense and conv2d fuse the transformer and mobile activations (gelu, gelu_tanh, silu,
// hardswish, hardsigmoid, leaky_relu) and the SiLU that exporters spell `x · sigmoid(x)`; each
// fused kernel agrees with the reference backend, on one and two threads.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <partita/partita.hpp>

#include <models/random_weights.hpp>

using namespace partita;

namespace {

using x2 = input<"x", f32, 3, 37>;
using x4 = input<"x", f32, 1, 5, 9, 11>;
using fc = bias_add<dense<x2, weight<"w", f32, 19, 37>>, weight<"b", f32, 19>>;
using cv = bias_add<conv2d<x4, weight<"w", f32, 7, 5, 3, 3>, {.padding = {1, 1}}>, weight<"b", f32, 7>>;

using dense_gelu = model<gelu<fc>>;
using dense_gelu_tanh = model<gelu_tanh<fc>>;
using dense_leaky = model<leaky_relu<fc, 0.2f>>;
using conv_silu_spelled = model<multiply<cv, sigmoid<cv>>>;
using conv_silu = model<silu<cv>>;
using conv_hardswish = model<hardswish<cv>>;
using conv_hardsigmoid = model<hardsigmoid<cv>>;

static_assert(count_functions<compiled<dense_gelu, cpu>::module, "cpu.dense_bias_act"> == 1);
static_assert(count_functions<compiled<dense_leaky, cpu>::module, "cpu.dense_bias_act"> == 1);
static_assert(count_functions<compiled<conv_silu_spelled, cpu>::module, "cpu.conv2d_bias_silu"> == 1);
static_assert(compiled<conv_silu_spelled, cpu>::num_steps == 1, "x · sigmoid(x) after a conv is one fused step");
static_assert(count_functions<compiled<conv_hardswish, cpu>::module, "cpu.conv2d_bias_act"> == 1);

// Inputs spanning the activations' interesting range, with a NaN and both infinities.
std::vector<float> input_for(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(std::sin(0.7 * static_cast<double>(i)) * 6.0);
  v[1] = NAN;
  v[n / 2] = INFINITY;
  v[n - 1] = -INFINITY;
  return v;
}

template <class Net>
void agrees_with_reference() {
  using cpu_exe = compiled<Net, cpu>;
  using ref_exe = compiled<Net, reference>;
  std::vector<std::vector<float>> storage;
  const weight_set w = models::random_weights<cpu_exe>(storage);
  const auto x = input_for(static_cast<std::size_t>(cpu_exe::input(0).shp.elements()));
  const auto n = static_cast<std::size_t>(cpu_exe::output(0).shp.elements());
  std::vector<float> want(n), got(n);
  ref_exe ref;
  ref.bind(w);
  ref.run(x, want);
  for (int threads : {1, 2}) {
    cpu_exe exe;
    exe.template state<cpu>().set_threads(threads);
    exe.bind(w);
    exe.run(x, got);
    for (std::size_t i = 0; i < n; ++i) {
      CAPTURE(threads);
      CAPTURE(i);
      if (std::isnan(want[i])) {
        CHECK(std::isnan(got[i]));
      } else if (std::isinf(want[i])) {
        CHECK(got[i] == want[i]);
      } else {
        CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5).scale(1.0));
      }
    }
  }
}

}  // namespace

TEST_CASE("fused gelu, gelu_tanh and leaky_relu after dense + bias") {
  agrees_with_reference<dense_gelu>();
  agrees_with_reference<dense_gelu_tanh>();
  agrees_with_reference<dense_leaky>();
}

TEST_CASE("fused silu (spelled and as an op), hardswish and hardsigmoid after conv2d + bias") {
  agrees_with_reference<conv_silu_spelled>();
  agrees_with_reference<conv_silu>();
  agrees_with_reference<conv_hardswish>();
  agrees_with_reference<conv_hardsigmoid>();
}
