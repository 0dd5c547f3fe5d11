#pragma once
/// The cost planner: candidates per backend, the cheapest cover of main and its application.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "partita/backend/backend.hpp"
#include "partita/backend/cost.hpp"
#include "partita/ir/uses.hpp"
#include "partita/pass/cost/config.hpp"
#include "partita/pass/cost/detail/cost_graph.hpp"
#include "partita/pass/cost/detail/cover.hpp"
#include "partita/pass/detail/outline.hpp"
#include "partita/pass/merge_composite.hpp"
#include "partita/pass/partition_graph.hpp"

namespace partita::detail {

/// What the search computes for a module (main's nodes after the pre-partition phase).
template <std::size_t N>
struct cost_choice_value {
  std::array<node_choice, N> nodes{};
  search_stats stats{};
  bool complete = true;
};

/// The candidates, the search and coalescing for `Backends...` (priority order).
template <class Config, class... Bs>
struct cost_planner {
  static constexpr int num_backends = static_cast<int>(sizeof...(Bs));
  /// The backend that takes what no other runs: the last host backend listed.
  static constexpr int host = [] {
    constexpr bool h[] = {is_host_backend<Bs>...};
    for (int i = num_backends - 1; i >= 0; --i)
      if (h[i]) return i;
    return -1;
  }();
  static constexpr std::array<std::string_view, sizeof...(Bs)> names{std::string_view(Bs::name)...};

  /// The index of the backend named `name`, or -1 (an empty name too).
  static constexpr int index_of(std::string_view name) {
    const std::size_t i = backend_index<Bs...>(name);
    return !name.empty() && i < sizeof...(Bs) ? static_cast<int>(i) : -1;
  }

  struct candidates {
    std::vector<cost_candidate> list;
    index_table sets;  // (backend, nodes) → candidate, to keep each set once
  };

  static constexpr std::uint64_t set_key(int backend, const std::vector<int>& nodes) {
    std::uint64_t h = hash_mix(0xbb67ae8584caa73bull, static_cast<std::uint64_t>(backend));
    for (int i : nodes) h = hash_mix(h, static_cast<std::uint64_t>(i));
    return h;
  }

  /// Whether backend `bi` already has a candidate with these nodes.
  static constexpr bool known(const candidates& cs, int bi, const std::vector<int>& nodes) {
    return cs.sets.find(set_key(bi, nodes), [&](int o) {
      const cost_candidate& other = cs.list[static_cast<std::size_t>(o)];
      return other.backend == bi && other.nodes == nodes;
    }) >= 0;
  }

  /// Adds `c` (nodes and parts set) unless its backend already has the same set; costs it.
  template <class B>
  static constexpr bool add(const cost_graph& g, candidates& cs, cost_candidate c) {
    if (known(cs, c.backend, c.nodes)) return false;
    std::vector<std::string_view> by_node;
    const candidate_view::numbers num = describe(g, c, std::string_view(B::name), by_node);
    c.estimate = cost_of<B>(
        candidate_view(g.m.nodes.data(), g.m.args.data(), c.nodes.data(), by_node.data(), static_cast<int>(c.nodes.size()), num));
    c.ns = c.estimate;
    if (const measured_cost* mc = find_measured<typename Config::costs>(std::string_view(B::name), c.signature)) {
      c.ns = mc->ns;
      c.measured = true;
    }
    cs.sets.insert(set_key(c.backend, c.nodes), static_cast<int>(cs.list.size()));
    cs.list.push_back(std::move(c));
    return true;
  }

  /// Backend `B`'s candidates rooted at main's nodes [lo, hi) (local indices): each single op it
  /// runs and each match of its patterns.
  template <class B>
  static constexpr void add_candidates(const cost_graph& g, int bi, candidates& cs, int lo, int hi) {
    const module_builder& m = g.m;
    if constexpr (requires { B::patterns::value; }) {
      cs.list.reserve(cs.list.size() + static_cast<std::size_t>(hi - lo) * (B::patterns::value.entries.size() + 1) / 2);
    }
    match_state st;
    group gr{};
    for (int k = lo; k < hi; ++k) {
      const int i = g.base + k;
      if (!g.is_op(i)) continue;
      const graph_node& n = m.node(i);
      if constexpr (requires { B::patterns::value; }) {
        const auto& t = B::patterns::value;
        for (std::size_t e = 0; e < t.entries.size(); ++e) {
          if (!t.entries[e].root_ops.contains(n.op) || !match_group(m, t, t.entries[e], i, g.uses, st, gr)) continue;
          cost_candidate c;
          c.backend = bi;
          for (int b : gr.body)  // what is computed from weights alone is copied, not covered
            if (!g.uses.constant[static_cast<std::size_t>(b)] || b == i) c.nodes.push_back(b);
          c.part.assign(c.nodes.size(), 0);
          c.roots.push_back(i);
          c.entries.push_back(static_cast<int>(e));
          c.names.push_back(t.entries[e].name);
          add<B>(g, cs, std::move(c));
        }
      }
      bool single = false;
      if (n.op == op_id::tuple || n.op == op_id::get) {
        single = bi == host;  // structural: moves no data, stays in main
      } else if (n.op == op_id::call) {
        const function_info& callee = m.functions[static_cast<std::size_t>(n.index)];
        const int owner = callee.backend.empty() ? index_of(composite_backend(callee.composite)) : -1;
        single = owner == bi || (owner < 0 && bi == host);  // an existing partition stays a call of main
      } else if (!n.pinned.empty()) {
        const int pin = index_of(n.pinned);
        single = pin == bi || (pin < 0 && bi == host);
      } else {
        single = bi == host || is_host_backend<B> || backend_supports<B>(op_view(m.nodes.data(), m.args.data(), i));
      }
      if (single) {
        cost_candidate c;
        c.backend = bi;
        c.nodes.push_back(i);
        c.part.push_back(-1);
        add<B>(g, cs, std::move(c));
      }
    }
  }

  /// Adds unions of touching candidates of `cs` (all backend `B`'s, none a union yet) until no
  /// new valid one appears or the limit is reached: each new union is itself extended.
  template <class B>
  static constexpr void add_unions(const cost_graph& g, int bi, candidates& cs) {
    const std::size_t last = cs.list.size();
    std::vector<std::vector<int>> at(static_cast<std::size_t>(g.n));  // base candidates holding each node
    for (std::size_t c = 0; c < last; ++c)
      for (int i : cs.list[c].nodes) at[static_cast<std::size_t>(i - g.base)].push_back(static_cast<int>(c));
    std::vector<signed char> mark(static_cast<std::size_t>(g.n), 0);
    std::vector<int> depth(static_cast<std::size_t>(g.n), 0);
    std::vector<int> near;
    std::vector<int> merged;
    int made = 0;
    for (std::size_t w = 0; w < cs.list.size() && made < Config::max_unions; ++w) {
      near.clear();
      for (int i : cs.list[w].nodes) {
        const std::vector<int>& xn = cs.list[w].nodes;
        for (int a = 0; a < g.node(i).nargs; ++a) {
          const int src = g.m.arg(i, a);
          if (src >= g.base && g.is_op(src) && !contains(xn, src))
            for (int y : at[static_cast<std::size_t>(src - g.base)])
              if (!contains(near, y)) near.push_back(y);
        }
        for (const int* u = g.uses.begin(i); u != g.uses.end(i); ++u)
          if (!contains(xn, *u))
            for (int y : at[static_cast<std::size_t>(*u - g.base)])
              if (!contains(near, y)) near.push_back(y);
      }
      for (int y : near) {
        const cost_candidate& x = cs.list[w];
        const cost_candidate& yc = cs.list[static_cast<std::size_t>(y)];
        // The two sorted node lists, merged; overlapping ones are not unions.
        merged.clear();
        bool overlap = false;
        for (std::size_t p = 0, q = 0; p < x.nodes.size() || q < yc.nodes.size();) {
          if (q == yc.nodes.size() || (p < x.nodes.size() && x.nodes[p] < yc.nodes[q])) merged.push_back(x.nodes[p++]);
          else if (p == x.nodes.size() || yc.nodes[q] < x.nodes[p]) merged.push_back(yc.nodes[q++]);
          else {
            overlap = true;
            break;
          }
        }
        if (overlap || known(cs, bi, merged) || !valid_union(g, merged, Config::max_depth, mark, depth)) continue;
        cost_candidate u;
        u.backend = bi;
        u.nodes = merged;
        u.roots = x.roots;
        u.entries = x.entries;
        u.names = x.names;
        for (std::size_t p = 0; p < yc.roots.size(); ++p) {
          u.roots.push_back(yc.roots[p]);
          u.entries.push_back(yc.entries[p]);
          u.names.push_back(yc.names[p]);
        }
        const int shift = static_cast<int>(x.roots.size());
        for (int i : merged) {
          int part = -1;
          for (std::size_t p = 0; p < x.nodes.size(); ++p)
            if (x.nodes[p] == i) part = x.part[p];
          for (std::size_t p = 0; p < yc.nodes.size(); ++p)
            if (yc.nodes[p] == i) part = yc.part[p] < 0 ? -1 : yc.part[p] + shift;
          u.part.push_back(part);
        }
        if (add<B>(g, cs, std::move(u)) && ++made >= Config::max_unions) break;
      }
    }
  }

  /// Whether backend `I` gets unions of its candidates: it runs whole partitions (a backend that
  /// runs steps one by one would cost a union as the sum of its parts).
  template <std::size_t I>
  static constexpr bool makes_unions = runs_partitions<std::tuple_element_t<I, std::tuple<Bs...>>> && static_cast<int>(I) != host;

  /// Backend `I`'s candidates rooted at main's nodes [lo, hi) (local indices).
  template <std::size_t I>
  static constexpr std::vector<cost_candidate> candidates_of(const cost_graph& g, int lo, int hi) {
    candidates cs;
    add_candidates<std::tuple_element_t<I, std::tuple<Bs...>>>(g, static_cast<int>(I), cs, lo, hi);
    return std::move(cs.list);
  }

  /// `base` (all of backend `I`'s candidates but unions), followed by the unions (if it makes any).
  template <std::size_t I>
  static constexpr std::vector<cost_candidate> unions_of(const cost_graph& g, std::vector<cost_candidate> base) {
    if constexpr (makes_unions<I>) {
      candidates cs;
      cs.list = std::move(base);
      for (std::size_t c = 0; c < cs.list.size(); ++c) cs.sets.insert(set_key(cs.list[c].backend, cs.list[c].nodes), static_cast<int>(c));
      add_unions<std::tuple_element_t<I, std::tuple<Bs...>>>(g, static_cast<int>(I), cs);
      return std::move(cs.list);
    } else {
      return base;
    }
  }

  /// Runs the search on main of `m` (its nodes in local order) over candidates `cands`.
  template <std::size_t N>
  static constexpr cost_choice_value<N> run(const module_builder& m, std::vector<search_candidate> cands) {
    cost_choice_value<N> out{};
    // Set field by field: GCC 12 can value-initialize a second `cost_choice_value<N>` of the
    // same N (another search of the same model) with zeros instead of the member initializers.
    out.complete = true;
    for (node_choice& c : out.nodes) {
      c.target = {};
      c.region = -1;
      c.backend = -1;
      c.entry = -1;
    }
    calibrate(cands, num_backends);
    const cost_graph g(m);
    out.stats.candidates = static_cast<int>(cands.size());
    for (const search_candidate& c : cands) out.stats.measured += c.measured ? 1 : 0;
    std::array<transfer_fn, sizeof...(Bs) * sizeof...(Bs)> tr{};
    {
      int row = 0;
      ((transfer_row<typename Config::costs, Bs, Bs...>(tr.data() + static_cast<std::size_t>(num_backends * row++))), ...);
    }
    const std::vector<int> chosen = cheapest_cover(g, cands, num_backends, host, tr.data(), out.stats);
    if (chosen.size() == 1 && chosen[0] < 0) {
      out.complete = false;
      return out;
    }
    out.stats.chosen = static_cast<int>(chosen.size());
    const std::vector<int> unit = coalesce(g, cands, chosen, host);
    // Regions: one per partition of a backend other than the host, numbered by first node.
    std::vector<int> region_of(chosen.size(), -1);
    int regions = 0;
    for (int k = 0; k < g.n; ++k) {
      const int u = unit[static_cast<std::size_t>(k)];
      if (u < 0) continue;
      const search_candidate& c = cands[static_cast<std::size_t>(chosen[static_cast<std::size_t>(u)])];
      node_choice& ch = out.nodes[static_cast<std::size_t>(k)];
      const graph_node& n = m.node(g.base + k);
      if (c.backend != host) {
        if (region_of[static_cast<std::size_t>(u)] < 0) region_of[static_cast<std::size_t>(u)] = regions++;
        ch.region = region_of[static_cast<std::size_t>(u)];
        ch.target = names[static_cast<std::size_t>(c.backend)];
      }
      if (!n.pinned.empty() && n.op != op_id::call && index_of(n.pinned) != host) ch.target = n.pinned;  // the host's stay in main
    }
    out.stats.partitions = regions;
    for (int ci : chosen) {
      const search_candidate& c = cands[static_cast<std::size_t>(ci)];
      for (std::size_t p = 0; p < c.roots.size(); ++p) {
        node_choice& ch = out.nodes[static_cast<std::size_t>(c.roots[p] - g.base)];
        ch.backend = c.backend;
        ch.entry = c.entries[p];
      }
    }
    return out;
  }

  template <class B>
  static constexpr bool rematch_in(const module_builder& m, int entry, int root, const use_lists& uses, match_state& st, group& gr) {
    if constexpr (requires { B::patterns::value; }) {
      const auto& t = B::patterns::value;
      return match_group(m, t, t.entries[static_cast<std::size_t>(entry)], root, uses, st, gr);
    } else {
      return false;
    }
  }

  /// Matches entry `entry` of backend number `backend`'s pattern table at `root` again, filling
  /// `gr` with the composite it forms (the search keeps only which entry matched where).
  static constexpr bool rematch(int backend, const module_builder& m, int entry, int root, const use_lists& uses, match_state& st,
                                group& gr) {
    return visit_backend<bool, Bs...>(static_cast<std::size_t>(backend),
                                      [&]<class B>() { return rematch_in<B>(m, entry, root, uses, st, gr); });
  }

  /// Applies a search result to `m`: targets and regions, the chosen composites outlined, then
  /// PartitionGraph.
  template <std::size_t N>
  static constexpr module_builder apply(module_builder m, const cost_choice_value<N>& choice) {
    const int base = m.main().first_node;
    for (std::size_t k = 0; k < N; ++k) {
      graph_node& n = m.nodes[static_cast<std::size_t>(base) + k];
      n.target = choice.nodes[k].target;
      n.region = choice.nodes[k].region;
    }
    std::vector<group> groups;
    {
      const use_lists uses(m);
      match_state st;
      for (std::size_t k = 0; k < N; ++k) {
        const node_choice& ch = choice.nodes[k];
        if (ch.entry < 0) continue;
        group gr{};
        rematch(ch.backend, m, ch.entry, base + static_cast<int>(k), uses, st, gr);
        groups.push_back(std::move(gr));
      }
    }
    if (!groups.empty()) m = outline_composites(m, std::move(groups), true);
    return partition_graph(m);
  }
};
}  // namespace partita::detail
