#pragma once
/// Op identifiers (`op_id`) and their names and classes.
#include <cstdint>
#include <string_view>

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
};

/// Name of an op as the printer and diagnostics spell it.
constexpr std::string_view name_of(op_id op) {
  constexpr std::string_view names[] = {
      "input",    "weight",     "dense",      "conv2d",     "bias_add",          "add",
      "subtract", "multiply",   "relu",       "clip",       "sigmoid",           "tanh",
      "max_pool2d", "avg_pool2d", "global_avg_pool2d", "batch_norm", "flatten", "reshape",
      "concatenate", "softmax", "tuple",      "get",        "param",             "call"};
  return names[static_cast<int>(op)];
}

/// True for nodes that hold a value without computing it.
constexpr bool is_leaf(op_id op) { return op == op_id::input || op == op_id::weight || op == op_id::param; }

/// True for ops whose output is their input reinterpreted: no kernel runs, the storage is shared.
constexpr bool is_view(op_id op) { return op == op_id::flatten || op == op_id::reshape; }

/// True for elementwise ops with one tensor argument.
constexpr bool is_unary_elementwise(op_id op) {
  return op == op_id::relu || op == op_id::clip || op == op_id::sigmoid || op == op_id::tanh;
}

/// True for the broadcasting binary ops.
constexpr bool is_binary_elementwise(op_id op) {
  return op == op_id::add || op == op_id::subtract || op == op_id::multiply;
}

/// A set of ops, as a bit per op (`op_id` has fewer than 256 values).
struct op_set {
  std::uint64_t bits[4]{};

  constexpr void insert(op_id op) { bits[static_cast<int>(op) / 64] |= std::uint64_t{1} << (static_cast<int>(op) % 64); }
  constexpr void insert(const op_set& o) {
    for (int w = 0; w < 4; ++w) bits[w] |= o.bits[w];
  }
  constexpr bool contains(op_id op) const { return (bits[static_cast<int>(op) / 64] >> (static_cast<int>(op) % 64)) & 1u; }
  /// Every op.
  static constexpr op_set all() { return {{~std::uint64_t{0}, ~std::uint64_t{0}, ~std::uint64_t{0}, ~std::uint64_t{0}}}; }
};

}  // namespace partita
