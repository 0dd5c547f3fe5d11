#pragma once
#include "partita/ir/module.hpp"
#include "partita/runtime/plan.hpp"

namespace partita {

/// What a kernel sees of the step it implements, all at compile time: the op node, its
/// arguments' nodes (shapes, dtypes, attributes) and the step's place in the plan. Kernels are
/// instantiated as `Backend::kernel<step_ref<...>>`, so every shape is a constant.
template <const auto& Module, const auto& Plan, int Step>
struct step_ref {
  static constexpr const plan_step& step = Plan.steps[static_cast<std::size_t>(Step)];
  static constexpr const graph_node& node = Module.nodes[static_cast<std::size_t>(step.node)];
  static constexpr op_id op = node.op;
  static constexpr int num_args = node.nargs;
  static constexpr int index = Step;

  /// The node of argument `i`.
  static constexpr const graph_node& arg(int i) { return Module.node(Module.arg(step.node, i)); }
};

}  // namespace partita
