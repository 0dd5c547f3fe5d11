// Partitioned modules run: each step on the backend the plan gave it, with the same outputs as
// the unpartitioned model on the reference backend.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string_view>
#include <vector>

#include <partita/partita.hpp>

#include <laws/conformance.hpp>
#include <support/backends.hpp>
#include <support/mock_accelerator.hpp>

using namespace partita;
using test_backends::mock;
using test_backends::renamed;

namespace {

// A small CNN with a residual block (its stem, branch and block: conv2d + bias + relu, a 1x1
// conv2d + bias, add + relu), a pooled head and a dense classifier; the block is a second result.
using laws::nets::cnn;

template <class Exe>
struct weights {
  std::vector<std::vector<float>> data;
  weight_set set;
  weights() {
    std::mt19937 gen(42);
    std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
    data.reserve(Exe::plan.weights.size());
    for (std::size_t i = 0; i < Exe::plan.weights.size(); ++i) {
      const tensor_slot& w = Exe::weight(i);
      data.emplace_back(static_cast<std::size_t>(w.shp.elements()));
      for (float& v : data.back()) v = dist(gen);
      set.add(std::string(w.name), data.back(), std::span(w.shp.dims.data(), static_cast<std::size_t>(w.shp.rank)));
    }
  }
};

struct outputs {
  std::vector<float> probs = std::vector<float>(10), features = std::vector<float>(8 * 8 * 8);
};

template <class Exe>
outputs run(Exe& exe, const weight_set& w) {
  exe.bind(w);
  std::vector<float> x(3 * 8 * 8);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i));
  outputs o;
  exe.run(x, o.probs, o.features);
  return o;
}

float max_relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  float worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]) / std::max(1e-6f, std::abs(b[i])));
  return worst;
}

using oracle = compiled<cnn, reference>;

// Two normalizations written out share sqrt(var + eps), computed from weights alone: each of the
// backend's two composites gets its own copy (BYOC semantics, Part 1 item 5).
using nx = input<"x", f32, 2, 3>;
using ny = input<"y", f32, 2, 3>;
using norm_mean = weight<"mean", f32, 2, 3>;
using norm_den = sqrt_<add<weight<"var", f32, 2, 3>, scalar<1e-5f>>>;
using norm_mean_y = weight<"mean_y", f32, 2, 3>;
using norms = model<add<divide<subtract<nx, norm_mean>, norm_den>, divide<subtract<ny, norm_mean_y>, norm_den>>>;
struct norm_backend : renamed<"norm", op_id::subtract, op_id::divide> {
  using patterns = pattern_table<composite<"norm.n", divide_p<subtract_p<any, constant>, partita::sqrt_p<add_p<constant, constant>>>>>;
};

}  // namespace

TEST_CASE("a subexpression of weights alone, copied into two composites, computes what the model does") {
  std::vector<float> mean{0.5f, -1.f, 2.f, 0.f, 1.f, -0.25f}, mean_y{1.f, 0.f, -2.f, 3.f, 0.5f, 0.f};
  std::vector<float> var{1.f, 4.f, 0.25f, 9.f, 2.f, 0.5f};
  const std::int64_t dims[] = {2, 3};
  weight_set w;
  w.add("mean", mean, dims).add("mean_y", mean_y, dims).add("var", var, dims);
  const std::vector<float> x{1.f, 2.f, 3.f, -4.f, 5.f, 6.f}, y{0.f, -1.f, 0.5f, 2.f, 8.f, -3.f};
  auto run_on = [&]<class Exe>(Exe& exe) {
    std::vector<float> out(6, -1.f);
    exe.bind(w).run(x, y, out);
    return out;
  };
  compiled<norms, reference> ref;
  compiled<norms, norm_backend, reference> greedy;
  compiled<cost_partition<norms, norm_backend, reference>, norm_backend, reference> costed;
  static_assert(count_functions<decltype(greedy)::module, "norm.n"> == 2);
  const std::vector<float> want = run_on(ref);
  for (std::size_t i = 0; i < want.size(); ++i)
    CHECK(want[i] == doctest::Approx((x[i] - mean[i]) / std::sqrt(var[i] + 1e-5f) + (y[i] - mean_y[i]) / std::sqrt(var[i] + 1e-5f)));
  CHECK(run_on(greedy) == want);
  CHECK(run_on(costed) == want);
  CHECK(greedy.step_backend(0) == "norm");
}

TEST_CASE("the mock accelerator runs its steps, fused where it can, with the reference's results") {
  using parts = partition<cnn, mock, reference>;
  static_assert(count_functions<parts, "mock.conv2d_bias_relu"> == 2);  // stem and branch
  // {stem, branch} and {add, relu}: the 1x1 conv between them runs on the host, and merging
  // across it would make a cycle through the host's region.
  static_assert(count_functions<parts, "mock"> == 2);
  using exe_t = compiled<parts, mock, reference>;
  static_assert(exe_t::plan.weights.size() == oracle::plan.weights.size());

  const weights<oracle> w;
  oracle ref;
  exe_t exe;
  const outputs expected = run(ref, w.set);
  const outputs got = run(exe, w.set);
  CHECK(max_relative_error(got.probs, expected.probs) <= 1e-5f);
  CHECK(max_relative_error(got.features, expected.features) <= 1e-5f);

  // (a) every step ran where the plan put it: the mock saw exactly its steps, in plan order.
  std::vector<std::string_view> planned;
  for (const plan_step& s : exe_t::plan.steps) {
    if (s.backend != "mock") continue;
    const graph_node& n = exe_t::plan.nodes[static_cast<std::size_t>(s.node)];
    planned.push_back(n.op == op_id::call ? parts::value.functions[static_cast<std::size_t>(n.index)].composite : name_of(n.op));
  }
  const std::vector<std::string_view> expected_calls{"mock.conv2d_bias_relu", "mock.conv2d_bias_relu", "add", "relu"};
  CHECK(planned == expected_calls);
  CHECK(exe.state<mock>().calls == expected_calls);
}

TEST_CASE("the mock accelerator with cpu as the host: the same outputs as the reference") {
  // Differential: reference alone vs mock + cpu (1 and 2 cpu threads); the composites the mock
  // does not take are cpu's fused kernels. (The mock's own law runs with the reference as host.)
  using exe_t = compiled<cnn, mock, cpu>;
  static_assert(count_functions<exe_t::module, "mock.conv2d_bias_relu"> == 2);
  static_assert(count_functions<exe_t::module, "cpu.conv2d_bias_add_act"> == 1);
  using law = laws::conformance<mock, cpu>;
  CHECK(law::run<cnn>().worst() <= law::tolerance);
}

TEST_CASE("steps are split between renamed reference backends and the host") {
  using convs = renamed<"convs", op_id::conv2d, op_id::bias_add>;
  using acts = renamed<"acts", op_id::relu, op_id::add>;
  using parts = partition<cnn, convs, acts, reference>;
  static_assert(count_functions<parts, "convs"> >= 2 && count_functions<parts, "acts"> >= 2);
  using exe_t = compiled<parts, convs, acts, reference>;
  const weights<oracle> w;
  oracle ref;
  exe_t exe;
  const outputs expected = run(ref, w.set);
  const outputs got = run(exe, w.set);
  CHECK(got.probs == expected.probs);  // same kernels, same order of arithmetic
  CHECK(got.features == expected.features);
  int on_convs = 0, on_acts = 0, on_host = 0;
  for (const plan_step& s : exe_t::plan.steps) {
    const op_id op = exe_t::plan.nodes[static_cast<std::size_t>(s.node)].op;
    if (s.backend == "convs") CHECK((op == op_id::conv2d || op == op_id::bias_add));
    if (s.backend == "acts") CHECK((op == op_id::relu || op == op_id::add));
    on_convs += s.backend == "convs";
    on_acts += s.backend == "acts";
    on_host += s.backend.empty();
  }
  CHECK(on_convs == 7);  // 3 conv2d + 4 bias_add (the classifier's bias too)
  CHECK(on_acts == 4);   // 3 relu + 1 add
  CHECK(on_host == 3);   // max_pool2d, dense, softmax
}

TEST_CASE("a module annotated but not partitioned runs each node on its annotated backend") {
  using acts = renamed<"acts", op_id::relu, op_id::add>;
  using annotated = annotate_target<module_of<cnn>, acts, reference>;
  using exe_t = compiled<annotated, acts, reference>;
  const weights<oracle> w;
  oracle ref;
  exe_t exe;
  CHECK(run(exe, w.set).probs == run(ref, w.set).probs);
  int on_acts = 0;
  for (const plan_step& s : exe_t::plan.steps) on_acts += s.backend == "acts";
  CHECK(on_acts == 4);
}

TEST_CASE("a pruned partition runs on the host with the same results") {
  struct npu : renamed<"npu", op_id::conv2d, op_id::bias_add, op_id::relu, op_id::add> {
    using post_partition = pass_list<passes::prune_partitions<"npu", 2>>;  // keep only partitions with 2+ convs
  };
  using parts = partition<cnn, npu, reference>;
  static_assert(count_functions<parts, "npu"> == 1);
  using exe_t = compiled<parts, npu, reference>;
  const weights<oracle> w;
  oracle ref;
  exe_t exe;
  CHECK(run(exe, w.set).probs == run(ref, w.set).probs);
}

namespace {

// A backend that packs dense weights at bind time (transposed, as a GEMM would want them) and
// computes from its packed copy: the weight hand-off of `prepare`.
struct packing : reference {
  static constexpr fixed_string name = "packing";
  static constexpr bool host = false;
  static constexpr bool supports(const op_view& v) { return v.is(op_id::dense); }
  struct state {
    std::vector<std::vector<float>> packed;  // by step
    int prepared = 0;
  };
  template <class Step>
  struct kernel {
    static constexpr std::int64_t units = Step::arg(1).out[0], inner = Step::arg(1).out[1];
    static void prepare(state& s, const float* const* in) {
      REQUIRE(in[0] == nullptr);  // the activation is not known at bind time
      if (s.packed.size() <= static_cast<std::size_t>(Step::index)) s.packed.resize(static_cast<std::size_t>(Step::index) + 1);
      auto& p = s.packed[static_cast<std::size_t>(Step::index)];
      p.assign(static_cast<std::size_t>(units * inner), 0.f);
      for (std::int64_t u = 0; u < units; ++u)
        for (std::int64_t k = 0; k < inner; ++k) p[static_cast<std::size_t>(k * units + u)] = in[1][u * inner + k];
      ++s.prepared;
    }
    static void run(state& s, const float* const* in, float* out) {
      const auto& p = s.packed[static_cast<std::size_t>(Step::index)];
      const std::int64_t rows = Step::arg(0).out.elements() / inner;
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t u = 0; u < units; ++u) {
          double acc = 0;
          for (std::int64_t k = 0; k < inner; ++k) acc += static_cast<double>(in[0][r * inner + k]) * p[static_cast<std::size_t>(k * units + u)];
          out[r * units + u] = static_cast<float>(acc);
        }
    }
  };
};

}  // namespace

TEST_CASE("backends prepare their steps' weights at bind time, again at every bind") {
  using parts = partition<cnn, packing, reference>;
  using exe_t = compiled<parts, packing, reference>;
  const weights<oracle> w;
  oracle ref;
  exe_t exe;
  const outputs expected = run(ref, w.set);
  CHECK(exe.state<packing>().prepared == 0);
  const outputs got = run(exe, w.set);
  CHECK(exe.state<packing>().prepared == 1);  // one dense step
  CHECK(max_relative_error(got.probs, expected.probs) <= 1e-5f);

  // New weights: prepare runs again and the packed copy follows.
  weights<oracle> other;
  for (auto& d : other.data) for (float& v : d) v = -v;
  oracle ref2;
  const outputs expected2 = run(ref2, other.set);
  const outputs got2 = run(exe, other.set);
  CHECK(exe.state<packing>().prepared == 2);
  CHECK(max_relative_error(got2.probs, expected2.probs) <= 1e-5f);
}

namespace {

// Runs `Net` on the reference backend and partitioned for `B`, with the same inputs, and returns
// whether every output matches exactly (the same kernels run in both).
template <class Net, class B>
bool same_as_reference() {
  using whole = compiled<Net, reference>;
  using split = compiled<partition<Net, B, reference>, B, reference>;
  static_assert(whole::num_outputs == split::num_outputs && whole::num_inputs == split::num_inputs);
  std::vector<std::vector<float>> ins, out_a, out_b;
  for (std::size_t i = 0; i < whole::num_inputs; ++i) {
    ins.emplace_back(static_cast<std::size_t>(whole::input(i).shp.elements()));
    for (std::size_t k = 0; k < ins.back().size(); ++k) ins.back()[k] = std::cos(static_cast<float>(k + 3 * i));
  }
  for (std::size_t o = 0; o < whole::num_outputs; ++o) {
    out_a.emplace_back(static_cast<std::size_t>(whole::output(o).shp.elements()), -1.f);
    out_b.emplace_back(static_cast<std::size_t>(whole::output(o).shp.elements()), -2.f);
  }
  std::vector<const float*> in_ptrs;
  std::vector<float*> a_ptrs, b_ptrs;
  for (auto& v : ins) in_ptrs.push_back(v.data());
  for (auto& v : out_a) a_ptrs.push_back(v.data());
  for (auto& v : out_b) b_ptrs.push_back(v.data());
  whole a;
  split b;
  a.run_unchecked(in_ptrs.data(), a_ptrs.data());
  b.run_unchecked(in_ptrs.data(), b_ptrs.data());
  return out_a == out_b;
}

using laws::nets::outputs_net::p;
using laws::nets::outputs_net::q;
using adds = renamed<"adds", op_id::add, op_id::relu>;

}  // namespace

TEST_CASE("edge cases of partitioned outputs run as the unpartitioned model does") {
  // a partition's value returned twice, and seen through a view
  CHECK(same_as_reference<laws::nets::twice_and_views, adds>());
  // two outputs from one multi-output partition, one also consumed by the host
  CHECK(same_as_reference<laws::nets::results_read_again, adds>());
  // an input returned as is, next to a partition that also reads it
  CHECK(same_as_reference<laws::nets::input_as_result, adds>());
  // a partition that is the whole model
  CHECK(same_as_reference<laws::nets::one_region, adds>());
  // an op pinned to a backend that would not claim it runs there
  using pinned = model<add<on<adds, multiply<p, q>>, p>>;
  static_assert(count_functions<partition<pinned, adds, reference>, "adds"> == 1);
  CHECK(same_as_reference<pinned, adds>());
  using pinned_exe = compiled<partition<pinned, adds, reference>, adds, reference>;
  int on_adds = 0;
  for (const plan_step& st : pinned_exe::plan.steps) on_adds += st.backend == "adds";
  CHECK(on_adds == 2);  // multiply (pinned) and add
}

TEST_CASE("first_available binds the first executable whose backends can all run here") {
  using with_mock = compiled<cnn, mock, reference>;
  using host_only = compiled<cnn, reference>;
  const weights<oracle> w;
  oracle ref;
  const outputs want = run(ref, w.set);
  auto run_chosen = [](auto& exe) {
    std::vector<float> x(3 * 8 * 8);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i));
    outputs o;
    exe.run(x, o.probs, o.features);
    return o;
  };

  first_available<with_mock, host_only> present;
  present.bind(w.set);
  CHECK(present.chosen() == 0);
  CHECK(present.skipped().empty());
  CHECK(max_relative_error(run_chosen(present).probs, want.probs) < 1e-4f);
  int mock_calls = 0;
  present.visit([&](auto& e) {
    if constexpr (std::is_same_v<std::remove_cvref_t<decltype(e)>, with_mock>) mock_calls = static_cast<int>(e.template state<mock>().calls.size());
  });
  CHECK(mock_calls > 0);

  mock::plugged_in = false;
  with_mock unplugged;
  CHECK(unavailable_backends(unplugged) == std::vector<std::string_view>{"mock"});
  first_available<with_mock, host_only> fallback;
  fallback.bind(w.set);
  CHECK(fallback.chosen() == 1);
  REQUIRE(fallback.skipped().size() == 1);
  CHECK(fallback.skipped()[0] == "executable 0 (mock, reference): backend mock is not available");
  const outputs got = run_chosen(fallback);
  CHECK(max_relative_error(got.probs, want.probs) < 1e-4f);
  CHECK(max_relative_error(got.features, want.features) < 1e-4f);

  // none can run: an error naming each reason; one bound before stays bound
  first_available<with_mock> only_mock;
  CHECK_THROWS_WITH_AS(only_mock.bind(w.set),
                       "partita: first_available: no executable can run here; executable 0 (mock, reference): backend mock is not available",
                       error);
  CHECK(!only_mock.bound());
  std::vector<float> image(3 * 8 * 8), probs(10), features(8 * 8 * 8);
  CHECK_THROWS_AS(only_mock.run(image, probs, features), error);
  mock::plugged_in = true;
  first_available<with_mock> rebound;
  rebound.bind(w.set);
  mock::plugged_in = false;
  CHECK_THROWS_AS(rebound.bind(w.set), error);
  CHECK(rebound.bound());
  CHECK(rebound.chosen() == 0);
  mock::plugged_in = true;

  // a bind that throws (wrong weights) skips to the next executable too
  weight_set wrong;
  first_available<with_mock, host_only> neither;
  CHECK_THROWS_AS(neither.bind(wrong), error);
}
