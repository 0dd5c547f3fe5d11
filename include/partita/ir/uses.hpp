#pragma once
/// Use lists, liveness and dead-code removal on a module being rewritten.
#include <cstddef>
#include <vector>

#include "partita/ir/module_builder.hpp"

namespace partita::detail {

/// Which nodes of main are computed from weights alone: weights (literals included), and ops
/// other than calls whose every argument is one (`sqrt(var + eps)` of a written-out batch norm).
/// A composite may copy such a node instead of claiming it, as it copies a weight.
constexpr std::vector<char> constant_nodes(const module_builder& m) {
  const function_info& f = m.main();
  std::vector<char> c(m.nodes.size(), false);
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    const graph_node& n = m.node(i);
    bool all = n.op == op_id::weight || (!is_leaf(n.op) && n.op != op_id::call && n.nargs > 0);
    for (int k = 0; all && k < n.nargs; ++k) all = c[static_cast<std::size_t>(m.arg(i, k))] != 0;
    c[static_cast<std::size_t>(i)] = all;
  }
  return c;
}

/// Which nodes of main a composite copies instead of claiming: those computed from weights
/// alone (`constant_nodes`), and every `dequantize`. A quantized value read as floats by
/// several composites (a residual block's input, read by its convolution and by its add) is
/// dequantized inside each of them, as ONNX Runtime gives each quantized node its own
/// DequantizeLinear: otherwise the shared dequantize would keep every reader in float.
constexpr std::vector<char> copyable_nodes(const module_builder& m) {
  std::vector<char> c = constant_nodes(m);
  const function_info& f = m.main();
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i)
    if (m.node(i).op == op_id::dequantize) c[static_cast<std::size_t>(i)] = true;
  return c;
}

/// Consumers of every node of main, as a compressed list, whether main returns the node,
/// whether it is computed from weights alone (`constant_nodes`) and whether a composite copies
/// it (`copyable_nodes`).
struct use_lists {
  std::vector<int> first;  // first[n] .. first[n+1]: consumers of n
  std::vector<int> users;
  std::vector<char> returned;
  std::vector<char> constant;
  std::vector<char> copyable;

  constexpr use_lists(const module_builder& m) {
    const function_info& f = m.main();
    const int n = static_cast<int>(m.nodes.size());
    std::vector<int> count(static_cast<std::size_t>(n) + 1, 0);
    for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i)
      for (int k = 0; k < m.node(i).nargs; ++k) ++count[static_cast<std::size_t>(m.arg(i, k))];
    first.assign(static_cast<std::size_t>(n) + 1, 0);
    for (int i = 0; i < n; ++i) first[static_cast<std::size_t>(i) + 1] = first[static_cast<std::size_t>(i)] + count[static_cast<std::size_t>(i)];
    users.assign(static_cast<std::size_t>(first[static_cast<std::size_t>(n)]), 0);
    std::vector<int> fill(first.begin(), first.end() - 1);
    for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i)
      for (int k = 0; k < m.node(i).nargs; ++k) users[static_cast<std::size_t>(fill[static_cast<std::size_t>(m.arg(i, k))]++)] = i;
    returned.assign(static_cast<std::size_t>(n), false);
    returned[static_cast<std::size_t>(f.result)] = true;
    constant = constant_nodes(m);
    copyable = copyable_nodes(m);
  }
  constexpr const int* begin(int n) const { return users.data() + first.data()[n]; }
  constexpr const int* end(int n) const { return users.data() + first.data()[n + 1]; }
};

/// Whether `x` is in `v` (the lists it serves are short, so a linear scan).
constexpr bool contains(const std::vector<int>& v, int x) {
  for (int y : v)
    if (y == x) return true;
  return false;
}

/// Nodes of main reachable from its result.
constexpr std::vector<char> live_nodes(const module_builder& m) {
  const function_info& f = m.main();
  std::vector<char> live(m.nodes.size(), false);
  live[static_cast<std::size_t>(f.result)] = true;
  for (int i = f.first_node + f.num_nodes - 1; i >= f.first_node; --i)
    if (live[static_cast<std::size_t>(i)])
      for (int k = 0; k < m.node(i).nargs; ++k) live[static_cast<std::size_t>(m.arg(i, k))] = true;
  return live;
}

/// Drops nodes of main that nothing reaches any more (weights moved into composites).
constexpr module_builder remove_dead(const module_builder& m) {
  const std::vector<char> live = live_nodes(m);
  module_builder out;
  copy_functions_but_main(out, m);
  const function_info& f = m.main();
  std::vector<int> to(m.nodes.size(), -1);
  const int start = static_cast<int>(out.nodes.size());
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i)
    if (live[static_cast<std::size_t>(i)]) to[static_cast<std::size_t>(i)] = out.emit_mapped(m.node(i), m, i, to);
  finish_main(out, start, to[static_cast<std::size_t>(f.result)]);
  return out;
}

/// Keeps only the functions reachable from main through calls, renumbering them (main stays 0).
constexpr module_builder remove_dead_functions(const module_builder& m) {
  const std::size_t nf = m.functions.size();
  std::vector<int> new_index(nf, -1);
  std::vector<int> order{0};
  new_index[0] = 0;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const function_info& f = m.functions[static_cast<std::size_t>(order[k])];
    for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i)
      if (m.node(i).op == op_id::call && new_index[static_cast<std::size_t>(m.node(i).index)] < 0) {
        new_index[static_cast<std::size_t>(m.node(i).index)] = 0;  // mark; numbered below
        order.push_back(m.node(i).index);
      }
  }
  // Number in the old order so that surviving functions keep their relative order.
  int next = 1;
  for (std::size_t f = 1; f < nf; ++f)
    if (new_index[f] == 0) new_index[f] = next++;
  module_builder out;
  out.functions.resize(static_cast<std::size_t>(next));
  for (std::size_t f = 0; f < nf; ++f) {
    if (f != 0 && new_index[f] <= 0) continue;
    const function_info& old = m.functions[f];
    function_info nf_info = old;
    const int shift = static_cast<int>(out.nodes.size()) - old.first_node;
    nf_info.first_node = static_cast<int>(out.nodes.size());
    nf_info.result = old.result + shift;
    for (int i = old.first_node; i < old.first_node + old.num_nodes; ++i) {
      graph_node n = m.node(i);
      if (n.op == op_id::call) n.index = new_index[static_cast<std::size_t>(n.index)];
      out.emit_mapped(n, m, i, [shift](int a) { return a + shift; });
    }
    out.functions[static_cast<std::size_t>(new_index[f])] = nf_info;
  }
  return out;
}

}  // namespace partita::detail
