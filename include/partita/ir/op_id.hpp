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

}  // namespace partita
