// The oneDNN backend: it obeys the conformance law with cpu as its host; the law's networks become
// the partitions and primitives they should (post-ops, folded batch norms, in-place residuals);
// partitions fall back to the host at compile time when they hold no conv2d or dense; several
// results of one partition; a rebind; a partition oneDNN cannot build fails at bind.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <partita/partita.hpp>
#include <partita/backends/onednn/onednn.hpp>

#include <laws/conformance.hpp>

using namespace partita;
using one_thread_onednn = onednn_backend<{.threads = 1}>;
namespace nets = laws::nets;

/// oneDNN runs what it claims, cpu the rest. It does not promise to propagate NaN and
/// infinities as the reference does (its relu maps NaN to 0): its law stays on finite inputs.
template <>
struct laws::conformance_traits<onednn> : laws::conformance_defaults {
  using host = cpu;
  static constexpr bool special_values = false;
};
/// The same with one oneDNN thread.
template <>
struct laws::conformance_traits<one_thread_onednn> : laws::conformance_traits<onednn> {};

PARTITA_CONFORMANCE_LAW(onednn)

namespace {

/// Whether `Net` on oneDNN with one thread (and cpu) obeys the law.
template <class Net>
bool one_thread_conforms() {
  using law = laws::conformance<one_thread_onednn>;
  return law::run<Net>().worst() <= law::tolerance;
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
  laws::random_weights<Exe> weights{11};
  std::unique_ptr<Exe> exe = std::make_unique<Exe>();
  bound() { exe->bind(weights.set); }
};

}  // namespace

TEST_CASE("onednn: conv2d + bias + relu chains (padding, strides, groups, dilation) are one partition") {
  using exe_t = compiled<nets::chain, onednn, cpu>;
  static_assert(count_functions<partition<nets::chain, onednn, cpu>, "onednn"> == 1);
  static_assert(exe_t::num_steps == 1 && exe_t::plan.steps[0].backend == "onednn");
  bound<exe_t> b;
  const std::string d = b.exe->state<onednn>().describe(0);
  CAPTURE(d);
  CHECK(computing(d) == 3);  // bias and relu are post-ops
}

TEST_CASE("onednn: the ResNet basic block is two convolutions, the residual summed in place") {
  using exe_t = compiled<nets::block, onednn, cpu>;
  static_assert(exe_t::num_steps == 1 && exe_t::plan.steps[0].backend == "onednn");
  CHECK(one_thread_conforms<nets::block>());
  bound<exe_t> b;
  const std::string d = b.exe->state<onednn>().describe(0);
  CAPTURE(d);
  CHECK(computing(d) == 2);
  CHECK(d.find("post-ops sum relu") != std::string::npos);
  CHECK(d.find("residual") == std::string::npos);  // no copy of the residual
}

TEST_CASE("onednn: batch norm is folded into the convolution, with or without a bias") {
  using exe_t = compiled<nets::normed, onednn, cpu>;
  static_assert(exe_t::num_steps == 1);
  bound<exe_t> b;
  const std::string d = b.exe->state<onednn>().describe(0);
  CAPTURE(d);
  CHECK(computing(d) == 3);  // two convolutions with their batch norms and relus, then the add
}

TEST_CASE("onednn: an MLP with a broadcast gain, a difference, a batch norm and a softmax") {
  using exe_t = compiled<nets::gain_mlp, onednn, cpu>;
  static_assert(exe_t::num_steps == 1);
  bound<exe_t> b;
  const std::string d = b.exe->state<onednn>().describe(0);
  CAPTURE(d);
  CHECK(computing(d) == 7);  // dense, multiply, subtract, batch_norm, dense, dense, softmax
}

TEST_CASE("onednn: pooling, a standalone batch norm and dense on a flattened value") {
  static_assert(compiled<nets::pools, onednn, cpu>::num_steps == 1);
  static_assert(compiled<nets::lenet, onednn, cpu>::num_steps == 1);
  bound<compiled<nets::lenet, onednn, cpu>> b;
  const std::string d = b.exe->state<onednn>().describe(0);
  CAPTURE(d);
  CHECK(computing(d) == 6);  // conv, pool, conv, pool, dense, dense: flatten is no primitive
}

TEST_CASE("onednn: a partition with several results writes each where the plan reads it") {
  using parts = partition<nets::fork, onednn, cpu>;
  static_assert(count_functions<parts, "onednn"> == 1);
  using exe_t = compiled<nets::fork, onednn, cpu>;
  static_assert(exe_t::num_steps == 1 && exe_t::num_outputs == 3);
  CHECK(one_thread_conforms<nets::fork>());
}

TEST_CASE("onednn: partitions without conv2d or dense fall back to the host at compile time") {
  static_assert(count_functions<partition<nets::eltwise, onednn, cpu>, "onednn"> == 0);
  using e_t = compiled<nets::eltwise, onednn, cpu>;
  static_assert(e_t::num_steps == 2);
  CHECK(steps_on<e_t>("") == 2);

  static_assert(count_functions<partition<nets::mixed, onednn, cpu>, "onednn"> == 2);
  using m_t = compiled<nets::mixed, onednn, cpu>;
  static_assert(m_t::num_steps == 5);
  CHECK(m_t::plan.steps[0].backend == "onednn");
  CHECK(m_t::plan.steps[2].backend == "onednn");
  CHECK(steps_on<m_t>("") == 3);  // the concatenations, and the sigmoid that fell back
  bound<m_t> b;
  const std::string d = b.exe->state<onednn>().describe();
  CAPTURE(d);
  CHECK(b.exe->state<onednn>().num_primitives(0) == 1);  // dense with its bias and relu
  CHECK(b.exe->state<onednn>().num_primitives(2) == 1);
  CHECK(d.find("step 2 (onednn_main_") != std::string::npos);
}

TEST_CASE("onednn: a rebind rebuilds the primitives from the new weights") {
  using exe_t = compiled<nets::block, one_thread_onednn, cpu>;
  using ref_t = compiled<nets::block, reference>;
  const laws::random_weights<ref_t> first(1), second(2);
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
  CHECK(laws::relative_error(got, want) <= laws::conformance<onednn>::tolerance);
  // The executable moves with its networks.
  exe_t moved = std::move(*exe);
  std::fill(got.begin(), got.end(), 0.f);
  moved.run(x, got);
  CHECK(laws::relative_error(got, want) <= laws::conformance<onednn>::tolerance);
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
  const laws::random_weights<exe_t> w(5);
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
