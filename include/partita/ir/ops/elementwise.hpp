#pragma once
/// Elementwise ops: unary functions and activations, broadcasting binary ops.
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

/// prelu's slope broadcasts into x (ONNX's unidirectional broadcasting): the result has x's shape.
constexpr inference prelu(const attrs&, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const inference r = broadcast(a[0], a[1]);
  if (r.v.what != problem::none || !(r.out == a[0].shp)) return fail(problem::prelu_slope, a[0].shp, a[1].shp);
  return r;
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

/// Elementwise `a / b` with numpy broadcasting (IEEE: x / 0 is ±inf, 0 / 0 is NaN).
template <class A, class B>
struct divide : detail::op_node<op_id::divide, attrs{}, &rules::binary, A, B> {
  static_assert(well_formed<divide, A, B>);
};

/// Elementwise larger of `a` and `b` with numpy broadcasting; NaN if either is NaN.
template <class A, class B>
struct maximum : detail::op_node<op_id::maximum, attrs{}, &rules::binary, A, B> {
  static_assert(well_formed<maximum, A, B>);
};

/// Elementwise smaller of `a` and `b` with numpy broadcasting; NaN if either is NaN.
template <class A, class B>
struct minimum : detail::op_node<op_id::minimum, attrs{}, &rules::binary, A, B> {
  static_assert(well_formed<minimum, A, B>);
};

/// `x` where `x >= 0`, `slope · x` elsewhere; `Slope` broadcasts into `X` (a [C, 1, 1] weight
/// for PyTorch's per-channel `PReLU` on NCHW).
template <class X, class Slope>
struct prelu : detail::op_node<op_id::prelu, attrs{}, &rules::prelu, X, Slope> {
  static_assert(well_formed<prelu, X, Slope>);
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

/// Hyperbolic tangent. The C library declares `::tanh` at global scope, so this op, like `sqrt_`,
/// `exp_`, `log_`, `erf_` and `abs_` below, takes a trailing underscore: a model written under
/// `using namespace partita;` names every op without qualification (docs/ops.md, "Naming").
template <class X>
struct tanh_ : detail::op_node<op_id::tanh, attrs{}, &rules::unary, X> {
  static_assert(well_formed<tanh_, X>);
};

namespace detail {
constexpr attrs alpha_attrs(float alpha, float beta = 0.f) {
  attrs a{};
  a.alpha = alpha;
  a.beta = beta;
  return a;
}
}  // namespace detail

/// `sqrt(x)`; NaN for x < 0.
template <class X>
struct sqrt_ : detail::op_node<op_id::sqrt, attrs{}, &rules::unary, X> {
  static_assert(well_formed<sqrt_, X>);
};

/// `1 / sqrt(x)`; +inf at 0.
template <class X>
struct rsqrt : detail::op_node<op_id::rsqrt, attrs{}, &rules::unary, X> {
  static_assert(well_formed<rsqrt, X>);
};

/// `e^x`.
template <class X>
struct exp_ : detail::op_node<op_id::exp, attrs{}, &rules::unary, X> {
  static_assert(well_formed<exp_, X>);
};

/// Natural logarithm; -inf at 0, NaN below.
template <class X>
struct log_ : detail::op_node<op_id::log, attrs{}, &rules::unary, X> {
  static_assert(well_formed<log_, X>);
};

/// The error function.
template <class X>
struct erf_ : detail::op_node<op_id::erf, attrs{}, &rules::unary, X> {
  static_assert(well_formed<erf_, X>);
};

/// Exact GELU, `x/2 · (1 + erf(x / √2))`: PyTorch's default `gelu`.
template <class X>
struct gelu : detail::op_node<op_id::gelu, attrs{}, &rules::unary, X> {
  static_assert(well_formed<gelu, X>);
};

/// GELU's tanh approximation, `x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³)))`.
template <class X>
struct gelu_tanh : detail::op_node<op_id::gelu_tanh, attrs{}, &rules::unary, X> {
  static_assert(well_formed<gelu_tanh, X>);
};

/// SiLU (swish), `x · sigmoid(x)`.
template <class X>
struct silu : detail::op_node<op_id::silu, attrs{}, &rules::unary, X> {
  static_assert(well_formed<silu, X>);
};

/// `x · min(max(x + 3, 0), 6) / 6` (MobileNetV3).
template <class X>
struct hardswish : detail::op_node<op_id::hardswish, attrs{}, &rules::unary, X> {
  static_assert(well_formed<hardswish, X>);
};

/// `|x|`.
template <class X>
struct abs_ : detail::op_node<op_id::abs, attrs{}, &rules::unary, X> {
  static_assert(well_formed<abs_, X>);
};

/// `-x`.
template <class X>
struct neg : detail::op_node<op_id::neg, attrs{}, &rules::unary, X> {
  static_assert(well_formed<neg, X>);
};

/// `max(0, min(1, Alpha · x + Beta))`; the defaults are PyTorch's `hardsigmoid` (ONNX's
/// HardSigmoid defaults to Alpha = 0.2).
template <class X, float Alpha = 1.f / 6.f, float Beta = 0.5f>
struct hardsigmoid : detail::op_node<op_id::hardsigmoid, detail::alpha_attrs(Alpha, Beta), &rules::unary, X> {
  static_assert(well_formed<hardsigmoid, X>);
};

/// `x` where `x >= 0`, `Alpha · x` elsewhere.
template <class X, float Alpha = 0.01f>
struct leaky_relu : detail::op_node<op_id::leaky_relu, detail::alpha_attrs(Alpha), &rules::unary, X> {
  static_assert(well_formed<leaky_relu, X>);
};

/// `x ^ Exponent` for a constant exponent (`std::pow` semantics: NaN for a negative x and a
/// non-integer exponent).
template <class X, float Exponent>
struct power : detail::op_node<op_id::power, detail::alpha_attrs(Exponent), &rules::unary, X> {
  static_assert(well_formed<power, X>);
};

/// The names these ops had before the naming rule (docs/ops.md, "Naming"): usable where no C
/// library function of the same name is visible, and deprecated.
template <class X>
using tanh [[deprecated("partita: spell the op tanh_ (docs/ops.md, \"Naming\")")]] = tanh_<X>;
template <class X>
using sqrt [[deprecated("partita: spell the op sqrt_ (docs/ops.md, \"Naming\")")]] = sqrt_<X>;
template <class X>
using exp [[deprecated("partita: spell the op exp_ (docs/ops.md, \"Naming\")")]] = exp_<X>;
template <class X>
using log [[deprecated("partita: spell the op log_ (docs/ops.md, \"Naming\")")]] = log_<X>;
template <class X>
using erf [[deprecated("partita: spell the op erf_ (docs/ops.md, \"Naming\")")]] = erf_<X>;
template <class X>
using abs [[deprecated("partita: spell the op abs_ (docs/ops.md, \"Naming\")")]] = abs_<X>;

}  // namespace partita
