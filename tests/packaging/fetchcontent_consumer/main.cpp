// A two-layer network compiled for the cpu backend, run once and checked against the same
// arithmetic done by hand.
#include <cmath>
#include <cstdio>
#include <vector>

#include <partita/partita.hpp>

using namespace partita;

using x = input<"x", f32, 1, 4>;
using hidden = relu<bias_add<dense<x, weight<"fc1.weight", f32, 3, 4>>, weight<"fc1.bias", f32, 3>>>;
using y = bias_add<dense<hidden, weight<"fc2.weight", f32, 2, 3>>, weight<"fc2.bias", f32, 2>>;
using executable = compiled<model<y>, cpu>;

int main() {
  const std::vector<float> w1 = {1, 0, -1, 2, 0.5f, 0.5f, 0.5f, 0.5f, -1, -1, -1, -1};
  const std::vector<float> b1 = {0.5f, -1, 1};
  const std::vector<float> w2 = {1, 2, 3, -1, 0, 1};
  const std::vector<float> b2 = {0, 0.25f};
  weight_set weights;
  weights.add("fc1.weight", w1, {3, 4}).add("fc1.bias", b1, {3});
  weights.add("fc2.weight", w2, {2, 3}).add("fc2.bias", b2, {2});

  executable exe;
  exe.bind(weights);
  const std::vector<float> in = {1, 2, 3, 4};
  std::vector<float> out(2);
  exe.run(in, out);

  // hidden = relu([1 - 3 + 8 + 0.5, 5 - 1, -10 + 1]) = [6.5, 4, 0]
  // y = [6.5 + 8 + 0, -6.5 + 0 + 0.25] = [14.5, -6.25]
  const float want[] = {14.5f, -6.25f};
  for (int i = 0; i < 2; ++i) {
    if (std::fabs(out[static_cast<std::size_t>(i)] - want[i]) > 1e-5f) {
      std::printf("y[%d] = %g, expected %g\n", i, out[static_cast<std::size_t>(i)], want[i]);
      return 1;
    }
  }
  std::printf("y = [%g, %g]\n", out[0], out[1]);
  return 0;
}
