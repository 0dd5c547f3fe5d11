#pragma once
#include <string_view>

#include "partita/ir/module.hpp"
#include "partita/runtime/plan.hpp"

namespace partita {

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
  static constexpr int index = Step;

  /// The node of argument `i`.
  static constexpr const graph_node& arg(int i) {
    return Plan.nodes[static_cast<std::size_t>(Plan.args[static_cast<std::size_t>(node.first_arg + i)])];
  }

  /// For a fused composite: the number of its parameters. Its kernel receives `in[0 ..
  /// num_params)` for them, then one input per weight bound inside it, in body order.
  static constexpr int num_params = op == op_id::call ? Module.functions[static_cast<std::size_t>(node.index)].num_params : num_args;

  /// The composite function a fused step runs (only for `op == op_id::call`).
  static constexpr const function_info& function() { return Module.functions[static_cast<std::size_t>(node.index)]; }
  static constexpr std::string_view composite = op == op_id::call ? function().composite : std::string_view{};
  /// Node `i` of the composite's body; `body_size()` of them.
  static constexpr int body_size() { return function().num_nodes; }
  static constexpr const graph_node& body(int i) { return Module.node(function().first_node + i); }
  /// Body index of argument `k` of body node `i`.
  static constexpr int body_arg(int i, int k) { return Module.arg(function().first_node + i, k) - function().first_node; }
  /// Index in the body of the first node with op `o` (-1 if none): `body(find(op_id::conv2d))`.
  static constexpr int find(op_id o) {
    for (int i = 0; i < body_size(); ++i)
      if (body(i).op == o) return i;
    return -1;
  }
};

}  // namespace partita
