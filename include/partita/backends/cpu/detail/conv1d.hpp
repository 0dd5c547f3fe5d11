#pragma once
/// cpu conv1d: the conv2d kernel run on the step seen as conv2d of H = 1 views.
// conv1d of [N, C, L] by [O, C / groups, K] is conv2d of [N, C, 1, L] by [O, C / groups, 1, K]:
// the same bytes, so nothing is copied. `conv1d_step` presents a conv1d step as that conv2d step
// (its node, arguments and attributes) to `gemm_kernel`, which then packs, pads and tiles it as
// any conv2d; the conv1d node already keeps its stride, padding and dilation on the width axis.
#include "partita/core/shape.hpp"
#include "partita/ir/attrs.hpp"
#include "partita/ir/module.hpp"

namespace partita::detail::cpu {

/// A rank-3 NCL (or OCK) shape as the NC1L (OC1K) shape of its H = 1 view.
constexpr shape with_unit_height(const shape& s) { return shape{4, {s[0], s[1], 1, s[2]}}; }

/// conv1d step `Step` seen as a conv2d step, for kernels written against conv2d steps.
template <class Step>
struct conv1d_step {
  static_assert(Step::op == op_id::conv1d, "partita: conv1d_step views conv1d steps only");
  static constexpr attrs at = *Step::node.at;
  static constexpr graph_node node = [] {
    graph_node n = Step::node;
    n.op = op_id::conv2d;
    n.out = with_unit_height(n.out);
    n.at = &at;
    return n;
  }();
  static constexpr op_id op = op_id::conv2d;
  static constexpr int num_args = Step::num_args;
  static constexpr int num_params = Step::num_params;
  static constexpr int index = Step::index;
  static constexpr graph_node args[2] = {[] {
                                           graph_node n = Step::arg(0);
                                           n.out = with_unit_height(n.out);
                                           return n;
                                         }(),
                                         [] {
                                           graph_node n = Step::arg(1);
                                           n.out = with_unit_height(n.out);
                                           return n;
                                         }()};
  /// The node of argument `i` (the input, the weight), with its H = 1 shape.
  static constexpr const graph_node& arg(int i) { return args[i]; }
  // A conv1d step is no composite: the kernel names these only in branches it does not take.
  static constexpr const graph_node& body(int i) { return Step::body(i); }
  static constexpr int body_arg(int i, int k) { return Step::body_arg(i, k); }
};

}  // namespace partita::detail::cpu
