#pragma once
/// Elementwise ops: unary activations and broadcasting binary ops.
#include "partita/ir/ops/rules.hpp"

namespace partita {
namespace rules {

constexpr inference binary(const attrs&, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  return broadcast(a[0], a[1]);
}

constexpr inference unary(const attrs&, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  return ok(a[0].shp, a[0].type);
}

}  // namespace rules

/// Elementwise `a + b` with numpy broadcasting.
template <class A, class B>
struct add : detail::op_node<op_id::add, attrs{}, &rules::binary, A, B> {
  static_assert(well_formed<add, A, B>);
};

/// Elementwise `a - b` with numpy broadcasting.
template <class A, class B>
struct subtract : detail::op_node<op_id::subtract, attrs{}, &rules::binary, A, B> {
  static_assert(well_formed<subtract, A, B>);
};

/// Elementwise `a * b` with numpy broadcasting.
template <class A, class B>
struct multiply : detail::op_node<op_id::multiply, attrs{}, &rules::binary, A, B> {
  static_assert(well_formed<multiply, A, B>);
};

/// `max(x, 0)`.
template <class X>
struct relu : detail::op_node<op_id::relu, attrs{}, &rules::unary, X> {
  static_assert(well_formed<relu, X>);
};

namespace detail {
constexpr attrs clip_attrs(float lo, float hi) {
  attrs a{};
  a.lo = lo;
  a.hi = hi;
  return a;
}
}  // namespace detail

/// `min(max(x, Lo), Hi)`: `clip<x, 0.f, 6.f>` is ReLU6.
template <class X, float Lo, float Hi>
struct clip : detail::op_node<op_id::clip, detail::clip_attrs(Lo, Hi), &rules::unary, X> {
  static_assert(Lo <= Hi, "partita: clip<X, Lo, Hi> needs Lo <= Hi");
  static_assert(well_formed<clip, X>);
};

/// `1 / (1 + exp(-x))`.
template <class X>
struct sigmoid : detail::op_node<op_id::sigmoid, attrs{}, &rules::unary, X> {
  static_assert(well_formed<sigmoid, X>);
};

/// Hyperbolic tangent. Where `<cmath>`'s global `::tanh` is visible, spell it `partita::tanh`.
template <class X>
struct tanh : detail::op_node<op_id::tanh, attrs{}, &rules::unary, X> {
  static_assert(well_formed<tanh, X>);
};

}  // namespace partita
