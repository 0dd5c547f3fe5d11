// A convolution with its bias and ReLU compiled for oneDNN (cpu runs what oneDNN does not),
// compared with the reference backend on the same weights and input.
#include <cmath>
#include <cstdio>
#include <vector>

#include <partita/partita.hpp>
#include <partita/backends/onednn/onednn.hpp>

using namespace partita;

using x = input<"x", f32, 1, 3, 8, 8>;
using conv = conv2d<x, weight<"conv.weight", f32, 4, 3, 3, 3>, {.padding = {1, 1}}>;
using y = relu<bias_add<conv, weight<"conv.bias", f32, 4>>>;
using net = model<y>;

int main() try {
  std::vector<float> w(4 * 3 * 3 * 3), b(4), in(3 * 8 * 8);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.125f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) * 0.25f - 0.5f;
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(static_cast<int>(i % 11) - 5) * 0.1f;
  weight_set weights;
  weights.add("conv.weight", w, {4, 3, 3, 3}).add("conv.bias", b, {4});

  compiled<net, onednn, cpu> exe;
  static_assert(decltype(exe)::plan.steps[0].backend == "onednn");
  exe.bind(weights);
  compiled<net, reference> ref;
  ref.bind(weights);

  std::vector<float> got(4 * 8 * 8), want(4 * 8 * 8);
  exe.run(in, got);
  ref.run(in, want);
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::fabs(got[i] - want[i]) > 1e-4f * (1.0f + std::fabs(want[i]))) {
      std::printf("y[%zu] = %g on onednn, %g on reference\n", i, got[i], want[i]);
      return 1;
    }
  }
  std::printf("onednn matches reference on %zu values\n", got.size());
  return 0;
} catch (const std::exception& e) {
  std::printf("consumer_onednn: %s\n", e.what());
  return 1;
}
