// The tensor ops' shape and dtype rules (matmul, transpose, squeeze / unsqueeze, slice, split,
// pad, gather, reductions, layer / RMS norms, the elementwise set, literals) as static_asserts,
// edge cases included; their verdicts on bad arguments; the printer's text for them; and index
// inputs through `run`: i64 and i32 buffers, an out-of-range index named in the error.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <partita/partita.hpp>

using namespace partita;

namespace {

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t int64_min = std::numeric_limits<std::int64_t>::min();

// --- matmul: rank 2, the transposes, broadcast batches, weights on either side ---------------
using a17x33 = input<"a", f32, 17, 33>;
static_assert(matmul<a17x33, input<"b", f32, 33, 20>>::desc.out == shape_of<17, 20>);
static_assert(matmul<a17x33, input<"b", f32, 20, 33>, {.transpose_b = true}>::desc.out == shape_of<17, 20>);
static_assert(matmul<a17x33, input<"b", f32, 17, 5>, {.transpose_a = true}>::desc.out == shape_of<33, 5>);
static_assert(matmul<a17x33, input<"b", f32, 5, 17>, {.transpose_a = true, .transpose_b = true}>::desc.out ==
              shape_of<33, 5>);
static_assert(matmul<input<"a", f32, 2, 1, 5, 7>, input<"b", f32, 3, 7, 4>>::desc.out == shape_of<2, 3, 5, 4>);
static_assert(matmul<input<"a", f32, 4, 5, 7>, weight<"w", f32, 7, 9>>::desc.out == shape_of<4, 5, 9>);
static_assert(matmul<weight<"w", f32, 6, 33>, input<"x", f32, 2, 33, 17>>::desc.out == shape_of<2, 6, 17>);
static_assert(matmul<input<"q", f32, 2, 3, 17, 8>, input<"k", f32, 2, 3, 9, 8>, {.transpose_b = true}>::desc.out ==
              shape_of<2, 3, 17, 9>);
static_assert(matmul<input<"a", f32, 1, 7>, input<"b", f32, 7, 1>>::desc.out == shape_of<1, 1>);
static_assert(matmul<a17x33, input<"b", f32, 33, 20>>::desc.op == op_id::matmul &&
              matmul<a17x33, input<"b", f32, 33, 20>>::desc.type == dtype::f32);
static_assert(matmul<a17x33, input<"b", f32, 20, 33>, {.transpose_b = true}>::desc.at.transpose_b &&
              !matmul<a17x33, input<"b", f32, 20, 33>, {.transpose_b = true}>::desc.at.transpose_a);

// --- transpose, squeeze, unsqueeze -----------------------------------------------------------
using x2_17_3_5 = input<"x", f32, 2, 17, 3, 5>;
static_assert(transpose<x2_17_3_5, 0, 2, 1, 3>::desc.out == shape_of<2, 3, 17, 5>);
static_assert(transpose<x2_17_3_5, 3, 2, 1, 0>::desc.out == shape_of<5, 3, 17, 2>);
static_assert(transpose<input<"x", f32, 17, 33>, 1, 0>::desc.out == shape_of<33, 17>);
static_assert(transpose<input<"x", f32, 2, 3, 4, 5, 6>, 4, 0, 3, 1, 2>::desc.out == shape_of<6, 2, 5, 3, 4>);
static_assert(transpose<x2_17_3_5, 0, 1, 2, 3>::desc.out == x2_17_3_5::desc.out);  // the identity
using ones = input<"o", f32, 1, 17, 1, 3>;
static_assert(squeeze<ones, 0>::desc.out == shape_of<17, 1, 3>);
static_assert(squeeze<ones, 0, -2>::desc.out == shape_of<17, 3>);
static_assert(squeeze<ones, -2, 0>::desc.out == shape_of<17, 3>);
static_assert(squeeze<input<"s", f32, 1>, 0>::desc.out == shape{});  // to rank 0
using x17_3 = input<"x", f32, 17, 3>;
static_assert(unsqueeze<x17_3, 0>::desc.out == shape_of<1, 17, 3>);
static_assert(unsqueeze<x17_3, -1>::desc.out == shape_of<17, 3, 1>);  // at the end
static_assert(unsqueeze<x17_3, 2>::desc.out == shape_of<17, 3, 1>);
static_assert(unsqueeze<x17_3, 0, 3>::desc.out == shape_of<1, 17, 3, 1>);
static_assert(unsqueeze<x17_3, 1, -1>::desc.out == shape_of<17, 1, 3, 1>);
static_assert(unsqueeze<squeeze<ones, 0, 2>, 1>::desc.out == shape_of<17, 1, 3>);
// expand_dims is unsqueeze under numpy's name: the same node type.
static_assert(expand_dims<x17_3, -1>::desc.out == shape_of<17, 3, 1>);
static_assert(std::is_same_v<expand_dims<x17_3, 0>, unsqueeze<x17_3, 0>>);
// Views: both are reshapes, which no kernel copies.
static_assert(squeeze<ones, 0>::desc.op == op_id::reshape && unsqueeze<x17_3, 0>::desc.op == op_id::reshape);

// --- slice: numpy's begin, end and step, clamped -----------------------------------------------
using x3_33_5 = input<"x", f32, 3, 33, 5>;
static_assert(slice<x3_33_5, 1, 0, 1>::desc.out == shape_of<3, 1, 5>);
static_assert(slice<x3_33_5, 1, 2, 31, 3>::desc.out == shape_of<3, 10, 5>);       // 2, 5, ..., 29
static_assert(slice<x3_33_5, -2, 2, 31, 3>::desc.out == shape_of<3, 10, 5>);      // a negative axis
static_assert(slice<x3_33_5, 1, -1, int64_min, -1>::desc.out == shape_of<3, 33, 5>);  // reversed
static_assert(slice<x3_33_5, -1, 4, 0, -2>::desc.out == shape_of<3, 33, 2>);     // 4, 2
static_assert(slice<x3_33_5, 1, -100, 100>::desc.out == shape_of<3, 33, 5>);      // both ends clamped
static_assert(slice<x3_33_5, 1, 30, int64_max>::desc.out == shape_of<3, 3, 5>);   // to the end
static_assert(slice<x3_33_5, 1, -3, -1>::desc.out == shape_of<3, 2, 5>);          // from the back
static_assert(slice<x3_33_5, 1, 40, -50, -4>::desc.out == shape_of<3, 9, 5>);     // 32, 28, ..., 0
static_assert(slice<x3_33_5, 0, 2, 3>::desc.at.start == 2 && slice<x3_33_5, 0, 2, 3>::desc.at.stop == 3);
static_assert(slice_bounds(9, 8, -100, -3).start == 8 && slice_bounds(9, 8, -100, -3).count == 3);
static_assert(slice_bounds(17, 20, -18, -2).start == 16 && slice_bounds(17, 20, -18, -2).count == 9);
static_assert(slice_bounds(17, 5, 5, 1).count == 0 && slice_bounds(17, 3, 9, 0).count == 0);  // empty, step 0

// --- split: a tuple of slices, read with get ---------------------------------------------------
using x2_65_3 = input<"x", f32, 2, 65, 3>;
using parts = split<x2_65_3, 1, 16, 33, 16>;
static_assert(parts::desc.is_tuple && parts::desc.nargs == 3);
static_assert(get<parts, 0>::desc.out == shape_of<2, 16, 3> && get<parts, 1>::desc.out == shape_of<2, 33, 3> &&
              get<parts, 2>::desc.out == shape_of<2, 16, 3>);
static_assert(
    std::is_base_of_v<tuple<slice<x2_65_3, 1, 0, 16>, slice<x2_65_3, 1, 16, 49>, slice<x2_65_3, 1, 49, 65>>, parts>);
static_assert(get<split<x2_65_3, -1, 1, 2>, 1>::desc.out == shape_of<2, 65, 2>);
static_assert(get<split<x2_65_3, 0, 2>, 0>::desc.out == x2_65_3::desc.out);  // one part: the whole
static_assert(get<split<input<"x", f32, 1, 14>, 1, 2, 2, 2, 2, 2, 2, 2>, 6>::desc.out ==
              shape_of<1, 2>);  // more parts than a rank

// --- pad ----------------------------------------------------------------------------------------
static_assert(pad<x2_17_3_5, dims<0, 1, 2, 0>, dims<1, 0, 3, 2>>::desc.out == shape_of<3, 18, 8, 7>);
static_assert(pad<input<"x", f32, 33>, dims<5>, dims<0>, -1.5f>::desc.out == shape_of<38>);
static_assert(pad<input<"x", f32, 33>, dims<5>, dims<0>, -1.5f>::desc.at.alpha == -1.5f);
static_assert(pad<x17_3, dims<0, 0>, dims<0, 0>>::desc.out == x17_3::desc.out);

// --- gather and embedding: i32 and i64 indices, any axis, rank-0 indices -------------------------
using table = input<"t", f32, 5, 33, 7>;
static_assert(gather<table, input<"i", i64, 4, 3>, 1>::desc.out == shape_of<5, 4, 3, 7>);
static_assert(gather<table, input<"i", i32, 4, 3>, 1>::desc.out == shape_of<5, 4, 3, 7>);
static_assert(gather<table, input<"i", i64, 6>, -1>::desc.out == shape_of<5, 33, 6>);
static_assert(gather<table, input<"i", i64, 6>>::desc.out == shape_of<6, 33, 7>);
static_assert(gather<table, input<"i", i64>, 0>::desc.out == shape_of<33, 7>);  // a rank-0 index drops the axis
static_assert(gather<table, input<"i", i32, 2, 3>, 2>::desc.type == dtype::f32);  // the table's dtype
static_assert(embedding<weight<"emb", f32, 33, 16>, input<"ids", i64, 2, 9>>::desc.out == shape_of<2, 9, 16>);
static_assert(embedding<weight<"emb", f32, 33, 16>, input<"ids", i64, 2, 9>>::desc.op == op_id::gather);
static_assert(input<"ids", i64, 2, 9>::desc.type == dtype::i64 && size_of(dtype::i64) == 8 &&
              name_of(dtype::i64) == "i64");

// --- reductions: axes dropped or kept, several, negative, all ------------------------------------
using x3_17_33 = input<"x", f32, 3, 17, 33>;
static_assert(reduce_sum<x3_17_33, axes<-1>>::desc.out == shape_of<3, 17>);
static_assert(reduce_mean<x3_17_33, axes<1>, true>::desc.out == shape_of<3, 1, 33>);
static_assert(reduce_max<x3_17_33, axes<2, 0>>::desc.out == shape_of<17>);
static_assert(reduce_max<x3_17_33, axes<0, -1>, true>::desc.out == shape_of<1, 17, 1>);
static_assert(reduce_mean<x3_17_33, axes<0, 1, 2>>::desc.out == shape{});  // all axes: rank 0
static_assert(reduce_sum<x3_17_33, axes<0, 1, 2>, true>::desc.out == shape_of<1, 1, 1>);
static_assert(reduce_sum<x3_17_33, axes<2, 0>>::desc.at.axes == 0b101 &&
              !reduce_sum<x3_17_33, axes<2, 0>>::desc.at.keepdims);
static_assert(reduce_mean<x3_17_33, axes<-2>, true>::desc.at.axes == 0b010 &&
              reduce_mean<x3_17_33, axes<-2>, true>::desc.at.keepdims);
static_assert(reduce_sum<x3_17_33, axes<1>>::desc.op == op_id::reduce_sum &&
              reduce_max<x3_17_33, axes<1>>::desc.op == op_id::reduce_max);

// --- layer_norm, rms_norm, softmax ---------------------------------------------------------------
using x2_9_65 = input<"x", f32, 2, 9, 65>;
static_assert(layer_norm<x2_9_65, weight<"g", f32, 65>, weight<"b", f32, 65>>::desc.out == x2_9_65::desc.out);
static_assert(layer_norm<x2_9_65, weight<"g", f32, 9, 65>, weight<"b", f32, 9, 65>, -2, 1e-3f>::desc.at.axis == -2 &&
              layer_norm<x2_9_65, weight<"g", f32, 9, 65>, weight<"b", f32, 9, 65>, -2, 1e-3f>::desc.at.epsilon ==
                  1e-3f);
static_assert(layer_norm<x2_9_65, weight<"g", f32, 65>, weight<"b", f32, 65>>::desc.at.epsilon == 1e-5f);
static_assert(rms_norm<x2_9_65, weight<"g", f32, 65>>::desc.out == x2_9_65::desc.out &&
              rms_norm<x2_9_65, weight<"g", f32, 65>>::desc.at.epsilon == 1e-6f);
static_assert(rms_norm<x2_9_65, weight<"g", f32, 9, 65>, 1>::desc.op == op_id::rms_norm);
static_assert(softmax<x2_9_65, 1>::desc.out == x2_9_65::desc.out);

// --- the elementwise set -------------------------------------------------------------------------
using x3_5_17 = input<"x", f32, 3, 5, 17>;
static_assert(divide<x3_5_17, input<"s", f32, 5, 1>>::desc.out == shape_of<3, 5, 17>);
static_assert(maximum<input<"r", f32, 17>, x3_5_17>::desc.out == shape_of<3, 5, 17>);
static_assert(minimum<input<"a", f32, 3, 1>, input<"b", f32, 1, 4>>::desc.out == shape_of<3, 4>);
static_assert(prelu<x3_5_17, weight<"slope", f32, 5, 1>>::desc.out == x3_5_17::desc.out);
static_assert(prelu<x3_5_17, scalar<0.25f>>::desc.out == x3_5_17::desc.out);
static_assert(sqrt_<x3_5_17>::desc.op == op_id::sqrt && rsqrt<x3_5_17>::desc.op == op_id::rsqrt &&
              exp_<x3_5_17>::desc.op == op_id::exp && log_<x3_5_17>::desc.op == op_id::log &&
              erf_<x3_5_17>::desc.op == op_id::erf && abs_<x3_5_17>::desc.op == op_id::abs &&
              neg<x3_5_17>::desc.op == op_id::neg);
static_assert(gelu<x3_5_17>::desc.out == x3_5_17::desc.out && gelu_tanh<x3_5_17>::desc.op == op_id::gelu_tanh &&
              silu<x3_5_17>::desc.op == op_id::silu && hardswish<x3_5_17>::desc.op == op_id::hardswish);
static_assert(power<x3_5_17, 3.f>::desc.at.alpha == 3.f && leaky_relu<x3_5_17>::desc.at.alpha == 0.01f &&
              leaky_relu<x3_5_17, 0.2f>::desc.at.alpha == 0.2f);
static_assert(hardsigmoid<x3_5_17>::desc.at.alpha == 1.f / 6.f && hardsigmoid<x3_5_17>::desc.at.beta == 0.5f &&
              hardsigmoid<x3_5_17, 0.2f, 0.5f>::desc.at.alpha == 0.2f);

// --- literals and scalars ------------------------------------------------------------------------
using lit3 = literal<dims<3>, 1.f, -2.f, 0.5f>;
static_assert(lit3::desc.out == shape_of<3> && lit3::desc.type == dtype::f32 && lit3::desc.op == op_id::weight);
static_assert(lit3::desc.name.starts_with("literal.") && lit3::desc.name.size() == 24);
static_assert(lit3::values[1] == -2.f && lit3::desc.at.data.values == lit3::values);
static_assert(scalar<0.5f>::desc.out == shape{} && scalar<0.5f>::values[0] == 0.5f);
// An integer literal holds elements of its dtype, and its dtype is in its name.
static_assert(int_scalar<u8, 200>::desc.type == dtype::u8 && int_scalar<u8, 200>::values[0] == 200);
static_assert(int_scalar<i32, 200>::desc.name != int_scalar<u8, 200>::desc.name);
static_assert(scalar<0.5f>::desc.name == scalar<0.5f>::desc.name &&
              scalar<0.5f>::desc.name != scalar<0.25f>::desc.name);
static_assert(literal<dims<1>, 0.5f>::desc.name != scalar<0.5f>::desc.name);  // the shape is in the name
static_assert(literal<dims<2, 2>, 1.f, 2.f, 3.f, 4.f>::desc.name != literal<dims<4>, 1.f, 2.f, 3.f, 4.f>::desc.name);
static_assert(add<x17_3, lit3>::desc.out == shape_of<17, 3> &&
              multiply<scalar<2.f>, x17_3>::desc.out == shape_of<17, 3>);

// An executable whose only weights are literals binds itself; equal literals share a slot.
using scaled = model<add<multiply<x17_3, scalar<2.f>>, scalar<2.f>>>;
static_assert(compiled<scaled, reference>::literals_only && compiled<scaled, reference>::plan.weights.size() == 1);
static_assert(compiled<scaled, reference>::weight(0).literal != nullptr);
using mixed = model<multiply<add<x17_3, weight<"w", f32, 3>>, lit3>>;
static_assert(!compiled<mixed, reference>::literals_only && compiled<mixed, reference>::plan.weights.size() == 2);
static_assert(compiled<model<relu<x17_3>>, reference>::literals_only);  // no weights at all

// --- verdicts of rejected nodes (each static_assert: a compile-fail test) ------------------------
template <class... S>
constexpr auto args(S... s) {
  return std::array{arg_info{s}...};
}
static_assert(rules::matmul(attrs{}, args(shape_of<5, 7>, shape_of<8, 3>).data(), 2).v.what ==
              problem::matmul_inner_dimension);
static_assert(rules::matmul(detail::to_attrs(matmul_attrs{.transpose_b = true}),
                            args(shape_of<5, 7>, shape_of<7, 3>).data(), 2)
                  .v.what == problem::matmul_inner_dimension);
static_assert(rules::matmul(attrs{}, args(shape_of<2, 5, 7>, shape_of<3, 7, 4>).data(), 2).v.what ==
              problem::matmul_batch);
static_assert(rules::matmul(attrs{}, args(shape_of<7>, shape_of<7, 4>).data(), 2).v.what == problem::rank_mismatch);
static_assert(rules::transpose(detail::perm_attrs<0, 0, 1>(), args(shape_of<2, 3, 4>).data(), 1).v.what ==
              problem::transpose_permutation);
static_assert(rules::slice(detail::slice_attrs(1, 5, 5, 1), args(shape_of<3, 9>).data(), 1).v.what ==
              problem::slice_range);
static_assert(rules::slice(detail::slice_attrs(0, 0, 3, 0), args(shape_of<3, 9>).data(), 1).v.what ==
              problem::slice_range);
static_assert(rules::slice(detail::slice_attrs(2, 0, 3, 1), args(shape_of<3, 9>).data(), 1).v.what ==
              problem::slice_range);
static_assert(rules::axis_norm(detail::epsilon_attrs(1e-5f, -1), args(shape_of<2, 9>, shape_of<8>).data(), 2).v.what ==
              problem::normalization_parameter);
static_assert(rules::gather(attrs{}, std::array{arg_info{shape_of<5, 7>}, arg_info{shape_of<3>, f32}}.data(), 2)
                  .v.what == problem::gather_indices);
static_assert(rules::gather(detail::axis_attrs(2),
                            std::array{arg_info{shape_of<5, 7>}, arg_info{shape_of<3>, i64}}.data(), 2)
                  .v.what == problem::gather_indices);
static_assert(rules::prelu(attrs{}, args(shape_of<3, 5>, shape_of<2, 3, 5>).data(), 2).v.what == problem::prelu_slope);
static_assert(rules::reduce(detail::reduce_attrs(2, {0, 2}, false), args(shape_of<3, 5>).data(), 1).v.what ==
              problem::reduce_axes);
static_assert(rules::reduce(detail::reduce_attrs(2, {1, -1}, false), args(shape_of<3, 5>).data(), 1).v.what ==
              problem::reduce_axes);
static_assert(rules::pad(detail::pad_attrs<dims<0, -1>, dims<0, 0>>::value(0.f), args(shape_of<3, 5>).data(), 1)
                  .v.what == problem::pad_amount);
static_assert(rules::pad(detail::pad_attrs<dims<0, 2>, dims<0, -1>>::value(0.f), args(shape_of<3, 5>).data(), 1)
                  .v.rhs == shape{3, {1, 2, -1}});  // the axis, then its amounts before and after

// resize to nothing: its own problem, not pooling's window.
static_assert(rules::resize(detail::to_attrs(0, 4, resize_attrs{}), args(shape_of<1, 3, 8, 8>).data(), 1).v.what ==
              problem::resize_size);
// Element counts: up to 2^48, counted without overflowing past it; a result beyond it (2^45 by
// 2^45 broadcast to 2^90) is the node's problem, and leaves an empty shape for the nodes after.
static_assert(shape_of<std::int64_t{1} << 24, std::int64_t{1} << 24>.countable());
static_assert(!shape_of<std::int64_t{1} << 24, (std::int64_t{1} << 24) + 1>.countable());
static_assert(!shape_of<std::int64_t{1} << 30, std::int64_t{1} << 30, std::int64_t{1} << 30>.countable());
using wide_rows = input<"a", f32, std::int64_t{1} << 45, 1>;
using wide_cols = input<"b", f32, 1, std::int64_t{1} << 45>;
using outer_sum = detail::op_node<op_id::add, attrs{}, &rules::binary, wide_rows, wide_cols>;
static_assert(outer_sum::result.v.what == problem::element_count && outer_sum::desc.out == shape{});
static_assert(outer_sum::result.v.lhs == shape_of<std::int64_t{1} << 45, std::int64_t{1} << 45>);

// --- the models printed below ---------------------------------------------------------------------
using tokens = input<"x", f32, 2, 5, 8>;
using scores = matmul<tokens, tokens, {.transpose_b = true}>;
using printed =
    model<layer_norm<add<reduce_mean<transpose<multiply<softmax<scores>, scalar<0.5f>>, 0, 2, 1>, axes<-1>, true>,
                         pad<slice<tokens, 2, 0, 5>, dims<0, 0, 0>, dims<0, 0, 0>>>,
                     weight<"g", f32, 5>, weight<"b", f32, 5>>>;
using printed_more =
    model<leaky_relu<gather<weight<"emb", f32, 11, 4>, input<"ids", i64, 3>>, 0.2f>,
          power<hardsigmoid<erf_<input<"y", f32, 3>>, 0.2f, 0.5f>, 3.f>,
          rms_norm<get<split<input<"z", f32, 2, 6>, -1, 2, 4>, 1>, literal<dims<4>, 1.f, 2.f, 3.f, 4.f>>,
          reduce_max<squeeze<unsqueeze<input<"z", f32, 2, 6>, 0>, 0>, axes<0, 1>>>;

}  // namespace

TEST_CASE("print shows the tensor ops with their attributes, and a scalar literal as its value") {
  const std::string want =
      "def @main(%x: f32[2, 5, 8]) -> f32[2, 5, 5] {\n"
      "  %1 = matmul(%x, %x, transpose_b) : f32[2, 5, 5]\n"
      "  %2 = softmax(%1, axis=-1) : f32[2, 5, 5]\n"
      "  %4 = multiply(%2, 0.5) : f32[2, 5, 5]\n"
      "  %5 = transpose(%4, perm=[0, 2, 1]) : f32[2, 5, 5]\n"
      "  %6 = reduce_mean(%5, axes=[2], keepdims) : f32[2, 5, 1]\n"
      "  %7 = slice(%x, axis=2, begin=0, end=5, step=1) : f32[2, 5, 5]\n"
      "  %8 = pad(%7, pads=[0:0, 0:0, 0:0], value=0) : f32[2, 5, 5]\n"
      "  %9 = add(%6, %8) : f32[2, 5, 5]\n"
      "  %12 = layer_norm(%9, @g, @b, axis=-1, epsilon=1e-05) : f32[2, 5, 5]\n"
      "  return %12\n"
      "}\n";
  CHECK(print(module_of<printed>{}) == want);

  const std::string more = print(module_of<printed_more>{});
  INFO(more);
  CHECK(more.find("def @main(%ids: i64[3], %y: f32[3], %z: f32[2, 6]) -> (f32[3, 4], f32[3], f32[2, 4], f32[]) {") !=
        std::string::npos);
  CHECK(more.find(" = gather(@emb, %ids, axis=0) : f32[3, 4]") != std::string::npos);
  CHECK(more.find(" = leaky_relu(%2, alpha=0.2) : f32[3, 4]") != std::string::npos);
  CHECK(more.find(" = erf(%y) : f32[3]") != std::string::npos);
  CHECK(more.find(" = hardsigmoid(%5, alpha=0.2, beta=0.5) : f32[3]") != std::string::npos);
  CHECK(more.find(" = power(%6, exponent=3) : f32[3]") != std::string::npos);
  CHECK(more.find(" = slice(%z, axis=-1, begin=2, end=6, step=1) : f32[2, 4]") != std::string::npos);
  // A field of a split is its slice, read with no projection; the field nothing reads is not
  // in the graph.
  CHECK(more.find(" = get(") == std::string::npos);
  CHECK(more.find(" = slice(%z, axis=-1, begin=0, end=2, step=1)") == std::string::npos);
  // A literal with elements prints by its name, which hashes its shape and values.
  CHECK(more.find(" = rms_norm(%9, @literal.") != std::string::npos);
  CHECK(more.find(", axis=-1, epsilon=1e-06) : f32[2, 4]") != std::string::npos);
  CHECK(more.find(" = reshape(%z, shape=[1, 2, 6]) : f32[1, 2, 6]") != std::string::npos);  // unsqueeze
  CHECK(more.find(" = reshape(%12, shape=[2, 6]) : f32[2, 6]") != std::string::npos);        // squeeze
  CHECK(more.find(" = reduce_max(%13, axes=[0, 1]) : f32[]") != std::string::npos);
}

TEST_CASE("run takes index inputs as std::int64_t or std::int32_t buffers; negative indices count from the back") {
  const std::vector<float> t{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};  // [4, 3]
  weight_set w;
  w.add("t", t, {4, 3});
  using rows = model<gather<weight<"t", f32, 4, 3>, input<"ids", i64, 3>>>;
  compiled<rows, reference> wide;
  wide.bind(w);
  std::vector<float> y(9);
  wide.run(std::vector<std::int64_t>{2, -1, 0}, y);
  CHECK(y == std::vector<float>{6, 7, 8, 9, 10, 11, 0, 1, 2});

  using columns = model<gather<input<"t", f32, 4, 3>, input<"ids", i32, 2>, 1>>;
  compiled<columns, cpu> narrow;
  std::vector<float> z(8);
  const std::vector<std::int32_t> ids{-3, 2};
  narrow.run(t, std::span<const std::int32_t>(ids), z);
  CHECK(z == std::vector<float>{0, 2, 3, 5, 6, 8, 9, 11});
}

TEST_CASE("an out-of-range index makes run throw a partita::error naming it, on every backend") {
  using net = model<embedding<weight<"emb", f32, 5, 2>, input<"ids", i64, 2, 2>>>;
  const std::vector<float> emb(10, 1.f);
  weight_set w;
  w.add("emb", emb, {5, 2});
  compiled<net, reference> ref;
  compiled<net, cpu> host;
  ref.bind(w);
  host.bind(w);
  std::vector<float> y(8);
  const std::string message =
      "partita: gather: index 5 at position 3 of the indices is out of range for an axis of 5 entries";
  CHECK_THROWS_WITH_AS(ref.run(std::vector<std::int64_t>{0, 1, 4, 5}, y), message.c_str(), error);
  CHECK_THROWS_WITH_AS(host.run(std::vector<std::int64_t>{0, 1, 4, 5}, y), message.c_str(), error);
  CHECK_THROWS_WITH_AS(
      ref.run(std::vector<std::int64_t>{-6, 0, 0, 0}, y),
      "partita: gather: index -6 at position 0 of the indices is out of range for an axis of 5 entries", error);
  // The executable is usable again after the error.
  host.run(std::vector<std::int64_t>{0, -5, 4, -1}, y);
  CHECK(y == std::vector<float>(8, 1.f));
}

TEST_CASE("a model whose only weights are literals runs without bind") {
  compiled<scaled, cpu> exe;
  CHECK(exe.bound());
  const std::vector<float> x(51, 1.5f);
  std::vector<float> y(51);
  exe.run(x, y);
  CHECK(y == std::vector<float>(51, 5.f));
}
