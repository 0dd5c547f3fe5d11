#pragma once
/// The cheapest cover of main by candidates (a shortest-path search) and coalescing.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <string_view>
#include <vector>

#include "partita/ir/graph.hpp"
#include "partita/ir/node_desc.hpp"
#include "partita/pass/cost/detail/cost_graph.hpp"

namespace partita::detail {

/// The search's result for main node `k` (local index): its target and region for
/// `partition_graph`, and for a composite root the backend and entry of its pattern.
struct node_choice {
  std::string_view target{};
  int region = -1;
  int backend = -1;
  int entry = -1;
};

/// Statistics of a search (for tests, tools and the README).
struct search_stats {
  double ns = 0;          // estimated cost of the chosen partitioning, transfers included
  double transfer_ns = 0; // of which transfers
  int candidates = 0;
  int states = 0;
  int chosen = 0;         // candidates chosen
  int partitions = 0;     // backend partitions after coalescing
  int measured = 0;       // candidates whose cost was measured
};

/// The cost of moving a tensor between two backends: `transfer<From, To>::ns`, or a measured
/// hand-over time that replaces it.
struct transfer_fn {
  double (*declared)(double) = nullptr;
  double measured = -1;  // >= 0: measured, per hand-over
  constexpr double operator()(double bytes) const { return measured >= 0 ? measured : declared(bytes); }
};

// The `template <class = void>` functions below are templates of nothing: compiled where the
// cost planner runs on a model, not in every file that includes it.
/// Scales the estimates of each backend's unmeasured candidates by how far its measured ones
/// were off (measured time over estimated time, summed), so that a partly measured search
/// compares like with like.
template <class = void>
constexpr void calibrate(std::vector<search_candidate>& cands, int k_backends) {
  for (int b = 0; b < k_backends; ++b) {
    double measured = 0, estimated = 0;
    for (const search_candidate& c : cands)
      if (c.backend == b && c.measured) {
        measured += c.ns;
        estimated += c.estimate;
      }
    if (measured <= 0 || estimated <= 0) continue;
    for (search_candidate& c : cands)
      if (c.backend == b && !c.measured) c.ns = c.estimate * (measured / estimated);
  }
}

/// A state of the search: the nodes covered so far, the backend of each covered node that
/// still has an uncovered neighbour (the frontier: later transfers depend on nothing else), the
/// cost to get there and how (the previous state and the candidate placed).
struct search_node {
  double cost = 0;
  double transfer = 0;
  int parent = -1;
  int cand = -1;
  std::vector<std::uint64_t> covered;  // by local index
  std::vector<int> frontier;           // (local index, backend, backends it was sent to) triples, by local index
  std::uint64_t key = 0;
};

constexpr bool is_covered(const std::uint64_t* c, int k) { return (c[k >> 6] >> (k & 63) & 1) != 0; }

/// Whether main node `i` has an uncovered user or producer (raw loops: this runs for every
/// state, and GCC's constant evaluator pays for every call).
constexpr bool borders_uncovered(const cost_graph& g, const std::uint64_t* cov, int i) {
  const int* first_use = g.uses.first.data();
  const int* users = g.uses.users.data();
  for (const int* u = users + first_use[i]; u != users + first_use[i + 1]; ++u)
    if (!is_covered(cov, *u - g.base)) return true;
  const graph_node& n = g.m.nodes.data()[i];
  const int* args = g.m.args.data() + n.first_arg;
  for (int a = 0; a < n.nargs; ++a)
    if (args[a] >= g.base && !is_covered(cov, args[a] - g.base)) return true;
  return false;
}

/// The frontier entry of main node `i` in `s` (its index into `s.frontier`, or -1).
constexpr int frontier_at(const cost_graph& g, const search_node& s, int i) {
  const int k = i - g.base;
  const int* f = s.frontier.data();
  for (std::size_t j = 0; j < s.frontier.size(); j += 3)
    if (f[j] == k) return static_cast<int>(j);
  return -1;
}

/// `next` = `s` with candidate `c` placed: covered set, frontier and key.
constexpr void advance(const cost_graph& g, const search_node& s, const search_candidate& c, search_node& next) {
  next.covered = s.covered;
  std::uint64_t* cov = next.covered.data();
  for (int i : c.nodes) cov[(i - g.base) >> 6] |= std::uint64_t{1} << ((i - g.base) & 63);
  next.frontier.clear();
  next.frontier.reserve(s.frontier.size() + 3 * c.nodes.size());
  const int* f = s.frontier.data();
  const std::size_t fn = s.frontier.size();
  std::size_t j = 0, q = 0;
  while (j < fn || q < c.nodes.size()) {
    int k, b, sent;
    if (q >= c.nodes.size() || (j < fn && f[j] < c.nodes[q] - g.base)) {
      k = f[j];
      b = f[j + 1];
      sent = f[j + 2];
      j += 3;
    } else {
      k = c.nodes[q++] - g.base;
      b = c.backend;
      sent = 0;
    }
    if (!borders_uncovered(g, cov, g.base + k)) continue;
    next.frontier.push_back(k);
    next.frontier.push_back(b);
    next.frontier.push_back(sent);
  }
}

/// Sets `next`'s key from its covered set and frontier.
constexpr void set_key(search_node& next) {
  std::uint64_t h = 0x3c6ef372fe94f82bull;
  for (std::size_t w = 0; w < next.covered.size(); ++w) h = hash_mix(h, next.covered.data()[w]);
  for (std::size_t w = 0; w < next.frontier.size(); ++w) h = hash_mix(h, static_cast<std::uint64_t>(next.frontier.data()[w]));
  next.key = h;
}

/// The transfers placing candidate `c` on state `s` adds, in nanoseconds: each tensor crossing
/// between two backends is charged once per receiving backend, when the later of its two ends is
/// placed (model inputs and results live with the host); `next` (advanced) records where each
/// tensor was sent. `free[from * k + to]`: no cost between the two.
constexpr double transfer_cost(const cost_graph& g, const search_node& s, const search_candidate& c, int k_backends, int host,
                               const transfer_fn* tr, const char* free, search_node& next) {
  const int to = c.backend;
  const std::uint64_t* cov = s.covered.data();
  double t = 0;
  for (int p : c.inputs) {
    int from = host;
    if (g.is_op(p)) {
      if (!is_covered(cov, p - g.base)) continue;  // charged when p is placed
      const int e = frontier_at(g, s, p);
      from = s.frontier[static_cast<std::size_t>(e) + 1];
      if (from == to || free[from * k_backends + to] || (s.frontier[static_cast<std::size_t>(e) + 2] >> to & 1) != 0) continue;
      const int ne = frontier_at(g, next, p);
      if (ne >= 0) next.frontier[static_cast<std::size_t>(ne) + 2] |= 1 << to;
    }
    if (from != to && !free[from * k_backends + to]) t += tr[from * k_backends + to](g.bytes(p));
  }
  for (int x : c.exits) {
    int sent = 0;  // receiving backends charged for x
    for (const int* u = g.uses.begin(x); u != g.uses.end(x); ++u) {
      if (!is_covered(cov, *u - g.base)) continue;  // c's own nodes are not covered yet
      const int b = s.frontier[static_cast<std::size_t>(frontier_at(g, s, *u)) + 1];
      if (b == to || (sent >> b & 1) != 0 || free[to * k_backends + b]) continue;
      sent |= 1 << b;
      t += tr[to * k_backends + b](g.bytes(x));
    }
    if (g.uses.returned[static_cast<std::size_t>(x)] && to != host && !free[to * k_backends + host] && (sent >> host & 1) == 0) {
      sent |= 1 << host;
      t += tr[to * k_backends + host](g.bytes(x));
    }
    const int ne = frontier_at(g, next, x);
    if (ne >= 0) next.frontier[static_cast<std::size_t>(ne) + 2] |= sent;
  }
  return t;
}

/// The search, in Collage's style: Dijkstra over covered-node sets, from nothing covered to
/// every op covered, placing only candidates that start at the first uncovered node (so each
/// partitioning is reached one way). Edge cost: the candidate's cost plus the transfers it
/// adds. Equal costs go to the state found first, and states are expanded in order of cost then
/// discovery, candidates in order of backend priority then size (largest first), so the result
/// is deterministic. Returns the chosen candidates in order, or the local index of a node no
/// candidate covers as `-(k + 1)` in a one-element result.
template <class = void>
constexpr std::vector<int> cheapest_cover(const cost_graph& g, const std::vector<search_candidate>& cands, int k_backends, int host,
                                          const transfer_fn* tr, search_stats& stats) {
  const std::size_t words = (static_cast<std::size_t>(g.n) + 63) / 64;
  std::vector<std::vector<int>> by_first(static_cast<std::size_t>(g.n));
  for (std::size_t c = 0; c < cands.size(); ++c) by_first[static_cast<std::size_t>(cands[c].nodes.front() - g.base)].push_back(static_cast<int>(c));
  for (std::vector<int>& b : by_first)
    std::sort(b.begin(), b.end(), [&](int x, int y) {
      const search_candidate& cx = cands[static_cast<std::size_t>(x)];
      const search_candidate& cy = cands[static_cast<std::size_t>(y)];
      if (cx.backend != cy.backend) return cx.backend < cy.backend;
      if (cx.nodes.size() != cy.nodes.size()) return cx.nodes.size() > cy.nodes.size();
      return x < y;
    });

  std::vector<search_node> states;
  {
    search_node start;
    start.parent = -1;  // set, not left to the member initializers (see cost_choice_value)
    start.cand = -1;
    start.covered.assign(words, 0);
    for (int k = 0; k < g.n; ++k)
      if (!g.is_op(g.base + k)) start.covered[static_cast<std::size_t>(k / 64)] |= std::uint64_t{1} << (k % 64);
    for (std::uint64_t w : start.covered) start.key = hash_mix(start.key, w);
    states.push_back(std::move(start));
  }
  std::vector<char> free_pairs(static_cast<std::size_t>(k_backends * k_backends), 0);
  bool all_free = true;
  for (int x = 0; x < k_backends * k_backends; ++x) {
    free_pairs[static_cast<std::size_t>(x)] = tr[x](0) == 0 && tr[x](1e9) == 0;
    all_free = all_free && free_pairs[static_cast<std::size_t>(x)];
  }
  const char* free = free_pairs.data();
  index_table seen;
  seen.insert(states[0].key, 0);
  struct entry {
    double cost;
    int seq;
    int state;
  };
  auto later = [](const entry& a, const entry& b) { return a.cost != b.cost ? a.cost > b.cost : a.seq > b.seq; };
  std::vector<entry> heap{{0.0, 0, 0}};
  int seq = 1;
  int goal = -1;
  int stuck = -1;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const entry e = heap.back();
    heap.pop_back();
    if (e.cost != states[static_cast<std::size_t>(e.state)].cost) continue;  // superseded
    int p = -1;
    for (std::size_t w = 0; w < words && p < 0; ++w) {
      const std::uint64_t open = ~states[static_cast<std::size_t>(e.state)].covered[w];
      if (open != 0) p = static_cast<int>(w * 64) + std::countr_zero(open);
    }
    if (p < 0 || p >= g.n) {
      goal = e.state;
      break;
    }
    if (by_first[static_cast<std::size_t>(p)].empty()) stuck = p;
    for (int ci : by_first[static_cast<std::size_t>(p)]) {
      const search_candidate& c = cands[static_cast<std::size_t>(ci)];
      const search_node& s = states[static_cast<std::size_t>(e.state)];
      bool overlap = false;
      for (int i : c.nodes) overlap = overlap || is_covered(s.covered.data(), i - g.base);
      if (overlap) continue;
      search_node next;
      advance(g, s, c, next);
      const double t = all_free ? 0.0 : transfer_cost(g, s, c, k_backends, host, tr, free, next);
      set_key(next);
      next.cost = s.cost + c.ns + t;
      next.transfer = s.transfer + t;
      next.parent = e.state;
      next.cand = ci;
      const int found = seen.find(next.key, [&](int o) {
        const search_node& on = states[static_cast<std::size_t>(o)];
        return on.covered == next.covered && on.frontier == next.frontier;
      });
      if (found >= 0) {
        search_node& old = states[static_cast<std::size_t>(found)];
        if (!(next.cost < old.cost)) continue;  // equal costs: the state found first stands
        old = std::move(next);
        heap.push_back({old.cost, seq++, found});
        std::push_heap(heap.begin(), heap.end(), later);
        continue;
      }
      const int idx = static_cast<int>(states.size());
      const double cost = next.cost;
      states.push_back(std::move(next));
      seen.insert(states.back().key, idx);
      heap.push_back({cost, seq++, idx});
      std::push_heap(heap.begin(), heap.end(), later);
    }
  }
  stats.states = static_cast<int>(states.size());
  if (goal < 0) return {-(stuck + 1)};
  stats.ns = states[static_cast<std::size_t>(goal)].cost;
  stats.transfer_ns = states[static_cast<std::size_t>(goal)].transfer;
  std::vector<int> chosen;
  for (int s = goal; states[static_cast<std::size_t>(s)].parent >= 0; s = states[static_cast<std::size_t>(s)].parent)
    chosen.push_back(states[static_cast<std::size_t>(s)].cand);
  std::reverse(chosen.begin(), chosen.end());
  return chosen;
}

/// Coalescing (Collage's MaxCoalesce): the chosen candidates of one backend (the host's
/// excepted: its nodes stay in main) that touch, producer to consumer, become one partition
/// whenever no path between them passes through another partition or node, until nothing
/// changes. Returns the unit (partition) of each local node: chosen candidates are units, merged
/// ones share the lowest number.
template <class = void>
constexpr std::vector<int> coalesce(const cost_graph& g, const std::vector<search_candidate>& cands, const std::vector<int>& chosen,
                                    int host) {
  const int units = static_cast<int>(chosen.size());
  std::vector<int> unit(static_cast<std::size_t>(g.n), -1);
  std::vector<int> backend(static_cast<std::size_t>(units), 0);
  for (int u = 0; u < units; ++u) {
    const search_candidate& c = cands[static_cast<std::size_t>(chosen[static_cast<std::size_t>(u)])];
    backend[static_cast<std::size_t>(u)] = c.backend;
    for (int i : c.nodes) unit[static_cast<std::size_t>(i - g.base)] = u;
  }
  std::vector<int> alias(static_cast<std::size_t>(units), 0);
  for (int u = 0; u < units; ++u) alias[static_cast<std::size_t>(u)] = u;
  auto root = [&](int u) {
    while (alias[static_cast<std::size_t>(u)] != u) u = alias[static_cast<std::size_t>(u)];
    return u;
  };
  // Successor units of each unit, rebuilt after every merge.
  std::vector<std::vector<int>> succ;
  auto rebuild = [&] {
    succ.assign(static_cast<std::size_t>(units), {});
    for (int k = 0; k < g.n; ++k) {
      const int i = g.base + k;
      if (!g.is_op(i)) continue;
      const int to = root(unit[static_cast<std::size_t>(k)]);
      for (int a = 0; a < g.node(i).nargs; ++a) {
        const int src = g.m.arg(i, a);
        if (src < g.base || !g.is_op(src)) continue;
        const int from = root(unit[static_cast<std::size_t>(src - g.base)]);
        if (from != to && !contains(succ[static_cast<std::size_t>(from)], to)) succ[static_cast<std::size_t>(from)].push_back(to);
      }
    }
  };
  // Whether `to` is reachable from `from` other than by a direct edge.
  std::vector<int> stack;
  std::vector<char> visited;
  auto detour = [&](int from, int to) {
    visited.assign(static_cast<std::size_t>(units), false);
    stack.clear();
    for (int s : succ[static_cast<std::size_t>(from)])
      if (s != to) stack.push_back(s);
    while (!stack.empty()) {
      const int x = stack.back();
      stack.pop_back();
      if (x == to) return true;
      if (visited[static_cast<std::size_t>(x)]) continue;
      visited[static_cast<std::size_t>(x)] = true;
      for (int s : succ[static_cast<std::size_t>(x)]) stack.push_back(s);
    }
    return false;
  };
  rebuild();
  for (bool changed = true; changed;) {
    changed = false;
    for (int a = 0; a < units && !changed; ++a) {
      if (root(a) != a || backend[static_cast<std::size_t>(a)] == host) continue;
      for (int b : succ[static_cast<std::size_t>(a)]) {
        if (backend[static_cast<std::size_t>(b)] != backend[static_cast<std::size_t>(a)] || detour(a, b)) continue;
        alias[static_cast<std::size_t>(std::max(a, b))] = std::min(a, b);
        rebuild();
        changed = true;
        break;
      }
    }
  }
  for (int k = 0; k < g.n; ++k)
    if (unit[static_cast<std::size_t>(k)] >= 0) unit[static_cast<std::size_t>(k)] = root(unit[static_cast<std::size_t>(k)]);
  return unit;
}

}  // namespace partita::detail
