#pragma once
/// Shape and dtype problems found when a model type is checked, and their messages.
#include <type_traits>

#include "partita/core/dtype.hpp"
#include "partita/core/shape.hpp"

namespace partita {

/// What went wrong when checking a node: the kinds of ill-formed model Partita reports.
enum class problem {
  none,
  dtype_mismatch,
  rank_mismatch,
  dense_inner_dimension,
  conv2d_channels,
  conv2d_groups,
  conv2d_window,
  bias_size,
  broadcast,
  pool_window,
  batch_norm_parameter,
  reshape_elements,
  concatenate_dimensions,
  tuple_index,
  not_a_tuple,
  tuple_as_tensor,
  axis_out_of_range,
  duplicate_name,
  matmul_inner_dimension,
  matmul_batch,
  transpose_permutation,
  slice_range,
  split_sizes,
  normalization_parameter,
  gather_indices,
  prelu_slope,
  reduce_axes,
  pad_amount,
  conv1d_channels,
  conv1d_window,
  conv_transpose2d_channels,
  conv_transpose2d_output,
  depth_to_space_block,
  space_to_depth_block,
  element_count,
  resize_size,
  quantize_dtype,
  dequantize_dtype,
  quantization_scale,
  quantization_parameters,
  comparison_dtype,
  logical_dtype,
  where_condition,
  cast_dtype,
  trilu_rank,
  topk_count,
  recurrent_shapes,
  gather_elements_indices,
  nms_shapes,
};

/// The verdict of a node's shape/dtype rule: the problem, and the two shapes (or dtypes) that
/// disagree, so the diagnostic can print both.
struct verdict {
  problem what = problem::none;
  shape lhs{};
  shape rhs{};
  dtype lhs_type = dtype::f32;
  dtype rhs_type = dtype::f32;
};

/// The verdict on a tensor's size: `element_count` (the shape, and the limit as Rhs) when it has
/// more than `max_elements` elements, else none.
constexpr verdict size_verdict(const shape& s) {
  return s.countable() ? verdict{} : verdict{problem::element_count, s, shape{1, {max_elements}}};
}

/// A dtype as a type, so that diagnostics print it: `dtype_is<partita::dtype::i8>`.
template <dtype D>
struct dtype_is {};

namespace diagnostic {

/// Instantiated for every op node; when the verdict is not `none` one of the assertions below
/// fires. The compiler prints this template's arguments with the message: the offending node
/// type (`Node`) and the two shapes or dtypes that disagree (`Lhs`, `Rhs`).
template <class Node, problem P, class Lhs, class Rhs>
struct report {
  static_assert(P != problem::dtype_mismatch,
                "partita: dtype mismatch: the arguments of this op (Node) have different element types (Lhs vs Rhs)");
  static_assert(P != problem::rank_mismatch,
                "partita: rank mismatch: an argument of this op (Node) has the wrong number of dimensions (Lhs: found, Rhs: expected rank as dims)");
  static_assert(P != problem::dense_inner_dimension,
                "partita: shape mismatch in dense<X, W>: the last dimension of X (Lhs) must equal the second dimension of W (Rhs); W is [units, in_features]");
  static_assert(P != problem::conv2d_channels,
                "partita: shape mismatch in conv2d<X, W>: channels of X (Lhs, NCHW) must equal W's input channels times groups (Rhs, OIHW)");
  static_assert(P != problem::conv2d_groups,
                "partita: bad groups in conv2d<X, W>: groups must divide both the input channels (Lhs) and the output channels (Rhs)");
  static_assert(P != problem::conv2d_window,
                "partita: conv2d<X, W>: the dilated kernel (Rhs) is larger than the padded input (Lhs)");
  static_assert(P != problem::bias_size,
                "partita: shape mismatch in bias_add<X, B>: B (Rhs) must have as many elements as X (Lhs) has along the bias axis");
  static_assert(P != problem::broadcast,
                "partita: shape mismatch in an elementwise op (Node): the shapes Lhs and Rhs cannot be broadcast together");
  static_assert(P != problem::pool_window,
                "partita: pooling window (Rhs) is larger than the padded input (Lhs)");
  static_assert(P != problem::batch_norm_parameter,
                "partita: shape mismatch in batch_norm: gamma, beta, mean and var (Rhs) must each have as many elements as X (Lhs) has channels");
  static_assert(P != problem::reshape_elements,
                "partita: reshape changes the number of elements: input Lhs, target Rhs");
  static_assert(P != problem::concatenate_dimensions,
                "partita: shape mismatch in concatenate: the inputs (Lhs, Rhs) must agree on every dimension but the axis");
  static_assert(P != problem::tuple_index,
                "partita: get<T, I>: index I is out of range for the tuple T (Lhs: index, Rhs: tuple size)");
  static_assert(P != problem::not_a_tuple,
                "partita: get<T, I>: T is a tensor, not a tuple");
  static_assert(P != problem::tuple_as_tensor,
                "partita: a tuple is used where a tensor is expected (Node); project a field with get<T, I>");
  static_assert(P != problem::axis_out_of_range,
                "partita: axis out of range for this op (Lhs: input shape, Rhs: axis as dims)");
  static_assert(P != problem::duplicate_name,
                "partita: two different inputs or weights share one name (Node: the name) with different shapes or dtypes (Lhs, Rhs)");
  static_assert(P != problem::matmul_inner_dimension,
                "partita: shape mismatch in matmul<A, B>: the columns of A must equal the rows of B, after the transposes (Lhs: A, Rhs: B)");
  static_assert(P != problem::matmul_batch,
                "partita: shape mismatch in matmul<A, B>: the batch dimensions (all but the last two) of A (Lhs) and B (Rhs) cannot be broadcast together");
  static_assert(P != problem::transpose_permutation,
                "partita: transpose<X, Perm...>: Perm must name every axis of X (Lhs) exactly once (Rhs: the permutation as dims)");
  static_assert(P != problem::slice_range,
                "partita: slice<X, Axis, Begin, End, Step>: bad axis, a step of 0, or an empty result (Lhs: input shape, Rhs: axis, begin, end, step)");
  static_assert(P != problem::split_sizes,
                "partita: split<X, Axis, Sizes...>: the sizes (Rhs) must be positive and add up to X's extent along the axis (Lhs: input shape)");
  static_assert(P != problem::normalization_parameter,
                "partita: shape mismatch in layer_norm / rms_norm: gamma and beta (Rhs) must have the shape of X's normalized axes, from Axis to the last (Lhs: X)");
  static_assert(P != problem::gather_indices,
                "partita: gather<Table, Indices, Axis>: Indices must be an i32 or i64 tensor (Rhs: its dtype) and Axis an axis of Table (Lhs)");
  static_assert(P != problem::prelu_slope,
                "partita: shape mismatch in prelu<X, Slope>: Slope (Rhs) must broadcast into X (Lhs) without growing it");
  static_assert(P != problem::reduce_axes,
                "partita: reduction over bad axes: each axis must be in range for X (Lhs) and appear once (Rhs: the axes as dims)");
  static_assert(P != problem::pad_amount,
                "partita: pad<X, Before, After, Value>: the amounts must not be negative (Lhs: X; Rhs: the first axis with a negative amount, then its amounts before and after)");
  static_assert(P != problem::conv1d_channels,
                "partita: shape mismatch in conv1d<X, W>: channels of X (Lhs, NCL) must equal W's input channels times groups (Rhs, O, C / groups, K), and groups must divide both channel counts");
  static_assert(P != problem::conv1d_window,
                "partita: conv1d<X, W>: the dilated kernel (Rhs) is larger than the padded input (Lhs), or a stride or dilation is not positive");
  static_assert(P != problem::conv_transpose2d_channels,
                "partita: shape mismatch in conv_transpose2d<X, W>: channels of X (Lhs, NCHW) must equal W's first dimension (Rhs, Cin, Cout / groups, KH, KW), and groups must divide them");
  static_assert(P != problem::conv_transpose2d_output,
                "partita: conv_transpose2d<X, W>: no output (Lhs: X, Rhs: W): the padding removes every row or column, or a stride or dilation is not positive, or output_padding is not smaller than the stride or the dilation");
  static_assert(P != problem::depth_to_space_block,
                "partita: depth_to_space<X, Block>: the channels of X (Lhs, NCHW) must be a multiple of Block squared (Rhs: Block)");
  static_assert(P != problem::space_to_depth_block,
                "partita: space_to_depth<X, Block>: the height and width of X (Lhs, NCHW) must be multiples of Block (Rhs)");
  static_assert(P != problem::element_count,
                "partita: shape too large: a tensor of this node (Node) has more elements (Lhs: its shape) than a tensor may have (Rhs: the limit, 2^48 elements)");
  static_assert(P != problem::resize_size,
                "partita: resize<X, OH, OW>: the output size (Rhs: OH, OW) must be positive (Lhs: X)");
  static_assert(P != problem::quantize_dtype,
                "partita: quantize<X, Scale, ZeroPoint, Axis>: X must be f32 and ZeroPoint u8, i8 or i32, the dtype of the result (Lhs: X's dtype, Rhs: ZeroPoint's)");
  static_assert(P != problem::dequantize_dtype,
                "partita: dequantize<Q, Scale, ZeroPoint, Axis>: Q must be u8, i8 or i32 and ZeroPoint of the same dtype (Lhs: Q's dtype, Rhs: ZeroPoint's)");
  static_assert(P != problem::quantization_scale,
                "partita: quantize / dequantize (Node): Scale must be an f32 tensor (Rhs: its dtype)");
  static_assert(P != problem::quantization_parameters,
                "partita: quantize / dequantize (Node): Scale and ZeroPoint must have one shape, of rank 0 or 1, with one element (per tensor) or as many as the tensor has along Axis (Lhs: the tensor's shape; Rhs: the axis, the scale's elements, the zero point's elements)");
  static_assert(P != problem::comparison_dtype,
                "partita: equal / less / greater (Node): both arguments must have one dtype, f32 or an integer one (Lhs vs Rhs); the result is boolean");
  static_assert(P != problem::logical_dtype,
                "partita: logical_not / logical_and / logical_or / logical_xor (Node): the arguments must be boolean (Lhs vs Rhs: their dtypes)");
  static_assert(P != problem::where_condition,
                "partita: where<Cond, A, B> (Node): Cond must be boolean (Lhs: its dtype; Rhs: A's); compare first (greater<mask, scalar<0.f>>) or convert (cast<mask, boolean>)");
  static_assert(P != problem::cast_dtype,
                "partita: cast<X, D> (Node): X and D are f32, i32, i64, i8, u8 or boolean (Lhs: X's dtype, Rhs: D)");
  static_assert(P != problem::trilu_rank,
                "partita: tril / triu (Node): X must have at least two dimensions (Lhs: its shape)");
  static_assert(P != problem::topk_count,
                "partita: topk<X, K, Axis> (Node): X must be an f32 or integer tensor and K between 1 and X's extent along Axis (Lhs: X's shape; Rhs: K, Axis)");
  static_assert(P != problem::recurrent_shapes,
                "partita: lstm / gru / rnn (Node): X is [seq, batch, input] ([batch, seq, input] with batch_first), W [dirs, gates * hidden, input], R [dirs, gates * hidden, hidden], B [dirs, 2 * gates * hidden] and the initial states [dirs, batch, hidden], all f32, with dirs 2 for bidirectional and 1 otherwise and gates 4 (lstm), 3 (gru) or 1 (rnn) (Lhs: X's shape; Rhs: the argument that does not fit, its position last)");
  static_assert(P != problem::gather_elements_indices,
                "partita: gather_elements<X, Indices, Axis> (Node): Indices must be an i32 or i64 tensor of X's rank, at most X's extent along every other axis (Lhs: X's shape, Rhs: the indices' shape)");
  static_assert(P != problem::nms_shapes,
                "partita: non_max_suppression<Boxes, Scores, MaxPerClass, ...> (Node): Boxes must be f32 [batch, boxes, 4], Scores f32 [batch, classes, boxes], and MaxPerClass at least 1 (Lhs: Boxes' shape, Rhs: Scores' shape)");
  static constexpr bool ok = P == problem::none;
};

/// Whether verdict problem `P` disagrees about dtypes: the diagnostic prints them, not shapes.
constexpr bool dtype_lhs(problem p) {
  return p == problem::dtype_mismatch || p == problem::quantize_dtype || p == problem::dequantize_dtype ||
         p == problem::comparison_dtype || p == problem::logical_dtype || p == problem::where_condition ||
         p == problem::cast_dtype;
}
constexpr bool dtype_rhs(problem p) {
  return dtype_lhs(p) || p == problem::gather_indices || p == problem::quantization_scale;
}

template <verdict V>
using lhs_of = std::conditional_t<dtype_lhs(V.what), dtype_is<V.lhs_type>, dims_of<V.lhs>>;
template <verdict V>
using rhs_of = std::conditional_t<dtype_rhs(V.what), dtype_is<V.rhs_type>, dims_of<V.rhs>>;

/// Reports an argument of an op that is not a Partita node at all.
template <class Node, int Position, class Arg, bool IsNode>
struct require_node {
  static_assert(IsNode,
                "partita: unknown op: an argument of this op (Node, argument number Position) is not a Partita "
                "node (an input, a weight or an op such as dense or relu); see Arg");
  static constexpr bool ok = IsNode;
};

}  // namespace diagnostic

/// Forces the check of node `Node` whose rule returned `V`: a no-op when the node is well formed.
template <class Node, verdict V>
inline constexpr bool checked =
    sizeof(diagnostic::report<Node, V.what, diagnostic::lhs_of<V>, diagnostic::rhs_of<V>>) > 0;

}  // namespace partita
