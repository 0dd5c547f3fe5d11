#pragma once
/// The cost graph: candidates, their estimates, signatures and the union rule.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <string_view>
#include <vector>

#include "partita/backend/cost.hpp"
#include "partita/ir/node_desc.hpp"
#include "partita/pass/merge_composite.hpp"

namespace partita::detail {

/// One candidate of the cost-based search: a set of main's nodes a backend could run as one
/// sub-graph, made of composite matches (`roots`, `entries`) and single ops.
struct cost_candidate {
  int backend = 0;             // index in the search's backends
  std::vector<int> nodes;      // main nodes it computes, ascending (weights excluded)
  std::vector<int> part;       // parallel to `nodes`: the composite match holding it, or -1
  std::vector<int> roots;      // roots of its composite matches
  std::vector<int> entries;    // their pattern-table entries
  std::vector<std::string_view> names;  // their pattern names
  std::vector<int> inputs;     // distinct non-weight producers outside it
  std::vector<int> exits;      // its nodes used outside it or returned by main
  double ns = 0;        // measured, or else estimated
  double estimate = 0;  // always the estimate
  std::uint64_t signature = 0;
  bool measured = false;
};

/// A read-only run of ints in a candidate table (a static constant): what the search reads.
struct int_span {
  const int* p = nullptr;
  int n = 0;
  constexpr const int* begin() const { return p; }
  constexpr const int* end() const { return p + n; }
  constexpr std::size_t size() const { return static_cast<std::size_t>(n); }
  constexpr int operator[](std::size_t i) const { return p[i]; }
  constexpr int front() const { return p[0]; }
};

constexpr bool contains(int_span v, int x) {
  for (int y : v)
    if (y == x) return true;
  return false;
}

/// A candidate as the search sees it: its lists point into a candidate table, so that building
/// the search's list allocates nothing per candidate.
struct search_candidate {
  int backend = 0;
  int_span nodes, inputs, exits, roots, entries;
  double ns = 0, estimate = 0;
  std::uint64_t signature = 0;
  bool measured = false;
};

/// Main's nodes, their users and per-node sizes, shared by every step of the search.
struct cost_graph {
  const module_builder& m;
  use_lists uses;
  int base;
  int n;

  constexpr explicit cost_graph(const module_builder& mb)
      : m(mb), uses(mb), base(mb.main().first_node), n(mb.main().num_nodes) {}
  constexpr const graph_node& node(int i) const { return m.node(i); }
  constexpr bool is_op(int i) const { return !is_leaf(m.node(i).op); }
  constexpr double bytes(int i) const {
    const graph_node& g = m.node(i);
    return g.is_tuple ? 0.0 : static_cast<double>(g.out.elements()) * static_cast<double>(size_of(g.type));
  }
};

/// Arithmetic of node `i` of module `m` (a composite call: its body's).
constexpr double op_flops(const module_builder& m, int i) {
  const graph_node& g = m.node(i);
  const double out = g.is_tuple ? 0.0 : static_cast<double>(g.out.elements());
  switch (g.op) {
    case op_id::conv2d: {
      const shape& w = m.node(m.arg(i, 1)).out;
      return 2.0 * out * static_cast<double>(w[1] * w[2] * w[3]);
    }
    case op_id::dense: return 2.0 * out * static_cast<double>(m.node(m.arg(i, 1)).out.back(0));
    case op_id::max_pool2d:
    case op_id::avg_pool2d: return out * g.at->window[0] * g.at->window[1];
    case op_id::global_avg_pool2d: return static_cast<double>(m.node(m.arg(i, 0)).out.elements());
    case op_id::batch_norm: return 2.0 * out;
    case op_id::sigmoid:
    case op_id::tanh:
    case op_id::softmax: return 8.0 * out;
    case op_id::call: {
      const function_info& f = m.functions[static_cast<std::size_t>(g.index)];
      double s = 0;
      for (int j = f.first_node; j < f.first_node + f.num_nodes; ++j)
        if (!is_leaf(m.node(j).op)) s += op_flops(m, j);
      return s;
    }
    case op_id::flatten:
    case op_id::reshape:
    case op_id::tuple:
    case op_id::get: return 0.0;
    default: return out;
  }
}

constexpr std::uint64_t hash_text(std::uint64_t h, std::string_view s) {
  for (char c : s) h = hash_mix(h, static_cast<unsigned char>(c));
  return hash_mix(h, s.size());
}

constexpr std::uint64_t hash_shape(std::uint64_t h, const shape& s) {
  h = hash_mix(h, static_cast<std::uint64_t>(s.rank));
  for (int i = 0; i < s.rank; ++i) h = hash_mix(h, static_cast<std::uint64_t>(s[i]));
  return h;
}

constexpr std::uint64_t hash_attrs(std::uint64_t h, const attrs& a) {
  for (int k = 0; k < 2; ++k) {
    h = hash_mix(h, static_cast<std::uint64_t>(a.stride[static_cast<std::size_t>(k)]));
    h = hash_mix(h, static_cast<std::uint64_t>(a.padding[static_cast<std::size_t>(k)]));
    h = hash_mix(h, static_cast<std::uint64_t>(a.dilation[static_cast<std::size_t>(k)]));
    h = hash_mix(h, static_cast<std::uint64_t>(a.window[static_cast<std::size_t>(k)]));
    // Mixed in only where set, so that signatures measured before it existed stay valid.
    if (a.padding_end[static_cast<std::size_t>(k)] >= 0)
      h = hash_mix(h, static_cast<std::uint64_t>(a.padding_end[static_cast<std::size_t>(k)]));
  }
  h = hash_mix(h, static_cast<std::uint64_t>(a.groups));
  h = hash_mix(h, static_cast<std::uint64_t>(a.axis));
  h = hash_mix(h, std::bit_cast<std::uint32_t>(a.lo));
  h = hash_mix(h, std::bit_cast<std::uint32_t>(a.hi));
  h = hash_mix(h, std::bit_cast<std::uint32_t>(a.epsilon));
  h = hash_mix(h, a.count_include_pad ? 1u : 0u);
  return hash_shape(h, a.target);
}

/// Fills the inputs, exits and signature of candidate `c` (nodes and parts set) and returns the
/// numbers its view shows; `by_node` gets each node's pattern name (empty for a single op).
constexpr candidate_view::numbers describe(const cost_graph& g, cost_candidate& c, std::string_view backend,
                                           std::vector<std::string_view>& by_node) {
  const module_builder& m = g.m;
  const int* nodes = c.nodes.data();
  const int size = static_cast<int>(c.nodes.size());
  auto inside = [&](int src) {
    for (int q = 0; q < size && nodes[q] <= src; ++q)
      if (nodes[q] == src) return q;
    return -1;
  };
  candidate_view::numbers num{};
  c.inputs.clear();
  c.exits.clear();
  by_node.assign(c.nodes.size(), std::string_view{});
  std::vector<int> ext;  // distinct outside producers in first-reach order, weights included
  ext.reserve(8);
  c.inputs.reserve(4);
  c.exits.reserve(2);
  std::uint64_t h = hash_text(0x6a09e667f3bcc909ull, backend);
  for (int k = 0; k < size; ++k) {
    const int i = nodes[k];
    const graph_node& n = m.node(i);
    num.flops += op_flops(m, i);
    const int part = c.part[static_cast<std::size_t>(k)];
    if (part >= 0) by_node[static_cast<std::size_t>(k)] = c.names[static_cast<std::size_t>(part)];
    h = hash_mix(h, static_cast<std::uint64_t>(n.op));
    h = hash_mix(h, static_cast<std::uint64_t>(n.type));
    h = hash_shape(h, n.out);
    h = hash_attrs(h, *n.at);
    h = hash_text(h, by_node[static_cast<std::size_t>(k)]);
    if (n.op == op_id::call) h = hash_text(h, m.functions[static_cast<std::size_t>(n.index)].composite);
    for (int a = 0; a < n.nargs; ++a) {
      const int src = m.arg(i, a);
      const int q = inside(src);
      if (q >= 0) {
        h = hash_mix(hash_mix(h, 1), static_cast<std::uint64_t>(q));
        continue;
      }
      int e = -1;
      for (std::size_t x = 0; x < ext.size(); ++x)
        if (ext.data()[x] == src) e = static_cast<int>(x);
      if (e < 0) {
        e = static_cast<int>(ext.size());
        ext.push_back(src);
        num.boundary_bytes += g.bytes(src);
        if (m.node(src).op != op_id::weight) c.inputs.push_back(src);
      }
      h = hash_mix(hash_mix(h, m.node(src).op == op_id::weight ? 2 : 3), static_cast<std::uint64_t>(e));
      h = hash_shape(h, m.node(src).out);
    }
    bool exits = g.uses.returned[static_cast<std::size_t>(i)];
    for (const int* u = g.uses.begin(i); u != g.uses.end(i) && !exits; ++u) exits = inside(*u) < 0;
    if (exits) {
      c.exits.push_back(i);
      num.boundary_bytes += g.bytes(i);
    }
  }
  // Steps: one per composite match and per single op that runs a kernel, each reading its
  // distinct outside arguments and writing its result.
  std::vector<int> seen;
  seen.reserve(8);
  auto read = [&](int i, int p) {
    for (int a = 0; a < m.node(i).nargs; ++a) {
      const int src = m.arg(i, a);
      const int q = inside(src);
      if ((p >= 0 && q >= 0 && c.part[static_cast<std::size_t>(q)] == p) || contains(seen, src)) continue;
      seen.push_back(src);
      num.step_bytes += g.bytes(src);
    }
  };
  for (int p = 0; p < static_cast<int>(c.roots.size()); ++p) {
    ++num.steps;
    seen.clear();
    for (int k = 0; k < size; ++k)
      if (c.part[static_cast<std::size_t>(k)] == p) read(nodes[k], p);
    num.step_bytes += g.bytes(c.roots[static_cast<std::size_t>(p)]);
  }
  for (int k = 0; k < size; ++k) {
    const op_id op = m.node(nodes[k]).op;
    if (c.part[static_cast<std::size_t>(k)] >= 0 || is_view(op) || op == op_id::tuple || op == op_id::get) continue;
    ++num.steps;
    seen.clear();
    read(nodes[k], -1);
    num.step_bytes += g.bytes(nodes[k]);
  }
  num.signature = h;
  c.signature = h;
  return num;
}

/// Whether `nodes` (ascending) is a valid sub-graph: no path leaves it and comes back (convex),
/// at most one node whose value is used outside it, and no longer chain of ops than `max_depth`.
constexpr bool valid_union(const cost_graph& g, const std::vector<int>& nodes, int max_depth, std::vector<signed char>& mark,
                           std::vector<int>& depth) {
  const module_builder& m = g.m;
  const int lo = nodes.front(), hi = nodes.back();
  for (int i = lo; i <= hi; ++i) mark[static_cast<std::size_t>(i - g.base)] = 0;
  for (int i : nodes) mark[static_cast<std::size_t>(i - g.base)] = 1;
  bool ok = true;
  int exits = 0;
  for (int i = lo; i <= hi && ok; ++i) {
    const bool in = mark[static_cast<std::size_t>(i - g.base)] == 1;
    bool from_inside = false, tainted = false;
    int d = 0;
    for (int a = 0; a < m.node(i).nargs; ++a) {
      const int src = m.arg(i, a);
      if (src < lo || src < g.base) continue;
      const signed char s = mark[static_cast<std::size_t>(src - g.base)];
      from_inside = from_inside || s == 1;
      tainted = tainted || s == 2;
      if (s == 1 && depth[static_cast<std::size_t>(src - g.base)] > d) d = depth[static_cast<std::size_t>(src - g.base)];
    }
    if (in) {
      ok = !tainted;  // a path left the set and comes back
      depth[static_cast<std::size_t>(i - g.base)] = d + 1;
      ok = ok && d + 1 <= max_depth;
      bool out = g.uses.returned[static_cast<std::size_t>(i)];
      for (const int* u = g.uses.begin(i); u != g.uses.end(i); ++u)
        out = out || *u > hi || mark[static_cast<std::size_t>(*u - g.base)] != 1;
      exits += out ? 1 : 0;
    } else if (from_inside || tainted) {
      mark[static_cast<std::size_t>(i - g.base)] = 2;
    }
  }
  return ok && exits <= 1;
}

}  // namespace partita::detail
