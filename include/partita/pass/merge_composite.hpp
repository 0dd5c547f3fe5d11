#pragma once
#include <algorithm>
#include <string_view>
#include <vector>

#include "partita/pass/module_builder.hpp"
#include "partita/pattern/match.hpp"
#include "partita/pattern/table.hpp"

namespace partita {
namespace detail {

/// Consumers of every node of main, as a compressed list, plus whether main returns the node.
struct use_lists {
  std::vector<int> first;  // first[n] .. first[n+1]: consumers of n
  std::vector<int> users;
  std::vector<bool> returned;

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
  }
  constexpr const int* begin(int n) const { return users.data() + first.data()[n]; }
  constexpr const int* end(int n) const { return users.data() + first.data()[n + 1]; }
};

constexpr bool contains(const std::vector<int>& v, int x) {
  for (int y : v)
    if (y == x) return true;
  return false;
}

/// One accepted match: its root, the absorbed nodes (sorted), the parameters (in order) and the
/// composite's pattern name.
struct group {
  int root;
  std::vector<int> body;
  std::vector<int> params;
  std::string_view name{};
};

/// Nodes of main reachable from its result.
constexpr std::vector<bool> live_nodes(const module_builder& m) {
  const function_info& f = m.main();
  std::vector<bool> live(m.nodes.size(), false);
  live[static_cast<std::size_t>(f.result)] = true;
  for (int i = f.first_node + f.num_nodes - 1; i >= f.first_node; --i)
    if (live[static_cast<std::size_t>(i)])
      for (int k = 0; k < m.node(i).nargs; ++k) live[static_cast<std::size_t>(m.arg(i, k))] = true;
  return live;
}

/// Drops nodes of main that nothing reaches any more (weights moved into composites).
constexpr module_builder remove_dead(const module_builder& m) {
  const std::vector<bool> live = live_nodes(m);
  module_builder out;
  copy_functions_but_main(out, m);
  const function_info& f = m.main();
  std::vector<int> to(m.nodes.size(), -1);
  const int start = static_cast<int>(out.nodes.size());
  std::vector<int> a;
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    if (!live[static_cast<std::size_t>(i)]) continue;
    const graph_node& n = m.node(i);
    a.clear();
    for (int k = 0; k < n.nargs; ++k) a.push_back(to[static_cast<std::size_t>(m.arg(i, k))]);
    to[static_cast<std::size_t>(i)] = out.emit(n, a.data(), n.nargs);
  }
  finish_main(out, start, to[static_cast<std::size_t>(f.result)]);
  return out;
}

/// Matches table entry `e` at root `r` of main as MergeComposite would (Part 1, items 3-5 of the
/// BYOC semantics), without looking at what other matches claimed: the match, its interior
/// values not escaping, no node pinned elsewhere, and the predicate. Fills `gr` when it holds.
template <class T>
constexpr bool match_group(const module_builder& m, const T& t, const table_entry& e, int r, const use_lists& uses, match_state& st,
                           group& gr) {
  const graph_node& g = m.node(r);
  if (is_leaf(g.op) || g.op == op_id::call) return false;
  const std::string_view owner = composite_backend(e.name);
  if (!g.pinned.empty() && g.pinned != owner) return false;  // pinned elsewhere: not for this backend
  matcher<T> mt(t, m.nodes.data(), m.args.data(), st);
  if (!mt.looks_like(e.root, r)) return false;
  st.reset(t.vars.size());
  if (!mt.match(e.root, r)) return false;

  gr = group{r, {}, {}, e.name};
  for (int b : st.body)
    if (!contains(gr.body, b)) gr.body.push_back(b);
  std::sort(gr.body.begin(), gr.body.end());
  for (int p : st.params)
    if (!contains(gr.params, p) && !contains(gr.body, p)) gr.params.push_back(p);
  // Arguments of absorbed nodes that the pattern walked past (dominator paths) are parameters.
  for (int b : gr.body)
    for (int k = 0; k < m.node(b).nargs; ++k) {
      const int a = m.arg(b, k);
      if (!contains(gr.body, a) && !contains(gr.params, a)) gr.params.push_back(a);
    }

  for (int b : gr.body) {
    const graph_node& bn = m.node(b);
    if (bn.op == op_id::weight) continue;  // weights are copied into the composite, not moved
    if (!bn.pinned.empty() && bn.pinned != owner) return false;
    if (b == r) continue;
    if (uses.returned[static_cast<std::size_t>(b)]) return false;  // an interior value escapes
    for (const int* u = uses.begin(b); u != uses.end(b); ++u)
      if (!contains(gr.body, *u)) return false;
  }
  std::vector<int> vars(st.var_node);
  const match_view mv(m.nodes.data(), m.args.data(), r,
                      {gr.body.data(), static_cast<int>(gr.body.size()), gr.params.data(), static_cast<int>(gr.params.size()),
                       vars.data(), t.vars.data(), static_cast<int>(t.vars.size())});
  return e.predicate(mv);
}

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
    fn.name_chars[static_cast<std::size_t>(fn.name_length < 63 ? fn.name_length++ : 63)] = '_';
    append_number(fn, static_cast<int>(out.functions.size()));
    fn.composite = gr.name;
    fn.first_node = static_cast<int>(out.nodes.size());
    fn.num_params = static_cast<int>(gr.params.size());
    for (int k = 0; k < fn.num_params; ++k) {
      const graph_node& src = m.node(gr.params[static_cast<std::size_t>(k)]);
      graph_node p{op_id::param, src.type, src.out, &no_attrs, {}, 0, 0, src.is_tuple};
      p.index = k;
      to[static_cast<std::size_t>(gr.params[static_cast<std::size_t>(k)])] = out.emit(p, nullptr, 0);
    }
    for (int b : gr.body) {
      graph_node n = m.node(b);
      if (keep_placement) {  // placement is the call's
        n.target = {};
        n.region = -1;
      }
      a.clear();
      for (int k = 0; k < n.nargs; ++k) a.push_back(to[static_cast<std::size_t>(m.arg(b, k))]);
      to[static_cast<std::size_t>(b)] = out.emit(n, a.data(), n.nargs);
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
    if (!keep[static_cast<std::size_t>(i)]) continue;
    for (int k = 0; k < n.nargs; ++k) a.push_back(to[static_cast<std::size_t>(m.arg(i, k))]);
    to[static_cast<std::size_t>(i)] = out.emit(n, a.data(), n.nargs);
  }
  finish_main(out, start, to[static_cast<std::size_t>(f.result)]);
  return remove_dead(out);
}

/// Applies table entry `e` to main (Part 1, items 3-5 of the BYOC semantics): roots from the
/// outputs towards the inputs, each accepted match claiming its nodes.
template <class T>
constexpr module_builder apply_pattern(const module_builder& m, const T& t, const table_entry& e) {
  const function_info& f = m.main();
  const use_lists uses(m);
  std::vector<bool> claimed(m.nodes.size(), false);
  std::vector<group> groups;
  match_state st;
  group gr{};
  for (int r = f.first_node + f.num_nodes - 1; r >= f.first_node; --r) {
    if (claimed[static_cast<std::size_t>(r)] || !match_group(m, t, e, r, uses, st, gr)) continue;
    bool free = true;
    for (int b : gr.body) free = free && (m.node(b).op == op_id::weight || !claimed[static_cast<std::size_t>(b)]);
    if (!free) continue;
    for (int b : gr.body)
      if (m.node(b).op != op_id::weight) claimed[static_cast<std::size_t>(b)] = true;
    groups.push_back(gr);
  }
  if (groups.empty()) return m;
  return outline_composites(m, std::move(groups));
}

template <class T>
constexpr module_builder merge_composite(module_builder m, const T& t) {
  for (const table_entry& e : t.entries) m = apply_pattern(m, t, e);
  return m;
}

template <class M, class Table>
struct merge_composite_pass {
  static constexpr module_builder run() { return merge_composite(to_builder(M::value), Table::value); }
};

}  // namespace detail

/// MergeComposite: applies the patterns of `Table` to `main` one after another, in table
/// order; each accepted match becomes a composite function and a call to it. Functions other
/// than main (earlier composites, partitions) are left untouched.
template <module_type M, class Table>
struct merge_composite : detail::module_from<detail::merge_composite_pass<M, Table>> {};

}  // namespace partita
