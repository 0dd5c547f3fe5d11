#pragma once
/// MergeCompilerRegions: neighbouring nodes of one backend grow into regions, without cycles.
#include <bit>
#include <cstdint>
#include <vector>

#include "partita/ir/module_builder.hpp"

namespace partita {

/// MergeCompilerRegions: groups annotated nodes of main into maximal regions per backend
/// without creating cycles; `partition_graph` outlines them.
template <module_type M>
struct merge_regions;

namespace detail {

/// Region merging state: union-find over main's nodes, each region's members and its
/// restriction set (a bitset of region ids it must never merge with).
class region_sets {
 public:
  constexpr explicit region_sets(int n)
      : words_((static_cast<std::size_t>(n) + 63) / 64), parent_(static_cast<std::size_t>(n), 0), members_(static_cast<std::size_t>(n)),
        bits_(static_cast<std::size_t>(n) * words_, 0) {
    for (int i = 0; i < n; ++i) {
      parent_[static_cast<std::size_t>(i)] = i;
      members_[static_cast<std::size_t>(i)].push_back(i);
    }
  }

  constexpr int find(int x) {
    while (parent_[static_cast<std::size_t>(x)] != x) {
      parent_[static_cast<std::size_t>(x)] = parent_[static_cast<std::size_t>(parent_[static_cast<std::size_t>(x)])];
      x = parent_[static_cast<std::size_t>(x)];
    }
    return x;
  }
  /// Adds region `p` (a representative) to `r`'s restrictions.
  constexpr void restrict_to(int r, int p) { bits_[row(r) + static_cast<std::size_t>(p) / 64] |= std::uint64_t{1} << (p % 64); }
  /// r's restrictions |= p's restrictions.
  constexpr void inherit(int r, int p) {
    for (std::size_t w = 0; w < words_; ++w) bits_[row(r) + w] |= bits_[row(p) + w];
  }
  /// Whether r's restrictions mention region p: a set that mentioned a region merged into p since
  /// mentions p now, so any member of p counts.
  constexpr bool restricted(int r, int p) {
    // Whichever is smaller: p's members, or the bits set in r's restrictions.
    const auto& members = members_[static_cast<std::size_t>(p)];
    if (members.size() <= words_) {
      for (int m : members)
        if (bits_[row(r) + static_cast<std::size_t>(m) / 64] >> (m % 64) & 1) return true;
      return false;
    }
    for (std::size_t w = 0; w < words_; ++w)
      for (std::uint64_t b = bits_[row(r) + w]; b != 0; b &= b - 1)
        if (find(static_cast<int>(w * 64 + static_cast<std::size_t>(std::countr_zero(b)))) == p) return true;
    return false;
  }
  /// Merges region p into region r (r survives); the shorter member list is appended to the longer.
  constexpr void merge(int p, int r) {
    parent_[static_cast<std::size_t>(p)] = r;
    auto& to = members_[static_cast<std::size_t>(r)];
    auto& from = members_[static_cast<std::size_t>(p)];
    if (from.size() > to.size()) to.swap(from);
    for (int m : from) to.push_back(m);
    from.clear();
  }

 private:
  constexpr std::size_t row(int r) const { return static_cast<std::size_t>(r) * words_; }
  std::size_t words_;
  std::vector<int> parent_;
  std::vector<std::vector<int>> members_;
  std::vector<std::uint64_t> bits_;
};

/// MergeCompilerRegions on main, as Relay does it: every annotated node starts as its own
/// region; visiting regions parents first, a region inherits its parents' restrictions, a parent
/// of another target (the host counts as one) is added to them, and a parent of the same target
/// that is not restricted is merged in. Merges happen only along producer → consumer edges, and
/// the restrictions stop any merge that would create a cycle through another backend's region.
constexpr module_builder merge_regions(module_builder m) {
  const function_info f = m.main();
  const int n = static_cast<int>(m.nodes.size());
  region_sets rs(n);
  std::vector<int> parents;
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    const graph_node& g = m.node(i);
    if (is_leaf(g.op)) continue;
    parents.clear();
    for (int k = 0; k < g.nargs; ++k) {
      const int a = m.arg(i, k);
      if (is_leaf(m.node(a).op)) continue;
      const int p = rs.find(a);
      bool dup = false;
      for (int q : parents) dup = dup || q == p;
      if (!dup) parents.push_back(p);
    }
    for (int p : parents) rs.inherit(i, p);
    for (int p : parents) {
      if (m.node(p).target != g.target) {
        rs.restrict_to(i, p);
      } else if (!rs.restricted(i, p)) {
        rs.merge(p, i);
      }
    }
  }
  // Number regions 0, 1, 2, ... in order of their first node (ids of host regions included, so
  // partition names can skip numbers, as Relay's do).
  std::vector<int> id(static_cast<std::size_t>(n), -1);
  int next = 0;
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    if (is_leaf(m.node(i).op)) continue;
    const int r = rs.find(i);
    if (id[static_cast<std::size_t>(r)] < 0) id[static_cast<std::size_t>(r)] = next++;
    m.nodes[static_cast<std::size_t>(i)].region = id[static_cast<std::size_t>(r)];
  }
  return m;
}

template <class M>
struct merge_regions_pass {
  using input = M;
  static constexpr module_builder run() { return merge_regions(to_builder(M::value)); }
};

}  // namespace detail

template <module_type M>
struct merge_regions : detail::module_from<detail::merge_regions_pass<M>> {};

}  // namespace partita
