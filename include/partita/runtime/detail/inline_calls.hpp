#pragma once
/// Call inlining for the plan: main with every partition and unfused composite call expanded in
/// place, each node tagged with the backend that runs it.
#include <string_view>
#include <vector>

#include "partita/backend/backend.hpp"
#include "partita/ir/layout.hpp"
#include "partita/ir/module_builder.hpp"

namespace partita::detail {

/// Main with every call expanded in place: partition functions run on their backend, a
/// composite call stays one node when its backend `fuses` it (one kernel) and is expanded on
/// that backend otherwise. Each node's `target` is the backend that runs it; `source` maps it
/// back to the module. A node of main annotated for a backend (before partitioning) runs there.
struct inlined {
  module_builder b;
  std::vector<int> source;
};

/// Appends to a call's arguments `a` the weights bound in function `fn`, each emitted as a node,
/// in the order its kernel receives them (`for_each_bound_weight`, which `step_ref` reads too).
template <class M>
constexpr void bind_weights(const M& m, int fn, std::vector<int>& a, inlined& out) {
  for_each_bound_weight(m, fn, [&](int j) {
    a.push_back(out.b.emit(m.node(j), nullptr, 0));
    out.source.push_back(j);
  });
}

template <class M, class Fuses>
constexpr int expand(const M& m, int fn, const std::vector<int>& params, std::string_view backend, Fuses fuses,
                     inlined& out) {
  const function_info& f = m.functions[static_cast<std::size_t>(fn)];
  std::vector<int> local(static_cast<std::size_t>(f.num_nodes), -1);
  std::vector<int> a;
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    const graph_node& g = m.node(i);
    int& value = local[static_cast<std::size_t>(i - f.first_node)];
    const std::string_view owner = fn == 0 && !g.target.empty() ? g.target : backend;
    a.clear();
    for (int k = 0; k < g.nargs; ++k) a.push_back(local[static_cast<std::size_t>(m.arg(i, k) - f.first_node)]);
    if (g.op == op_id::param) {
      value = params[static_cast<std::size_t>(g.index)];
      continue;
    }
    if (g.op == op_id::call) {
      const function_info& c = m.functions[static_cast<std::size_t>(g.index)];
      if (!c.backend.empty() && fuses.whole_partitions(c.backend)) {
        // One step: the backend's kernel runs the whole partition, its weights after its parameters.
        bind_weights(m, g.index, a, out);
        graph_node copy = g;
        copy.target = c.backend;
        value = out.b.emit(copy, a.data(), static_cast<int>(a.size()));
        out.source.push_back(i);
        continue;
      }
      if (!c.backend.empty()) {
        value = expand(m, g.index, a, c.backend, fuses, out);
        continue;
      }
      if (c.composite.empty() || !fuses(owner, c.composite)) {
        value = expand(m, g.index, a, owner, fuses, out);
        continue;
      }
    }
    graph_node copy = g;
    copy.target = owner;
    // A fused composite: its kernel also receives the weights bound inside it, in body order.
    if (g.op == op_id::call) bind_weights(m, g.index, a, out);
    value = out.b.emit(copy, a.data(), static_cast<int>(a.size()));
    out.source.push_back(i);
  }
  return local[static_cast<std::size_t>(f.result - f.first_node)];
}

template <class M, class Fuses>
constexpr inlined inline_calls(const M& m, Fuses fuses) {
  inlined out;
  function_info main{};
  main.set_name("main");
  main.result = expand(m, 0, {}, {}, fuses, out);
  main.num_nodes = static_cast<int>(out.b.nodes.size());
  out.b.functions.push_back(main);
  return out;
}

/// Whether the backend named `backend` among `Backends` (empty: the host, the last one) runs
/// composite `name` as one kernel (`static constexpr bool fuses(std::string_view)`).
template <class... Backends>
struct fuses_in {
  constexpr bool operator()(std::string_view backend, std::string_view name) const {
    return visit_backend<bool, Backends...>(backend_index<Backends...>(backend), [&]<class B>() { return fuses<B>(name); });
  }
  /// Whether the backend named `backend` runs each of its partitions as one step.
  constexpr bool whole_partitions(std::string_view backend) const {
    return visit_backend<bool, Backends...>(backend_index<Backends...>(backend), []<class B>() { return runs_partitions<B>; });
  }
  /// What the backend named `backend` can do with layouts at flat node `node`: its `layouts`
  /// member's `layout_role`, or `planar`.
  template <class M, class G>
  constexpr layout_role layouts(std::string_view backend, const M& module, const G& flat, int node) const {
    return visit_backend<layout_role, Backends...>(backend_index<Backends...>(backend), [&]<class B>() {
      if constexpr (requires { B::layouts(module, flat, node); }) {
        return B::layouts(module, flat, node);
      } else {
        return layout_role::planar;
      }
    });
  }
  template <class B>
  static constexpr bool fuses(std::string_view name) {
    if constexpr (requires { B::fuses(name); }) {
      return B::fuses(name);
    } else {
      return false;
    }
  }
};

}  // namespace partita::detail
