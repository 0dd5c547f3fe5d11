// Bring-your-own-codegen at compile time: a small CNN is split between an "npu" backend (here
// the reference kernels under another name, claiming what an accelerator typically would) and
// the host. Shows the four passes one by one, the eager partition<> flow, the partitioned module
// as text and as a Graphviz picture, the placement report (why each op runs where it does), and
// checks that it computes what the unpartitioned model does.
//
//   example_partition [out.dot]     writes the partitioned module's picture (default partition.dot)
#include <cmath>
#include <fstream>
#include <iostream>
#include <vector>

#include <partita/partita.hpp>

using namespace partita;

// The model: conv+bias+relu stem, a residual block, a pooled dense head.
using img = input<"img", f32, 1, 3, 16, 16>;
struct stem : relu<bias_add<conv2d<img, weight<"stem.w", f32, 8, 3, 3, 3>, {.padding = {1, 1}}>, weight<"stem.b", f32, 8>>> {};
struct branch : relu<bias_add<conv2d<stem, weight<"b1.w", f32, 8, 8, 3, 3>, {.padding = {1, 1}}>, weight<"b1.b", f32, 8>>> {};
struct block : relu<add<bias_add<conv2d<branch, weight<"b2.w", f32, 8, 8, 3, 3>, {.padding = {1, 1}}>, weight<"b2.b", f32, 8>>, stem>> {};
using head = bias_add<dense<flatten<global_avg_pool2d<block>>, weight<"fc.w", f32, 10, 8>>, weight<"fc.b", f32, 10>>;
using net = model<softmax<head>>;

// The accelerator: fused conv patterns (most specific first) and a few single ops. Its kernels
// are the reference ones; a real backend supplies its own `kernel` (see the README).
struct npu : reference {
  static constexpr fixed_string name = "npu";
  static constexpr bool host = false;
  using patterns = pattern_table<
      composite<"npu.conv2d_bias_add_relu", relu_p<add_p<bias_add_p<conv2d_p<any, constant>, constant>, any>>, only_f32>,
      composite<"npu.conv2d_bias_relu", relu_p<bias_add_p<conv2d_p<any, constant>, constant>>, only_f32>>;
  static constexpr bool supports(const op_view& v) {
    return (v.is(op_id::add) || v.is(op_id::relu) || v.is(op_id::global_avg_pool2d)) && v.dtype() == f32;
  }
};

// The four passes, one at a time ...
using m1 = merge_composite<module_of<net>, npu::patterns>;
using m2 = annotate_target<m1, npu, reference>;
using m3 = merge_regions<m2>;
using m4 = partition_graph<m3>;
// ... or the eager flow in one go; both give the same module.
using parts = partition<net, npu, reference>;
static_assert(count_functions<m4, "npu"> == 1 && count_functions<parts, "npu"> == 1);
static_assert(count_functions<parts, "npu.conv2d_bias_relu"> == 2 && count_functions<parts, "npu.conv2d_bias_add_relu"> == 1);

// Why each op runs where it runs, and why not on the other backend: the placement report.
constexpr auto placement_report = explain<net, npu, reference>();
static_assert(placement_report.first(op_id::softmax).backend == "reference");
static_assert(placement_report.why_not(placement_report.first(op_id::dense), "npu").why == refusal::unsupported);
static_assert(placement_report.first(op_id::conv2d).how == placement::composite);

int main(int argc, char** argv) {
  std::cout << "== after merge_composite ==\n" << print(m1{}) << "\n== partitioned ==\n" << print(parts{}) << "\n";
  std::cout << "== placement (nodes as in print(module_of<net>{})) ==\n" << to_string(placement_report) << "\n";
  const char* dot_path = argc > 1 ? argv[1] : "partition.dot";
  std::ofstream(dot_path) << to_dot(parts{});
  std::cout << "wrote " << dot_path << " (render with: dot -Tsvg " << dot_path << " -o partition.svg)\n";

  // Same weights for the partitioned executable and the reference one.
  using whole = compiled<net, reference>;
  using split = compiled<parts, npu, reference>;
  std::vector<std::vector<float>> data;
  weight_set weights;
  for (std::size_t i = 0; i < whole::plan.weights.size(); ++i) {
    const tensor_slot& w = whole::weight(i);
    data.emplace_back(static_cast<std::size_t>(w.shp.elements()));
    for (std::size_t k = 0; k < data.back().size(); ++k) data.back()[k] = 0.2f * std::sin(static_cast<float>(k + 7 * i));
    weights.add(std::string(w.name), data.back(), std::span(w.shp.dims.data(), static_cast<std::size_t>(w.shp.rank)));
  }
  whole a;
  split b;
  a.bind(weights);
  b.bind(weights);
  std::vector<float> image(3 * 16 * 16), pa(10), pb(10);
  for (std::size_t k = 0; k < image.size(); ++k) image[k] = std::cos(static_cast<float>(k) * 0.1f);
  a.run(image, pa);
  b.run(image, pb);

  std::cout << "steps:";
  for (std::size_t i = 0; i < split::num_steps; ++i) std::cout << ' ' << split::step_backend(i) << ':' << split::step_name(i);
  float worst = 0;
  for (int k = 0; k < 10; ++k) worst = std::max(worst, std::abs(pa[k] - pb[k]));
  std::cout << "\nprobabilities (partitioned):";
  for (float p : pb) std::cout << ' ' << p;
  std::cout << "\nlargest difference from the unpartitioned model: " << worst << "\n";
  return worst <= 1e-6f ? 0 : 1;
}
