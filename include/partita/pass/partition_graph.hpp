#pragma once
/// PartitionGraph: each backend region of main becomes a function of that backend.
#include <algorithm>
#include <string_view>
#include <vector>

#include "partita/ir/uses.hpp"
#include "partita/ir/module_builder.hpp"
#include "partita/pass/detail/dedup.hpp"

namespace partita {

/// PartitionGraph: outlines each backend region of main into a function of that backend.
template <module_type M>
struct partition_graph;

namespace detail {

/// One region of main that goes to a backend.
struct region_info {
  int id = -1;
  std::string_view backend{};
  std::vector<int> nodes;    // in topological order
  std::vector<int> params;   // distinct producers outside the region, in first-reach order
  std::vector<int> outputs;  // region nodes used outside it, deduplicated, in topological order
  int function = -1;
};

// The `template <class = void>` functions below are templates of nothing: compiled where a model
// is partitioned, not in every file that includes the pass.
/// The regions of main that go to a backend, in order of their ids, each with its nodes in
/// topological order. A node's region is its `region` (set by merge_regions) or, when no node has
/// one, a region of its own.
template <class = void>
constexpr std::vector<region_info> find_regions(const module_builder& m) {
  const function_info f = m.main();
  const int n = static_cast<int>(m.nodes.size());
  std::vector<int> region(static_cast<std::size_t>(n), -1);
  {
    bool merged = false;
    for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) merged = merged || m.node(i).region >= 0;
    int next = 0;
    for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
      const graph_node& g = m.node(i);
      if (is_leaf(g.op)) continue;
      region[static_cast<std::size_t>(i)] = merged ? g.region : next++;
    }
  }
  // Regions with a backend, by id.
  std::vector<region_info> regions;
  std::vector<int> slot_of_region;
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    const graph_node& g = m.node(i);
    const int r = region[static_cast<std::size_t>(i)];
    if (r < 0 || g.target.empty()) continue;
    if (static_cast<int>(slot_of_region.size()) <= r) slot_of_region.resize(static_cast<std::size_t>(r) + 1, -1);
    int& s = slot_of_region[static_cast<std::size_t>(r)];
    if (s < 0) {
      s = static_cast<int>(regions.size());
      regions.push_back({r, g.target, {}, {}, {}, -1});
    }
    regions[static_cast<std::size_t>(s)].nodes.push_back(i);
  }
  return regions;
}

/// The region slot of each node of `m` (-1 for nodes that stay in main).
template <class = void>
constexpr std::vector<int> region_owners(const module_builder& m, const std::vector<region_info>& regions) {
  std::vector<int> owner(m.nodes.size(), -1);
  for (std::size_t s = 0; s < regions.size(); ++s)
    for (int i : regions[s].nodes) owner[static_cast<std::size_t>(i)] = static_cast<int>(s);
  return owner;
}

/// Fills each region's outputs (nodes used outside it or returned by main) and parameters
/// (producers outside it, in the order a post-order walk from the outputs first reaches them).
template <class = void>
constexpr void find_interfaces(const module_builder& m, std::vector<region_info>& regions, const std::vector<int>& owner) {
  const int n = static_cast<int>(m.nodes.size());
  const use_lists uses(m);
  std::vector<char> walked(static_cast<std::size_t>(n), false);
  for (region_info& r : regions) {
    for (int i : r.nodes) {
      bool escapes = uses.returned[static_cast<std::size_t>(i)];
      for (const int* u = uses.begin(i); u != uses.end(i); ++u) escapes = escapes || owner[static_cast<std::size_t>(*u)] != owner[static_cast<std::size_t>(i)];
      if (escapes) r.outputs.push_back(i);
    }
    // Parameters in the order a post-order walk from the outputs first reaches them.
    std::vector<std::pair<int, int>> stack;
    for (int o : r.outputs) {
      if (walked[static_cast<std::size_t>(o)]) continue;
      walked[static_cast<std::size_t>(o)] = true;
      stack.push_back({o, 0});
      while (!stack.empty()) {
        auto& [node, next] = stack.back();
        if (next < m.node(node).nargs) {
          const int a = m.arg(node, next++);
          if (owner[static_cast<std::size_t>(a)] == owner[static_cast<std::size_t>(o)]) {
            if (!walked[static_cast<std::size_t>(a)]) {
              walked[static_cast<std::size_t>(a)] = true;
              stack.push_back({a, 0});
            }
          } else if (m.node(a).op != op_id::weight && !contains(r.params, a)) {
            r.params.push_back(a);
          }
          continue;
        }
        stack.pop_back();
      }
    }
  }
}

/// Emits each region as a function of its backend into `out`, recording its number in
/// `region_info::function`: its parameters, the weights it reads bound inside, its nodes, and its
/// single output or a tuple of them.
template <class = void>
constexpr void outline_regions(const module_builder& m, std::vector<region_info>& regions, module_builder& out) {
  const int n = static_cast<int>(m.nodes.size());
  std::vector<int> to(static_cast<std::size_t>(n), -1);
  std::vector<int> a;
  function_namer namer;
  for (region_info& r : regions) {
    function_info fn{};
    namer.name(fn, out, r.backend, "_main", r.backend, {});
    fn.backend = r.backend;
    fn.first_node = static_cast<int>(out.nodes.size());
    fn.num_params = static_cast<int>(r.params.size());
    emit_params(out, m, r.params, to);
    for (int i : r.nodes) {
      for (int k = 0; k < m.node(i).nargs; ++k) {
        const int src = m.arg(i, k);
        // Not a parameter nor a node of the region: a weight, bound inside the partition.
        if (to[static_cast<std::size_t>(src)] < 0) to[static_cast<std::size_t>(src)] = out.emit(m.node(src), nullptr, 0);
      }
      graph_node copy = m.node(i);
      copy.target = {};
      copy.region = -1;
      to[static_cast<std::size_t>(i)] = out.emit_mapped(copy, m, i, to);
    }
    if (r.outputs.size() == 1) {
      fn.result = to[static_cast<std::size_t>(r.outputs[0])];
    } else {
      a.clear();
      for (int o : r.outputs) a.push_back(to[static_cast<std::size_t>(o)]);
      graph_node t{op_id::tuple, dtype::f32, shape{}, &no_attrs, {}, 0, 0, true};
      fn.result = out.emit(t, a.data(), static_cast<int>(a.size()));
    }
    fn.num_nodes = static_cast<int>(out.nodes.size()) - fn.first_node;
    r.function = static_cast<int>(out.functions.size());
    out.functions.push_back(fn);
    // Reset only what this region set: its nodes, parameters and the weights they use.
    for (int p : r.params) to[static_cast<std::size_t>(p)] = -1;
    for (int i : r.nodes) {
      to[static_cast<std::size_t>(i)] = -1;
      for (int k = 0; k < m.node(i).nargs; ++k) to[static_cast<std::size_t>(m.arg(i, k))] = -1;
    }
  }
}

/// Emits main into `out`, depth-first from its result: a partitioned node stands for its region's
/// call (or the call's projection), whose dependencies are the region's parameters.
template <class = void>
constexpr void emit_main(const module_builder& m, const std::vector<region_info>& regions, const std::vector<int>& owner,
                         module_builder& out) {
  const function_info f = m.main();
  const int n = static_cast<int>(m.nodes.size());
  std::vector<int> to(static_cast<std::size_t>(n), -1);
  std::vector<int> a;
  const int start = static_cast<int>(out.nodes.size());
  std::vector<int> call_of(regions.size(), -1);
  struct frame {
    int node;  // a main node; for a region, any of its nodes
    int next;
  };
  auto deps = [&](int node) -> const std::vector<int>* {
    const int s = owner[static_cast<std::size_t>(node)];
    return s >= 0 ? &regions[static_cast<std::size_t>(s)].params : nullptr;
  };
  auto done = [&](int node) {
    const int s = owner[static_cast<std::size_t>(node)];
    return s >= 0 ? call_of[static_cast<std::size_t>(s)] >= 0 : to[static_cast<std::size_t>(node)] >= 0;
  };
  std::vector<frame> stack{{f.result, 0}};
  while (!stack.empty()) {
    frame& fr = stack.back();
    const std::vector<int>* region_params = deps(fr.node);
    const int count = region_params ? static_cast<int>(region_params->size()) : m.node(fr.node).nargs;
    if (fr.next < count) {
      const int d = region_params ? (*region_params)[static_cast<std::size_t>(fr.next)] : m.arg(fr.node, fr.next);
      ++fr.next;
      if (!done(d)) stack.push_back({d, 0});
      continue;
    }
    const int node = fr.node;
    stack.pop_back();
    if (done(node)) continue;
    if (region_params) {
      const int s = owner[static_cast<std::size_t>(node)];
      const region_info& r = regions[static_cast<std::size_t>(s)];
      a.clear();
      for (int p : r.params) a.push_back(to[static_cast<std::size_t>(p)]);
      const graph_node& first_out = m.node(r.outputs[0]);
      graph_node c{op_id::call, first_out.type, first_out.out, &no_attrs, {}, 0, 0, r.outputs.size() > 1 || first_out.is_tuple};
      c.index = r.function;
      const int call = out.emit(c, a.data(), static_cast<int>(a.size()));
      call_of[static_cast<std::size_t>(s)] = call;
      for (std::size_t k = 0; k < r.outputs.size(); ++k) {
        if (r.outputs.size() == 1) {
          to[static_cast<std::size_t>(r.outputs[k])] = call;
          continue;
        }
        const graph_node& o = m.node(r.outputs[k]);
        graph_node g{op_id::get, o.type, o.out, &no_attrs, {}, 0, 0, o.is_tuple};
        g.index = static_cast<int>(k);
        to[static_cast<std::size_t>(r.outputs[k])] = out.emit(g, &call, 1);
      }
      continue;
    }
    graph_node copy = m.node(node);
    copy.region = -1;
    to[static_cast<std::size_t>(node)] = out.emit_mapped(copy, m, node, to);
  }
  finish_main(out, start, to[static_cast<std::size_t>(f.result)]);
}

/// PartitionGraph on main: each region annotated for a backend becomes a function named
/// `<backend>_main_<k>` (non-alphanumerics replaced by `_`; k counts that backend's partitions,
/// those of earlier runs first, then the new ones in graph order) with one parameter per
/// distinct producer outside the region and the weights it uses bound inside; it returns its
/// single output, or a tuple that callers project. Unannotated nodes stay in main. Without
/// merge_regions, every annotated node is its own region. Identical partitions (same backend,
/// body and bound weights) become one function called from each place (`dedup_functions`).
/// With `holder`, also records for each node of `m` the partition function that holds it (a
/// default `function_info` for the nodes that stay in main): what `explain` reports.
template <class = void>
constexpr module_builder partition_graph(const module_builder& m, std::vector<function_info>* holder = nullptr) {
  std::vector<region_info> regions = find_regions(m);
  if (holder) holder->assign(m.nodes.size(), function_info{});
  if (regions.empty()) return m;
  const std::vector<int> owner = region_owners(m, regions);
  find_interfaces(m, regions, owner);
  module_builder out;
  copy_functions_but_main(out, m);
  outline_regions(m, regions, out);
  emit_main(m, regions, owner, out);
  std::vector<int> canon;
  module_builder result = dedup_functions(out, holder ? &canon : nullptr);
  if (holder)
    for (const region_info& r : regions)
      for (int i : r.nodes) (*holder)[static_cast<std::size_t>(i)] = out.functions[static_cast<std::size_t>(canon[static_cast<std::size_t>(r.function)])];
  return result;
}

template <class M>
struct partition_graph_pass {
  using input = M;
  static constexpr module_builder run() { return partition_graph(to_builder(M::value)); }
};

}  // namespace detail

template <module_type M>
struct partition_graph : detail::module_from<detail::partition_graph_pass<M>> {};

}  // namespace partita
