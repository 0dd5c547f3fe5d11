#pragma once
/// Tuning: the candidates of a cost-based search (`cost_candidates`) and each as a module to time.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <vector>

#include "partita/ir/module_builder.hpp"
#include "partita/ir/uses.hpp"
#include "partita/pass/cost/cost_partition.hpp"
#include "partita/pass/detail/outline.hpp"
#include "partita/pass/partition_graph.hpp"

namespace partita {

/// The candidates a cost-based search over `M` with `Backends...` chooses from, for tools that
/// measure them (`examples/tune`): `size`, and per candidate its `backend`, `signature`, cost
/// `ns` (measured or estimated) and whether it can run alone (`runnable`: no tuple crosses its
/// boundary). `candidate_module<cost_candidates<...>, I>` is candidate `I` as a module.
template <class Config, class M, class... Backends>
struct cost_candidates;

/// Candidate `I` of `Cands` alone, as a module to compile and time: inputs `in0`, `in1`, ...,
/// the candidate's weights, its results as outputs, placed on its backend.
template <class Cands, std::size_t I>
struct candidate_module;

/// Candidates `I` and `J` of `Cands` together, each on its backend (`J` reading `I`'s result):
/// timed against each alone, the difference is the cost of handing a result from one backend to
/// the other (`Cands::handover(from, to)` finds such a pair).
template <class Cands, std::size_t I, std::size_t J>
struct handover_module;

namespace detail {

inline constexpr std::string_view candidate_input_names[] = {"in0", "in1", "in2",  "in3",  "in4",  "in5",  "in6",  "in7",
                                                             "in8", "in9", "in10", "in11", "in12", "in13", "in14", "in15"};

/// Candidates `Is...` of `Cands` (a `partita::cost_candidates`) alone, each placed on its backend (a
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
      for (int j = 0; j < n.nargs; ++j) {
        const int src = m.arg(i, j);
        if (to[static_cast<std::size_t>(src)] >= 0) continue;
        if (m.node(src).op == op_id::weight) {
          to[static_cast<std::size_t>(src)] = out.emit(m.node(src), nullptr, 0);
        } else {  // computed outside: an input
          graph_node in{op_id::input, m.node(src).type, m.node(src).out, &no_attrs, candidate_input_names[inputs++ % 16]};
          to[static_cast<std::size_t>(src)] = out.emit(in, nullptr, 0);
        }
      }
      const search_candidate& c = picked[static_cast<std::size_t>(member[static_cast<std::size_t>(i)])];
      const bool placed = c.backend != search::host;
      graph_node copy = n;
      copy.target = placed ? search::names[static_cast<std::size_t>(c.backend)] : std::string_view{};
      copy.region = placed ? member[static_cast<std::size_t>(i)] : -1;
      to[static_cast<std::size_t>(i)] = out.emit_mapped(copy, m, i, to);
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

}  // namespace detail

template <class Config, class M, class... Backends>
struct cost_candidates {
  using backends = std::tuple<Backends...>;
  using search = detail::cost_planner<Config, Backends...>;
  using pre = typename detail::cost_flow<Config, M, Backends...>::pre;
  using table = detail::candidate_list<pre, Config, Backends...>;
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

template <class Cands, std::size_t I>
struct candidate_module : detail::module_from<detail::candidate_module_pass<Cands, I>> {};

template <class Cands, std::size_t I, std::size_t J>
struct handover_module : detail::module_from<detail::candidate_module_pass<Cands, I, J>> {};

}  // namespace partita
