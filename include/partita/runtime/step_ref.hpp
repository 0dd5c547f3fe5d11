#pragma once
/// `step_ref`: what a kernel sees of the step it implements, at compile time.
#include <array>
#include <string_view>

#include "partita/ir/module.hpp"
#include "partita/ir/layout.hpp"
#include "partita/runtime/plan_records.hpp"

namespace partita {
namespace detail {

/// The arguments of step `Step` (anything with `num_args` and `arg(i)`) as the shape rules
/// read them, for the rules a kernel shares with the IR (a tuple-valued op's fields, a recurrent
/// layer's sizes).
template <class Step>
constexpr std::array<arg_info, max_op_args> arg_infos_of() {
  return rules::arg_infos(Step::num_args, [](int k) { return arg_info_of(Step::arg(k)); });
}

/// The shapes of step `Step`'s arguments, in order.
template <class Step>
constexpr auto arg_shapes_of() {
  std::array<shape, static_cast<std::size_t>(Step::num_args)> s{};
  for (int i = 0; i < Step::num_args; ++i) s[static_cast<std::size_t>(i)] = Step::arg(i).out;
  return s;
}

}  // namespace detail

/// What a kernel sees of the step it implements, all at compile time: the op node, its
/// arguments' nodes (shapes, dtypes, attributes) and the step's place in the plan. Kernels are
/// instantiated as `Backend::kernel<step_ref<...>>`, so every shape is a constant. For a fused
/// composite, `op` is `op_id::call`, `composite` names the pattern and `body(i)` walks the
/// composite function's nodes (parameters first, result last).
template <const auto& Module, const auto& Plan, int Step>
struct step_ref {
  static constexpr const plan_step& step = Plan.steps[static_cast<std::size_t>(Step)];
  static constexpr const graph_node& node = Plan.nodes[static_cast<std::size_t>(step.node)];
  static constexpr op_id op = node.op;
  static constexpr int num_args = node.nargs;
  /// The step's position in the plan. A backend that `shares_kernels` instantiates one kernel
  /// for every step with the same signature, for the first of them: `index` is that step's, and
  /// `run` and `prepare` receive the step actually run as their `step` argument.
  static constexpr int index = Step;

  /// The node of argument `i`.
  static constexpr const graph_node& arg(int i) {
    return Plan.nodes[static_cast<std::size_t>(Plan.args[static_cast<std::size_t>(node.first_arg + i)])];
  }

  /// The order of argument `i`'s elements, and of the output's (`tensor_layout`): chosen by the
  /// plan, and `planar` unless the backend's `layout_role` for this step allows another.
  static constexpr tensor_layout in_layout(int i) {
    return Plan.ins[static_cast<std::size_t>(step.first_in + i)].layout;
  }
  static constexpr tensor_layout out_layout = step.out.layout;

  /// For a fused composite: the number of its parameters. Its kernel receives `in[0 ..
  /// num_params)` for them, then one input per weight bound inside it, in body order.
  static constexpr int num_params = op == op_id::call ? Module.functions[static_cast<std::size_t>(node.index)].num_params : num_args;

  /// The module the step comes from (for a whole partition: to walk the composites it calls).
  static constexpr const auto& module = Module;
  /// True for a step that runs a whole partition (its backend has `compiles_partitions`).
  static constexpr bool partition = op == op_id::call && !Module.functions[static_cast<std::size_t>(node.index)].backend.empty();

  /// The function a fused composite or whole-partition step runs (only for `op == op_id::call`).
  static constexpr const function_info& function() { return Module.functions[static_cast<std::size_t>(node.index)]; }
  static constexpr std::string_view composite = op == op_id::call ? function().composite : std::string_view{};
  /// Node `i` of the composite's body; `body_size()` of them.
  static constexpr int body_size() { return function().num_nodes; }
  static constexpr const graph_node& body(int i) { return Module.node(function().first_node + i); }
  /// Body index of argument `k` of body node `i`.
  static constexpr int body_arg(int i, int k) { return Module.arg(function().first_node + i, k) - function().first_node; }
  /// Module index of body node `i`.
  static constexpr int body_node(int i) { return function().first_node + i; }

  /// For a fused composite or a whole-partition step: the kernel input that module node `n`
  /// (`body_node(i)`) arrives in: a parameter of the function, or a weight bound in it or in a
  /// composite it calls (depth first, in body order, after the parameters); -1 for any other node.
  static constexpr int input_of(int n) {
    const graph_node& g = Module.node(n);
    if (g.op == op_id::param && n >= function().first_node && n < function().first_node + body_size()) return g.index;
    int slot = num_params, found = -1;
    detail::for_each_bound_weight(Module, node.index, [&](int j) {
      if (j == n) found = slot;
      ++slot;
    });
    return found;
  }
  /// For a step returning a tuple (a whole partition with several results, a tuple-valued op
  /// such as `topk`): the byte offset of field `k` in its output, where the fields lie back to
  /// back.
  static constexpr std::size_t output_offset(int k) {
    if constexpr (op == op_id::call) {
      return detail::field_offset(Module, node.index, k);
    } else {
      return detail::fields_offset(fields(), k);
    }
  }
  /// For a tuple-valued op (`is_tuple_op`): its fields' shapes and dtypes.
  static constexpr op_fields fields() {
    return rules::fields_of(op, *node.at, detail::arg_infos_of<step_ref>().data(), num_args);
  }

  /// Index in the body of the first node with op `o` (-1 if none): `body(find(op_id::conv2d))`.
  static constexpr int find(op_id o) {
    for (int i = 0; i < body_size(); ++i)
      if (body(i).op == o) return i;
    return -1;
  }
};

}  // namespace partita
