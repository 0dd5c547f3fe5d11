// ResNet-18, declared as types in resnet18.hpp, compiled for the cpu backend: batch norms folded
// into the convolutions at bind, conv+bias(+add)+relu fused, memory planned at compile time.
//
//   example_resnet18                     deterministic random weights, every core
//   example_resnet18 1                   ... on one thread
//   example_resnet18 resnet18.st 2       torchvision's weights (converted to safetensors), 2 threads
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <models/measure.hpp>
#include <models/random_weights.hpp>
#include <models/resnet18.hpp>

using namespace partita;
using executable = compiled<models::resnet18::net, cpu>;

static_assert(count_functions<executable::module, "cpu.conv2d_bias_add_act"> == 8, "every block's second conv takes the residual");
static_assert(count_functions<executable::module, "cpu.conv2d_bias_act"> == 9, "stem and every block's first conv");


int main(int argc, char** argv) try {
  std::cout << "ResNet-18: " << executable::num_steps << " steps on cpu ("
            << detail::simd::arch_name() << "), arena " << executable::arena_bytes / 1024 << " KiB, weights "
            << executable::weight_bytes / (1024 * 1024) << " MiB\n";
  std::cout << "fused: " << count_functions<executable::module, "cpu.conv2d_bias_act"> << " conv+bn+relu, "
            << count_functions<executable::module, "cpu.conv2d_bias_add_act"> << " conv+bn+add+relu, "
            << count_functions<executable::module, "cpu.conv2d_bias"> << " conv+bn, "
            << count_functions<executable::module, "cpu.dense_bias"> << " dense+bias\n";

  std::string weights_path;
  int threads = 0;  // every core
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!arg.empty() && arg.find_first_not_of("0123456789") == std::string::npos) {
      threads = std::stoi(arg);
    } else {
      weights_path = arg;
    }
  }

  auto exe = std::make_unique<executable>();  // the arena is large: keep it off the stack
  std::vector<std::vector<float>> storage;
  if (!weights_path.empty()) {
    exe->bind(load_safetensors(weights_path));
  } else {
    exe->bind(models::random_weights<executable>(storage));
  }
  exe->state<cpu>().set_threads(threads);

  // A deterministic image, normalised like torchvision's inputs.
  std::vector<float> image = models::pseudo_random(3 * 224 * 224, 2024, -2.0f, 2.0f);
  std::vector<float> logits(1000);
  constexpr int runs = 20;
  const std::vector<double> ms = models::timed_ms(*exe, image, logits, runs);  // after a warm-up call
  std::vector<int> order(1000);
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + 5, order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  std::cout << "top-5 classes:";
  for (int i = 0; i < 5; ++i) std::cout << ' ' << order[i] << " (" << logits[static_cast<std::size_t>(order[i])] << ')';
  std::cout << "\nlatency on " << exe->state<cpu>().threads() << " thread(s): median " << ms[runs / 2] << " ms, best "
            << ms.front() << " ms over " << runs << " runs\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "example_resnet18: " << e.what() << "\n";
  return 1;
}
