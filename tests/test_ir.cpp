// Shape and dtype inference of every op, flattening and hash-consing, module structure, printer.
#include <doctest/doctest.h>

#include <partita/partita.hpp>

#include <models/mlp.hpp>

using namespace partita;

namespace {

using img = input<"img", f32, 2, 4, 9, 9>;
using k3 = weight<"k3", f32, 8, 4, 3, 3>;
using kg = weight<"kg", f32, 8, 2, 3, 3>;
using ch8 = weight<"ch8", f32, 8>;

// --- shape rules, one per op ---------------------------------------------------------------
static_assert(dense<input<"a", f32, 3, 5>, weight<"w", f32, 7, 5>>::desc.out == shape_of<3, 7>);
static_assert(dense<input<"a", f32, 2, 3, 5>, weight<"w", f32, 7, 5>>::desc.out == shape_of<2, 3, 7>);
static_assert(conv2d<img, k3>::desc.out == shape_of<2, 8, 7, 7>);
static_assert(conv2d<img, k3, {.padding = {1, 1}}>::desc.out == shape_of<2, 8, 9, 9>);
static_assert(conv2d<img, k3, {.stride = {2, 2}, .padding = {1, 1}}>::desc.out == shape_of<2, 8, 5, 5>);
static_assert(conv2d<img, k3, {.dilation = {2, 2}}>::desc.out == shape_of<2, 8, 5, 5>);
static_assert(conv2d<img, kg, {.groups = 2}>::desc.out == shape_of<2, 8, 7, 7>);
static_assert(conv2d<img, weight<"dw", f32, 4, 1, 3, 3>, {.padding = {1, 1}, .groups = 4}>::desc.out == shape_of<2, 4, 9, 9>);
static_assert(bias_add<conv2d<img, k3>, ch8>::desc.out == shape_of<2, 8, 7, 7>);
static_assert(bias_add<img, weight<"b9", f32, 9>, -1>::desc.out == shape_of<2, 4, 9, 9>);
static_assert(add<img, weight<"c", f32, 4, 1, 1>>::desc.out == shape_of<2, 4, 9, 9>);
static_assert(multiply<input<"p", f32, 3, 1>, input<"q", f32, 1, 5>>::desc.out == shape_of<3, 5>);
static_assert(subtract<input<"p", f32, 5>, input<"q", f32, 2, 5>>::desc.out == shape_of<2, 5>);
static_assert(relu<img>::desc.out == img::desc.out);
static_assert(clip<img, 0.f, 6.f>::desc.at.hi == 6.f);
static_assert(sigmoid<img>::desc.op == op_id::sigmoid && tanh_<img>::desc.op == op_id::tanh);
static_assert(max_pool2d<img, {.size = {2, 2}}>::desc.out == shape_of<2, 4, 4, 4>);
static_assert(max_pool2d<img, {.size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}}>::desc.out == shape_of<2, 4, 5, 5>);
static_assert(avg_pool2d<img, {.size = {3, 3}, .stride = {1, 1}, .padding = {1, 1}}>::desc.out == shape_of<2, 4, 9, 9>);
static_assert(global_avg_pool2d<img>::desc.out == shape_of<2, 4, 1, 1>);
using c4 = weight<"c4", f32, 4>;
static_assert(batch_norm<img, c4, c4, c4, c4>::desc.out == img::desc.out);
static_assert(batch_norm<img, c4, c4, c4, c4, 1e-3f>::desc.at.epsilon == 1e-3f);
static_assert(flatten<img>::desc.out == shape_of<2, 324>);
static_assert(reshape<img, 2, -1>::desc.out == shape_of<2, 324>);
static_assert(reshape<img, 8, 81>::desc.out == shape_of<8, 81>);
static_assert(concatenate<1, img, img, conv2d<img, weight<"k1", f32, 3, 4, 1, 1>>>::desc.out == shape_of<2, 11, 9, 9>);
static_assert(concatenate<-1, input<"a", f32, 2, 3>, input<"b", f32, 2, 4>>::desc.out == shape_of<2, 7>);
static_assert(softmax<input<"a", f32, 2, 3>>::desc.out == shape_of<2, 3>);
static_assert(softmax<input<"a", f32, 2, 3>, 0>::desc.at.axis == 0);
static_assert(tuple<img, ch8>::desc.is_tuple && tuple<img, ch8>::desc.nargs == 2);
static_assert(get<tuple<img, ch8>, 1>::desc.out == shape_of<8>);
static_assert(get<tuple<img, tuple<ch8, c4>>, 1>::desc.is_tuple);
static_assert(get<get<tuple<img, tuple<ch8, c4>>, 1>, 1>::desc.out == shape_of<4>);
static_assert(input<"q8", i8, 4>::desc.type == dtype::i8);

// --- verdicts of rejected nodes (the static_assert itself is covered by compile-fail tests) ---
static_assert(rules::dense(attrs{}, std::array{arg_info{shape_of<1, 784>}, arg_info{shape_of<512, 700>}}.data(), 2).v.what ==
              problem::dense_inner_dimension);
static_assert(rules::binary(attrs{}, std::array{arg_info{shape_of<2, 3>}, arg_info{shape_of<4>}}.data(), 2).v.what ==
              problem::broadcast);
static_assert(rules::binary(attrs{}, std::array{arg_info{shape_of<3>, f32}, arg_info{shape_of<3>, i8}}.data(), 2).v.what ==
              problem::dtype_mismatch);
static_assert(rules::conv2d(attrs{}, std::array{arg_info{shape_of<1, 3, 8, 8>}, arg_info{shape_of<4, 2, 3, 3>}}.data(), 2).v.what ==
              problem::conv2d_channels);
static_assert(rules::reshape(detail::reshape_attrs<5, 5>(), std::array{arg_info{shape_of<2, 12>}}.data(), 1).v.what ==
              problem::reshape_elements);
static_assert(rules::concatenate(detail::axis_attrs(1), std::array{arg_info{shape_of<2, 3>}, arg_info{shape_of<3, 3>}}.data(), 2).v.what ==
              problem::concatenate_dimensions);

// --- flattening: post-order, deduplicated by type identity and by structure ----------------
constexpr const auto& mlp = module_of<models::mlp>::value;
static_assert(mlp.nodes.size() == 15);  // 1 input + 6 weights + 3 dense + 3 bias_add + 2 relu
static_assert(mlp.nodes[0].op == op_id::input && mlp.nodes[1].op == op_id::weight && mlp.nodes[2].op == op_id::dense);
static_assert(mlp.main().result == 14 && mlp.node(14).out == shape_of<1, 10>);
static_assert(mlp.functions.size() == 1 && mlp.main().name() == "main");

using shared = relu<img>;
using diamond = add<conv2d<shared, weight<"k", f32, 4, 4, 1, 1>>, shared>;
constexpr const auto& dm = module_of<model<diamond>>::value;
static_assert(dm.nodes.size() == 5);  // img, relu, k, conv2d, add: relu appears once
static_assert(dm.arg(4, 1) == 1 && dm.arg(3, 0) == 1);

struct named_relu : relu<img> {};  // a named node type is the node it derives from
static_assert(module_of<model<add<named_relu, relu<img>>>>::value.nodes.size() == 3);
// relu<named_relu> and relu<relu<img>> are different types with the same structure: one node.
static_assert(module_of<model<add<relu<named_relu>, relu<relu<img>>>>>::value.nodes.size() == 4);

using two_out = model<models::mlp_batch<1>::logits, models::mlp_batch<1>::fc1>;
constexpr const auto& tm = module_of<two_out>::value;
static_assert(tm.node(tm.main().result).op == op_id::tuple && tm.node(tm.main().result).nargs == 2);

}  // namespace

TEST_CASE("print shows every op with its type and attributes") {
  const std::string text = print(module_of<models::mlp>{});
  CHECK(text.find("def @main(%x: f32[1, 784]) -> f32[1, 10] {") != std::string::npos);
  CHECK(text.find("%2 = dense(%x, @fc1.weight) : f32[1, 512]") != std::string::npos);
  CHECK(text.find("%4 = bias_add(%2, @fc1.bias, axis=1) : f32[1, 512]") != std::string::npos);
  CHECK(text.find("return %14") != std::string::npos);

  using conv = max_pool2d<conv2d<img, k3, {.stride = {2, 2}, .padding = {1, 1}}>, {.size = {2, 2}}>;
  const std::string c = print(module_of<model<conv>>{});
  CHECK(c.find("conv2d(%img, @k3, stride=[2, 2], padding=[1, 1], dilation=[1, 1], groups=1) : f32[2, 8, 5, 5]") !=
        std::string::npos);
  CHECK(c.find("max_pool2d(%2, size=[2, 2], stride=[2, 2], padding=[0, 0]) : f32[2, 8, 2, 2]") != std::string::npos);
}

TEST_CASE("print shows several outputs as a tuple") {
  const std::string text = print(module_of<two_out>{});
  CHECK(text.find("-> (f32[1, 10], f32[1, 512])") != std::string::npos);
  CHECK(text.find("= (%14, %5) : (f32[1, 10], f32[1, 512])") != std::string::npos);
}

TEST_CASE("to_dot emits a cluster per function, a node per value and an edge per argument") {
  const std::string dot = to_dot(module_of<models::mlp>{});
  CHECK(dot.rfind("digraph partita {", 0) == 0);
  CHECK(dot.find("subgraph cluster_0") != std::string::npos);
  CHECK(dot.find("n1 [label=\"fc1.weight\\nf32[512, 784]\", shape=note") != std::string::npos);
  CHECK(dot.find("n0 -> n2;") != std::string::npos);
  CHECK(dot.find("n1 -> n2;") != std::string::npos);
  std::size_t edges = 0;
  for (std::size_t p = dot.find("->"); p != std::string::npos; p = dot.find("->", p + 2)) ++edges;
  CHECK(edges == 14);  // 3 dense x2 + 3 bias_add x2 + 2 relu x1
}
