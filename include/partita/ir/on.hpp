#pragma once
/// `on<Backend, Node>`: pins a node to a backend.
#include <string_view>

#include "partita/ir/node.hpp"

namespace partita {

/// Pins the op node `Expr` to backend `Backend`: every pass keeps it there (annotation uses the
/// pin, composites of other backends do not absorb it). Wrap each op that must stay:
/// `relu<on<npu, conv2d<x, w>>>`. A pinned op is a different node from the same op unpinned.
template <class Backend, class Expr>
struct on {
  static_assert(node<Expr>, "partita: on<Backend, Expr>: Expr must be a Partita op");
  static_assert(!is_leaf(Expr::desc.op), "partita: on<Backend, Expr>: inputs and weights cannot be pinned; pin an op");
  static constexpr node_desc desc = [] {
    node_desc d = Expr::desc;
    d.pinned = std::string_view(Backend::name);
    d.hash = detail::structural_hash(d);
    return d;
  }();
};

}  // namespace partita
