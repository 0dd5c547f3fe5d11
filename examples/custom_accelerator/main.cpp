// A user-written backend: npu (npu_backend.hpp) offloads conv2d + bias + relu to a vendor
// library (device.hpp, a pretend one) and everything else runs on the cpu host backend. The
// convolutions the device cannot run (a stride of 2, too many channels) stay on cpu, decided at
// compile time by the pattern's predicate. Checks the result against the reference backend.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <models/random_weights.hpp>

#include "npu_backend.hpp"

using namespace partita;
using custom::npu;
using models::pseudo_random;

// The model: four conv+bias+relu layers, then global pooling and a dense classifier.
using img = input<"img", f32, 1, 3, 32, 32>;
struct c1 : relu<bias_add<conv2d<img, weight<"c1.w", f32, 16, 3, 3, 3>, {.padding = {1, 1}}>, weight<"c1.b", f32, 16>>> {};
struct c2 : relu<bias_add<conv2d<c1, weight<"c2.w", f32, 32, 16, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}}>,
                          weight<"c2.b", f32, 32>>> {};  // stride 2: not for the device
struct c3 : relu<bias_add<conv2d<c2, weight<"c3.w", f32, 32, 32, 3, 3>, {.padding = {1, 1}}>, weight<"c3.b", f32, 32>>> {};
struct c4 : relu<bias_add<conv2d<c3, weight<"c4.w", f32, 320, 32, 1, 1>>, weight<"c4.b", f32, 320>>> {};  // > 256 channels
using logits = bias_add<dense<flatten<global_avg_pool2d<c4>>, weight<"fc.w", f32, 10, 320>>, weight<"fc.b", f32, 10>>;
using net = model<logits>;

// What the eager flow decided, at compile time: c1 and c3 on the device, each its own partition.
using parts = partition<net, npu, cpu>;
using offloaded = compiled<net, npu, cpu>;  // runs `parts`
using oracle = compiled<net, reference>;
static_assert(std::is_same_v<offloaded::module, parts>);
static_assert(count_functions<parts, "npu"> == 2 && count_functions<parts, "npu.conv2d_bias_relu"> == 2);
static_assert(count_functions<parts, "cpu.conv2d_bias_act"> == 2 && count_functions<parts, "cpu.dense_bias"> == 1);

int main() try {
  std::cout << print(parts{}) << "\n";

  std::vector<std::vector<float>> storage;
  weight_set weights;
  for (std::size_t i = 0; i < offloaded::plan.weights.size(); ++i) {
    const tensor_slot& w = offloaded::weight(i);
    const float bound = w.shp.rank > 1 ? std::sqrt(3.0f / static_cast<float>(w.shp.elements() / w.shp[0])) : 0.1f;
    storage.push_back(pseudo_random(static_cast<std::size_t>(w.shp.elements()), static_cast<std::uint32_t>(i + 1), -bound, bound));
    weights.add(std::string(w.name), storage.back(), std::span(w.shp.dims.data(), static_cast<std::size_t>(w.shp.rank)));
  }
  offloaded exe;
  oracle ref;
  exe.bind(weights);
  ref.bind(weights);

  const std::vector<float> image = pseudo_random(3 * 32 * 32, 2024, -1.0f, 1.0f);
  std::vector<float> got(10), want(10);
  exe.run(image, got);
  ref.run(image, want);

  // Where each step ran: the plan, then the device's own log.
  for (std::size_t i = 0; i < offloaded::num_steps; ++i)
    std::cout << "step " << i << " on " << offloaded::step_backend(i) << ": " << offloaded::step_name(i) << "\n";
  const npu::state& state = exe.state<npu>();
  std::cout << "npu state:";
  for (const auto& [step, handle] : state.weights) std::cout << " step " << step << " -> weights " << handle << ';';
  std::cout << "\ntoy_npu log:\n";
  for (const toy_npu::launch& l : state.device.log)
    std::cout << "  conv_bias_relu(weights " << l.weights << ") -> [" << l.out_c << ", " << l.out_h << ", " << l.out_w << "]\n";

  float worst = 0;
  for (std::size_t k = 0; k < got.size(); ++k)
    worst = std::max(worst, std::abs(got[k] - want[k]) / std::max(1e-6f, std::abs(want[k])));
  std::cout << "logits:";
  for (float v : got) std::cout << ' ' << v;
  std::cout << "\nlargest relative difference from the reference backend: " << worst << "\n";
  const bool offloaded_all = state.device.log.size() == count_functions<parts, "npu.conv2d_bias_relu">;
  return worst <= 1e-4f && offloaded_all ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "example_custom_accelerator: " << e.what() << "\n";
  return 1;
}
