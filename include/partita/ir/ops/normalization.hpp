#pragma once
/// Normalization ops: batch_norm, layer_norm, rms_norm and softmax.
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

/// layer_norm and rms_norm: x normalized over its axes from `axis` on; each parameter has the
/// shape of those axes.
constexpr inference axis_norm(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  const int axis = normalize_axis(at.axis, x.rank);
  if (axis < 0 || axis >= x.rank) return fail(problem::axis_out_of_range, x, dims1(at.axis));
  for (int i = 1; i < n; ++i) {
    const shape& p = a[i].shp;
    bool same = p.rank == x.rank - axis;
    for (int d = 0; same && d < p.rank; ++d) same = p[d] == x[axis + d];
    if (!same) return fail(problem::normalization_parameter, x, p);
  }
  return ok(x, a[0].type);
}

}  // namespace rules

namespace detail {
constexpr attrs epsilon_attrs(float eps, int axis = 1) {
  attrs a{};
  a.epsilon = eps;
  a.axis = axis;
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
struct softmax : detail::op_node<op_id::softmax, detail::axis_attrs(Axis), &rules::along_axis, X> {
  static_assert(well_formed<softmax, X>);
};

}  // namespace partita

namespace partita {

/// Layer normalization over the axes from `Axis` to the last (ONNX `LayerNormalization`;
/// PyTorch's `LayerNorm(normalized_shape)` is `Axis = -rank(normalized_shape)`):
/// `y = (x - mean) / sqrt(var + Eps) * gamma + beta`, the biased variance, mean and variance
/// taken over those axes; Gamma and Beta have their shape.
template <class X, class Gamma, class Beta, int Axis = -1, float Eps = 1e-5f>
struct layer_norm
    : detail::op_node<op_id::layer_norm, detail::epsilon_attrs(Eps, Axis), &rules::axis_norm, X, Gamma, Beta> {
  static_assert(well_formed<layer_norm, X, Gamma, Beta>);
};

/// Root-mean-square normalization over the axes from `Axis` to the last (LLaMA-style):
/// `y = x / sqrt(mean(x²) + Eps) * gamma`.
template <class X, class Gamma, int Axis = -1, float Eps = 1e-6f>
struct rms_norm : detail::op_node<op_id::rms_norm, detail::epsilon_attrs(Eps, Axis), &rules::axis_norm, X, Gamma> {
  static_assert(well_formed<rms_norm, X, Gamma>);
};

}  // namespace partita
