// The oneDNN backend: the same models on `reference`, on `cpu` and on `onednn` + `cpu` give the
// same outputs; partitions fall back to the host at compile time when they hold no conv2d or
// dense; several results of one partition; a partition oneDNN cannot build fails at bind.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <partita/partita.hpp>
#include <partita/backends/onednn/onednn.hpp>

#include "models/conformance.hpp"

using namespace partita;
using one_thread_onednn = onednn_backend<{.threads = 1}>;

namespace {

/// Worst relative error of `Net` on `Backends...` against the reference (1 and 2 cpu threads),
/// on finite inputs: oneDNN does not promise to propagate NaN and infinities as the reference
/// does (its relu maps NaN to 0), so the special-value rounds are not part of its law.
template <class Net, class... Backends>
double error_of() {
  const auto r = conformance::compare<Net, Backends...>();
  return std::max(r.one_thread, r.two_threads);
}

/// Steps of `Exe` that run on the backend named `name` ("" for the host).
template <class Exe>
int steps_on(std::string_view name) {
  int n = 0;
  for (const plan_step& s : Exe::plan.steps) n += s.backend == name ? 1 : 0;
  return n;
}

/// Lines of a network's description that are not reorders (that is: compute primitives).
int computing(const std::string& description) {
  int n = 0;
  std::size_t at = 0;
  while (at < description.size()) {
    const std::size_t end = description.find('\n', at);
    const std::string_view line(description.data() + at, (end == std::string::npos ? description.size() : end) - at);
    if (!line.empty() && !line.starts_with("reorder") && !line.starts_with("result") && !line.starts_with("residual")) ++n;
    at = end == std::string::npos ? description.size() : end + 1;
  }
  return n;
}

template <class Exe>
struct bound {
  conformance::random_weights<Exe> weights{11};
  std::unique_ptr<Exe> exe = std::make_unique<Exe>();
  bound() { exe->bind(weights.set); }
};

// conv2d + bias + relu, three times: padding, stride 2 with unequal padding, groups with dilation.
namespace chain {
using x = input<"x", f32, 2, 6, 13, 11>;
using c1 = relu<bias_add<conv2d<x, weight<"c1.w", f32, 12, 6, 3, 3>, {.padding = {1, 1}}>, weight<"c1.b", f32, 12>>>;
using c2 = relu<bias_add<conv2d<c1, weight<"c2.w", f32, 16, 12, 3, 3>, {.stride = {2, 2}, .padding = {1, 0}}>,
                         weight<"c2.b", f32, 16>>>;
using c3 = relu<bias_add<conv2d<c2, weight<"c3.w", f32, 16, 4, 3, 3>, {.padding = {2, 2}, .dilation = {2, 2}, .groups = 4}>,
                         weight<"c3.b", f32, 16>>>;
using net = model<c3>;
}  // namespace chain

// The ResNet basic block (biased convolutions, no batch norm).
namespace block {
using x = input<"x", f32, 1, 16, 10, 10>;
using conv1 = relu<bias_add<conv2d<x, weight<"conv1.weight", f32, 16, 16, 3, 3>, {.padding = {1, 1}}>,
                            weight<"conv1.bias", f32, 16>>>;
using conv2 = bias_add<conv2d<conv1, weight<"conv2.weight", f32, 16, 16, 3, 3>, {.padding = {1, 1}}>,
                       weight<"conv2.bias", f32, 16>>;
using net = model<relu<add<conv2, x>>>;
}  // namespace block

// conv2d + batch norm + relu, with and without a bias before the batch norm.
namespace normed {
using x = input<"x", f32, 1, 8, 9, 9>;
using plain = relu<batch_norm<conv2d<x, weight<"a.w", f32, 24, 8, 3, 3>, {.padding = {1, 1}}>, weight<"a.gamma", f32, 24>,
                              weight<"a.beta", f32, 24>, weight<"a.mean", f32, 24>, weight<"a.var", f32, 24>>>;
using biased = relu<batch_norm<bias_add<conv2d<x, weight<"b.w", f32, 24, 8, 1, 1>>, weight<"b.bias", f32, 24>>,
                               weight<"b.gamma", f32, 24>, weight<"b.beta", f32, 24>, weight<"b.mean", f32, 24>,
                               weight<"b.var", f32, 24>, 1e-3f>>;
using net = model<add<plain, biased>>;
}  // namespace normed

// An MLP: dense + bias + relu twice, a gain (a broadcast weight), a difference, a standalone
// batch norm and a softmax.
namespace mlp {
using x = input<"x", f32, 3, 20>;
using h1 = relu<bias_add<dense<x, weight<"fc1.w", f32, 16, 20>>, weight<"fc1.b", f32, 16>>>;
using h2 = batch_norm<subtract<multiply<weight<"gain", f32, 16>, h1>, h1>, weight<"n.gamma", f32, 16>,
                      weight<"n.beta", f32, 16>, weight<"n.mean", f32, 16>, weight<"n.var", f32, 16>>;
using h3 = relu<bias_add<dense<h2, weight<"fc2.w", f32, 12, 16>>, weight<"fc2.b", f32, 12>>>;
using logits = bias_add<dense<h3, weight<"fc3.w", f32, 5, 12>>, weight<"fc3.b", f32, 5>>;
using net = model<softmax<logits>>;
}  // namespace mlp

// Pooling: max, average with padding (with and without counting it), a standalone batch norm,
// global average, then dense through flatten.
namespace pools {
using x = input<"x", f32, 2, 4, 12, 12>;
using c = relu<bias_add<conv2d<x, weight<"c.w", f32, 8, 4, 3, 3>, {.padding = {1, 1}}>, weight<"c.b", f32, 8>>>;
using mp = max_pool2d<c, {.size = {2, 2}}>;
using ap = avg_pool2d<mp, {.size = {3, 3}, .stride = {1, 1}, .padding = {1, 1}}>;
using ai = avg_pool2d<ap, {.size = {2, 2}, .stride = {2, 2}, .padding = {1, 1}, .count_include_pad = true}>;
using nb = batch_norm<ai, weight<"n.gamma", f32, 8>, weight<"n.beta", f32, 8>, weight<"n.mean", f32, 8>,
                      weight<"n.var", f32, 8>>;
using g = global_avg_pool2d<nb>;
using head = bias_add<dense<flatten<g>, weight<"fc.w", f32, 6, 8>>, weight<"fc.b", f32, 6>>;
using net = model<head>;
}  // namespace pools

// LeNet-like: max pool then dense straight on the flattened 4-D value.
namespace lenet {
using x = input<"x", f32, 1, 1, 16, 16>;
using c1 = relu<bias_add<conv2d<x, weight<"c1.w", f32, 6, 1, 5, 5>, {.padding = {2, 2}}>, weight<"c1.b", f32, 6>>>;
using p1 = max_pool2d<c1, {.size = {2, 2}}>;
using c2 = relu<bias_add<conv2d<p1, weight<"c2.w", f32, 16, 6, 3, 3>>, weight<"c2.b", f32, 16>>>;
using p2 = max_pool2d<c2, {.size = {2, 2}}>;
using f1 = relu<bias_add<dense<flatten<p2>, weight<"f1.w", f32, 32, 144>>, weight<"f1.b", f32, 32>>>;
using net = model<bias_add<dense<f1, weight<"f2.w", f32, 10, 32>>, weight<"f2.b", f32, 10>>>;
}  // namespace lenet

// One partition with three results: a value that later convs read, a view of it, and the end.
namespace fork {
using x = input<"x", f32, 1, 8, 6, 6>;
using a = relu<bias_add<conv2d<x, weight<"a.w", f32, 8, 8, 3, 3>, {.padding = {1, 1}}>, weight<"a.b", f32, 8>>>;
using b = relu<add<bias_add<conv2d<a, weight<"b.w", f32, 8, 8, 3, 3>, {.padding = {1, 1}}>, weight<"b.b", f32, 8>>, a>>;
using net = model<b, a, flatten<a>>;
}  // namespace fork

// Elementwise only: no partition is worth oneDNN's reorders.
namespace eltwise {
using x = input<"x", f32, 2, 10>;
using y = input<"y", f32, 2, 10>;
using net = model<relu<add<x, y>>>;
}  // namespace eltwise

// Two dense partitions split by a concatenation (host), then a sigmoid alone after another
// concatenation: its partition falls back.
namespace mixed {
using x = input<"x", f32, 2, 10>;
using h = relu<bias_add<dense<x, weight<"fc1.w", f32, 8, 10>>, weight<"fc1.b", f32, 8>>>;
using g = bias_add<dense<concatenate<1, h, h>, weight<"fc2.w", f32, 6, 16>>, weight<"fc2.b", f32, 6>>;
using net = model<sigmoid<concatenate<1, g, x>>>;
}  // namespace mixed

}  // namespace

TEST_CASE("onednn: conv2d + bias + relu chains (padding, strides, groups, dilation) match the reference") {
  using exe_t = compiled<chain::net, onednn, cpu>;
  static_assert(count_functions<partition<chain::net, onednn, cpu>, "onednn"> == 1);
  static_assert(exe_t::num_steps == 1 && exe_t::plan.steps[0].backend == "onednn");
  CHECK(error_of<chain::net, onednn, cpu>() <= conformance::tolerance);
  CHECK(error_of<chain::net, cpu>() <= conformance::tolerance);
  bound<exe_t> b;
  const std::string d = b.exe->state<onednn>().describe(0);
  CAPTURE(d);
  CHECK(computing(d) == 3);  // bias and relu are post-ops
}

TEST_CASE("onednn: the ResNet basic block is two convolutions, the residual summed in place") {
  using exe_t = compiled<block::net, onednn, cpu>;
  static_assert(exe_t::num_steps == 1 && exe_t::plan.steps[0].backend == "onednn");
  CHECK(error_of<block::net, onednn, cpu>() <= conformance::tolerance);
  CHECK(error_of<block::net, one_thread_onednn, cpu>() <= conformance::tolerance);
  bound<exe_t> b;
  const std::string d = b.exe->state<onednn>().describe(0);
  CAPTURE(d);
  CHECK(computing(d) == 2);
  CHECK(d.find("post-ops sum relu") != std::string::npos);
  CHECK(d.find("residual") == std::string::npos);  // no copy of the residual
}

TEST_CASE("onednn: batch norm is folded into the convolution, with or without a bias") {
  using exe_t = compiled<normed::net, onednn, cpu>;
  static_assert(exe_t::num_steps == 1);
  CHECK(error_of<normed::net, onednn, cpu>() <= conformance::tolerance);
  bound<exe_t> b;
  const std::string d = b.exe->state<onednn>().describe(0);
  CAPTURE(d);
  CHECK(computing(d) == 3);  // two convolutions with their batch norms and relus, then the add
}

TEST_CASE("onednn: an MLP with a broadcast gain, a difference, a batch norm and a softmax") {
  using exe_t = compiled<mlp::net, onednn, cpu>;
  static_assert(exe_t::num_steps == 1);
  CHECK(error_of<mlp::net, onednn, cpu>() <= conformance::tolerance);
  bound<exe_t> b;
  const std::string d = b.exe->state<onednn>().describe(0);
  CAPTURE(d);
  CHECK(computing(d) == 7);  // dense, multiply, subtract, batch_norm, dense, dense, softmax
}

TEST_CASE("onednn: pooling, a standalone batch norm and dense on a flattened value") {
  static_assert(compiled<pools::net, onednn, cpu>::num_steps == 1);
  static_assert(compiled<lenet::net, onednn, cpu>::num_steps == 1);
  CHECK(error_of<pools::net, onednn, cpu>() <= conformance::tolerance);
  CHECK(error_of<lenet::net, onednn, cpu>() <= conformance::tolerance);
  bound<compiled<lenet::net, onednn, cpu>> b;
  const std::string d = b.exe->state<onednn>().describe(0);
  CAPTURE(d);
  CHECK(computing(d) == 6);  // conv, pool, conv, pool, dense, dense: flatten is no primitive
}

TEST_CASE("onednn: a partition with several results writes each where the plan reads it") {
  using parts = partition<fork::net, onednn, cpu>;
  static_assert(count_functions<parts, "onednn"> == 1);
  using exe_t = compiled<fork::net, onednn, cpu>;
  static_assert(exe_t::num_steps == 1 && exe_t::num_outputs == 3);
  CHECK(error_of<fork::net, onednn, cpu>() <= conformance::tolerance);
  CHECK(error_of<fork::net, one_thread_onednn, cpu>() <= conformance::tolerance);
}

TEST_CASE("onednn: partitions without conv2d or dense fall back to the host at compile time") {
  static_assert(count_functions<partition<eltwise::net, onednn, cpu>, "onednn"> == 0);
  using e_t = compiled<eltwise::net, onednn, cpu>;
  static_assert(e_t::num_steps == 2);
  CHECK(steps_on<e_t>("") == 2);
  CHECK(error_of<eltwise::net, onednn, cpu>() <= conformance::tolerance);

  static_assert(count_functions<partition<mixed::net, onednn, cpu>, "onednn"> == 2);
  using m_t = compiled<mixed::net, onednn, cpu>;
  static_assert(m_t::num_steps == 5);
  CHECK(m_t::plan.steps[0].backend == "onednn");
  CHECK(m_t::plan.steps[2].backend == "onednn");
  CHECK(steps_on<m_t>("") == 3);  // the concatenations, and the sigmoid that fell back
  CHECK(error_of<mixed::net, onednn, cpu>() <= conformance::tolerance);
  bound<m_t> b;
  const std::string d = b.exe->state<onednn>().describe();
  CAPTURE(d);
  CHECK(b.exe->state<onednn>().num_primitives(0) == 1);  // dense with its bias and relu
  CHECK(b.exe->state<onednn>().num_primitives(2) == 1);
  CHECK(d.find("step 2 (onednn_main_") != std::string::npos);
}

TEST_CASE("onednn: a rebind rebuilds the primitives from the new weights") {
  using exe_t = compiled<block::net, one_thread_onednn, cpu>;
  using ref_t = compiled<block::net, reference>;
  const conformance::random_weights<ref_t> first(1), second(2);
  std::vector<float> x(16 * 10 * 10), got(x.size()), want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.37f);
  auto exe = std::make_unique<exe_t>();
  auto ref = std::make_unique<ref_t>();
  CHECK(exe->state<one_thread_onednn>().threads() == 1);
  exe->bind(first.set);
  exe->run(x, got);
  exe->bind(second.set);
  exe->run(x, got);
  ref->bind(second.set);
  ref->run(x, want);
  CHECK(conformance::relative_error(got, want) <= conformance::tolerance);
  // The executable moves with its networks.
  exe_t moved = std::move(*exe);
  std::fill(got.begin(), got.end(), 0.f);
  moved.run(x, got);
  CHECK(conformance::relative_error(got, want) <= conformance::tolerance);
}

namespace {
// Pinned to oneDNN although `supports` refuses it: an average whose corner windows lie wholly
// in the padding. oneDNN refuses to build it, at bind.
namespace refused {
using x = input<"x", f32, 1, 4, 6, 6>;
using c = relu<conv2d<x, weight<"c.w", f32, 4, 4, 3, 3>, {.padding = {1, 1}}>>;
using p = on<onednn, avg_pool2d<c, {.size = {2, 2}, .stride = {1, 1}, .padding = {2, 2}}>>;
using net = model<p>;
}  // namespace refused
}  // namespace

TEST_CASE("onednn: a partition oneDNN cannot build fails at bind, naming the backend, the partition and the op") {
  using exe_t = compiled<refused::net, onednn, cpu>;
  static_assert(exe_t::num_steps == 1 && exe_t::plan.steps[0].backend == "onednn");
  const conformance::random_weights<exe_t> w(5);
  auto exe = std::make_unique<exe_t>();
  try {
    exe->bind(w.set);
    FAIL("bind accepted a partition oneDNN cannot build");
  } catch (const error& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(what.find("backend 'onednn' rejected step 0 (onednn_main_") != std::string::npos);
    CHECK(what.find("avg_pool2d [1, 4, 6, 6] -> [1, 4, 9, 9]") != std::string::npos);
  }
  CHECK_FALSE(exe->bound());
}
