#pragma once
/// Identical functions become one, called from every place that called either (as Relax's
/// block builder deduplicates fused functions).
#include <cstdint>
#include <vector>

#include "partita/ir/module_builder.hpp"
#include "partita/ir/node_desc.hpp"
#include "partita/ir/uses.hpp"

namespace partita::detail {

/// A hash of what `same_function` compares that ignores the order of the nodes: a function
/// outlined from a different place may list the same nodes in another topological order.
constexpr std::uint64_t function_hash(const module_builder& m, int fn) {
  const function_info& f = m.functions[static_cast<std::size_t>(fn)];
  std::uint64_t h = hash_mix(0x9e3779b97f4a7c15ull, static_cast<std::uint64_t>(f.num_nodes));
  for (char c : f.composite) h = hash_mix(h, static_cast<unsigned char>(c));
  for (char c : f.backend) h = hash_mix(h, static_cast<unsigned char>(c));
  std::uint64_t nodes = 0;
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    const graph_node& n = m.node(i);
    std::uint64_t g = hash_mix(hash_mix(1, static_cast<std::uint64_t>(n.op)), static_cast<std::uint64_t>(n.nargs));
    for (char c : n.name) g = hash_mix(g, static_cast<unsigned char>(c));
    // A sum, the same whatever the order, of hashes scrambled first: summed as they are, two
    // names differing in one bit ("w1", "w5") can cancel out across nodes.
    g ^= g >> 33;
    g *= 0xff51afd7ed558ccdull;
    g ^= g >> 33;
    g *= 0xc4ceb9fe1a85ec53ull;
    g ^= g >> 33;
    nodes += g;
  }
  return hash_mix(h, nodes);
}

/// Whether node `i` of one function and node `j` of another are the same computation: the same
/// op, dtype, shape, attributes, name (weights by name), field or parameter index, placement and
/// callee (through `canon`), on arguments that are the same in turn. `map` pairs the first
/// function's nodes with the second's, one to one.
constexpr bool same_node(const module_builder& m, int i, int j, int first_a, int first_b, std::vector<int>& map, std::vector<int>& back,
                         const std::vector<int>& canon) {
  int& to = map[static_cast<std::size_t>(i - first_a)];
  int& from = back[static_cast<std::size_t>(j - first_b)];
  if (to >= 0 || from >= 0) return to == j && from == i;
  const graph_node& x = m.node(i);
  const graph_node& y = m.node(j);
  if (x.op != y.op || x.type != y.type || !(x.out == y.out) || !(*x.at == *y.at) || x.name != y.name || x.nargs != y.nargs ||
      x.is_tuple != y.is_tuple || x.pinned != y.pinned || x.target != y.target || x.region != y.region)
    return false;
  if (x.op == op_id::call ? canon[static_cast<std::size_t>(x.index)] != canon[static_cast<std::size_t>(y.index)] : x.index != y.index)
    return false;
  to = j;
  from = i;
  for (int q = 0; q < x.nargs; ++q)
    if (!same_node(m, m.arg(i, q), m.arg(j, q), first_a, first_b, map, back, canon)) return false;
  return true;
}

/// Whether functions `a` and `b` of `m` compute the same thing with the same weights: the same
/// composite and backend attributes and parameters, and results that are the same computation
/// (`same_node`), whatever order each function lists its nodes in.
constexpr bool same_function(const module_builder& m, int a, int b, const std::vector<int>& canon) {
  const function_info& fa = m.functions[static_cast<std::size_t>(a)];
  const function_info& fb = m.functions[static_cast<std::size_t>(b)];
  if (fa.composite != fb.composite || fa.backend != fb.backend || fa.num_nodes != fb.num_nodes || fa.num_params != fb.num_params)
    return false;
  std::vector<int> map(static_cast<std::size_t>(fa.num_nodes), -1), back(static_cast<std::size_t>(fb.num_nodes), -1);
  return same_node(m, fa.result, fb.result, fa.first_node, fb.first_node, map, back, canon);
}

// `dedup_functions` is a template of nothing: compiled where a model is, not in every file.
/// Replaces every function identical to an earlier one (`same_function`) by that one: its
/// calls call the earlier function, and it goes. The survivors keep their names and order.
/// Functions are compared in index order, so a function's callees (outlined before it) are
/// already merged when it is compared.
/// With `canon_out`, also gives the function each function of `m` became (an index of `m`).
template <class = void>
constexpr module_builder dedup_functions(const module_builder& m, std::vector<int>* canon_out = nullptr) {
  const int nf = static_cast<int>(m.functions.size());
  std::vector<int> canon(static_cast<std::size_t>(nf), 0);
  std::vector<std::uint64_t> hash(static_cast<std::size_t>(nf), 0);
  bool merged = false;
  for (int f = 0; f < nf; ++f) {
    canon[static_cast<std::size_t>(f)] = f;
    if (f == 0) continue;  // main
    hash[static_cast<std::size_t>(f)] = function_hash(m, f);
    for (int g = 1; g < f; ++g)
      if (canon[static_cast<std::size_t>(g)] == g && hash[static_cast<std::size_t>(g)] == hash[static_cast<std::size_t>(f)] &&
          same_function(m, g, f, canon)) {
        canon[static_cast<std::size_t>(f)] = g;
        merged = true;
        break;
      }
  }
  if (canon_out) *canon_out = canon;
  if (!merged) return m;
  module_builder out = m;
  for (graph_node& n : out.nodes)
    if (n.op == op_id::call) n.index = canon[static_cast<std::size_t>(n.index)];
  return remove_dead_functions(out);
}

}  // namespace partita::detail
