// AnnotateTarget, MergeCompilerRegions and PartitionGraph against the rules of Part 1 (items
// 6-8) and the Relay tests they follow, checked at compile time.
#include <doctest/doctest.h>

#include <string_view>

#include <partita/partita.hpp>

#include <support/backends.hpp>
#include <support/queries.hpp>

using namespace partita;
using test_backends::renamed;
using namespace test_queries;

namespace {

using in1 = input<"in_1", f32, 10, 10>;
using in2 = input<"in_2", f32, 10, 10>;
using in3 = input<"in_3", f32, 10, 10>;
using in4 = input<"in_4", f32, 10, 10>;
using in5 = input<"in_5", f32, 10, 10>;
using in6 = input<"in_6", f32, 10, 10>;
using in7 = input<"in_7", f32, 10, 10>;
using in8 = input<"in_8", f32, 10, 10>;
using in9 = input<"in_9", f32, 10, 10>;
using in10 = input<"in_10", f32, 10, 10>;

using adds = renamed<"test", op_id::add>;     // Relay's "test" target: adds only
using muls = renamed<"mul", op_id::multiply>;
using relus = renamed<"act", op_id::relu, op_id::add>;

// --- 6. annotation: priority order, host last, composites by prefix, structural nodes stay ----
using small = model<relu<add<multiply<in1, in2>, in3>>>;
static_assert(targets_are<annotate_target<module_of<small>, adds, muls, reference>>({"mul", "test", ""}));
static_assert(targets_are<annotate_target<module_of<small>, relus, adds, reference>>({"", "act", "act"}));
static_assert(targets_are<annotate_target<module_of<small>, adds, relus, reference>>({"", "test", "act"}));
using with_composite = merge_composite<module_of<small>, pattern_table<composite<"mul.fma", add_p<multiply_p<any, any>, any>>>>;
static_assert(targets_are<annotate_target<with_composite, adds, muls, reference>>({"mul", ""}));
static_assert(targets_are<annotate_target<with_composite, adds, reference>>({"", ""}));  // "mul" not listed

// idempotent; A then B equals [A, B]
using once = annotate_target<module_of<small>, adds, reference>;
static_assert(same_module<once, annotate_target<once, adds, reference>>());
static_assert(same_module<annotate_target<annotate_target<module_of<small>, adds>, muls>, annotate_target<module_of<small>, adds, muls>>());

// pinned nodes keep their backend, and other backends' composites do not absorb them
using pinned = model<relu<add<on<muls, multiply<in1, in2>>, in3>>>;
static_assert(targets_are<annotate_target<module_of<pinned>, relus, reference>>({"mul", "act", "act"}));
using fma_table = pattern_table<composite<"act.fma", add_p<multiply_p<any, any>, any>>>;
static_assert(count_functions<merge_composite<module_of<pinned>, fma_table>, "act.fma"> == 0);
static_assert(count_functions<merge_composite<module_of<small>, fma_table>, "act.fma"> == 1);
using pinned_parts = partition<pinned, relus, reference>;
static_assert(count_functions<pinned_parts, "mul"> == 1 && count_functions<pinned_parts, "act"> == 1);

// --- 7./8. the RFC example graph: two "test" partitions, one with two outputs ----------------
using node0 = add<in1, in2>;
using node1 = add<in3, in4>;
using node2 = add<node0, node1>;
using node3 = subtract<in5, in6>;
using node4 = subtract<in7, node3>;
using node5 = add<node2, node4>;
using node6 = subtract<in8, node5>;
using node7 = add<in9, node5>;
using node8 = add<node6, node7>;
using node9 = add<in10, node8>;
using rfc = partition<model<node9>, adds, reference>;
static_assert(count_functions<rfc, "test"> == 2);
constexpr int rfc_a = function_named<rfc>("test_main_0");
constexpr int rfc_b = function_named<rfc>("test_main_1");
static_assert(rfc_a > 0 && rfc_b > 0);
static_assert(ops_in<rfc>(rfc_a) == 5 && outputs_of<rfc>(rfc_a) == 2);  // node0, 1, 2, 5, 7 → node5, node7
static_assert(params_of<rfc>(rfc_a) == 6);                               // in_1..4, node4, in_9
static_assert(ops_in<rfc>(rfc_b) == 2 && outputs_of<rfc>(rfc_b) == 1);   // node8, node9
static_assert(params_of<rfc>(rfc_b) == 3);                               // node6, node7, in_10

// --- 7. diamond with a foreign-backend branch: O → X → O' and O → O' (test_diamond_graph_fanouts)
using o1 = add<in1, in2>;
using xx = subtract<o1, in3>;  // host
using o2 = add<o1, xx>;
using diamond = partition<model<o2>, adds, reference>;
static_assert(calls_of<diamond>("test") == 2);  // merging O into O' would form a cycle
static_assert(count_functions<diamond, "test"> == 1);  // two regions, one function: add(p0, p1) twice

// --- 7. siblings that meet only in a foreign consumer are never merged ----------------------
using siblings = partition<model<subtract<add<in1, in2>, add<in3, in4>>>, adds, reference>;
static_assert(calls_of<siblings>("test") == 2);
// ... while a producer → consumer chain of the same backend is one region
using chain = partition<model<add<add<add<in1, in2>, in3>, in4>>, adds, reference>;
static_assert(count_functions<chain, "test"> == 1 && ops_in<chain>(function_named<chain>("test_main_0")) == 3);

// --- 8. parameters: one per distinct producer; weights bound inside; deduplicated outputs -----
using w = weight<"w", f32, 10, 10>;
using shared_in = partition<model<add<add<in1, in1>, w>>, adds, reference>;
static_assert(params_of<shared_in>(1) == 1);  // in_1 once; the weight is bound inside
static_assert([] {
  const auto& m = shared_in::value;
  int weights = 0;
  for (int i = m.functions[1].first_node; i < m.functions[1].first_node + m.functions[1].num_nodes; ++i)
    weights += m.node(i).op == op_id::weight;
  return weights == 1;
}());
// a region value used twice outside is one output
using dedup = partition<model<subtract<add<in1, in2>, multiply<add<in1, in2>, in3>>>, adds, reference>;
static_assert(outputs_of<dedup>(1) == 1);
// several outputs: the partition returns a tuple and main projects it
using multi = partition<model<subtract<add<in1, in2>, add<add<in1, in2>, in3>>>, adds, reference>;
static_assert(count_functions<multi, "test"> == 1 && outputs_of<multi>(1) == 2);
static_assert([] {
  const auto& m = multi::value;
  int gets = 0;
  for (int i = m.main().first_node; i < m.main().first_node + m.main().num_nodes; ++i) gets += m.node(i).op == op_id::get;
  return gets == 2;
}());

// the outputs come in main's node order: a = in1 + in2 first, then b = a + in3, although the
// subtract reads b first (Relay would return b, a: the order its walk first leaves the region)
using ordered = partition<model<subtract<add<add<in1, in2>, in3>, add<in1, in2>>>, adds, reference>;
static_assert([] {
  const auto& m = ordered::value;
  const function_info& f = m.functions[1];
  const graph_node& result = m.node(f.result);
  if (result.op != op_id::tuple || result.nargs != 2) return false;
  const int a = m.arg(f.result, 0), b = m.arg(f.result, 1);
  return m.node(a).op == op_id::add && m.node(m.arg(a, 0)).op == op_id::param && m.arg(b, 0) == a;
}());

// --- 8. deterministic, sanitised names ------------------------------------------------------
using odd = renamed<"unsanitary-name++", op_id::add>;
using odd_parts = partition<model<add<in1, in2>>, odd, reference>;
static_assert(function_named<odd_parts>("unsanitary_name___main_0") == 1);
static_assert(odd_parts::value.functions[1].backend == "unsanitary-name++");

// --- stable names: partitions numbered per backend, composites per pattern --------------------
// Relay's region ids count host regions too: a host op added upstream renamed every partition.
using wa = weight<"wa", f32, 10, 10>;  // bound into the second partition: the two differ
using named_before = partition<model<add<relu<add<in1, in2>>, wa>>, adds, reference>;
using named_after = partition<model<add<relu<add<subtract<in1, in4>, in2>>, wa>>, adds, reference>;
static_assert(function_named<named_before>("test_main_0") > 0 && function_named<named_before>("test_main_1") > 0);
static_assert(function_named<named_after>("test_main_0") > 0 && function_named<named_after>("test_main_1") > 0);
// each pattern counts its own composites; a later run continues the count
using two_patterns = pattern_table<composite<"t.r", relu_p<any>>, composite<"t.s", sigmoid_p<any>>>;
using row = input<"row", f32, 1, 10>;  // relu of a row is another function than relu of a matrix
using named_composites = merge_composite<module_of<model<add<relu<in1>, add<sigmoid<in2>, relu<row>>>>>, two_patterns>;
static_assert(function_named<named_composites>("t_r_0") > 0 && function_named<named_composites>("t_r_1") > 0);
static_assert(function_named<named_composites>("t_s_0") > 0);
using named_first = merge_composite<module_of<model<add<relu<sigmoid<in1>>, relu<row>>>>, pattern_table<composite<"t.r", relu_p<input_p<>>>>>;
using named_again = merge_composite<named_first, pattern_table<composite<"t.r", relu_p<any>>>>;
static_assert(function_named<named_first>("t_r_0") > 0 && function_named<named_again>("t_r_0") > 0);
static_assert(function_named<named_again>("t_r_1") > 0 && inspect<named_again>().function("t_r_1").count(op_id::sigmoid) == 0);
// two prefixes that sanitize alike do not share a name
using alike = merge_composite<module_of<model<add<relu<in1>, sigmoid<in2>>>>,
                              pattern_table<composite<"t.x", relu_p<any>>, composite<"t_x", sigmoid_p<any>>>>;
static_assert(function_named<alike>("t_x_0") > 0 && function_named<alike>("t_x_1") > 0);

// --- 8. a second BYOC run for another backend leaves existing partitions untouched -----------
using first = partition<model<relu<add<multiply<in1, in2>, in3>>>, adds, reference>;
using second = partition<first, muls, reference>;
static_assert(count_functions<second, "test"> == 1 && count_functions<second, "mul"> == 1);
static_assert(second::value.functions[1].name() == first::value.functions[1].name());
static_assert(ops_in<second>(1) == ops_in<first>(1));
using third = partition<second, adds, muls, reference>;  // nothing left to claim
static_assert(count_functions<third, "test"> == 1 && count_functions<third, "mul"> == 1);

// --- the inspection API (partita/ir/query.hpp) on the RFC example and on composites ---------
static_assert(inspect<rfc>().num_functions() == 3 && inspect<rfc>().main().kind() == function_kind::main);
static_assert(inspect<rfc>().function(rfc_a).kind() == function_kind::partition);
static_assert(inspect<rfc>().function("test_main_0").backend() == "test" && inspect<rfc>().function(rfc_a).composite().empty());
static_assert(inspect<rfc>().function(rfc_a).num_params() == 6 && inspect<rfc>().function(rfc_a).param(0).is(op_id::param));
static_assert(inspect<rfc>().function(rfc_a).num_outputs() == 2 && inspect<rfc>().function(rfc_a).output(1).is(op_id::add));
// main's parameters are the model's inputs in node order, the order run() takes them in
static_assert(inspect<rfc>().main().num_params() == 10 && inspect<rfc>().main().param(0).name() == compiled<rfc, adds, reference>::input(0).name);
static_assert(inspect<rfc>().count(function_kind::partition) == 2 && inspect<rfc>().count("test") == 2);
// every call of main names its callee (the function table's index), and the callee's
// parameters match the call's arguments one for one
static_assert([] {
  const module_view m = inspect<rfc>();
  int calls = 0;
  for (int i = 0; i < m.main().size(); ++i) {
    const op_view n = m.main().node(i);
    if (!n.is(op_id::call)) continue;
    ++calls;
    if (m.callee(n).kind() != function_kind::partition || m.callee(n).num_params() != n.num_args()) return false;
  }
  return calls == 2;
}());
// composites: their pattern name, and the backend its prefix names
using inspected = merge_composite<module_of<model<relu<add<multiply<in1, in2>, in3>>>>,
                                  pattern_table<composite<"mul.fma", add_p<multiply_p<any, any>, any>>>>;
static_assert(inspect<inspected>().function(1).kind() == function_kind::composite);
static_assert(inspect<inspected>().function(1).composite() == "mul.fma" && inspect<inspected>().function(1).backend() == "mul");
static_assert(inspect<inspected>().function(1).num_ops() == 2 && inspect<inspected>().function(1).count(op_id::multiply) == 1);
static_assert(inspect<inspected>().callee(inspect<inspected>().main().result().arg(0)).composite() == "mul.fma");
static_assert(inspect<inspected>().find("no such function") == -1);

// --- the explicit flow, the pipeline and the eager partition<> agree --------------------------
using explicit_flow = partition_graph<merge_regions<annotate_target<module_of<model<node9>>, adds, reference>>>;
using piped = pipeline<model<node9>, passes::annotate_target<adds, reference>, passes::merge_regions, passes::partition_graph>;
static_assert(same_module<explicit_flow, rfc>() && same_module<piped, rfc>());
// without merge_regions, every annotated node is its own partition
using unmerged = partition_graph<annotate_target<module_of<model<node9>>, adds, reference>>;
static_assert(calls_of<unmerged>("test") == 7 && count_functions<unmerged, "test"> == 1);  // seven calls of add(p0, p1)

// --- backend pass phases: pre_partition before the patterns, post_partition after ------------
using pic = input<"pic", f32, 1, 2, 6, 6>;
using conv = relu<conv2d<pic, weight<"k", f32, 2, 2, 3, 3>, {.padding = {1, 1}}>>;
using phased = model<add<softmax<conv, 1>, pic>>;  // conv→relu (npu), softmax (host), add (npu)
struct npu : renamed<"npu", op_id::conv2d, op_id::relu, op_id::add> {};
static_assert(count_functions<partition<phased, npu, reference>, "npu"> == 2);
// post_partition: the add-only partition has no conv2d/dense and goes back to the host
struct pruning_npu : npu {
  using post_partition = pass_list<passes::prune_partitions<"npu">>;
};
using pruned = partition<phased, pruning_npu, reference>;
static_assert(count_functions<pruned, "npu"> == 1 && pruned::value.functions.size() == 2);
static_assert(ops_in<pruned>(1) == 2);  // conv2d, relu
// pre_partition runs before the backends' pattern tables: its composite claims relu(conv) first
struct npu_with_patterns : npu {
  using patterns = pattern_table<composite<"npu.conv", conv2d_p<any, constant>>>;
};
struct npu_with_phase : npu_with_patterns {
  using pre_partition = pass_list<passes::merge_composite<pattern_table<composite<"npu.conv_relu", relu_p<conv2d_p<any, constant>>>>>>;
};
static_assert(count_functions<partition<phased, npu_with_patterns, reference>, "npu.conv"> == 1);
static_assert(count_functions<partition<phased, npu_with_phase, reference>, "npu.conv"> == 0);
static_assert(count_functions<partition<phased, npu_with_phase, reference>, "npu.conv_relu"> == 1);

}  // namespace

TEST_CASE("partitions print and render with their backend") {
  const std::string text = print(rfc{});
  CHECK(text.find("def @test_main_0(") != std::string::npos);
  CHECK(text.find("attrs {backend=\"test\"}") != std::string::npos);
  CHECK(text.find("= @test_main_0(%in_1, %in_2, %in_3, %in_4, ") != std::string::npos);
  const std::string dot = to_dot(rfc{});
  CHECK(dot.find("label=\"test_main_0\";") != std::string::npos);
  CHECK(dot.find("fillcolor=\"" + detail::backend_colour("test") + "\"") != std::string::npos);
  CHECK(dot.find("shape=box3d") != std::string::npos);
}

TEST_CASE("the same pass code runs at run time and gives the compile-time result") {
  // Nothing here is constant-evaluated: the passes are ordinary constexpr functions.
  detail::module_builder m = detail::to_builder(module_of<model<node9>>::value);
  m = detail::annotate_target<adds, reference>(std::move(m));
  m = detail::merge_regions(std::move(m));
  m = detail::partition_graph(m);
  const auto& expected = rfc::value;
  REQUIRE(m.nodes.size() == expected.nodes.size());
  REQUIRE(m.functions.size() == expected.functions.size());
  for (std::size_t i = 0; i < m.nodes.size(); ++i) CHECK(m.nodes[i] == expected.nodes[i]);
  for (std::size_t i = 0; i < m.args.size(); ++i) CHECK(m.args[i] == expected.args[i]);
  for (std::size_t f = 0; f < m.functions.size(); ++f) CHECK(m.functions[f].name() == expected.functions[f].name());
}
