#pragma once
/// Outlining: disjoint groups of main's nodes become composite functions and calls to them.
#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

#include "partita/ir/module_builder.hpp"
#include "partita/ir/uses.hpp"
#include "partita/pass/detail/dedup.hpp"

namespace partita::detail {

/// One accepted match: its root, the absorbed nodes (sorted), the parameters (in order), the
/// composite's pattern name and its rank (the pattern table entry it came from).
struct group {
  int root;
  std::vector<int> body;
  std::vector<int> params;
  std::string_view name{};
  int rank = 0;
};

// `outline_composites` is a template of nothing: compiled where a model is, not in every file.
/// Outlines disjoint groups of main into composite functions and replaces each root by a call
/// on the group's parameters; identical composites (same pattern, body and weights) become one
/// function called from each place (`dedup_functions`). A composite is named `<pattern>_<k>`, k counting the composites
/// of that pattern (those of earlier runs first, then these in graph order), so that a match of
/// another pattern, or a node added elsewhere, renames nothing. With `keep_placement`,
/// each call keeps its root's target and region (the cost-based flow decides them before
/// outlining).
template <class = void>
constexpr module_builder outline_composites(const module_builder& m, std::vector<group> groups, bool keep_placement = false) {
  // Numbering by rank first gives the functions the numbers that applying each table entry in
  // turn, outlining after each, would give them. (Indices are sorted: moving groups is dearer.)
  std::vector<int> order(groups.size(), 0);
  for (std::size_t g = 0; g < groups.size(); ++g) order[g] = static_cast<int>(g);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    const group& x = groups[static_cast<std::size_t>(a)];
    const group& y = groups[static_cast<std::size_t>(b)];
    return x.rank != y.rank ? x.rank < y.rank : x.root < y.root;
  });
  const function_info& f = m.main();
  module_builder out;
  out.nodes.reserve(m.nodes.size() + groups.size() * 2);
  out.args.reserve(m.args.size() + groups.size() * 4);
  out.functions.reserve(m.functions.size() + groups.size());
  copy_functions_but_main(out, m);
  std::vector<int> callee_of(m.nodes.size(), -1);
  function_namer namer;
  std::vector<int> to(m.nodes.size(), -1);  // old node → node of the composite being built
  std::vector<int> a;
  for (int g : order) {
    const group& gr = groups[static_cast<std::size_t>(g)];
    function_info fn{};
    namer.name(fn, out, gr.name, {}, {}, gr.name);
    fn.composite = gr.name;
    fn.first_node = static_cast<int>(out.nodes.size());
    fn.num_params = static_cast<int>(gr.params.size());
    emit_params(out, m, gr.params, to);
    for (int b : gr.body) {
      graph_node n = m.node(b);
      if (keep_placement) {  // placement is the call's
        n.target = {};
        n.region = -1;
      }
      to[static_cast<std::size_t>(b)] = out.emit_mapped(n, m, b, to);
    }
    fn.result = to[static_cast<std::size_t>(gr.root)];
    fn.num_nodes = static_cast<int>(out.nodes.size()) - fn.first_node;
    callee_of[static_cast<std::size_t>(gr.root)] = static_cast<int>(out.functions.size());
    out.functions.push_back(fn);
    for (int p : gr.params) to[static_cast<std::size_t>(p)] = -1;  // reset only what this group set
    for (int b : gr.body) to[static_cast<std::size_t>(b)] = -1;
  }

  // Main: each root becomes a call of its composite on the parameters; absorbed nodes go, and
  // so does whatever only they read (weights bound into composites): a node stays when the
  // result, a kept node or a call reads it.
  std::vector<const group*> group_at(m.nodes.size(), nullptr);
  for (const group& gr : groups) group_at[static_cast<std::size_t>(gr.root)] = &gr;
  // Weights, what is computed from them alone and dequantizations are copied into composites,
  // not moved (`copyable_nodes`): one that another node reads stays in main.
  const std::vector<char> copyable = copyable_nodes(m);
  std::vector<char> absorbed(m.nodes.size(), false);
  for (const group& gr : groups)
    for (int b : gr.body)
      if (b != gr.root && !copyable[static_cast<std::size_t>(b)]) absorbed[static_cast<std::size_t>(b)] = true;
  std::vector<char> live(m.nodes.size(), false);
  live[static_cast<std::size_t>(f.result)] = true;
  for (int i = f.first_node + f.num_nodes - 1; i >= f.first_node; --i) {
    const std::size_t u = static_cast<std::size_t>(i);
    if (!live[u]) continue;
    if (const group* gr = group_at[u]) {
      for (int p : gr->params) live[static_cast<std::size_t>(p)] = true;
    } else {
      for (int k = 0; k < m.node(i).nargs; ++k) live[static_cast<std::size_t>(m.arg(i, k))] = true;
    }
  }
  const int start = static_cast<int>(out.nodes.size());
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    const std::size_t u = static_cast<std::size_t>(i);
    if (!live[u]) continue;
    const graph_node& n = m.node(i);
    if (const group* gr = group_at[u]) {
      a.clear();
      for (int p : gr->params) a.push_back(to[static_cast<std::size_t>(p)]);
      graph_node c{op_id::call, n.type, n.out, &no_attrs, {}, 0, 0, n.is_tuple};
      c.index = callee_of[u];
      if (keep_placement) {
        c.target = n.target;
        c.region = n.region;
      }
      to[u] = out.emit(c, a.data(), static_cast<int>(a.size()));
    } else if (!absorbed[u]) {
      to[u] = out.emit_mapped(n, m, i, to);
    }
  }
  finish_main(out, start, to[static_cast<std::size_t>(f.result)]);
  return dedup_functions(out);
}

}  // namespace partita::detail
