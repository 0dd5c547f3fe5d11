#pragma once
/// cpu conv1d: the conv2d kernel run on the step seen as conv2d of H = 1 views.
// conv1d of [N, C, L] by [O, C / groups, K] is conv2d of [N, C, 1, L] by [O, C / groups, 1, K]:
// the same bytes, so nothing is copied. `conv1d_step` presents a conv1d step, or a composite
// built around one (bias, batch norm, residual, activation), as that conv2d step to
// `gemm_kernel`, which then packs, pads, tiles and fuses it as any conv2d; the conv1d node
// already keeps its stride, padding and dilation on the width axis.
#include <array>
#include <cstddef>

#include "partita/backends/cpu/detail/fused.hpp"
#include "partita/core/shape.hpp"
#include "partita/ir/attrs.hpp"
#include "partita/ir/module.hpp"

namespace partita::detail::cpu {

/// A rank-3 NCL (or OCK) shape as the NC1L (OC1K) shape of its H = 1 view.
constexpr shape with_unit_height(const shape& s) { return shape{4, {s[0], s[1], 1, s[2]}}; }

/// Node `n` as the conv2d kernel sees it: a conv1d becomes a conv2d (its attributes already
/// act on the width axis), every rank-3 value (input, weight, residual, output) its H = 1 view.
constexpr graph_node as_unit_height(graph_node n) {
  if (n.op == op_id::conv1d) n.op = op_id::conv2d;
  if (!n.is_tuple && n.out.rank == 3) n.out = with_unit_height(n.out);
  return n;
}

/// True for a composite step built around a conv1d (`cpu.conv1d_*`).
template <class S>
constexpr bool conv1d_composite() {
  return body_has<S>(op_id::conv1d);
}

/// conv1d step `Step`, or a composite built around one, seen as the conv2d step (or composite)
/// of its H = 1 views, for kernels written against conv2d steps.
template <class Step>
struct conv1d_step {
  static constexpr bool fused = Step::op == op_id::call;
  static_assert(Step::op == op_id::conv1d || conv1d_composite<Step>(), "partita: conv1d_step views conv1d steps only");
  static constexpr graph_node node = as_unit_height(Step::node);
  static constexpr op_id op = node.op;
  static constexpr int num_args = Step::num_args;
  static constexpr int num_params = Step::num_params;
  static constexpr int index = Step::index;
  static constexpr auto args = [] {
    std::array<graph_node, static_cast<std::size_t>(Step::num_args)> a{};
    for (int i = 0; i < Step::num_args; ++i) a[static_cast<std::size_t>(i)] = as_unit_height(Step::arg(i));
    return a;
  }();
  /// The node of argument `i`, with its H = 1 shape.
  static constexpr const graph_node& arg(int i) { return args[static_cast<std::size_t>(i)]; }
  static constexpr auto bodies = [] {
    std::array<graph_node, static_cast<std::size_t>(fused ? Step::body_size() : 1)> b{};
    if constexpr (fused)
      for (int i = 0; i < Step::body_size(); ++i) b[static_cast<std::size_t>(i)] = as_unit_height(Step::body(i));
    return b;
  }();
  static constexpr int body_size() { return fused ? Step::body_size() : 0; }
  /// Node `i` of the composite's body, as the conv2d kernel sees it.
  static constexpr const graph_node& body(int i) { return bodies[static_cast<std::size_t>(i)]; }
  static constexpr int body_arg(int i, int k) { return Step::body_arg(i, k); }
};

}  // namespace partita::detail::cpu
