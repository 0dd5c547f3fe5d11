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

/// Why a match formed no composite, for `explain`: the check that refused it and the node it
/// concerns.
struct group_verdict {
  enum class kind : unsigned char { accepted, no_match, pinned_elsewhere, claimed, escapes, predicate };
  kind what = kind::no_match;
  int node = -1;  // the node pinned elsewhere, already claimed, or whose value escapes
  int user = -1;  // where an escaping value goes (-1: main returns it)
  std::vector<int> body{};  // the refused match's nodes (filled by match_group)
};

/// Forms the group of the structural match in `st` rooted at `r` and accepts it as
/// MergeComposite would: no node pinned elsewhere or `claimed`, no interior value escaping, and
/// the predicate. Weights and nodes computed from weights alone are copied into the composite,
/// so they may be shared with anything (Relay duplicates them too).
template <class T>
constexpr bool accept_group(const module_builder& m, const T& t, const table_entry& e, int r, const use_lists& uses,
                            const match_state& st, const std::vector<char>* claimed, group& gr, group_verdict* why = nullptr) {
  const auto refuse = [why](group_verdict::kind k, int node, int user) {
    if (why) *why = {k, node, user, {}};
    return false;
  };
  const std::string_view owner = composite_backend(e.name);
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
    const std::size_t u = static_cast<std::size_t>(b);
    if (bn.op == op_id::weight) continue;
    if (!bn.pinned.empty() && bn.pinned != owner) return refuse(group_verdict::kind::pinned_elsewhere, b, -1);
    if (uses.copyable[u]) continue;
    if (claimed && (*claimed)[u]) return refuse(group_verdict::kind::claimed, b, -1);
    if (b == r) continue;
    if (uses.returned[u]) return refuse(group_verdict::kind::escapes, b, -1);  // an interior value escapes
    for (const int* c = uses.begin(b); c != uses.end(b); ++c)
      if (!contains(gr.body, *c)) return refuse(group_verdict::kind::escapes, b, *c);
  }
  std::vector<int> vars(st.var_node);
  const match_view mv(m.nodes.data(), m.args.data(), r,
                      {gr.body.data(), static_cast<int>(gr.body.size()), gr.params.data(), static_cast<int>(gr.params.size()),
                       vars.data(), t.vars.data(), static_cast<int>(t.vars.size())});
  if (!e.predicate(mv)) return refuse(group_verdict::kind::predicate, r, -1);
  if (why) *why = {group_verdict::kind::accepted, -1, -1, {}};
  return true;
}

/// How many commutative nodes of one match may have both operand orders tried after a rejected
/// match (2^8 matches at most): more than any pattern of the cpu or oneDNN tables has.
inline constexpr int max_order_choices = 8;

/// Matches table entry `e` at root `r` of main as MergeComposite would (Part 1, items 3-5 of the
/// BYOC semantics): the first match that `accept_group` accepts. When a match is rejected, the
/// other operand orders of its `add` and `multiply` nodes are tried before giving up: in
/// `x + conv(x)` with `x` itself a convolution, `add_p<conv2d_p<…>, any>` first binds `x`, whose
/// value escapes to `conv(x)`; the swapped order forms the composite. Fills `gr` when it holds.
template <class T>
constexpr bool match_group(const module_builder& m, const T& t, const table_entry& e, int r, const use_lists& uses, match_state& st,
                           group& gr, const std::vector<char>* claimed = nullptr, group_verdict* why = nullptr) {
  if (why) *why = {};
  const graph_node& g = m.node(r);
  if (is_leaf(g.op) || g.op == op_id::call) return false;
  const std::string_view owner = composite_backend(e.name);
  matcher<T> mt(t, m.nodes.data(), m.args.data(), st);
  if (!mt.looks_like(e.root, r)) return false;
  if (!g.pinned.empty() && g.pinned != owner) {  // pinned elsewhere: not for this backend
    if (why) *why = {group_verdict::kind::pinned_elsewhere, r, -1, {r}};
    return false;
  }
  int choices = 0;
  unsigned swaps = 0;
  group_verdict first{};  // the verdict on the written operand order is the one reported
  do {
    st.reset(t.vars.size(), swaps);
    const bool matched = mt.match(e.root, r);
    if (!matched && swaps == 0) return false;  // the written order and each node's swap failed alike
    choices = std::max(choices, std::min(st.choices, max_order_choices));
    group_verdict v{};
    if (matched && accept_group(m, t, e, r, uses, st, claimed, gr, &v)) {
      if (why) *why = v;
      return true;
    }
    if (swaps == 0 && why) {
      first = v;
      first.body = gr.body;
    }
  } while (++swaps < (1u << choices));
  if (why) *why = first;
  return false;
}

/// The ops of main's nodes.
constexpr op_set ops_of_main(const module_builder& m) {
  op_set s;
  const function_info& f = m.main();
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) s.insert(m.node(i).op);
  return s;
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
  const op_set present = ops_of_main(m);
  for (std::size_t k = 0; k < t.entries.size(); ++k) {
    const table_entry& e = t.entries[k];
    const std::size_t first_new = groups.size();
    if (!present.contains_all(e.needs)) continue;  // an op every match needs is not in main
    for (int r = f.first_node + f.num_nodes - 1; r >= f.first_node; --r) {
      if (claimed[static_cast<std::size_t>(r)] || !e.root_ops.contains(seen.node(r).op) ||
          !match_group(seen, t, e, r, uses, st, gr, &claimed))
        continue;
      for (int b : gr.body)
        if (!uses.copyable[static_cast<std::size_t>(b)]) claimed[static_cast<std::size_t>(b)] = true;
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
