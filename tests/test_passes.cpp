// The BYOC passes against every rule of Part 1 of the semantics (docs/byoc.md):
// composites, annotation, region merging and partitioning, checked at compile time.
#include <doctest/doctest.h>

#include <string_view>

#include <partita/partita.hpp>

#include <support/backends.hpp>
#include <support/queries.hpp>

using namespace partita;
using test_backends::renamed;
using namespace test_queries;

namespace {

using x = input<"x", f32, 2, 3>;
using y = input<"y", f32, 2, 3>;
using z = input<"z", f32, 2, 3>;

// --- 3. a weight bound into a composite and read outside it stays in main ----------------------
// cpu fuses dense+bias+relu on "w"; a plain dense on another input reads "w" too.
using shared_w = weight<"w", f32, 4, 3>;
using shares_weight = model<relu<bias_add<dense<x, shared_w>, weight<"b", f32, 4>>>, dense<y, shared_w>>;
using shared_composites = merge_composite<module_of<shares_weight>, cpu_patterns>;
constexpr bool main_keeps_weight() {
  const auto& m = shared_composites::value;
  const function_info& f = m.functions[0];
  int weights = 0;
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    for (int k = 0; k < m.nodes[static_cast<std::size_t>(i)].nargs; ++k)
      if (m.arg(i, k) < f.first_node || m.arg(i, k) >= i) return false;  // every argument an earlier node of main
    weights += m.nodes[static_cast<std::size_t>(i)].op == op_id::weight ? 1 : 0;
  }
  return weights == 1;  // "w" for the plain dense; "b" lives only in the composite
}
static_assert(count_functions<shared_composites, "cpu.dense_bias_act"> == 1);
static_assert(main_keeps_weight());
static_assert(compiled<shares_weight, cpu>::num_steps == 2);

// --- a pass whose result outgrows the room judged from its input still gets it whole ----------
// module_from runs a pass once into tables sized from the module it reads; past that room it
// runs the pass again for an exactly sized copy.
struct append_relus {  // 30 more relus on main's result
  static constexpr detail::module_builder run(detail::module_builder m) {
    int last = m.main().result;
    for (int k = 0; k < 30; ++k) last = m.emit(graph_node{op_id::relu, dtype::f32, m.node(last).out}, &last, 1);
    m.functions[0].num_nodes += 30;
    m.functions[0].result = last;
    return m;
  }
};
using outgrown = pipeline<model<relu<x>>, append_relus>;
static_assert(!outgrown::packed.fits);
static_assert(outgrown::value.nodes.size() == 32 && outgrown::value.functions[0].num_nodes == 32);
static_assert(plan_of<outgrown>::value.steps.size() == 31);
static_assert(detail::composites_of<model<relu<x>>, cpu>::packed.fits);  // the eager flow's phases fit

// --- 3. priority order: three orderings of overlapping patterns (Relay's test_merge_order) ----
// graph relu(sigmoid(add(x, y))); C = sigmoid→relu, A = add→sigmoid→relu, B = add→sigmoid.
using chain = model<relu<sigmoid<add<x, y>>>>;
using pat_c = composite<"t.c", relu_p<sigmoid_p<any>>>;
using pat_a = composite<"t.a", relu_p<sigmoid_p<add_p<any, any>>>>;
using pat_b = composite<"t.b", sigmoid_p<add_p<any, any>>>;
using order_abc = merge_composite<module_of<chain>, pattern_table<pat_a, pat_b, pat_c>>;
using order_bca = merge_composite<module_of<chain>, pattern_table<pat_b, pat_c, pat_a>>;
using order_cab = merge_composite<module_of<chain>, pattern_table<pat_c, pat_a, pat_b>>;
static_assert(composites<order_abc>() == 1 && count_functions<order_abc, "t.a"> == 1);
static_assert(composites<order_bca>() == 1 && count_functions<order_bca, "t.b"> == 1);
static_assert(body_is<order_bca>(0, {op_id::call, op_id::relu}));  // relu stays: C cannot see inside B
static_assert(composites<order_cab>() == 1 && count_functions<order_cab, "t.c"> == 1);
static_assert(body_is<order_cab>(0, {op_id::add, op_id::call}));  // add stays: A and B need sigmoid

// --- 3. finished composites are opaque, but can be inputs of later ones --------------------
using later = merge_composite<order_cab, pattern_table<composite<"t.add_of_any", add_p<any, any>>>>;
static_assert(composites<later>() == 2);
using wrap = merge_composite<order_bca, pattern_table<composite<"t.relu_of_any", relu_p<any>>>>;
static_assert(count_functions<wrap, "t.relu_of_any"> == 1 && params_of<wrap>(function_named<wrap>("t_relu_of_any_0")) == 1);

// --- 2. shared pattern variables: (a + b) * (a - b) needs the same a and b -----------------
using same = model<multiply<add<x, y>, subtract<x, y>>>;
using different = model<multiply<add<x, y>, subtract<x, z>>>;
using squares = pattern_table<composite<"t.squares", multiply_p<add_p<var<"a">, var<"b">>, subtract_p<var<"a">, var<"b">>>>>;
static_assert(composites<merge_composite<module_of<same>, squares>>() == 1);
static_assert(params_of<merge_composite<module_of<same>, squares>>(1) == 2);  // a and b, once each
static_assert(composites<merge_composite<module_of<different>, squares>>() == 0);

// --- 2./3. optional and alternation: the largest downstream match wins ----------------------
using img = input<"img", f32, 1, 2, 5, 5>;
using conv = conv2d<img, weight<"k", f32, 4, 2, 3, 3>>;
using cbr = model<relu<bias_add<conv, weight<"b", f32, 4>>>>;
using cb = model<sigmoid<bias_add<conv, weight<"b", f32, 4>>>>;
using optional_relu =
    pattern_table<composite<"t.cb_relu", maybe<bias_add_p<conv2d_p<any, constant>, constant>, relu_p<self>>>>;
using cbr_m = merge_composite<module_of<cbr>, optional_relu>;
static_assert(composites<cbr_m>() == 1 && body_is<cbr_m>(1, {op_id::conv2d, op_id::bias_add, op_id::relu}));
using cb_m = merge_composite<module_of<cb>, optional_relu>;
static_assert(composites<cb_m>() == 1 && body_is<cb_m>(1, {op_id::conv2d, op_id::bias_add}));
static_assert(body_is<cb_m>(0, {op_id::call, op_id::sigmoid}));
// alternation: the left branch is tried first
using left_first = pattern_table<composite<"t.alt", alt<relu_p<bias_add_p<any, constant>>, relu_p<any>>>>;
using alt_m = merge_composite<module_of<cbr>, left_first>;
static_assert(body_is<alt_m>(1, {op_id::bias_add, op_id::relu}));

// --- 4. predicates run before claiming: a rejected match claims nothing ---------------------
// add(add(add(x, y), z), w) with w broadcasting the outer add to rank 3; pattern add(add(_, _), _)
// with a predicate rejecting rank-3 roots: the outer match is rejected, and the overlapping
// match rooted at the middle add still forms.
struct rank2_root {
  static constexpr bool check(const match_view& m) { return m.root().shape().rank == 2; }
};
using w3 = input<"w", f32, 4, 2, 3>;
using adds = model<add<add<add<x, y>, z>, w3>>;
using nested_add = pattern_table<composite<"t.add_add", add_p<add_p<any, any>, any>, rank2_root>>;
using adds_m = merge_composite<module_of<adds>, nested_add>;
static_assert(composites<adds_m>() == 1);
static_assert(body_is<adds_m>(0, {op_id::call, op_id::add}));
static_assert(call_arg_name<adds_m>(1, 0) == "x" && call_arg_name<adds_m>(1, 2) == "z");
// A predicate that rejects everything leaves the module as it was.
struct never {
  static constexpr bool check(const match_view&) { return false; }
};
static_assert(composites<merge_composite<module_of<adds>, pattern_table<composite<"t.no", add_p<any, any>, never>>>>() == 0);
// only_f32 sees every matched node's dtype.
using q8 = input<"q", i8, 2, 3>;
static_assert(composites<merge_composite<module_of<model<relu<q8>>>, pattern_table<composite<"t.r", relu_p<any>, only_f32>>>>() == 0);

// --- 5. an interior value used outside the match rejects it ---------------------------------
using escaping = model<relu<bias_add<conv, weight<"b", f32, 4>>>, bias_add<conv, weight<"b", f32, 4>>>;
using esc_m = merge_composite<module_of<escaping>, optional_relu>;
// relu(bias(conv)) would hide bias(conv), which main also returns: only bias(conv) is a composite.
static_assert(composites<esc_m>() == 1 && body_is<esc_m>(1, {op_id::conv2d, op_id::bias_add}));
static_assert(body_is<esc_m>(0, {op_id::call, op_id::relu, op_id::tuple}));

// --- 3. constants bound inside vs parameters --------------------------------------------------
using bound = merge_composite<module_of<cb>, pattern_table<composite<"t.conv", conv2d_p<any, constant>>>>;
static_assert(params_of<bound>(1) == 1 && count_op<bound>(1, op_id::weight) == 1);
using passed = merge_composite<module_of<cb>, pattern_table<composite<"t.conv", conv2d_p<any, any>>>>;
static_assert(params_of<passed>(1) == 2 && count_op<passed>(1, op_id::weight) == 0);
static_assert(call_arg_name<passed>(1, 1) == "k");  // the weight is an argument of the call
// constant never matches an input, input_p never a weight
static_assert(composites<merge_composite<module_of<model<add<x, y>>>, pattern_table<composite<"t.c", add_p<any, constant>>>>>() == 0);
static_assert(composites<merge_composite<module_of<model<add<x, y>>>, pattern_table<composite<"t.i", add_p<input_p<"y">, input_p<>>>>>>() == 1);
static_assert(composites<merge_composite<module_of<model<add<x, y>>>, pattern_table<composite<"t.i", add_p<input_p<"z">, any>>>>>() == 0);

// --- 3. parameters: deduplicated, in the pattern's own post-order, commutative add/multiply ---
using dup = merge_composite<module_of<model<add<x, x>>>, pattern_table<composite<"t.d", add_p<any, any>>>>;
static_assert(params_of<dup>(1) == 1);
using order = merge_composite<module_of<model<subtract<z, multiply<x, y>>>>,
                              pattern_table<composite<"t.o", subtract_p<any, multiply_p<any, any>>>>>;
static_assert(call_arg_name<order>(1, 0) == "z" && call_arg_name<order>(1, 1) == "x" && call_arg_name<order>(1, 2) == "y");
using scale = weight<"s", f32, 2, 3>;
using comm = merge_composite<module_of<model<multiply<x, scale>>>, pattern_table<composite<"t.m", multiply_p<constant, any>>>>;
static_assert(composites<comm>() == 1 && params_of<comm>(1) == 1);
static_assert(composites<merge_composite<module_of<model<subtract<x, scale>>>,
                                         pattern_table<composite<"t.s", subtract_p<constant, any>>>>>() == 0);  // not commutative

// --- 2. constraints: dtype, shape, attributes; tuples and projections; dominator ---------------
static_assert(composites<merge_composite<module_of<model<relu<x>>>, pattern_table<composite<"t.s", has_shape<relu_p<any>, 2, 3>>>>>() == 1);
static_assert(composites<merge_composite<module_of<model<relu<x>>>, pattern_table<composite<"t.s", has_shape<relu_p<any>, 3, 2>>>>>() == 0);
static_assert(composites<merge_composite<module_of<model<relu<q8>>>, pattern_table<composite<"t.d", has_dtype<relu_p<any>, i8>>>>>() == 1);
using strided = model<conv2d<img, weight<"k", f32, 4, 2, 3, 3>, {.stride = {2, 2}}>>;
using unit_stride = pattern_table<composite<"t.s1", has_attr<conv2d_p<any, any>, &attrs::stride, std::array{1, 1}>>>;
static_assert(composites<merge_composite<module_of<strided>, unit_stride>>() == 0);
static_assert(composites<merge_composite<module_of<cb>, unit_stride>>() == 1);
// A field of a tuple built in the model is that field itself: no projection is left to match.
using tup = module_of<model<add<get<tuple<relu<x>, sigmoid<y>>, 1>, z>>>;
template <class M, class P>
constexpr int matches = composites<merge_composite<M, pattern_table<composite<"t.g", P>>>>();
static_assert(matches<tup, add_p<sigmoid_p<any>, any>> == 1);
static_assert(matches<tup, add_p<get_p<any, -1>, any>> == 0);
// Projections of a call that returns several values (a partition) are matched by field.
using two_out = partition<model<subtract<add<x, y>, add<add<x, y>, z>>>, renamed<"test", op_id::add>, reference>;
static_assert(matches<two_out, subtract_p<get_p<any, 0>, get_p<any, 1>>> == 1);
static_assert(matches<two_out, subtract_p<get_p<any, 1>, any>> == 0);
static_assert(matches<two_out, subtract_p<get_p<any, -1>, etc>> == 1);
using cat = model<concatenate<0, x, y, z>>;
static_assert(params_of<merge_composite<module_of<cat>, pattern_table<composite<"t.c", concatenate_p<etc>>>>>(1) == 3);
// conv → (relu, sigmoid) → add: a fuzzy diamond dominated by the add
using diamond = model<add<relu<conv>, sigmoid<conv>>>;
using dom = pattern_table<composite<"t.dom", dominates<conv2d_p<any, constant>, elementwise, add_p<any, any>>>>;
using dom_m = merge_composite<module_of<diamond>, dom>;
static_assert(composites<dom_m>() == 1 && body_is<dom_m>(1, {op_id::conv2d, op_id::relu, op_id::sigmoid, op_id::add}));
static_assert(params_of<dom_m>(1) == 1);
// the same diamond with the relu also returned: the parent is not dominated, no match
static_assert(composites<merge_composite<module_of<model<add<relu<conv>, sigmoid<conv>>, relu<conv>>>, dom>>() == 0);
// Every argument of the root and of each path node must lead to the parent (Relay's rule, and
// TVM's test_match_dominator / test_not_match_dominator): relu on the conv's own input is a path
// that ends at an input, so neither operand order matches and nothing is pulled in.
using k2 = weight<"k2", f32, 2, 2, 3, 3>;
using same_conv = conv2d<img, k2, {.padding = {1, 1}}>;  // [1, 2, 5, 5], like img
using dom_any = pattern_table<composite<"t.dom", dominates<conv2d_p<any, constant>, alt<relu_p<any>, alt<tanh_p<any>, sigmoid_p<any>>>,
                                                           add_p<any, any>>>>;
static_assert(composites<merge_composite<module_of<model<add<relu<img>, sigmoid<same_conv>>>>, dom_any>>() == 0);
static_assert(composites<merge_composite<module_of<model<add<sigmoid<same_conv>, relu<img>>>>, dom_any>>() == 0);
// a deeper branch, and a single branch (relu(relu(conv)) + tanh(relu(relu(conv))))
using deeper = merge_composite<module_of<model<add<relu<tanh_<relu<same_conv>>>, sigmoid<same_conv>>>>, dom_any>;
static_assert(composites<deeper>() == 1 && params_of<deeper>(1) == 1);
static_assert(body_is<deeper>(0, {op_id::call}) && ops_in<deeper>(1) == 6);
using rr = relu<relu<same_conv>>;
static_assert(composites<merge_composite<module_of<model<add<rr, tanh_<rr>>>>, dom_any>>() == 1);
// a fake diamond: the paths end at two different convolutions
using other_conv = conv2d<img, weight<"k3", f32, 2, 2, 3, 3>, {.padding = {1, 1}}>;
static_assert(composites<merge_composite<module_of<model<add<relu<same_conv>, sigmoid<other_conv>>>>, dom_any>>() == 0);
// no convolution at all
static_assert(composites<merge_composite<module_of<model<add<relu<img>, tanh_<relu<img>>>>>, dom_any>>() == 0);
// a path node with a weight beside the path (TVM's test_match_dominator2: conv → bias_add →
// relu): the bias is a side input, bound into the composite
using biased = model<add<relu<bias_add<same_conv, weight<"b2", f32, 2>>>, sigmoid<same_conv>>>;
using dom_bias = pattern_table<composite<"t.dom", dominates<conv2d_p<any, constant>, alt<elementwise, bias_add_p<any, constant>>,
                                                            add_p<any, any>>>>;
using biased_m = merge_composite<module_of<biased>, dom_bias>;
static_assert(composites<biased_m>() == 1 && ops_in<biased_m>(1) == 5 && params_of<biased_m>(1) == 1);
static_assert(count_op<biased_m>(1, op_id::weight) == 2);  // k2 and b2
// ... but an op that matches neither pattern on the way fails the match
static_assert(composites<merge_composite<module_of<biased>, dom_any>>() == 0);
// a nested diamond: the path pattern also takes the add of two relus of the conv
using nested = model<add<tanh_<add<relu<same_conv>, sigmoid<same_conv>>>, relu<same_conv>>>;
using dom_nested = pattern_table<composite<"t.dom", dominates<conv2d_p<any, constant>, alt<elementwise, add_p<any, any>>, add_p<any, any>>>>;
static_assert(ops_in<merge_composite<module_of<nested>, dom_nested>>(1) == 6);
// two nodes like the parent: TVM's test_not_match_dominator2 (the second conv is not a path node)
using n6 = same_conv;
using n8 = conv2d<tanh_<n6>, k2, {.padding = {1, 1}}>;
using dom_relu = pattern_table<composite<"t.dom", dominates<conv2d_p<any, constant>, relu_p<any>, add_p<any, any>>>>;
static_assert(composites<merge_composite<module_of<model<add<n8, relu<n6>>>>, dom_relu>>() == 0);

// --- 2. commutative operands: the swapped order is tried when a match is rejected ------------
// x + conv(x) with x itself a convolution (a residual block): the written order binds x as the
// convolution, whose value escapes to conv(x); the swapped order forms the composite.
using c_first = conv2d<img, k2, {.padding = {1, 1}}>;
using c_second = conv2d<c_first, weight<"k4", f32, 2, 2, 3, 3>, {.padding = {1, 1}}>;
using residual_pat = pattern_table<composite<"t.res", add_p<conv2d_p<any, constant>, any>>>;
using residual_m = merge_composite<module_of<model<add<c_first, c_second>>>, residual_pat>;
static_assert(composites<residual_m>() == 1 && params_of<residual_m>(1) == 1);
static_assert(body_is<residual_m>(0, {op_id::conv2d, op_id::call}));
// a predicate that refuses the written order: the swapped one is tried before giving up
struct weight_k3 {
  static constexpr bool check(const match_view& m) { return m.var("c").arg(1).name() == "k3"; }
};
using pick = pattern_table<composite<"t.pick", add_p<var<"c", conv2d_p<any, constant>>, any>, weight_k3>>;
// bound(): a variable of the alt branch the match did not take is unbound
struct relu_taken {
  static constexpr bool check(const match_view& m) { return !m.bound("b") && m.bound("r") && m.var("r").is(op_id::relu); }
};
using alt_vars = pattern_table<composite<"t.av", alt<var<"b", bias_add_p<any, constant>>, var<"r", relu_p<any>>>, relu_taken>>;
static_assert(composites<merge_composite<module_of<model<relu<x>>>, alt_vars>>() == 1);
// count_functions counts composites whose names have no backend prefix too
static_assert(count_functions<merge_composite<module_of<model<relu<x>>>, pattern_table<composite<"plain", relu_p<any>>>>, "plain"> == 1);
using pick_m = merge_composite<module_of<model<add<same_conv, other_conv>>>, pick>;
static_assert(composites<pick_m>() == 1 && count_op<pick_m>(0, op_id::conv2d) == 1);
static_assert(call_arg_name<pick_m>(1, 1) != "k3");
// the order to change may be that of an inner node: the multiply's first, the add's second
using inner_pat = pattern_table<composite<"t.inner", multiply_p<add_p<conv2d_p<any, constant>, any>, any>>>;
using inner_m = merge_composite<module_of<model<multiply<add<c_first, other_conv>, img>, c_first>>, inner_pat>;
static_assert(composites<inner_m>() == 1 && count_op<inner_m>(0, op_id::conv2d) == 1 && ops_in<inner_m>(1) == 3);

// --- 5. a subexpression of weights alone is copied into each composite ----------------------
// Two normalizations written out share sqrt(var + eps) (one node: identical types are one
// node). It escapes each match, but is computed from weights alone, so each composite gets its
// own copy rather than the match being refused.
using var_w = weight<"var", f32, 2, 3>;
using mean_w = weight<"mean", f32, 2, 3>;
using den = sqrt_<add<var_w, scalar<1e-5f>>>;
using norm_p = divide_p<subtract_p<any, constant>, sqrt_p<add_p<constant, constant>>>;
using mean_v = weight<"mean_v", f32, 2, 3>;
using norms = model<add<divide<subtract<x, mean_w>, den>, divide<subtract<y, mean_v>, den>>>;
using norms_m = merge_composite<module_of<norms>, pattern_table<composite<"t.norm", norm_p>>>;
static_assert(composites<norms_m>() == 2 && params_of<norms_m>(1) == 1 && params_of<norms_m>(2) == 1);
static_assert(body_is<norms_m>(0, {op_id::call, op_id::call, op_id::add}));  // the shared sqrt left main
static_assert(count_op<norms_m>(1, op_id::sqrt) == 1 && count_op<norms_m>(2, op_id::sqrt) == 1);
// when main also reads it, it stays there as well
using norms_kept = model<add<divide<subtract<x, mean_w>, den>, divide<subtract<y, mean_v>, den>>, den>;
using norms_kept_m = merge_composite<module_of<norms_kept>, pattern_table<composite<"t.norm", norm_p>>>;
static_assert(composites<norms_kept_m>() == 2 && count_op<norms_kept_m>(0, op_id::sqrt) == 1);

// --- identical composites are one function called twice (Relax's deduplication) -----------
// With one mean for both, the two normalizations are the same function (the same pattern,
// body and weights, whatever order each listed its nodes in): main calls it twice.
using same_norms = merge_composite<module_of<model<add<divide<subtract<x, mean_w>, den>, divide<subtract<y, mean_w>, den>>>>,
                                   pattern_table<composite<"t.norm", norm_p>>>;
static_assert(composites<same_norms>() == 1 && count_op<same_norms>(0, op_id::call) == 2);
static_assert(body_is<same_norms>(1, {op_id::subtract, op_id::add, op_id::sqrt, op_id::divide}));
// the same body on other shapes, or with other weights, stays a function of its own
using two_relus = pattern_table<composite<"t.r", relu_p<any>>>;
static_assert(composites<merge_composite<module_of<model<add<relu<x>, relu<y>>>>, two_relus>>() == 1);
static_assert(composites<merge_composite<module_of<model<add<relu<x>, relu<input<"row", f32, 1, 3>>>>>, two_relus>>() == 2);
// an input in the subexpression makes it a value of the model again: refused as before
using vin = input<"v", f32, 2, 3>;
using den_in = sqrt_<add<vin, scalar<1e-5f>>>;
using norm_in_p = divide_p<subtract_p<any, constant>, sqrt_p<add_p<any, constant>>>;
static_assert(composites<merge_composite<module_of<model<add<divide<subtract<x, mean_w>, den_in>, divide<subtract<y, mean_w>, den_in>>>>,
                                         pattern_table<composite<"t.norm", norm_in_p>>>>() == 0);

}  // namespace

TEST_CASE("composites print with their attributes") {
  const std::string text = print(cbr_m{});
  CHECK(text.find("def @t_cb_relu_0(%p0: f32[1, 2, 5, 5]) -> f32[1, 4, 3, 3] attrs {composite=\"t.cb_relu\"} {") !=
        std::string::npos);
  CHECK(text.find("= @t_cb_relu_0(%img) : f32[1, 4, 3, 3]") != std::string::npos);
}
