// ResNet-18 split between two backends: oneDNN takes the layers with 128 channels or more
// (where its channel-blocked layouts pay off), the cpu backend the stem and layer1. Prints the
// partitioned module, writes a Graphviz picture, and runs three executables on the same weights:
// cpu alone, oneDNN for everything it can run, and the split; their outputs must agree.
//
//   example_two_backends [out.dot] [threads]
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <partita/partita.hpp>
#include <partita/backends/onednn/onednn.hpp>

#include <models/measure.hpp>
#include <models/random_weights.hpp>
#include <models/resnet18.hpp>

using namespace partita;

/// oneDNN, restricted to wide layers: a backend is a type, so narrowing one is a few lines.
struct wide_onednn : onednn_backend<> {
  static constexpr bool wide(const op_view& v) { return v.shape().rank != 4 || v.shape()[1] >= 128; }
  struct wide_only {
    static constexpr bool check(const match_view& m) { return wide(m.root()) && detail::onednn::claimable::check(m); }
  };
  static constexpr bool supports(const op_view& v) { return onednn_backend<>::supports(v) && wide(v); }
  using patterns = pattern_table<composite<"onednn.conv2d", conv2d_p<any, constant>, wide_only>,
                                 composite<"onednn.dense", dense_p<any, constant>, wide_only>>;
};

using partitioned = partition<models::resnet18::net, wide_onednn, cpu>;
static_assert(count_functions<partitioned, "onednn"> == 1, "layer2 to the classifier: one oneDNN partition");

using cpu_only = compiled<models::resnet18::net, cpu>;
using all_onednn = compiled<models::resnet18::net, onednn, cpu>;
using two = compiled<models::resnet18::net, wide_onednn, cpu>;

using models::max_relative_error;

int main(int argc, char** argv) try {
  const std::string dot_path = argc > 1 ? argv[1] : "two_backends.dot";
  const int threads = argc > 2 ? std::atoi(argv[2]) : 0;

  std::cout << print(partitioned{}) << "\n";
  std::ofstream(dot_path) << to_dot(partitioned{});
  std::cout << "wrote " << dot_path << " (render with: dot -Tsvg " << dot_path << " -o two_backends.svg)\n\n";
  std::cout << "steps: cpu alone " << cpu_only::num_steps << ", oneDNN everywhere " << all_onednn::num_steps << ", split "
            << two::num_steps << " (";
  for (std::size_t i = 0; i < two::num_steps; ++i) std::cout << two::step_backend(i) << ' ';
  std::cout << ")\n";

  std::vector<std::vector<float>> storage;
  const weight_set weights = models::random_weights<cpu_only>(storage);
  const std::vector<float> image = models::pseudo_random(3 * 224 * 224, 2024, -2.0f, 2.0f);
  std::vector<float> a(1000), b(1000), c(1000);

  auto x = std::make_unique<cpu_only>();
  auto y = std::make_unique<all_onednn>();
  auto z = std::make_unique<two>();
  x->bind(weights);
  y->bind(weights);
  z->bind(weights);
  x->state<cpu>().set_threads(threads);
  y->state<cpu>().set_threads(threads);
  z->state<cpu>().set_threads(threads);
  const double tx = models::median_ms(*x, image, a, 15), ty = models::median_ms(*y, image, b, 15),
               tz = models::median_ms(*z, image, c, 15);
  const double e1 = max_relative_error(b, a), e2 = max_relative_error(c, a);
  std::cout << "median latency: cpu " << tx << " ms, oneDNN " << ty << " ms, split " << tz << " ms\n";
  std::cout << "largest relative difference from cpu alone: oneDNN " << e1 << ", split " << e2 << "\n";
  return e1 <= 1e-4 && e2 <= 1e-4 ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "example_two_backends: " << e.what() << "\n";
  return 1;
}
