#pragma once
/// Op identifiers (`op_id`) and their names and classes.
#include <cstddef>
#include <cstdint>
#include <string_view>  // and std::size, without <iterator>

namespace partita {

/// Every kind of node in the IR: leaves, operators, tuples and the structural nodes that passes
/// create (function parameters and calls).
enum class op_id : std::uint8_t {
  input,
  weight,
  dense,
  conv2d,
  bias_add,
  add,
  subtract,
  multiply,
  relu,
  clip,
  sigmoid,
  tanh,
  max_pool2d,
  avg_pool2d,
  global_avg_pool2d,
  batch_norm,
  flatten,
  reshape,
  concatenate,
  softmax,
  tuple,
  get,
  param,
  call,
  // Added with the transformer and mobile op set; appended so that existing values keep theirs.
  matmul,
  transpose,
  slice,
  layer_norm,
  rms_norm,
  divide,
  maximum,
  minimum,
  prelu,
  power,
  sqrt,
  rsqrt,
  exp,
  log,
  erf,
  gelu,
  gelu_tanh,
  silu,
  hardswish,
  hardsigmoid,
  leaky_relu,
  abs,
  neg,
  reduce_mean,
  reduce_sum,
  reduce_max,
  gather,
  pad,
  resize,
  // Convolutions and block rearrangements of imported models.
  conv1d,
  conv_transpose2d,
  depth_to_space,
  space_to_depth,
  // Quantized models (docs/quantization.md).
  quantize,
  dequantize,
  // Booleans, masks and conversions (docs/ops.md).
  equal,
  less,
  less_equal,
  greater,
  greater_equal,
  logical_not,
  logical_and,
  logical_or,
  logical_xor,
  where,
  cast,
  trilu,
  // Ops whose value is several tensors (ir/ops/fields.hpp), and index ops of detector tails.
  topk,
  lstm,
  gru,
  rnn,
  argmax,
  argmin,
  cumsum,
  gather_elements,
  non_max_suppression,
};

/// Name of an op as the printer and diagnostics spell it.
constexpr std::string_view name_of(op_id op) {
  constexpr std::string_view names[] = {
      "input",    "weight",     "dense",      "conv2d",     "bias_add",          "add",
      "subtract", "multiply",   "relu",       "clip",       "sigmoid",           "tanh",
      "max_pool2d", "avg_pool2d", "global_avg_pool2d", "batch_norm", "flatten", "reshape",
      "concatenate", "softmax", "tuple",      "get",        "param",             "call",
      "matmul",   "transpose",  "slice",      "layer_norm", "rms_norm",          "divide",
      "maximum",  "minimum",    "prelu",      "power",      "sqrt",              "rsqrt",
      "exp",      "log",        "erf",        "gelu",       "gelu_tanh",         "silu",
      "hardswish", "hardsigmoid", "leaky_relu", "abs",      "neg",               "reduce_mean",
      "reduce_sum", "reduce_max", "gather",   "pad",        "resize",            "conv1d",
      "conv_transpose2d", "depth_to_space", "space_to_depth", "quantize", "dequantize", "equal",
      "less",     "less_equal", "greater",    "greater_equal", "logical_not",    "logical_and",
      "logical_or", "logical_xor", "where",   "cast",       "trilu",      "topk",
      "lstm",     "gru",        "rnn",        "argmax",     "argmin",            "cumsum",
      "gather_elements", "non_max_suppression"};
  static_assert(std::size(names) == static_cast<std::size_t>(op_id::non_max_suppression) + 1, "one name per op");
  return names[static_cast<int>(op)];
}

/// True for nodes that hold a value without computing it.
constexpr bool is_leaf(op_id op) { return op == op_id::input || op == op_id::weight || op == op_id::param; }

/// True for ops whose output is their input reinterpreted: no kernel runs, the storage is shared.
constexpr bool is_view(op_id op) { return op == op_id::flatten || op == op_id::reshape; }

/// True for elementwise ops with one tensor argument.
constexpr bool is_unary_elementwise(op_id op) {
  switch (op) {
    case op_id::relu: case op_id::clip: case op_id::sigmoid: case op_id::tanh: case op_id::power:
    case op_id::sqrt: case op_id::rsqrt: case op_id::exp: case op_id::log: case op_id::erf:
    case op_id::gelu: case op_id::gelu_tanh: case op_id::silu: case op_id::hardswish:
    case op_id::hardsigmoid: case op_id::leaky_relu: case op_id::abs: case op_id::neg: return true;
    default: return false;
  }
}

/// True for the broadcasting binary ops.
constexpr bool is_binary_elementwise(op_id op) {
  return op == op_id::add || op == op_id::subtract || op == op_id::multiply || op == op_id::divide ||
         op == op_id::maximum || op == op_id::minimum || op == op_id::prelu;
}

/// True for the broadcasting comparisons: two tensors of one dtype in, a boolean tensor out.
constexpr bool is_comparison(op_id op) {
  return op == op_id::equal || op == op_id::less || op == op_id::less_equal || op == op_id::greater ||
         op == op_id::greater_equal;
}

/// True for the ops of boolean tensors: `logical_not` of one, the others of two (broadcasting).
constexpr bool is_logical(op_id op) {
  return op == op_id::logical_not || op == op_id::logical_and || op == op_id::logical_or || op == op_id::logical_xor;
}

/// True for the ops whose kernels read or write dtypes other than f32 (booleans, integers):
/// comparisons, logical ops, where, cast, tril/triu, and the index ops (topk, argmax, argmin,
/// cumsum of integers, gather_elements).
constexpr bool is_dtype_generic(op_id op) {
  return is_comparison(op) || is_logical(op) || op == op_id::where || op == op_id::cast || op == op_id::trilu ||
         op == op_id::topk || op == op_id::argmax || op == op_id::argmin || op == op_id::cumsum ||
         op == op_id::gather_elements || op == op_id::non_max_suppression;
}

/// True for the recurrent layers: `lstm`, `gru`, `rnn`.
constexpr bool is_recurrent(op_id op) { return op == op_id::lstm || op == op_id::gru || op == op_id::rnn; }

/// True for the ops whose value is several tensors, each read with `get<Op, I>`, that one kernel
/// writes back to back in one buffer (their fields: ir/ops/fields.hpp).
constexpr bool is_tuple_op(op_id op) { return op == op_id::topk || op == op_id::non_max_suppression || is_recurrent(op); }

/// True for the reductions over static axes.
constexpr bool is_reduction(op_id op) {
  return op == op_id::reduce_mean || op == op_id::reduce_sum || op == op_id::reduce_max;
}

/// A set of ops, as a bit per op (`op_id` has fewer than 256 values).
struct op_set {
  std::uint64_t bits[4]{};

  constexpr void insert(op_id op) { bits[static_cast<int>(op) / 64] |= std::uint64_t{1} << (static_cast<int>(op) % 64); }
  constexpr void insert(const op_set& o) {
    for (int w = 0; w < 4; ++w) bits[w] |= o.bits[w];
  }
  constexpr bool contains(op_id op) const { return (bits[static_cast<int>(op) / 64] >> (static_cast<int>(op) % 64)) & 1u; }
  /// Whether every op of `o` is in this set.
  constexpr bool contains_all(const op_set& o) const {
    for (int w = 0; w < 4; ++w)
      if ((o.bits[w] & ~bits[w]) != 0) return false;
    return true;
  }
  /// The ops in both sets.
  constexpr op_set common(const op_set& o) const {
    op_set r;
    for (int w = 0; w < 4; ++w) r.bits[w] = bits[w] & o.bits[w];
    return r;
  }
  /// Every op.
  static constexpr op_set all() { return {{~std::uint64_t{0}, ~std::uint64_t{0}, ~std::uint64_t{0}, ~std::uint64_t{0}}}; }
};

}  // namespace partita
