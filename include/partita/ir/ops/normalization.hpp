#pragma once
/// Normalization ops: batch_norm and softmax.
#include "partita/ir/ops/rules.hpp"

namespace partita {
namespace rules {

constexpr inference batch_norm(const attrs&, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  if (x.rank < 2) return expect_rank(a[0], 4);
  for (int i = 1; i < n; ++i)
    if (a[i].shp.rank != 1 || a[i].shp[0] != x[1]) return fail(problem::batch_norm_parameter, x, a[i].shp);
  return ok(x, a[0].type);
}

constexpr inference softmax(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const int axis = normalize_axis(at.axis, a[0].shp.rank);
  if (axis < 0 || axis >= a[0].shp.rank) return fail(problem::axis_out_of_range, a[0].shp, dims1(at.axis));
  return ok(a[0].shp, a[0].type);
}

}  // namespace rules

namespace detail {
constexpr attrs epsilon_attrs(float eps) {
  attrs a{};
  a.epsilon = eps;
  a.axis = 1;
  return a;
}
}  // namespace detail

/// Inference-mode batch normalisation over the channel axis (1):
/// `y = (x - mean) / sqrt(var + Eps) * gamma + beta`.
template <class X, class Gamma, class Beta, class Mean, class Var, float Eps = 1e-5f>
struct batch_norm
    : detail::op_node<op_id::batch_norm, detail::epsilon_attrs(Eps), &rules::batch_norm, X, Gamma, Beta, Mean, Var> {
  static_assert(well_formed<batch_norm, X, Gamma, Beta, Mean, Var>);
};

/// Softmax along `Axis` (default: the last one).
template <class X, int Axis = -1>
struct softmax : detail::op_node<op_id::softmax, detail::axis_attrs(Axis), &rules::softmax, X> {
  static_assert(well_formed<softmax, X>);
};

}  // namespace partita
