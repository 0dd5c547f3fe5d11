#pragma once
#include <algorithm>
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
#include "partita/pass/detail/candidate_table.hpp"
#include "partita/pass/detail/cost_search.hpp"
#include "partita/pass/partition_graph.hpp"
#include "partita/pass/pipeline.hpp"

namespace partita {

/// Options of the cost-based search: `Costs`, measured costs (a type with a `static constexpr`
/// array `entries` of `measured_cost`, and optionally `transfers` of `measured_transfer`, as
/// `tune` writes), used instead of the estimates for the candidates and backend pairs they name;
/// `MaxDepth`, the longest chain of ops a union of candidates may hold.
template <class Costs = no_measured_costs, int MaxDepth = 3>
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

/// The measured hand-over from `from` to `to` in `Costs::transfers`, if it has one (else -1).
template <class Costs>
constexpr double measured_handover(std::string_view from, std::string_view to) {
  if constexpr (requires { Costs::transfers; }) {
    for (const measured_transfer& t : Costs::transfers)
      if (t.from == from && t.to == to) return t.ns;
  }
  return -1;
}

template <class Costs, class From, class... Tos>
constexpr void transfer_row(transfer_fn* out) {
  int j = 0;
  ((out[j++] = {&transfer<From, Tos>::ns, measured_handover<Costs>(std::string_view(From::name), std::string_view(Tos::name))}), ...);
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
          if (!match_group(m, t, t.entries[e], i, g.uses, st, gr)) continue;
          cost_candidate c;
          c.backend = bi;
          for (int b : gr.body)
            if (m.node(b).op != op_id::weight) c.nodes.push_back(b);
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
    bool ok = false;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((static_cast<int>(I) == backend ? (void)(ok = rematch_in<std::tuple_element_t<I, std::tuple<Bs...>>>(m, entry, root, uses, st, gr))
                                       : void()),
       ...);
    }(std::index_sequence_for<Bs...>{});
    return ok;
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

template <class M, class... Bs>
struct pre_partition_phase {
  static constexpr module_builder run() {
    module_builder m = to_builder(module_type_t<M>::value);
    ((m = pre_partition<Bs>(std::move(m))), ...);
    return m;
  }
};

/// Main's nodes per constant evaluation of candidates: GCC bounds the work of each one.
inline constexpr int candidate_chunk = 256;

/// Backend `I`'s candidates rooted in chunk `Chunk` of main's nodes, in a constant evaluation of
/// their own (twice: sizes, then contents).
template <class Pre, class Config, std::size_t I, std::size_t Chunk, class... Bs>
struct chunk_candidates {
  static constexpr std::vector<cost_candidate> make() {
    const module_builder m = to_builder(Pre::value);
    const cost_graph g(m);
    const int lo = static_cast<int>(Chunk) * candidate_chunk;
    const int hi = lo + candidate_chunk < g.n ? lo + candidate_chunk : g.n;
    return cost_search<Config, Bs...>::template candidates_of<I>(g, lo, hi);
  }
  static constexpr candidate_sizes sizes = sizes_of(make());
  static constexpr candidate_table<sizes> value = pack<sizes>(make());
};

template <class Pre, class Config, std::size_t I, class Chunks, class... Bs>
struct base_candidates;
template <class Pre, class Config, std::size_t I, std::size_t... C, class... Bs>
struct base_candidates<Pre, Config, I, std::index_sequence<C...>, Bs...> {
  using type = table_list<chunk_candidates<Pre, Config, I, C, Bs...>...>;
};

/// The unions of backend `I`'s candidates `Base` (a `table_list`), in a constant evaluation of
/// their own.
template <class Pre, class Config, std::size_t I, class Base, class... Bs>
struct union_candidates {
  static constexpr std::vector<cost_candidate> make() {
    const module_builder m = to_builder(Pre::value);
    const cost_graph g(m);
    std::vector<cost_candidate> all = cost_search<Config, Bs...>::template unions_of<I>(g, Base::unpacked());
    all.erase(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(Base::size));
    return all;
  }
  static constexpr candidate_sizes sizes = sizes_of(make());
  static constexpr candidate_table<sizes> value = pack<sizes>(make());
};

/// Backend `I`'s candidates: its single ops and pattern matches chunk by chunk, then its unions.
template <class Pre, class Config, std::size_t I, class... Bs>
struct backend_candidates {
  static constexpr std::size_t chunks =
      (static_cast<std::size_t>(Pre::value.main().num_nodes) + candidate_chunk - 1) / static_cast<std::size_t>(candidate_chunk);
  using base = typename base_candidates<Pre, Config, I, std::make_index_sequence<chunks>, Bs...>::type;
  using type = std::conditional_t<cost_search<Config, Bs...>::template makes_unions<I>,
                                  typename concat_tables<base, table_list<union_candidates<Pre, Config, I, base, Bs...>>>::type, base>;
};

/// Every backend's candidates, in backend order: `list[i]` is candidate `i`.
template <class Pre, class Config, class... Bs>
struct cost_candidates {
  template <std::size_t... I>
  static constexpr auto join(std::index_sequence<I...>) -> typename concat_tables<typename backend_candidates<Pre, Config, I, Bs...>::type...>::type;
  using tables = decltype(join(std::index_sequence_for<Bs...>{}));
  static constexpr std::size_t size = tables::size;
  static constexpr std::array<search_candidate, size> list = [] {
    std::vector<search_candidate> v;
    v.reserve(size);
    tables::refs(v);
    std::array<search_candidate, size> a{};
    for (std::size_t i = 0; i < size; ++i) a[i] = v[i];
    return a;
  }();
};

template <class Pre, class Config, class... Bs>
struct cost_choice {
  using candidates = cost_candidates<Pre, Config, Bs...>;
  static constexpr std::size_t n = static_cast<std::size_t>(Pre::value.main().num_nodes);
  static constexpr cost_choice_value<n> value = cost_search<Config, Bs...>::template run<n>(
      to_builder(Pre::value), std::vector<search_candidate>(candidates::list.begin(), candidates::list.end()));
};

inline constexpr std::string_view candidate_input_names[] = {"in0", "in1", "in2",  "in3",  "in4",  "in5",  "in6",  "in7",
                                                             "in8", "in9", "in10", "in11", "in12", "in13", "in14", "in15"};

/// Candidates `Is...` of `Cands` (a `cost_candidates`) alone, each placed on its backend (a
/// partition each, unless the backend is the host): their outside producers become inputs `in0`,
/// `in1`, ..., their weights keep their names, and what they compute for the rest of the model
/// are the results.
template <class Cands, std::size_t... Is>
struct candidate_module_pass {
  using search = typename Cands::search;
  static constexpr module_builder run() {
    const module_builder m = to_builder(Cands::pre::value);
    const search_candidate picked[] = {Cands::table::list[Is]...};
    std::vector<int> member(m.nodes.size(), -1);  // node → which picked candidate computes it
    std::vector<int> nodes;
    for (std::size_t c = 0; c < sizeof...(Is); ++c)
      for (const int i : picked[c].nodes) {
        member[static_cast<std::size_t>(i)] = static_cast<int>(c);
        nodes.push_back(i);
      }
    std::sort(nodes.begin(), nodes.end());
    module_builder out;
    copy_functions_but_main(out, m);
    const int start = static_cast<int>(out.nodes.size());
    std::vector<int> to(m.nodes.size(), -1);
    std::vector<int> a;
    int inputs = 0;
    for (const int i : nodes) {
      const graph_node& n = m.node(i);
      a.clear();
      for (int j = 0; j < n.nargs; ++j) {
        const int src = m.arg(i, j);
        if (to[static_cast<std::size_t>(src)] < 0) {
          if (m.node(src).op == op_id::weight) {
            to[static_cast<std::size_t>(src)] = out.emit(m.node(src), nullptr, 0);
          } else {  // computed outside: an input
            graph_node in{op_id::input, m.node(src).type, m.node(src).out, &no_attrs, candidate_input_names[inputs++ % 16]};
            to[static_cast<std::size_t>(src)] = out.emit(in, nullptr, 0);
          }
        }
        a.push_back(to[static_cast<std::size_t>(src)]);
      }
      const search_candidate& c = picked[static_cast<std::size_t>(member[static_cast<std::size_t>(i)])];
      const bool placed = c.backend != search::host;
      graph_node copy = n;
      copy.target = placed ? search::names[static_cast<std::size_t>(c.backend)] : std::string_view{};
      copy.region = placed ? member[static_cast<std::size_t>(i)] : -1;
      to[static_cast<std::size_t>(i)] = out.emit(copy, a.data(), n.nargs);
    }
    // Results: what the rest of the model reads (or main returns).
    const use_lists uses(m);
    a.clear();
    for (const int i : nodes) {
      bool used_outside = uses.returned[static_cast<std::size_t>(i)];
      for (const int* u = uses.begin(i); u != uses.end(i); ++u) used_outside = used_outside || member[static_cast<std::size_t>(*u)] < 0;
      if (used_outside) a.push_back(to[static_cast<std::size_t>(i)]);
    }
    int result = a.front();
    if (a.size() > 1) {
      graph_node tup{op_id::tuple, dtype::f32, shape{}, &no_attrs, {}, 0, 0, true};
      result = out.emit(tup, a.data(), static_cast<int>(a.size()));
    }
    finish_main(out, start, result);
    std::vector<group> groups;
    bool placed_any = false;
    {
      const use_lists out_uses(out);
      match_state st;
      for (const search_candidate& c : picked) {
        placed_any = placed_any || c.backend != search::host;
        for (std::size_t p = 0; p < c.roots.size(); ++p) {
          group gr{};
          const int root = to[static_cast<std::size_t>(c.roots[p])];
          search::rematch(c.backend, out, c.entries[p], root, out_uses, st, gr);
          groups.push_back(std::move(gr));
        }
      }
    }
    if (!groups.empty()) {
      module_builder outlined = outline_composites(out, std::move(groups), true);
      if (!placed_any) return outlined;
      return partition_graph(outlined);
    }
    if (!placed_any) return out;
    return partition_graph(out);
  }
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

/// The flow when its backends are well-formed; otherwise the model as it is (the entry point's
/// static_asserts say what is wrong, without a cascade of errors from the search).
template <class Config, class M, class... Bs>
struct checked_cost_flow : cost_flow<Config, M, Bs...> {
  static constexpr search_stats stats = cost_flow<Config, M, Bs...>::choice::value.stats;
};
template <class M>
struct unchecked_cost_flow {
  using type = module_type_t<M>;
  static constexpr search_stats stats{};
};
template <class Config, class M, class... Bs>
using cost_flow_for =
    std::conditional_t<backends_ok<Bs...> && has_host<Bs...>, checked_cost_flow<Config, M, Bs...>, unchecked_cost_flow<M>>;

}  // namespace detail

/// Cost-based partitioning (Collage-style) with explicit options (`cost_config`): each
/// backend's `pre_partition` passes, then a search over alternative partitionings of main that
/// minimises the estimated run time, then each backend's `post_partition` passes. The result is
/// an ordinary partitioned module (composites, `<backend>_main_<n>` partitions), as the eager
/// flow's. `search` reports the estimate and the search's size.
template <class Config, class M, class... Backends>
struct cost_partition_with : detail::cost_flow_for<Config, M, Backends...>::type {
  static_assert(backends_ok<Backends...>, "partita: cost_partition: a backend failed the checks reported above");
  static_assert(detail::has_host<Backends...>,
                "partita: cost_partition<Model, Backends...> needs a host backend (such as cpu), listed last: it runs what no other "
                "backend is cheaper for");
  /// The search's estimate of the chosen partitioning and its statistics.
  static constexpr detail::search_stats search = detail::cost_flow_for<Config, M, Backends...>::stats;
};

/// The candidates a cost-based search over `M` with `Backends...` chooses from, for tools that
/// measure them (`examples/tune`): `size`, and per candidate its `backend`, `signature`, cost
/// `ns` (measured or estimated) and whether it can run alone (`runnable`: no tuple crosses its
/// boundary). `candidate_module<cost_candidates<...>, I>` is candidate `I` as a module.
template <class Config, class M, class... Backends>
struct cost_candidates {
  using backends = std::tuple<Backends...>;
  using search = detail::cost_search<Config, Backends...>;
  using pre = typename detail::cost_flow<Config, M, Backends...>::pre;
  using table = detail::cost_candidates<pre, Config, Backends...>;
  static constexpr std::size_t size = table::size;

  static constexpr std::string_view backend(std::size_t i) { return search::names[static_cast<std::size_t>(table::list[i].backend)]; }
  static constexpr std::uint64_t signature(std::size_t i) { return table::list[i].signature; }
  static constexpr double ns(std::size_t i) { return table::list[i].ns; }
  /// The estimate of candidate `i` (what `ns` is when it was not measured).
  static constexpr double estimate(std::size_t i) { return table::list[i].estimate; }
  static constexpr bool measured(std::size_t i) { return table::list[i].measured; }
  /// Whether candidate `i` runs alone: plain tensors in and out, at most 16 inputs.
  static constexpr bool runnable(std::size_t i) {
    const detail::search_candidate& c = table::list[i];
    if (c.inputs.size() > 16) return false;
    for (const int x : c.inputs)
      if (pre::value.node(x).is_tuple) return false;
    for (const int x : c.nodes)
      if (pre::value.node(x).is_tuple || pre::value.node(x).op == op_id::get) return false;
    return true;
  }
  /// Whether candidate `i` is the first with its backend and signature (measure each once).
  static constexpr bool first_of_kind(std::size_t i) {
    for (std::size_t j = 0; j < i; ++j)
      if (signature(j) == signature(i) && backend(j) == backend(i)) return false;
    return true;
  }

  /// A pair of candidates to time a hand-over from backend number `from` to `to` with: `i` on
  /// `from`, `j` on `to` reading nothing but `i`'s single result; of those, the one where `j`
  /// does the median amount of work (a hand-over can cost more before a longer step). `found` is
  /// false when the model has no such pair.
  struct pair {
    std::size_t i = 0, j = 0;
    bool found = false;
  };
  static constexpr pair handover(int from, int to) {
    struct option {
      double work;
      std::size_t i, j;
    };
    std::vector<option> options;
    if (from == to) return {};  // no hand-over within one backend
    for (std::size_t i = 0; i < size; ++i) {
      const detail::search_candidate& a = table::list[i];
      if (a.backend != from || a.exits.size() != 1 || !runnable(i)) continue;
      for (std::size_t j = 0; j < size; ++j) {
        const detail::search_candidate& b = table::list[j];
        if (b.backend == to && b.inputs.size() == 1 && b.inputs[0] == a.exits[0] && runnable(j)) options.push_back({b.estimate, i, j});
      }
    }
    if (options.empty()) return {};
    std::sort(options.begin(), options.end(), [](const option& x, const option& y) {
      return x.work != y.work ? x.work < y.work : (x.i != y.i ? x.i < y.i : x.j < y.j);
    });
    const option& o = options[options.size() / 2];
    return {o.i, o.j, true};
  }
};

/// Candidate `I` of `Cands` alone, as a module to compile and time: inputs `in0`, `in1`, ...,
/// the candidate's weights, its results as outputs, placed on its backend.
template <class Cands, std::size_t I>
struct candidate_module : detail::module_from<detail::candidate_module_pass<Cands, I>> {};

/// Candidates `I` and `J` of `Cands` together, each on its backend (`J` reading `I`'s result):
/// timed against each alone, the difference is the cost of handing a result from one backend to
/// the other (`Cands::handover(from, to)` finds such a pair).
template <class Cands, std::size_t I, std::size_t J>
struct handover_module : detail::module_from<detail::candidate_module_pass<Cands, I, J>> {};

/// Cost-based partitioning with the default options: every match of every backend's patterns,
/// every single op a backend supports and unions of touching candidates (for backends that run
/// whole partitions) are candidates; each costs `Backend::cost(candidate_view)` or the estimate
/// from the backend's `speed`, plus `transfer<From, To>` for every tensor crossing between
/// backends; the cheapest cover of the graph wins, and touching partitions of one backend are
/// coalesced when no cycle results. `cost_partition<net, onednn, cpu>`.
template <class M, class... Backends>
struct cost_partition : cost_partition_with<cost_config<>, M, Backends...> {};

}  // namespace partita
