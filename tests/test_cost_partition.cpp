// Cost-based partitioning (BYOC semantics, Part 1 item 10): where the greedy flow and the search
// must differ, where they must agree, transfers, pins, existing partitions, coalescing without
// cycles, deterministic ties, measured costs, and running the result.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include <partita/partita.hpp>

#include <laws/conformance.hpp>
#include <support/backends.hpp>
#include <support/mock_accelerator.hpp>
#include <support/queries.hpp>

using namespace partita;
using test_backends::mock;
using test_backends::renamed;
using namespace test_queries;

namespace {

// A host whose steps cost 10 ns each, so that the tests' arithmetic is exact.
struct host10 : reference {
  static constexpr fixed_string name = "host";
  static constexpr double cost(const candidate_view& c) { return 10.0 * c.steps(); }
};

// An accelerator for relu only, far slower than the host.
struct slow : renamed<"slow", op_id::relu> {
  static constexpr double cost(const candidate_view& c) { return 1000.0 * c.steps(); }
};

// A fast accelerator for add and multiply, in its own memory behind a link.
template <int LatencyNs>
struct npu_t : renamed<"npu", op_id::add, op_id::multiply> {
  static constexpr double cost(const candidate_view& c) { return 1.0 * c.steps(); }
  static constexpr memory_link link = {.gbytes_per_s = 1000, .latency_ns = LatencyNs};
};
using npu_far = npu_t<100000>;
using npu_near = npu_t<0>;

// The number of nodes of main and of every partition running op `op` on backend `backend` (the
// host: main, including composites called from main).
template <module_type M>
constexpr int ops_on(std::string_view backend, op_id op) {
  const auto& m = M::value;
  int n = 0;
  for (const function_info& f : m.functions) {
    const bool is_main = f.name() == "main";
    if (!(backend.empty() ? is_main : f.backend == backend)) continue;
    for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
      const graph_node& g = m.node(i);
      if (g.op == op) ++n;
      if (g.op == op_id::call && !m.functions[static_cast<std::size_t>(g.index)].composite.empty()) {
        const function_info& c = m.functions[static_cast<std::size_t>(g.index)];
        for (int j = c.first_node; j < c.first_node + c.num_nodes; ++j) n += m.node(j).op == op;
      }
    }
  }
  return n;
}

// -- A tiny op on a slow accelerator between two host ops: greedy offloads it, the search not.
using x64 = input<"x", f32, 1, 64>;
using w64 = weight<"w", f32, 64, 64>;
using sandwich = model<dense<relu<dense<x64, w64>>, w64>>;
using greedy_sandwich = partition<sandwich, slow, host10>;
using costed_sandwich = cost_partition<sandwich, slow, host10>;
static_assert(count_functions<greedy_sandwich, "slow"> == 1);
static_assert(count_functions<costed_sandwich, "slow"> == 0);
static_assert(ops_on<costed_sandwich>("", op_id::relu) == 1);
static_assert(costed_sandwich::search.ns == 30.0, "three host steps of 10 ns");
static_assert(costed_sandwich::search.transfer_ns == 0.0);

// -- Pinned placements stand, whatever they cost.
using pinned_sandwich = model<dense<on<slow, relu<dense<x64, w64>>>, w64>>;
using costed_pinned = cost_partition<pinned_sandwich, slow, host10>;
static_assert(count_functions<costed_pinned, "slow"> == 1);
static_assert(ops_on<costed_pinned>("slow", op_id::relu) == 1);
static_assert(costed_pinned::search.ns == 1020.0);

// Pinned to the host: it stays in main, even where the npu would be cheaper.
using host_pinned = model<multiply<on<host10, add<x64, x64>>, x64>>;
using costed_host_pinned = cost_partition<host_pinned, npu_near, host10>;
static_assert(ops_on<costed_host_pinned>("", op_id::add) == 1 && ops_on<costed_host_pinned>("npu", op_id::multiply) == 1);

// -- Transfer-heavy alternation: adds and multiplies (npu) between relus (host only).
using y1 = add<x64, x64>;
using y2 = relu<y1>;
using y3 = multiply<y2, y2>;
using alternation = model<relu<y3>>;
// Greedy: the npu takes both, one partition each, whatever the link costs.
static_assert(count_functions<partition<alternation, npu_far, host10>, "npu"> == 2);
// The search: behind a slow link, every crossing costs 100 us: all on the host.
using costed_far = cost_partition<alternation, npu_far, host10>;
static_assert(count_functions<costed_far, "npu"> == 0);
static_assert(costed_far::search.ns == 40.0);
// Behind a fast link the npu's 1 ns steps win: the search agrees with the greedy flow.
using costed_near = cost_partition<alternation, npu_near, host10>;
static_assert(count_functions<costed_near, "npu"> == 2);
static_assert(ops_on<costed_near>("npu", op_id::add) == 1 && ops_on<costed_near>("npu", op_id::multiply) == 1);
static_assert(ops_on<costed_near>("", op_id::relu) == 2);
// 2 npu steps, 2 host steps, 4 crossings of 256 bytes at 1000 GB/s.
static_assert(costed_near::search.ns > 23.0239 && costed_near::search.ns < 23.0241);

// A chain the npu runs end to end: one transfer in, one out, then it is worth the link.
using z1 = add<x64, x64>;
using z2 = multiply<z1, z1>;
using z3 = add<z2, z2>;
using z4 = multiply<z3, z3>;
using npu_chain = model<z4>;
template <int Latency>
using costed_chain = cost_partition<npu_chain, npu_t<Latency>, host10>;
static_assert(count_functions<costed_chain<15>, "npu"> == 1, "4 npu steps + 2 transfers of 15.256 ns < 40 ns on the host");
static_assert(ops_on<costed_chain<15>>("npu", op_id::add) == 2, "touching candidates are coalesced into one partition");
static_assert(costed_chain<15>::search.transfer_ns > 30.0 && costed_chain<15>::search.transfer_ns < 31.0);
static_assert(count_functions<costed_chain<20>, "npu"> == 0, "4 + 2 x 20.256 > 40: the host");

// -- Transfers between two devices: through the host by default (both links), or a direct
// path declared for the pair.
template <fixed_string Name, op_id Op>
struct device : renamed<Name, Op> {
  static constexpr double cost(const candidate_view& c) { return 1.0 * c.steps(); }
  static constexpr memory_link link = {.gbytes_per_s = 1000, .latency_ns = 5};
};
using dev_a = device<"dev_a", op_id::add>;
using dev_b = device<"dev_b", op_id::multiply>;
struct dev_c : device<"dev_c", op_id::multiply> {};
}  // namespace
template <>
struct partita::transfer<dev_a, dev_c> {  // a direct path: free
  static constexpr double ns(double) { return 0.0; }
};
namespace {
using two_devices = model<multiply<add<x64, x64>, add<x64, x64>>>;
// host -> a -> b -> host through the host: 2 steps + 4 legs of 5.256 ns > 20 ns on the host.
static_assert(count_functions<cost_partition<two_devices, dev_a, dev_b, host10>, "dev_a"> == 0);
// With the direct path a -> c: 2 steps + 2 legs of 5.256 ns < 20 ns.
using direct = cost_partition<two_devices, dev_a, dev_c, host10>;
static_assert(count_functions<direct, "dev_a"> == 1 && count_functions<direct, "dev_c"> == 1);
static_assert(direct::search.transfer_ns > 10.51 && direct::search.transfer_ns < 10.52);

// -- Where greedy and the search agree: a faster accelerator in host memory takes its ops.
struct quick_relu : renamed<"quick", op_id::relu> {
  static constexpr double cost(const candidate_view& c) { return 1.0 * c.steps(); }
};
using agree_greedy = partition<sandwich, quick_relu, host10>;
using agree_costed = cost_partition<sandwich, quick_relu, host10>;
static_assert(count_functions<agree_greedy, "quick"> == 1 && count_functions<agree_costed, "quick"> == 1);
static_assert(body_is<agree_costed>(function_named<agree_costed>("quick_main_0"), {op_id::relu}));

// -- Ties go to the backend listed first.
struct quick_relu2 : quick_relu {
  static constexpr fixed_string name = "quick2";
};
static_assert(count_functions<cost_partition<sandwich, quick_relu, quick_relu2, host10>, "quick"> == 1);
static_assert(count_functions<cost_partition<sandwich, quick_relu2, quick_relu, host10>, "quick2"> == 1);

// -- Coalescing never creates a cycle: a and b both on the npu, but b also needs h (host-only),
// which needs a; one partition {a, b} would depend on itself through h.
using a_node = add<x64, x64>;
using h_node = relu<a_node>;
using b_node = multiply<a_node, h_node>;
using diamond = model<b_node>;
using costed_diamond = cost_partition<diamond, npu_near, host10>;
static_assert(count_functions<costed_diamond, "npu"> == 2);

// -- Existing partitions are left alone: the search only places what main still computes.
using pre_split = partition<alternation, npu_near, host10>;
using costed_again = cost_partition<pre_split, slow, host10>;
static_assert(count_functions<costed_again, "npu"> == 2);
static_assert(count_functions<costed_again, "slow"> == 0);
static_assert(ops_on<costed_again>("", op_id::relu) == 2);

// -- Composite matches of every backend are candidates, with no priority: the mock's fused
// conv2d+bias+relu against the host's single ops.
using img = input<"img", f32, 1, 4, 6, 6>;
using conv = relu<bias_add<conv2d<img, weight<"cw", f32, 4, 4, 3, 3>, {.padding = {1, 1}}>, weight<"cb", f32, 4>>>;
using fused_net = model<add<conv, conv>>;
struct fast_mock : mock {
  static constexpr double cost(const candidate_view& c) { return 1.0 * c.steps(); }
};
using costed_mock = cost_partition<fused_net, fast_mock, host10>;
static_assert(count_functions<costed_mock, "mock.conv2d_bias_relu"> == 1);
static_assert(count_functions<costed_mock, "mock"> == 1, "the composite and the add it feeds, coalesced");

// Two searches of one model in one translation unit do not disturb each other (the second one
// used to find its choices zero-initialized).
using costed_mock_again = cost_partition_with<cost_config<no_measured_costs, 2>, fused_net, fast_mock, host10>;
static_assert(count_functions<costed_mock_again, "mock.conv2d_bias_relu"> == 1);
static_assert(count_functions<costed_mock_again, "mock"> == 1);
static_assert(costed_mock_again::value.functions.size() == costed_mock::value.functions.size());

// -- Unions of touching candidates, for a backend that runs whole partitions: up to the depth
// limit, and only convex, single-exit ones.
struct whole : renamed<"whole", op_id::relu, op_id::add> {
  static constexpr bool compiles_partitions = true;
  static constexpr double cost(const candidate_view& c) { return 5.0 + c.size(); }
};
template <class C>
constexpr int whole_candidates(std::size_t size) {
  int n = 0;
  for (std::size_t i = 0; i < C::size; ++i) n += C::backend(i) == "whole" && C::table::list[i].nodes.size() == size;
  return n;
}
using relu4 = model<relu<relu<relu<relu<x64>>>>>;
using chain2 = cost_candidates<cost_config<no_measured_costs, 2>, relu4, whole, host10>;
using chain3 = cost_candidates<cost_config<no_measured_costs, 3>, relu4, whole, host10>;
static_assert(whole_candidates<chain2>(1) == 4 && whole_candidates<chain2>(2) == 3 && whole_candidates<chain2>(3) == 0);
static_assert(whole_candidates<chain3>(2) == 3 && whole_candidates<chain3>(3) == 2 && whole_candidates<chain3>(4) == 0);
static_assert(chain3::size == 4 + 3 + 2 + 4, "the host's single ops too");
// a = relu(x), b = relu(a), c = a + b: {a, c} is not convex (a -> b -> c leaves it), {a, b} has
// two exits; {b, c} and {a, b, c} are valid.
using d_a = relu<x64>;
using d_b = relu<d_a>;
using diamond_union = cost_candidates<cost_config<>, model<add<d_a, d_b>>, whole, host10>;
static_assert(whole_candidates<diamond_union>(2) == 1 && whole_candidates<diamond_union>(3) == 1);
// Union costs are the backend's: one call for the whole chain wins over four.
using chained = cost_partition<relu4, whole, host10>;
static_assert(count_functions<chained, "whole"> == 1 && chained::search.ns == 14.0, "two unions (4 single calls: 24 ns), coalesced");

// -- Measured costs replace the estimate for the candidates they name.
using sandwich_candidates = cost_candidates<cost_config<>, sandwich, quick_relu, host10>;
constexpr std::size_t quick_relu_candidate = [] {
  for (std::size_t i = 0; i < sandwich_candidates::size; ++i)
    if (sandwich_candidates::backend(i) == "quick") return i;
  return std::size_t{0};
}();
struct measured_slow_relu {
  static constexpr measured_cost entries[] = {{"quick", sandwich_candidates::signature(quick_relu_candidate), 500.0}};
};
using measured = cost_partition_with<cost_config<measured_slow_relu>, sandwich, quick_relu, host10>;
static_assert(measured::search.measured == 1);
static_assert(count_functions<measured, "quick"> == 0, "measured at 500 ns, the relu goes back to the host");
static_assert(sandwich_candidates::ns(quick_relu_candidate) == 1.0);

// A backend's unmeasured candidates are scaled like its measured ones: the add measured at 100x
// its estimate makes the multiply's estimate 100x too, and both go to the host.
using alternation_candidates = cost_candidates<cost_config<>, alternation, npu_near, host10>;
constexpr std::size_t npu_add = [] {
  for (std::size_t i = 0; i < alternation_candidates::size; ++i)
    if (alternation_candidates::backend(i) == "npu" && alternation_candidates::estimate(i) == 1.0) return i;
  return std::size_t{0};
}();
struct measured_slow_add {
  static constexpr measured_cost entries[] = {{"npu", alternation_candidates::signature(npu_add), 100.0}};
};
using calibrated = cost_partition_with<cost_config<measured_slow_add>, alternation, npu_near, host10>;
static_assert(calibrated::search.measured == 1);
static_assert(count_functions<calibrated, "npu"> == 0);
static_assert(calibrated::search.ns == 40.0);

// Measured hand-overs replace the declared transfer cost for their pair: 1 us from the npu back
// to the host makes the alternation all-host again.
struct measured_handover {
  static constexpr measured_cost entries[1] = {};
  static constexpr measured_transfer transfers[] = {{"npu", "host", 1000.0}};
};
using handed_over = cost_partition_with<cost_config<measured_handover>, alternation, npu_near, host10>;
static_assert(count_functions<handed_over, "npu"> == 0);
static_assert(handed_over::search.ns == 40.0);

// Signatures are structural: the same op on the same shapes has the same one wherever it is.
using twin = model<add<relu<dense<x64, w64>>, relu<dense<relu<x64>, w64>>>>;
using twin_candidates = cost_candidates<cost_config<>, twin, host10>;
constexpr int same_signature_pairs = [] {
  int n = 0;
  for (std::size_t i = 0; i < twin_candidates::size; ++i)
    for (std::size_t j = i + 1; j < twin_candidates::size; ++j) n += twin_candidates::signature(i) == twin_candidates::signature(j);
  return n;
}();
static_assert(same_signature_pairs >= 2, "the two dense and the relus after them");

}  // namespace

TEST_CASE("a cost-partitioned module runs like the unpartitioned model") {
  using ref_t = compiled<fused_net, reference>;
  using cost_t = compiled<costed_mock, fast_mock, host10>;
  const laws::random_weights<ref_t> w(3);
  std::vector<float> x(4 * 6 * 6);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.3f * static_cast<float>(i));
  std::vector<float> want(4 * 6 * 6), got(4 * 6 * 6, -1.f);
  ref_t ref;
  ref.bind(w.set).run(x, want);
  cost_t exe;
  exe.bind(w.set).run(x, got);
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5));
  CHECK(exe.step_backend(0) == "mock");
}

TEST_CASE("a candidate runs alone as its own module") {
  using C = cost_candidates<cost_config<>, fused_net, fast_mock, host10>;
  constexpr std::size_t fused = [] {
    for (std::size_t i = 0; i < C::size; ++i)
      if (C::backend(i) == "mock" && C::runnable(i)) return i;
    return C::size;
  }();
  static_assert(fused < C::size);
  using exe_t = compiled<candidate_module<C, fused>, fast_mock, host10>;
  static_assert(exe_t::num_inputs == 1 && exe_t::input(0).name == "in0");
  const laws::random_weights<exe_t> w(3);
  exe_t exe;
  exe.bind(w.set);
  std::vector<float> x(4 * 6 * 6, 0.5f), y(exe_t::output(0).shp.elements());
  exe.run(x, y);
  CHECK(std::all_of(y.begin(), y.end(), [](float v) { return v >= 0.f; }));
}

TEST_CASE("a hand-over pair runs as one module, each candidate on its backend") {
  using C = cost_candidates<cost_config<>, fused_net, fast_mock, host10>;
  constexpr C::pair p = C::handover(0, 1);  // from the mock to the host
  static_assert(p.found && C::backend(p.i) == "mock" && C::backend(p.j) == "host");
  using exe_t = compiled<handover_module<C, p.i, p.j>, fast_mock, host10>;
  static_assert(exe_t::num_steps == 2 && exe_t::step_backend(0) == "mock" && exe_t::step_backend(1) == "host");
  static_assert(!C::handover(1, 1).found, "pairs are between two backends");
  const laws::random_weights<exe_t> w(5);
  exe_t exe;
  exe.bind(w.set);
  std::vector<float> x(4 * 6 * 6, 0.25f), y(exe_t::output(0).shp.elements(), -1.f);
  exe.run(x, y);
  CHECK(std::all_of(y.begin(), y.end(), [](float v) { return v >= 0.f; }));  // relu then add of two relus
}
