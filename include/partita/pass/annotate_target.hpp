#pragma once
/// AnnotateTarget: each op of main is marked with the backend that runs it (pins, composites, support).
#include <string_view>

#include "partita/backend/backend.hpp"
#include "partita/ir/view.hpp"
#include "partita/ir/uses.hpp"
#include "partita/ir/module_builder.hpp"

namespace partita {

/// AnnotateTarget: decides which backend runs each node of main (`Backends` in priority order;
/// host backends may be listed, last, and take whatever no other backend claims).
template <module_type M, class... Backends>
struct annotate_target;

namespace detail {

/// The target the first of `Backends` that claims `view` (an op) names; host backends never
/// claim (their nodes stay "default", the host's, so annotation can be re-run).
template <class... Backends>
constexpr std::string_view first_supporting(const op_view& v) {
  std::string_view chosen{};
  ((chosen.empty() && !is_host_backend<Backends> && backend_supports<Backends>(v) ? (chosen = std::string_view(Backends::name), 0) : 0),
   ...);
  return chosen;
}

template <class... Backends>
constexpr bool is_listed(std::string_view name) {
  return ((!is_host_backend<Backends> && std::string_view(Backends::name) == name) || ...);
}

/// AnnotateTarget on main: pinned nodes take their pin, existing annotations stay, composite
/// calls go to the backend named by the composite's prefix, other ops to the first backend whose
/// `supports` accepts them; everything else is left to the host (an empty target). Tuples and
/// projections are structural in Partita (they move no data) and always stay with the host, so
/// partitions never return nested tuples.
template <class... Backends>
constexpr module_builder annotate_target(module_builder m) {
  const function_info f = m.main();
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    graph_node& n = m.nodes[static_cast<std::size_t>(i)];
    if (is_leaf(n.op)) continue;
    if (!n.pinned.empty()) {
      n.target = n.pinned;
      continue;
    }
    if (!n.target.empty()) continue;  // an earlier run's choice stands
    if (n.op == op_id::call) {
      const function_info& callee = m.functions[static_cast<std::size_t>(n.index)];
      const std::string_view owner = composite_backend(callee.composite);
      if (callee.backend.empty() && !owner.empty() && is_listed<Backends...>(owner)) n.target = owner;
      continue;  // calls of partitions are host nodes
    }
    if (n.op == op_id::tuple || n.op == op_id::get) continue;  // structural: stays with the host
    n.target = first_supporting<Backends...>(op_view(m.nodes.data(), m.args.data(), i));
  }
  return m;
}

template <class M, class... Backends>
struct annotate_target_pass {
  using input = M;
  static constexpr module_builder run() {
    if constexpr (!backends_ok<Backends...>) return to_builder(M::value);  // reported by check_backend
    else return annotate_target<Backends...>(to_builder(M::value));
  }
};

}  // namespace detail

template <module_type M, class... Backends>
struct annotate_target : detail::module_from<detail::annotate_target_pass<M, Backends...>> {};

}  // namespace partita
