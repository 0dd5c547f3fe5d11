// Kernel sharing: steps with the same signature run one kernel instantiation on backends that
// share kernels (cpu, reference), each call with its own step index, its own buffers and its
// own packed weights (prepared once where steps read the same weights); steps that differ in
// shape, attributes or arguments do not share; other backends, and kernels that do not take the
// step's index, keep one kernel per step.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <partita/partita.hpp>

#include <support/mock_accelerator.hpp>

using namespace partita;

namespace {

namespace net {
using x = input<"x", f32, 1, 8, 6, 6>;
template <class X, fixed_string W, fixed_string B, conv2d_attrs A = conv2d_attrs{.padding = {1, 1}}, std::int64_t O = 8>
using block = relu<bias_add<conv2d<X, weight<W, f32, O, 8, 3, 3>, A>, weight<B, f32, O>>>;
using b1 = block<x, "b1.w", "b1.b">;
using b2 = block<b1, "b2.w", "b2.b">;
using b3 = block<b2, "b3.w", "b3.b">;
using b4 = block<b3, "b4.w", "b4.b">;
/// Four identical blocks, each with weights of its own.
using repeated = model<b4>;

/// Two blocks, then one with other attributes but the same shapes (dilated), the second block
/// again, one with more output channels, and two clips that differ in their bounds only.
using dilated = block<b2, "d.w", "d.b", conv2d_attrs{.padding = {2, 2}, .dilation = {2, 2}}>;
using again = block<dilated, "b2.w", "b2.b">;
using wide = block<again, "w.w", "w.b", conv2d_attrs{.padding = {1, 1}}, 16>;
using varied = model<clip<clip<wide, 0.f, 6.f>, 0.f, 4.f>>;

/// The same convolution with a bound weight and with a weight given as an input: a kernel packs
/// the first at bind, not the second, so they do not share.
using conv_w = conv2d<x, weight<"w", f32, 8, 8, 3, 3>, {.padding = {1, 1}}>;
using conv_in = conv2d<x, input<"k", f32, 8, 8, 3, 3>, {.padding = {1, 1}}>;
using weight_or_input = model<add<conv_w, conv_in>>;
}  // namespace net

// On cpu the blocks between the first and the last read and write channels-last values; the
// first reads the planar input and the last writes the planar result, and steps of different
// layouts never share.
using rep_cpu = compiled<net::repeated, cpu>;
static_assert(rep_cpu::num_steps == 4 && rep_cpu::num_kernels == 3, "four fused blocks, three layouts");
static_assert(rep_cpu::kernel_step(2) == 1, "the two blocks between share one kernel");
static_assert(rep_cpu::kernel_step(0) == 0 && rep_cpu::kernel_step(3) == 3, "the first and the last: their own");
using rep_reference = compiled<net::repeated, reference>;
static_assert(rep_reference::num_steps == 12 && rep_reference::num_kernels == 3, "conv2d, bias_add and relu, four times");

using varied_cpu = compiled<net::varied, cpu>;
static_assert(varied_cpu::num_steps == 7 && varied_cpu::num_kernels == 6);
static_assert(varied_cpu::kernel_step(3) == 1, "the same block again shares the second one's kernel");
static_assert(varied_cpu::kernel_step(1) == 1, "the first block reads the planar input: the second has a kernel of its own");
static_assert(varied_cpu::kernel_step(2) == 2, "other attributes (dilation), the same shapes: a kernel of its own");
static_assert(varied_cpu::kernel_step(4) == 4, "other shapes: a kernel of its own");
static_assert(varied_cpu::kernel_step(6) == 6, "other clip bounds: a kernel of its own");

using weight_or_input_reference = compiled<net::weight_or_input, reference>;
static_assert(weight_or_input_reference::kernel_step(1) == 1, "a weight and an input argument do not share");

// The mock accelerator does not share kernels: one per step, as before.
using rep_mock = compiled<net::repeated, test_backends::mock, cpu>;
static_assert(rep_mock::num_steps == 4 && rep_mock::num_kernels == 4);

/// A backend derived from `reference` inherits `shares_kernels`; its own kernel, with the
/// three-argument `run` and per-step data under `Step::index`, still gets one instantiation per
/// step.
struct derived : reference {
  static constexpr fixed_string name = "derived";
  struct state {
    std::vector<int> runs;
  };
  template <class Step>
  struct kernel {
    static void run(state& s, const float* const* in, float* out) {
      s.runs.push_back(Step::index);
      reference::state none;
      reference::kernel<Step>::run(none, in, out);
    }
  };
};
using rep_derived = compiled<net::repeated, derived>;
static_assert(rep_derived::num_steps == 12 && rep_derived::num_kernels == 12);

/// A host that shares kernels and records, for each call, its kernel's `Step::index` and the
/// step it was called for; `prepare` refuses step `refuse`.
struct recorder {
  static constexpr fixed_string name = "recorder";
  static constexpr bool host = true;
  static constexpr bool shares_kernels = true;
  static constexpr bool supports(const op_view&) { return true; }
  struct state {
    std::vector<std::pair<int, int>> runs, prepares;
    int refuse = -1;
  };
  template <class Step>
  struct kernel {
    static void prepare(state& s, const float* const*, int step) {
      if (step == s.refuse) throw std::runtime_error("refused");
      s.prepares.emplace_back(Step::index, step);
    }
    static void run(state& s, const float* const* in, float* out, int step) {
      s.runs.emplace_back(Step::index, step);
      reference::state none;
      reference::kernel<Step>::run(none, in, out);
    }
  };
};

std::vector<float> random_vector(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  std::vector<float> v(n);
  for (auto& e : v) e = dist(gen);
  return v;
}

/// Every weight of `Exe`, each different (seeded by its position).
template <class Exe>
weight_set distinct_weights(std::vector<std::vector<float>>& storage) {
  weight_set set;
  storage.reserve(Exe::plan.weights.size());
  for (std::size_t i = 0; i < Exe::plan.weights.size(); ++i) {
    const tensor_slot& w = Exe::weight(i);
    storage.push_back(random_vector(w.bytes() / sizeof(float), static_cast<unsigned>(i + 1)));
    set.add(std::string(w.name), storage.back(), std::span(w.shp.dims.data(), static_cast<std::size_t>(w.shp.rank)));
  }
  return set;
}

/// Runs `Exe` and the reference on the same weights and input; returns the largest difference.
template <class Exe, class Model>
float difference_from_reference(Exe& exe) {
  using oracle_t = compiled<Model, reference>;
  std::vector<std::vector<float>> storage;
  const weight_set w = distinct_weights<oracle_t>(storage);
  oracle_t oracle;
  oracle.bind(w);
  exe.bind(w);
  const auto x = random_vector(static_cast<std::size_t>(oracle_t::input(0).shp.elements()), 99);
  std::vector<float> a(static_cast<std::size_t>(oracle_t::output(0).shp.elements())), r(a.size());
  exe.run(x, a);
  oracle.run(x, r);
  float worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - r[i]));
  return worst;
}

}  // namespace

TEST_CASE("a shared kernel keeps packed weights per step: identical blocks with their own weights") {
  rep_cpu exe;
  CHECK(difference_from_reference<rep_cpu, net::repeated>(exe) < 1e-4f);
  // Each block's packed weights are its own: swapping two blocks' weights changes the result.
  std::vector<std::vector<float>> storage;
  weight_set w = distinct_weights<rep_cpu>(storage), swapped;
  for (std::size_t i = 0; i < rep_cpu::plan.weights.size(); ++i) {
    std::string name(rep_cpu::weight(i).name);
    if (name[1] == '1' || name[1] == '2') name[1] = name[1] == '1' ? '2' : '1';
    const tensor_slot& slot = rep_cpu::weight(i);
    swapped.add(name, storage[i], std::span(slot.shp.dims.data(), static_cast<std::size_t>(slot.shp.rank)));
  }
  const auto x = random_vector(8 * 6 * 6, 7);
  std::vector<float> y1(8 * 6 * 6), y2(y1.size());
  exe.bind(w).run(x, y1);
  exe.bind(swapped).run(x, y2);
  CHECK(y1 != y2);
}

TEST_CASE("steps that do not share still compute the reference's results") {
  varied_cpu exe;
  CHECK(difference_from_reference<varied_cpu, net::varied>(exe) < 1e-4f);
  rep_reference ref;
  CHECK(difference_from_reference<rep_reference, net::repeated>(ref) == 0.f);
  rep_mock mock;
  CHECK(difference_from_reference<rep_mock, net::repeated>(mock) < 1e-4f);
  CHECK(mock.state<test_backends::mock>().calls.size() == 4);
  rep_derived own;
  CHECK(difference_from_reference<rep_derived, net::repeated>(own) == 0.f);
  CHECK(own.state<derived>().runs == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
}

TEST_CASE("a shared kernel is the first step's (Step::index) and is called with each step's index") {
  using exe_t = compiled<net::repeated, recorder>;
  static_assert(exe_t::num_steps == 12 && exe_t::num_kernels == 3);
  exe_t exe;
  std::vector<std::vector<float>> storage;
  exe.bind(distinct_weights<exe_t>(storage));
  std::vector<float> x(8 * 6 * 6, 0.25f), y(x.size());
  exe.run(x, y);
  const auto& st = exe.state<recorder>();
  REQUIRE(st.runs.size() == 12);
  REQUIRE(st.prepares.size() == 12);
  for (int s = 0; s < 12; ++s) {
    CHECK(st.runs[static_cast<std::size_t>(s)] == std::pair{static_cast<int>(exe_t::kernel_step(static_cast<std::size_t>(s))), s});
    CHECK(st.prepares[static_cast<std::size_t>(s)] == st.runs[static_cast<std::size_t>(s)]);
  }
  CHECK(exe_t::kernel_step(3) == 0);  // the second conv2d runs the first one's kernel

  // A refusal names the step that refused, not the one whose kernel it shares.
  exe_t refusing;
  refusing.state<recorder>().refuse = 6;
  std::vector<std::vector<float>> more;
  try {
    refusing.bind(distinct_weights<exe_t>(more));
    FAIL("bind should have failed");
  } catch (const error& e) {
    CHECK(std::string(e.what()) == "partita: bind: backend 'recorder' rejected step 6 (conv2d): refused");
  }
}

// The same weights read by two steps of one kernel (a composite called twice: identical
// composites are one function): prepared once at bind, both run with the first one's state.
namespace shared_weights {
using x = input<"x", f32, 1, 8, 6, 6>;
using y = input<"y", f32, 1, 8, 6, 6>;
template <class X, fixed_string W, fixed_string B>
using block = relu<bias_add<conv2d<X, weight<W, f32, 8, 8, 3, 3>, {.padding = {1, 1}}>, weight<B, f32, 8>>>;
using same = model<add<block<x, "w", "b">, block<y, "w", "b">>>;
using different = model<add<block<x, "w", "b">, block<y, "w2", "b2">>>;
}  // namespace shared_weights

TEST_CASE("two steps with one kernel and the same weights prepare once and run on that state") {
  using same_t = compiled<shared_weights::same, cpu>;
  using different_t = compiled<shared_weights::different, cpu>;
  static_assert(same_t::num_steps == 3 && different_t::num_steps == 3);
  std::vector<std::vector<float>> s1, s2;
  same_t same;
  different_t different;
  same.bind(distinct_weights<same_t>(s1));
  different.bind(distinct_weights<different_t>(s2));
  // One packed copy of the convolution's weights and bias fewer.
  CHECK(different.resident_bytes() - same.resident_bytes() >= (8 * 8 * 3 * 3 + 8) * sizeof(float));

  using oracle_t = compiled<shared_weights::same, reference>;
  oracle_t oracle;
  std::vector<std::vector<float>> s3;
  oracle.bind(distinct_weights<oracle_t>(s3));
  same.bind(distinct_weights<same_t>(s1));
  const auto a = random_vector(8 * 6 * 6, 5), b = random_vector(8 * 6 * 6, 6);
  std::vector<float> got(8 * 6 * 6), want(got.size());
  same.run(a, b, got);
  oracle.run(a, b, want);
  float worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  CHECK(worst < 1e-4f);

  // The recorder sees one prepare for the two convolutions, and both runs with its index.
  using rec_t = compiled<shared_weights::same, recorder>;
  rec_t rec;
  std::vector<std::vector<float>> s4;
  rec.bind(distinct_weights<rec_t>(s4));
  std::vector<float> out(8 * 6 * 6);
  rec.run(a, b, out);
  const auto& st = rec.state<recorder>();
  int conv_prepares = 0, conv_runs_on_first = 0;
  for (const auto& [kernel, step] : st.prepares) conv_prepares += rec_t::step_name(static_cast<std::size_t>(step)) == "conv2d";
  for (const auto& [kernel, step] : st.runs)
    conv_runs_on_first += rec_t::step_name(static_cast<std::size_t>(step)) == "conv2d" && step == kernel;
  CHECK(conv_prepares == 1);
  CHECK(conv_runs_on_first == 2);
}
