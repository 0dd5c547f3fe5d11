#pragma once
/// Node types: how an op, its arguments and its attributes become a type.
#include <concepts>
#include <cstddef>
#include <utility>

#include "partita/ir/diagnostics.hpp"
#include "partita/ir/node_desc.hpp"

namespace partita {

/// True for types that are Partita nodes: inputs, weights, ops, tuples and types derived from
/// them (`struct block3 : relu<add<...>> {};` names a node, which keeps diagnostics and symbols
/// short in large models).
template <class T>
concept node = requires {
  { T::desc } -> std::convertible_to<const node_desc&>;
};

/// What a shape rule needs to know about one argument.
struct arg_info {
  shape shp{};
  dtype type = dtype::f32;
  bool is_tuple = false;
  bool valid = true;  // false for an argument that is not a node (already reported)
};

/// The result of a shape rule: the output shape and dtype, or the problem found.
struct inference {
  shape out{};
  dtype type = dtype::f32;
  bool is_tuple = false;
  verdict v{};
};

namespace detail {

inline constexpr node_desc not_a_node_desc{op_id::input, dtype::f32, shape{}, attrs{}, "<not a node>", nullptr, -1, 0, false};

template <class T>
constexpr const node_desc& desc_of() {
  if constexpr (node<T>) {
    return T::desc;
  } else {
    return not_a_node_desc;
  }
}

constexpr arg_info info_of(const node_desc& d) { return {d.out, d.type, d.is_tuple, d.nargs >= 0}; }

/// The descriptor machinery shared by every op: argument descriptors, the shape rule's result
/// and the node's own descriptor. `Rule` is the op's shape rule (a stateless callable).
template <op_id Op, attrs A, auto Rule, class... Args>
struct op_node {
  static constexpr const node_desc* arg_descs[] = {&desc_of<Args>()...};
  static constexpr inference result = [] {
    const arg_info infos[] = {info_of(desc_of<Args>())...};
    for (const auto& i : infos)
      if (!i.valid) return inference{};  // reported by require_node; avoid a second error
    const inference r = Rule(A, infos, static_cast<int>(sizeof...(Args)));
    // A result too large to count is reported here, and leaves an empty shape behind, before
    // the plan multiplies its dimensions (a wall of "overflow in constant expression").
    if (r.v.what == problem::none && !r.is_tuple && !r.out.countable())
      return inference{{}, r.type, false, size_verdict(r.out)};
    return r;
  }();
  static constexpr node_desc desc = [] {
    node_desc d{Op, result.type, result.out, A, {}, arg_descs, static_cast<int>(sizeof...(Args)), 0, result.is_tuple};
    d.hash = structural_hash(d);
    return d;
  }();
};

template <class Self, class... Args, std::size_t... I>
constexpr bool args_are_nodes(std::index_sequence<I...>) {
  return (diagnostic::require_node<Self, static_cast<int>(I) + 1, Args, node<Args>>::ok && ...);
}

}  // namespace detail

/// Checks a node type `Self` with arguments `Args...`: every argument is a node and the shape rule
/// accepted them. Each op's body is `static_assert(well_formed<op<...>, Args...>)`.
template <class Self, class... Args>
inline constexpr bool well_formed =
    detail::args_are_nodes<Self, Args...>(std::index_sequence_for<Args...>{}) && checked<Self, Self::result.v>;

}  // namespace partita
