#pragma once
/// "Why was this not offloaded?": `explain<Model, Backends...>()`, the placement report of the
/// eager flow. For every op of the model: where it runs and why, and for every other backend why
/// not there.
#include <array>
#include <cstddef>
#include <string_view>
#include <vector>

#include "partita/backend/backend.hpp"
#include "partita/ir/module_builder.hpp"
#include "partita/ir/uses.hpp"
#include "partita/ir/view.hpp"
#include "partita/pass/annotate_target.hpp"
#include "partita/pass/explanation.hpp"
#include "partita/pass/merge_composite.hpp"
#include "partita/pass/merge_regions.hpp"
#include "partita/pass/partition_graph.hpp"
#include "partita/pass/pipeline.hpp"
#include "partita/pass/prune_partitions.hpp"

namespace partita {

namespace detail {

template <class L>
struct pass_items;
template <class... Ps>
struct pass_items<pass_list<Ps...>> {
  template <class F>
  static constexpr void each(F&& f) {
    (f.template operator()<Ps>(), ...);
  }
};

template <class P>
inline constexpr std::string_view pass_label = "a post_partition pass";
template <fixed_string B, int N>
inline constexpr std::string_view pass_label<passes::prune_partitions<B, N>> = "prune_partitions";
template <class B>
inline constexpr std::string_view pass_label<passes::host_fallback<B>> = "host_fallback";

/// Nodes of `after`'s main matched to nodes of `before`'s main (-1: gone), for a pass that keeps
/// main's nodes in order and drops some (MergeComposite: absorbed nodes go, a composite's root
/// becomes its call): a node of `before` is the next node of `after` with its op (a call for a
/// root), dtype, shape and name whose arguments are the matches of its own.
constexpr std::vector<int> align_main(const module_builder& before, const module_builder& after, const std::vector<char>& root) {
  std::vector<int> to(before.nodes.size(), -1);
  const function_info fb = before.main();
  const function_info fa = after.main();
  int j = fa.first_node;
  for (int i = fb.first_node; i < fb.first_node + fb.num_nodes && j < fa.first_node + fa.num_nodes; ++i) {
    const graph_node& x = before.node(i);
    const graph_node& y = after.node(j);
    const bool is_root = root[static_cast<std::size_t>(i)] != 0;
    bool same = (is_root ? y.op == op_id::call : y.op == x.op) && y.type == x.type && y.out == x.out && y.name == x.name;
    if (same && !is_root && y.nargs == x.nargs)
      for (int k = 0; k < x.nargs; ++k) same = same && to[static_cast<std::size_t>(before.arg(i, k))] == after.arg(j, k);
    if (same) to[static_cast<std::size_t>(i)] = j++;
  }
  return to;
}

template <class... Backends>
struct explainer {
  static constexpr std::size_t nb = sizeof...(Backends);
  static constexpr std::array<std::string_view, nb> names{std::string_view(Backends::name)...};
  static constexpr std::array<bool, nb> hosts{is_host_backend<Backends>...};

  static constexpr int index_of(std::string_view name) {
    for (std::size_t b = 0; b < nb; ++b)
      if (names[b] == name) return static_cast<int>(b);
    return -1;
  }
  static constexpr std::string_view host_name() {
    std::string_view h{};
    for (std::size_t b = 0; b < nb; ++b)
      if (hosts[b]) h = names[b];
    return h;
  }

  /// The report for module `m0` (main as the pattern tables see it), written into `out` (one
  /// entry per op of main, in order).
  template <std::size_t NB>
  static constexpr void run(const module_builder& m0, std::vector<op_placement<NB>>& out) {
    const function_info f = m0.main();
    const std::size_t n = m0.nodes.size();
    const use_lists uses(m0);
    std::vector<int> owner(n, -1), root_of(n, -1);
    std::vector<std::string_view> pattern_of(n);
    std::vector<refusal_info> refused(n * nb);
    std::vector<char> claimed(n, false), is_root(n, false);

    // MergeComposite over every backend's table in turn, recording claims and refused matches.
    module_builder seen;
    seen.nodes = m0.nodes;
    seen.args = m0.args;
    match_state st;
    group gr{};
    std::size_t bi = 0;
    (composites_of_backend<Backends>(m0, seen, uses, st, gr, bi++, owner, root_of, pattern_of, refused, claimed, is_root), ...);

    // Annotation, regions, partitions and post_partition passes, run for real.
    module_builder m1 = m0;
    ((m1 = backend_patterns<Backends>(std::move(m1))), ...);
    const std::vector<int> to1 = align_main(m0, m1, is_root);
    const module_builder m3 = merge_regions(annotate_target<Backends...>(m1));
    std::vector<function_info> holder;
    module_builder parts = partition_graph(m3, &holder);
    std::vector<std::string_view> given_by(m3.nodes.size());  // a given-back partition's pass
    std::vector<int> given_backend(m3.nodes.size(), -1);
    std::size_t pb = 0;
    (post_passes<Backends>(parts, holder, given_by, given_backend, pb++), ...);

    for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
      const graph_node& g = m0.node(i);
      if (is_leaf(g.op)) continue;
      const std::size_t u = static_cast<std::size_t>(i);
      op_placement<NB> p{};
      p.node = i;
      p.op = g.op;
      const op_view v(m0.nodes.data(), m0.args.data(), i);
      if (owner[u] >= 0) {
        p.backend = names[static_cast<std::size_t>(owner[u])];
        p.how = placement::composite;
        p.pattern = pattern_of[u];
        p.root = root_of[u];
      } else if (!g.pinned.empty()) {
        p.backend = g.pinned;
        p.how = placement::pinned;
      } else if (g.op != op_id::tuple && g.op != op_id::get && !first_supporting<Backends...>(v).empty()) {
        p.backend = first_supporting<Backends...>(v);
        p.how = placement::supports;
      } else {
        p.backend = host_name();
        p.how = placement::host;
      }
      // The partition: the node's own in main after MergeComposite, or its composite's root's.
      const int at1 = to1[static_cast<std::size_t>(p.how == placement::composite ? p.root : i)];
      if (at1 >= 0) {
        const std::size_t a = static_cast<std::size_t>(at1);
        p.partition = holder[a];
        if (given_backend[a] >= 0) {
          refusal_info& r = p.not_on[static_cast<std::size_t>(given_backend[a])];
          r = {refusal::given_back, p.pattern, -1, -1, -1, given_by[a]};
          p.backend = host_name();
          p.how = placement::given_back;
          p.partition = function_info{};
        } else {
          merge_blocked(m3, at1, p, to1);
        }
      }
      const int chosen = index_of(p.backend);
      // Outside a composite, why its own backend's patterns did not fuse it, if one matched.
      if (p.how != placement::composite && chosen >= 0) p.unfused = refused[u * nb + static_cast<std::size_t>(chosen)];
      for (std::size_t b = 0; b < nb; ++b) {
        refusal_info& r = p.not_on[b];
        if (static_cast<int>(b) == chosen || r.why == refusal::given_back) continue;
        if (!g.pinned.empty() && g.pinned != names[b]) {
          r.why = refusal::pinned_elsewhere;
        } else if (refused[u * nb + b].why != refusal::none) {
          r = refused[u * nb + b];
        } else if (hosts[b]) {
          r.why = refusal::host_only_rest;
        } else if (p.how == placement::composite && supports_at(b, v)) {
          r = {refusal::composite_first, p.pattern, p.root, -1, -1, {}};
        } else if (g.op != op_id::tuple && g.op != op_id::get && supports_at(b, v)) {
          r.why = refusal::earlier_backend;
        } else {
          r.why = refusal::unsupported;
        }
      }
      out.push_back(p);
    }
  }

  template <class B>
  static constexpr bool claims_alone(const op_view& v) {
    return !is_host_backend<B> && backend_supports<B>(v);
  }
  /// Whether backend number `b` (not a host) would take op `v` alone.
  static constexpr bool supports_at(std::size_t b, const op_view& v) {
    constexpr std::array<bool (*)(const op_view&), nb> claims{&claims_alone<Backends>...};
    return claims[b](v);
  }

  template <class B>
  static constexpr void composites_of_backend(const module_builder& m0, module_builder& seen, const use_lists& uses, match_state& st,
                                              group& gr, std::size_t b, std::vector<int>& owner, std::vector<int>& root_of,
                                              std::vector<std::string_view>& pattern_of, std::vector<refusal_info>& refused,
                                              std::vector<char>& claimed, std::vector<char>& is_root) {
    if constexpr (requires { B::patterns::value; }) {
      const auto& t = B::patterns::value;
      const function_info f = m0.main();
      for (std::size_t k = 0; k < t.entries.size(); ++k) {
        const table_entry& e = t.entries[k];
        std::vector<int> new_roots;
        for (int r = f.first_node + f.num_nodes - 1; r >= f.first_node; --r) {
          if (claimed[static_cast<std::size_t>(r)] || !e.root_ops.contains(seen.node(r).op)) continue;
          group_verdict why{};
          if (match_group(seen, t, e, r, uses, st, gr, &claimed, &why)) {
            for (int x : gr.body) {
              const std::size_t u = static_cast<std::size_t>(x);
              if (m0.node(x).op == op_id::weight) continue;
              if (!uses.copyable[u]) claimed[u] = true;
              if (owner[u] < 0) {
                owner[u] = static_cast<int>(b);
                root_of[u] = r;
                pattern_of[u] = e.name;
              }
            }
            is_root[static_cast<std::size_t>(r)] = true;
            new_roots.push_back(r);
            continue;
          }
          if (why.what == group_verdict::kind::no_match || why.what == group_verdict::kind::accepted) continue;
          const refusal kind = why.what == group_verdict::kind::predicate  ? refusal::predicate
                               : why.what == group_verdict::kind::escapes  ? refusal::escapes
                               : why.what == group_verdict::kind::claimed  ? refusal::overlaps
                                                                           : refusal::pinned_elsewhere;
          for (int x : why.body) {
            if (is_leaf(m0.node(x).op)) continue;
            refusal_info& ri = refused[static_cast<std::size_t>(x) * nb + b];
            if (ri.why == refusal::none) ri = {kind, e.name, r, why.node, why.user, {}};
          }
        }
        for (int r : new_roots) {
          graph_node& root = seen.nodes[static_cast<std::size_t>(r)];
          root.op = op_id::call;
          root.at = &no_attrs;
        }
      }
    }
  }

  /// Runs backend `B`'s post_partition passes one at a time on `parts`, noting for each node of
  /// the regions module whose partition a pass gave back which pass it was.
  template <class B>
  static constexpr void post_passes(module_builder& parts, const std::vector<function_info>& holder, std::vector<std::string_view>& given_by,
                                    std::vector<int>& given_backend, std::size_t b) {
    if constexpr (requires { typename B::post_partition; }) {
      pass_items<typename B::post_partition>::each([&]<class P>() {
        module_builder next = P::run(parts);
        for (std::size_t i = 0; i < holder.size(); ++i) {
          if (holder[i].name().empty() || given_backend[i] >= 0) continue;
          bool before = false, after = false;
          for (const function_info& fn : parts.functions) before = before || fn.name() == holder[i].name();
          for (const function_info& fn : next.functions) after = after || fn.name() == holder[i].name();
          if (before && !after) {
            given_by[i] = pass_label<P>;
            const int owner = index_of(holder[i].backend);
            given_backend[i] = owner >= 0 ? owner : static_cast<int>(b);
          }
        }
        parts = std::move(next);
      });
    }
  }

  /// Whether the region of node `at` of the regions module `m3` could not take an argument on
  /// the same backend, and through which node of another backend the merge would have closed a
  /// cycle; recorded in `m0`'s numbering.
  template <std::size_t NB>
  static constexpr void merge_blocked(const module_builder& m3, int at, op_placement<NB>& p, const std::vector<int>& to1) {
    const graph_node& g = m3.node(at);
    if (g.target.empty()) return;
    const function_info f = m3.main();
    for (int k = 0; k < g.nargs; ++k) {
      const int a = m3.arg(at, k);
      const graph_node& an = m3.node(a);
      if (an.target != g.target || an.region == g.region || an.region < 0) continue;
      // Nodes between `a` and `at` on a path from one to the other: reached from `a` going
      // forwards, and reaching `at` going backwards.
      std::vector<char> reaches(m3.nodes.size(), false), reached(m3.nodes.size(), false);
      reaches[static_cast<std::size_t>(at)] = true;
      for (int i = at; i > a; --i)
        if (reaches[static_cast<std::size_t>(i)])
          for (int q = 0; q < m3.node(i).nargs; ++q) reaches[static_cast<std::size_t>(m3.arg(i, q))] = true;
      reached[static_cast<std::size_t>(a)] = true;
      for (int i = a + 1; i < at && i < f.first_node + f.num_nodes; ++i) {
        for (int q = 0; q < m3.node(i).nargs; ++q) reached[static_cast<std::size_t>(i)] = reached[static_cast<std::size_t>(i)] || reached[static_cast<std::size_t>(m3.arg(i, q))];
        if (!reached[static_cast<std::size_t>(i)] || !reaches[static_cast<std::size_t>(i)] || m3.node(i).target == g.target) continue;
        p.merge_blocked_with = back(to1, a);
        p.merge_blocked_through = back(to1, i);
        return;
      }
    }
  }
  static constexpr int back(const std::vector<int>& to1, int j) {
    for (std::size_t i = 0; i < to1.size(); ++i)
      if (to1[i] == j) return static_cast<int>(i);
    return -1;
  }
};

/// The module the pattern tables see: `M` after every backend's pre_partition passes.
template <class M, class... Backends>
struct prepared_phase {
  using input = module_type_t<M>;
  static constexpr module_builder run() {
    module_builder m = to_builder(module_type_t<M>::value);
    ((m = pre_partition<Backends>(std::move(m))), ...);
    return m;
  }
};
template <class M, class... Backends>
struct prepared_of : module_from<prepared_phase<M, Backends...>> {};

template <class M>
constexpr std::size_t count_ops() {
  const auto& m = M::value;
  std::size_t n = 0;
  for (int i = m.main().first_node; i < m.main().first_node + m.main().num_nodes; ++i) n += !is_leaf(m.node(i).op);
  return n;
}

}  // namespace detail

/// The placement report of `partition<Model, Backends...>` (the eager flow): for every op of the
/// model, as the pattern tables see it (after the backends' pre_partition passes; `print` of
/// `module_of<Model>` numbers the same nodes when there are none), the backend that runs it and
/// how it got there, the partition that holds it, and for every other backend the reason it does
/// not run it. Usable in `static_assert`; `to_string(report)` prints it.
template <class Model, class... Backends>
constexpr auto explain() {
  using m0_t = detail::prepared_of<Model, Backends...>;
  constexpr std::size_t n = detail::count_ops<m0_t>();
  constexpr std::size_t nb = sizeof...(Backends);
  std::vector<op_placement<nb>> ops;
  detail::explainer<Backends...>::run(detail::to_builder(m0_t::value), ops);
  explanation<n, nb> e{};
  e.backends = detail::explainer<Backends...>::names;
  for (std::size_t i = 0; i < n && i < ops.size(); ++i) e.ops[i] = ops[i];
  return e;
}

}  // namespace partita
