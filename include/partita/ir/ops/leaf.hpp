#pragma once
/// Leaf ops: model inputs and named weights.
#include <cstdint>

#include "partita/core/fixed_string.hpp"
#include "partita/ir/node.hpp"

namespace partita {
namespace detail {

template <op_id Op, fixed_string Name, dtype D, std::int64_t... Dims>
struct leaf_node {
  static_assert(sizeof...(Dims) <= max_rank, "partita: too many dimensions for an input or weight (at most 6)");
  static_assert(((Dims > 0) && ...), "partita: every dimension of an input or weight must be positive");
  static_assert(Name.size() > 0, "partita: an input or weight needs a non-empty name");
  static constexpr node_desc desc = [] {
    node_desc d{Op, D, shape_of<Dims...>, attrs{}, Name.view(), nullptr, 0, 0, false};
    d.hash = structural_hash(d);
    return d;
  }();
};

}  // namespace detail

/// A model input, fed at `run` time: `input<"x", f32, 1, 784>`.
template <fixed_string Name, dtype D, std::int64_t... Dims>
struct input : detail::leaf_node<op_id::input, Name, D, Dims...> {};

/// A named weight, bound once with `bind`: `weight<"fc1.weight", f32, 512, 784>`.
template <fixed_string Name, dtype D, std::int64_t... Dims>
struct weight : detail::leaf_node<op_id::weight, Name, D, Dims...> {};

}  // namespace partita
