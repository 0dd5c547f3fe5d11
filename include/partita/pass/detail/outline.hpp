#pragma once
/// Outlining: disjoint groups of main's nodes become composite functions and calls to them.
#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

#include "partita/ir/module_builder.hpp"
#include "partita/ir/uses.hpp"

namespace partita::detail {

/// One accepted match: its root, the absorbed nodes (sorted), the parameters (in order) and the
/// composite's pattern name.
struct group {
  int root;
  std::vector<int> body;
  std::vector<int> params;
  std::string_view name{};
};

/// Outlines disjoint groups of main into composite functions (numbered in graph order) and
/// replaces each root by a call on the group's parameters. With `keep_placement`, each call
/// keeps its root's target and region (the cost-based flow decides them before outlining).
constexpr module_builder outline_composites(const module_builder& m, std::vector<group> groups, bool keep_placement = false) {
  std::sort(groups.begin(), groups.end(), [](const group& a, const group& b) { return a.root < b.root; });
  const function_info& f = m.main();
  module_builder out;
  copy_functions_but_main(out, m);
  std::vector<int> callee_of(m.nodes.size(), -1);
  std::vector<int> to(m.nodes.size(), -1);  // old node → node of the composite being built
  std::vector<int> a;
  for (const group& gr : groups) {
    function_info fn{};
    sanitize_into(fn, gr.name);
    append_text(fn, "_");
    append_number(fn, static_cast<int>(out.functions.size()));
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

  // Main: each root becomes a call of its composite on the parameters; absorbed nodes go.
  std::vector<bool> keep(m.nodes.size(), true);
  std::vector<const group*> group_at(m.nodes.size(), nullptr);
  for (const group& gr : groups) {
    for (int b : gr.body)
      if (m.node(b).op != op_id::weight) keep[static_cast<std::size_t>(b)] = false;
    group_at[static_cast<std::size_t>(gr.root)] = &gr;
  }
  const int start = static_cast<int>(out.nodes.size());
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    const graph_node& n = m.node(i);
    a.clear();
    if (const group* gr = group_at[static_cast<std::size_t>(i)]) {
      for (int p : gr->params) a.push_back(to[static_cast<std::size_t>(p)]);
      graph_node c{op_id::call, n.type, n.out, &no_attrs, {}, 0, 0, n.is_tuple};
      c.index = callee_of[static_cast<std::size_t>(i)];
      if (keep_placement) {
        c.target = n.target;
        c.region = n.region;
      }
      to[static_cast<std::size_t>(i)] = out.emit(c, a.data(), static_cast<int>(a.size()));
      continue;
    }
    if (keep[static_cast<std::size_t>(i)]) to[static_cast<std::size_t>(i)] = out.emit_mapped(n, m, i, to);
  }
  finish_main(out, start, to[static_cast<std::size_t>(f.result)]);
  return remove_dead(out);
}

}  // namespace partita::detail
