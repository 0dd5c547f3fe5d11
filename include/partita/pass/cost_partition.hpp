#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "partita/backend/backend.hpp"
#include "partita/backend/cost.hpp"
#include "partita/pass/detail/cost_search.hpp"
#include "partita/pass/partition_graph.hpp"
#include "partita/pass/pipeline.hpp"

namespace partita {

/// Options of the cost-based search: `Costs`, measured costs (a type with a `static constexpr`
/// array `entries` of `measured_cost`, as `tune` writes), used instead of the estimate for the
/// candidates they name; `MaxDepth`, the longest chain of ops a union of candidates may hold.
template <class Costs = no_measured_costs, int MaxDepth = 4>
struct cost_config {
  using costs = Costs;
  static constexpr int max_depth = MaxDepth;
  /// Unions generated per backend at most (the search stays bounded on large models).
  static constexpr int max_unions = 4000;
};

namespace detail {

template <class Costs>
constexpr const measured_cost* find_measured(std::string_view backend, std::uint64_t signature) {
  for (const measured_cost& e : Costs::entries)
    if (e.signature == signature && !e.backend.empty() && e.backend == backend) return &e;
  return nullptr;
}

template <class From, class... Tos>
constexpr void transfer_row(transfer_fn* out) {
  int j = 0;
  ((out[j++] = &transfer<From, Tos>::ns), ...);
}

/// What the search computes for a module (main's nodes after the pre-partition phase).
template <std::size_t N>
struct cost_choice_value {
  std::array<node_choice, N> nodes{};
  search_stats stats{};
  bool complete = true;
};

/// The candidates, the search and coalescing for `Backends...` (priority order).
template <class Config, class... Bs>
struct cost_search {
  static constexpr int num_backends = static_cast<int>(sizeof...(Bs));
  /// The backend that takes what no other runs: the last host backend listed.
  static constexpr int host = [] {
    constexpr bool h[] = {is_host_backend<Bs>...};
    for (int i = num_backends - 1; i >= 0; --i)
      if (h[i]) return i;
    return -1;
  }();
  static constexpr std::array<std::string_view, sizeof...(Bs)> names{std::string_view(Bs::name)...};

  static constexpr int index_of(std::string_view name) {
    for (int i = 0; i < num_backends; ++i)
      if (names[static_cast<std::size_t>(i)] == name) return i;
    return -1;
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

  /// Adds `c` (nodes and parts set) unless its backend already has the same set; costs it.
  template <class B>
  static constexpr bool add(const cost_graph& g, candidates& cs, cost_candidate c, const std::vector<std::vector<int>>& bodies,
                            const std::vector<std::string_view>& part_names) {
    const std::uint64_t key = set_key(c.backend, c.nodes);
    if (cs.sets.find(key, [&](int o) {
          const cost_candidate& other = cs.list[static_cast<std::size_t>(o)];
          return other.backend == c.backend && other.nodes == c.nodes;
        }) >= 0)
      return false;
    std::vector<std::string_view> names_by_node;
    const candidate_view::numbers num = describe(g, c, bodies, part_names, std::string_view(B::name), names_by_node);
    if (const measured_cost* mc = find_measured<typename Config::costs>(std::string_view(B::name), c.signature)) {
      c.ns = mc->ns;
      c.measured = true;
    } else {
      c.ns = cost_of<B>(candidate_view(g.m.nodes.data(), g.m.args.data(), c.nodes.data(), names_by_node.data(),
                                       static_cast<int>(c.nodes.size()), num));
    }
    cs.sets.insert(key, static_cast<int>(cs.list.size()));
    cs.list.push_back(std::move(c));
    return true;
  }

  /// The composite bodies (nodes without weights) and names of candidate `c`'s parts.
  template <class B>
  static constexpr void parts_of(const cost_graph& g, const cost_candidate& c, std::vector<std::vector<int>>& bodies,
                                 std::vector<std::string_view>& part_names) {
    bodies.clear();
    part_names.clear();
    if constexpr (requires { B::patterns::value; }) {
      const auto& t = B::patterns::value;
      match_state st;
      group gr{};
      for (std::size_t p = 0; p < c.roots.size(); ++p) {
        const table_entry& e = t.entries[static_cast<std::size_t>(c.entries[p])];
        match_group(g.m, t, e, c.roots[p], g.uses, st, gr);
        std::vector<int> body;
        for (int b : gr.body)
          if (g.m.node(b).op != op_id::weight) body.push_back(b);
        bodies.push_back(std::move(body));
        part_names.push_back(e.name);
      }
    }
  }

  /// Backend `B`'s candidates: each single op it runs, each match of its patterns, and (for a
  /// backend that runs whole partitions) unions of touching candidates up to the depth limit.
  template <class B>
  static constexpr void add_candidates(const cost_graph& g, int bi, candidates& cs) {
    const module_builder& m = g.m;
    std::vector<std::vector<int>> bodies;
    std::vector<std::string_view> part_names;
    const std::size_t first = cs.list.size();
    match_state st;
    group gr{};
    for (int k = 0; k < g.n; ++k) {
      const int i = g.base + k;
      if (!g.is_op(i)) continue;
      const graph_node& n = m.node(i);
      if constexpr (requires { B::patterns::value; }) {
        const auto& t = B::patterns::value;
        for (std::size_t e = 0; e < t.entries.size(); ++e) {
          if (!match_group(m, t, t.entries[e], i, g.uses, st, gr)) continue;
          cost_candidate c;
          c.backend = bi;
          for (int b : gr.body)
            if (m.node(b).op != op_id::weight) c.nodes.push_back(b);
          c.roots.push_back(i);
          c.entries.push_back(static_cast<int>(e));
          bodies.assign(1, c.nodes);
          part_names.assign(1, t.entries[e].name);
          add<B>(g, cs, std::move(c), bodies, part_names);
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
        bodies.clear();
        part_names.clear();
        add<B>(g, cs, std::move(c), bodies, part_names);
      }
    }
    if constexpr (runs_partitions<B>) {
      if (bi != host) add_unions<B>(g, bi, cs, first);
    }
  }

  template <class B>
  static constexpr void add_unions(const cost_graph& g, int bi, candidates& cs, std::size_t first) {
    const std::size_t last = cs.list.size();
    std::vector<std::vector<int>> at(static_cast<std::size_t>(g.n));  // base candidates holding each node
    for (std::size_t c = first; c < last; ++c)
      for (int i : cs.list[c].nodes) at[static_cast<std::size_t>(i - g.base)].push_back(static_cast<int>(c));
    std::vector<signed char> mark(static_cast<std::size_t>(g.n), 0);
    std::vector<int> depth(static_cast<std::size_t>(g.n), 0);
    std::vector<int> near;
    std::vector<std::vector<int>> bodies;
    std::vector<std::string_view> part_names;
    int made = 0;
    for (std::size_t w = first; w < cs.list.size() && made < Config::max_unions; ++w) {
      const cost_candidate x = cs.list[w];
      near.clear();
      for (int i : x.nodes) {
        for (int a = 0; a < g.node(i).nargs; ++a) {
          const int src = g.m.arg(i, a);
          if (src >= g.base && g.is_op(src) && !contains(x.nodes, src))
            for (int y : at[static_cast<std::size_t>(src - g.base)])
              if (!contains(near, y)) near.push_back(y);
        }
        for (const int* u = g.uses.begin(i); u != g.uses.end(i); ++u)
          if (!contains(x.nodes, *u))
            for (int y : at[static_cast<std::size_t>(*u - g.base)])
              if (!contains(near, y)) near.push_back(y);
      }
      for (int y : near) {
        const cost_candidate& yc = cs.list[static_cast<std::size_t>(y)];
        bool overlap = false;
        for (int i : yc.nodes) overlap = overlap || contains(x.nodes, i);
        if (overlap) continue;
        cost_candidate u;
        u.backend = bi;
        u.nodes = x.nodes;
        for (int i : yc.nodes) u.nodes.push_back(i);
        std::sort(u.nodes.begin(), u.nodes.end());
        if (!valid_union(g, u.nodes, Config::max_depth, mark, depth)) continue;
        u.roots = x.roots;
        u.entries = x.entries;
        for (std::size_t p = 0; p < yc.roots.size(); ++p) {
          u.roots.push_back(yc.roots[p]);
          u.entries.push_back(yc.entries[p]);
        }
        parts_of<B>(g, u, bodies, part_names);
        if (add<B>(g, cs, std::move(u), bodies, part_names) && ++made >= Config::max_unions) break;
      }
    }
  }

  static constexpr std::vector<cost_candidate> all_candidates(const cost_graph& g) {
    candidates cs;
    int bi = 0;
    ((add_candidates<Bs>(g, bi++, cs)), ...);
    return std::move(cs.list);
  }

  /// Runs the search on main of `m` (its nodes in local order).
  template <std::size_t N>
  static constexpr cost_choice_value<N> run(const module_builder& m) {
    cost_choice_value<N> out{};
    const cost_graph g(m);
    const std::vector<cost_candidate> cands = all_candidates(g);
    out.stats.candidates = static_cast<int>(cands.size());
    for (const cost_candidate& c : cands) out.stats.measured += c.measured ? 1 : 0;
    std::array<transfer_fn, sizeof...(Bs) * sizeof...(Bs)> tr{};
    {
      int row = 0;
      ((transfer_row<Bs, Bs...>(tr.data() + static_cast<std::size_t>(num_backends * row++))), ...);
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
      const cost_candidate& c = cands[static_cast<std::size_t>(chosen[static_cast<std::size_t>(u)])];
      node_choice& ch = out.nodes[static_cast<std::size_t>(k)];
      const graph_node& n = m.node(g.base + k);
      if (c.backend != host) {
        if (region_of[static_cast<std::size_t>(u)] < 0) region_of[static_cast<std::size_t>(u)] = regions++;
        ch.region = region_of[static_cast<std::size_t>(u)];
        ch.target = names[static_cast<std::size_t>(c.backend)];
      }
      if (!n.pinned.empty() && n.op != op_id::call) ch.target = n.pinned;
    }
    out.stats.partitions = regions;
    for (int ci : chosen) {
      const cost_candidate& c = cands[static_cast<std::size_t>(ci)];
      for (std::size_t p = 0; p < c.roots.size(); ++p) {
        node_choice& ch = out.nodes[static_cast<std::size_t>(c.roots[p] - g.base)];
        ch.backend = c.backend;
        ch.entry = c.entries[p];
      }
    }
    return out;
  }

  template <class B>
  static constexpr bool rematch(const module_builder& m, int entry, int root, const use_lists& uses, match_state& st, group& gr) {
    if constexpr (requires { B::patterns::value; }) {
      const auto& t = B::patterns::value;
      return match_group(m, t, t.entries[static_cast<std::size_t>(entry)], root, uses, st, gr);
    } else {
      return false;
    }
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
        [&]<std::size_t... I>(std::index_sequence<I...>) {
          ((static_cast<int>(I) == ch.backend ? (void)rematch<std::tuple_element_t<I, std::tuple<Bs...>>>(m, ch.entry, base + static_cast<int>(k), uses, st, gr) : void()),
           ...);
        }(std::index_sequence_for<Bs...>{});
        groups.push_back(std::move(gr));
      }
    }
    if (!groups.empty()) m = outline_composites(m, std::move(groups), true);
    return partition_graph(m);
  }
};

template <class M, class... Bs>
struct pre_partition_phase {
  static constexpr module_builder run() {
    module_builder m = to_builder(module_type_t<M>::value);
    ((m = pre_partition<Bs>(std::move(m))), ...);
    return m;
  }
};

template <class Pre, class Config, class... Bs>
struct cost_choice {
  static constexpr std::size_t n = static_cast<std::size_t>(Pre::value.main().num_nodes);
  static constexpr cost_choice_value<n> value = cost_search<Config, Bs...>::template run<n>(to_builder(Pre::value));
};

template <class Pre, class Choice, class Config, class... Bs>
struct cost_apply_pass {
  static constexpr module_builder run() { return cost_search<Config, Bs...>::apply(to_builder(Pre::value), Choice::value); }
};

template <class Config, class M, class... Bs>
struct cost_flow {
  using pre = module_from<pre_partition_phase<M, Bs...>>;
  using choice = cost_choice<pre, Config, Bs...>;
  static_assert(choice::value.complete, "partita: cost_partition: a node has no candidate (no backend runs it)");
  using partitioned = module_from<cost_apply_pass<pre, choice, Config, Bs...>>;
  using type = std::conditional_t<(has_post_partition<Bs> || ...), module_from<post_partition_phase<partitioned, Bs...>>, partitioned>;
};

template <class... Bs>
inline constexpr bool has_host = (is_host_backend<Bs> || ...);

}  // namespace detail

/// Cost-based partitioning (Collage-style) with explicit options (`cost_config`): each
/// backend's `pre_partition` passes, then a search over alternative partitionings of main that
/// minimises the estimated run time, then each backend's `post_partition` passes. The result is
/// an ordinary partitioned module (composites, `<backend>_main_<n>` partitions), as the eager
/// flow's. `search` reports the estimate and the search's size.
template <class Config, class M, class... Backends>
struct cost_partition_with : detail::cost_flow<Config, M, Backends...>::type {
  static_assert(backends_ok<Backends...>, "partita: cost_partition: a backend failed the checks reported above");
  static_assert(detail::has_host<Backends...>, "partita: cost_partition<Model, Backends...> needs a host backend (cpu), listed last");
  /// The search's estimate of the chosen partitioning and its statistics.
  static constexpr detail::search_stats search = detail::cost_flow<Config, M, Backends...>::choice::value.stats;
};

/// Cost-based partitioning with the default options: every match of every backend's patterns,
/// every single op a backend supports and unions of touching candidates (for backends that run
/// whole partitions) are candidates; each costs `Backend::cost(candidate_view)` or the estimate
/// from the backend's `speed`, plus `transfer<From, To>` for every tensor crossing between
/// backends; the cheapest cover of the graph wins, and touching partitions of one backend are
/// coalesced when no cycle results. `cost_partition<net, onednn, cpu>`.
template <class M, class... Backends>
struct cost_partition : cost_partition_with<cost_config<>, M, Backends...> {};

}  // namespace partita
