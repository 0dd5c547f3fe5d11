#pragma once
/// Which cpu steps read and write channels-last (NHWC) values: the backend's `layouts` member.
#include "partita/backends/cpu/detail/conv/conv.hpp"
#include "partita/backends/cpu/detail/conv/conv_channels_last.hpp"
#include "partita/backends/cpu/detail/conv/conv_depthwise.hpp"
#include "partita/backends/cpu/detail/conv/conv_nhwc_direct.hpp"
#include "partita/ir/layout.hpp"
#include "partita/ir/module.hpp"

namespace partita::detail::cpu {

/// True where a binary elementwise node of a rank-4 result can run channels-last: each argument
/// is an activation of the result's shape or a value of one position (`same_in_either_layout`:
/// a squeeze-and-excite block's per-channel scale, a scalar), and one is the former. Its
/// kernel then broadcasts over the channels-last order of the shapes.
template <class G>
constexpr bool channels_last_operands(const G& flat, int node) {
  const graph_node& g = flat.node(node);
  bool whole = false;
  for (int k = 0; k < g.nargs; ++k) {
    const graph_node& a = flat.node(flat.arg(node, k));
    if (a.out == g.out && a.op != op_id::weight) whole = true;
    else if (!same_in_either_layout(a.out)) return false;
  }
  return whole;
}

/// What a cpu step can do with layouts (`cpu::layouts`), from its conv2d's geometry: a
/// depthwise convolution (multiplier 1), a fused expansion (`cpu.conv2d_expand_depthwise`) and
/// a fused projection (`cpu.conv2d_depthwise_project`) keep their input's layout, and so do max
/// and average pooling of at least a vector of channels; a 1×1 convolution of stride 1 without
/// padding may write NHWC from either layout (`gathers`); the other convolutions of one group
/// (`nhwc_direct`, `nhwc_direct_wide`) and the grouped ones of whole vectors per group
/// (`nhwc_grouped_wide`) read either layout and write either (`converts`); the
/// other convolutions that copy their input into padded planes read either layout and write
/// planar, and so does a global average pooling; a binary elementwise step of an image and
/// values of one position (`channels_last_operands`) keeps its image's layout.
/// `m` is the module, `flat` the plan's graph, `node` the step's node there.
template <class M, class G>
constexpr layout_role nhwc_role(const M& m, const G& flat, int node) {
  const graph_node& g = flat.node(node);
  if (g.op == op_id::global_avg_pool2d) return layout_role::reads_either;
  if (is_binary_elementwise(g.op) && g.out.rank == 4 && channels_last_operands(flat, node)) return layout_role::same;
  // Channels-last puts a position's channels in the vector lanes: fewer than a vector of them
  // leave lanes idle, and a pooling of few channels is what keeps a convolution of few outputs
  // planar (LeNet's 6 channels: its 5×5 layer and pooling took 2 and 4 times as long in NHWC).
  if (g.op == op_id::max_pool2d || g.op == op_id::avg_pool2d)
    return g.out.rank == 4 && g.out[1] >= W ? layout_role::same : layout_role::planar;
  // Shapes and attributes copied out: a pointer into the module does not compare in a constant
  // expression on every compiler.
  shape x, w, y;
  attrs at{};
  bool found = false;
  bool input_shared = false;  // the convolution's input is also the composite's residual
  if (g.op == op_id::conv2d) {
    found = true;
    x = flat.node(flat.arg(node, 0)).out;
    w = flat.node(flat.arg(node, 1)).out;
    y = g.out;
    at = *g.at;
  } else if (g.op == op_id::call) {
    const function_info& f = m.functions[static_cast<std::size_t>(g.index)];
    // A pooled composite's buffer and pooling kernel are planar.
    if (!f.composite.starts_with("cpu.conv2d_") || f.composite.ends_with("_pool")) return layout_role::planar;
    // A fused expansion's one activation is its input, a fused projection's its input and
    // residual; the patterns' predicates have checked the rest.
    if (f.composite == "cpu.conv2d_expand_depthwise" || f.composite.starts_with("cpu.conv2d_depthwise_project"))
      return flat.node(flat.arg(node, 0)).out.rank == 4 ? layout_role::same : layout_role::planar;
    for (int i = f.first_node; i < f.first_node + f.num_nodes && !found; ++i)
      if (m.node(i).op == op_id::conv2d) {
        const graph_node& input = m.node(m.arg(i, 0));
        // The kernel reads the convolution's input as the step's first argument.
        if (input.op != op_id::param || input.index != 0) return layout_role::planar;
        found = true;
        x = input.out;
        w = m.node(m.arg(i, 1)).out;
        y = m.node(i).out;
        at = *m.node(i).at;
        for (int j = f.first_node; j < f.first_node + f.num_nodes; ++j)
          for (int k = 0; k < m.node(j).nargs; ++k)
            input_shared = input_shared || (j != i && m.arg(j, k) == m.arg(i, 0));
      }
  }
  if (!found || x.rank != 4) return layout_role::planar;
  const conv_geometry c = make_conv_geometry(x, w, y, at);
  if (is_depthwise(c)) return c.og == 1 ? layout_role::same : layout_role::planar;
  // A block adding its own input (`relu<add<conv2d<x, w>, x>>`) reads that value as the
  // convolution's input and as the residual: both in the output's layout, or the kernel would
  // read one of them in the wrong one.
  const bool writes_nhwc = nhwc_writable(c);
  if (input_shared) return writes_nhwc ? layout_role::same : layout_role::planar;
  if (c.groups == 1 && nhwc_reads_in_place(c)) return layout_role::gathers;
  // The planar kernels of the others copy the input into padded planes, from either layout.
  if (reads_input_in_place(c)) return layout_role::planar;
  if (writes_nhwc) return layout_role::converts;
  return layout_role::reads_either;
}

}  // namespace partita::detail::cpu
