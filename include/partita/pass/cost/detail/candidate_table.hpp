#pragma once
/// Candidate lists packed into exactly sized constexpr tables, and joined again.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "partita/pass/cost/detail/cost_graph.hpp"

namespace partita::detail {

/// The candidates of a search, stored flat (each constant evaluation stays within the
/// compiler's bounds: candidates in one, the search in another).
struct flat_candidate {
  int backend = 0;
  int first = 0, size = 0;             // into nodes / part
  int first_part = 0, num_parts = 0;   // into roots / entries
  int first_input = 0, num_inputs = 0;
  int first_exit = 0, num_exits = 0;
  double ns = 0;
  double estimate = 0;
  std::uint64_t signature = 0;
  bool measured = false;
};

struct candidate_sizes {
  std::size_t cands = 0, nodes = 0, parts = 0, inputs = 0, exits = 0;
};

constexpr candidate_sizes sizes_of(const std::vector<cost_candidate>& cs) {
  candidate_sizes s{cs.size()};
  for (const cost_candidate& c : cs) {
    s.nodes += c.nodes.size();
    s.parts += c.roots.size();
    s.inputs += c.inputs.size();
    s.exits += c.exits.size();
  }
  return s;
}

/// Every candidate of a search: what `tune` measures and the search chooses from.
template <candidate_sizes S>
struct candidate_table {
  std::array<flat_candidate, S.cands> cands{};
  std::array<int, S.nodes + 1> nodes{}, part{};
  std::array<int, S.parts + 1> roots{}, entries{};
  std::array<std::string_view, S.parts + 1> names{};
  std::array<int, S.inputs + 1> inputs{};
  std::array<int, S.exits + 1> exits{};

  /// Appends every candidate, its lists pointing into this table (which must be a constant).
  constexpr void refs(std::vector<search_candidate>& out) const {
    for (std::size_t i = 0; i < S.cands; ++i) {
      const flat_candidate& f = cands[i];
      out.push_back({f.backend, {nodes.data() + f.first, f.size}, {inputs.data() + f.first_input, f.num_inputs},
                     {exits.data() + f.first_exit, f.num_exits}, {roots.data() + f.first_part, f.num_parts},
                     {entries.data() + f.first_part, f.num_parts}, f.ns, f.estimate, f.signature, f.measured});
    }
  }

  constexpr std::vector<cost_candidate> unpack() const {
    std::vector<cost_candidate> out(S.cands);
    for (std::size_t i = 0; i < S.cands; ++i) {
      const flat_candidate& f = cands[i];
      cost_candidate& c = out[i];
      c.backend = f.backend;
      c.ns = f.ns;
      c.estimate = f.estimate;
      c.signature = f.signature;
      c.measured = f.measured;
      c.nodes.assign(nodes.begin() + f.first, nodes.begin() + f.first + f.size);
      c.part.assign(part.begin() + f.first, part.begin() + f.first + f.size);
      c.roots.assign(roots.begin() + f.first_part, roots.begin() + f.first_part + f.num_parts);
      c.entries.assign(entries.begin() + f.first_part, entries.begin() + f.first_part + f.num_parts);
      c.names.assign(names.begin() + f.first_part, names.begin() + f.first_part + f.num_parts);
      c.inputs.assign(inputs.begin() + f.first_input, inputs.begin() + f.first_input + f.num_inputs);
      c.exits.assign(exits.begin() + f.first_exit, exits.begin() + f.first_exit + f.num_exits);
    }
    return out;
  }
};

template <candidate_sizes S>
constexpr candidate_table<S> pack(const std::vector<cost_candidate>& cs) {
  candidate_table<S> t{};
  int nodes = 0, parts = 0, inputs = 0, exits = 0;
  for (std::size_t i = 0; i < S.cands; ++i) {
    const cost_candidate& c = cs[i];
    flat_candidate& f = t.cands[i];
    f = {c.backend, nodes, static_cast<int>(c.nodes.size()), parts, static_cast<int>(c.roots.size()), inputs,
         static_cast<int>(c.inputs.size()), exits, static_cast<int>(c.exits.size()), c.ns, c.estimate, c.signature, c.measured};
    for (std::size_t k = 0; k < c.nodes.size(); ++k, ++nodes) {
      t.nodes[static_cast<std::size_t>(nodes)] = c.nodes[k];
      t.part[static_cast<std::size_t>(nodes)] = c.part[k];
    }
    for (std::size_t k = 0; k < c.roots.size(); ++k, ++parts) {
      t.roots[static_cast<std::size_t>(parts)] = c.roots[k];
      t.entries[static_cast<std::size_t>(parts)] = c.entries[k];
      t.names[static_cast<std::size_t>(parts)] = c.names[k];
    }
    for (int x : c.inputs) t.inputs[static_cast<std::size_t>(inputs++)] = x;
    for (int x : c.exits) t.exits[static_cast<std::size_t>(exits++)] = x;
  }
  return t;
}

/// Candidate tables in order; `refs` lists their candidates without copying them.
template <class... Ts>
struct table_list {
  static constexpr std::size_t size = (std::size_t{0} + ... + Ts::sizes.cands);
  static constexpr void refs(std::vector<search_candidate>& out) { (Ts::value.refs(out), ...); }
  static constexpr std::vector<cost_candidate> unpacked() {
    std::vector<cost_candidate> all;
    ((append(all, Ts::value.unpack())), ...);
    return all;
  }
  static constexpr void append(std::vector<cost_candidate>& all, std::vector<cost_candidate> more) {
    for (cost_candidate& c : more) all.push_back(std::move(c));
  }
};

template <class... Lists>
struct concat_tables;
template <class... Ts>
struct concat_tables<table_list<Ts...>> {
  using type = table_list<Ts...>;
};
template <class... Ts, class... Us, class... Rest>
struct concat_tables<table_list<Ts...>, table_list<Us...>, Rest...> : concat_tables<table_list<Ts..., Us...>, Rest...> {};

}  // namespace partita::detail
