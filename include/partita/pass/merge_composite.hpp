#pragma once
/// MergeComposite: pattern-table matches of main become composite functions.
#include <algorithm>
#include <string_view>
#include <vector>

#include "partita/ir/module_builder.hpp"
#include "partita/ir/uses.hpp"
#include "partita/pass/detail/outline.hpp"
#include "partita/pattern/match.hpp"
#include "partita/pattern/table.hpp"

namespace partita {

/// MergeComposite: applies the patterns of `Table` to `main` one after another, in table
/// order; each accepted match becomes a composite function and a call to it. Functions other
/// than main (earlier composites, partitions) are left untouched.
template <module_type M, class Table>
struct merge_composite;

namespace detail {

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

/// Applies the entries of table `t` to main one after another (Part 1, items 3-5 of the BYOC
/// semantics): for each entry, roots from the outputs towards the inputs, each accepted match
/// claiming its nodes; then outlines every accepted match at once.
///
/// Outlining once instead of after every entry is what keeps the pass linear in the model's
/// size for a table of many entries. It is the same rewrite: a claimed node is absent for later
/// entries (the `free` test), its users outside the match are unchanged (interior values never
/// escape), and a claimed root is shown to later entries as the call it becomes.
template <class T>
constexpr module_builder merge_composite(module_builder m, const T& t) {
  const function_info& f = m.main();
  const use_lists uses(m);
  std::vector<char> claimed(m.nodes.size(), false);
  std::vector<group> groups;
  match_state st;
  group gr{};
  // Matching reads `seen`: main as later entries see it, each claimed root already a call.
  module_builder seen;
  seen.nodes = m.nodes;
  seen.args = m.args;
  for (std::size_t k = 0; k < t.entries.size(); ++k) {
    const table_entry& e = t.entries[k];
    const std::size_t first_new = groups.size();
    for (int r = f.first_node + f.num_nodes - 1; r >= f.first_node; --r) {
      if (claimed[static_cast<std::size_t>(r)] || !e.root_ops.contains(seen.node(r).op) ||
          !match_group(seen, t, e, r, uses, st, gr))
        continue;
      bool free = true;
      for (int b : gr.body) free = free && (m.node(b).op == op_id::weight || !claimed[static_cast<std::size_t>(b)]);
      if (!free) continue;
      for (int b : gr.body)
        if (m.node(b).op != op_id::weight) claimed[static_cast<std::size_t>(b)] = true;
      gr.rank = static_cast<int>(k);
      groups.push_back(gr);
    }
    for (std::size_t g = first_new; g < groups.size(); ++g) {
      graph_node& root = seen.nodes[static_cast<std::size_t>(groups[g].root)];
      root.op = op_id::call;
      root.at = &no_attrs;
    }
  }
  if (groups.empty()) return m;
  return outline_composites(m, std::move(groups));
}

template <class M, class Table>
struct merge_composite_pass {
  using input = M;
  static constexpr module_builder run() { return merge_composite(to_builder(M::value), Table::value); }
};

}  // namespace detail

template <module_type M, class Table>
struct merge_composite : detail::module_from<detail::merge_composite_pass<M, Table>> {};

}  // namespace partita
