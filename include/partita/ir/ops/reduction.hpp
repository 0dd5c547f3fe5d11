#pragma once
/// Reductions over static axes: reduce_mean, reduce_sum and reduce_max.
#include <initializer_list>

#include "partita/ir/ops/rules.hpp"

namespace partita {
namespace rules {

constexpr inference reduce(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  if (at.axes >> x.rank) return fail(problem::reduce_axes, x, dims1(at.axes));
  shape out{};
  for (int i = 0; i < x.rank; ++i) {
    if (!((at.axes >> i) & 1)) out.dims[static_cast<std::size_t>(out.rank++)] = x[i];
    else if (at.keepdims) out.dims[static_cast<std::size_t>(out.rank++)] = 1;
  }
  return ok(out, a[0].type);
}

}  // namespace rules

namespace detail {
/// The axes as a bit mask; normalizing a negative axis needs X's rank. A bad or repeated axis
/// sets a bit past any rank so that the rule reports it.
constexpr attrs reduce_attrs(int rank, std::initializer_list<int> axes, bool keepdims) {
  attrs a{};
  a.keepdims = keepdims;
  for (int ax : axes) {
    const int i = normalize_axis(ax, rank);
    if (i < 0 || i >= rank || (a.axes >> i) & 1) a.axes |= 1 << max_rank;
    else a.axes |= 1 << i;
  }
  return a;
}
}  // namespace detail

/// The axes a reduction runs over: `reduce_mean<x, axes<-1>>`, `reduce_sum<x, axes<2, 3>, true>`.
template <int... A>
struct axes {};

namespace detail {
template <op_id Op, class X, class Axes, bool KeepDims>
struct reduce_node;
template <op_id Op, class X, int... A, bool KeepDims>
struct reduce_node<Op, X, axes<A...>, KeepDims>
    : op_node<Op, reduce_attrs(desc_of<X>().out.rank, {A...}, KeepDims), &rules::reduce, X> {
  static_assert(sizeof...(A) >= 1, "partita: a reduction needs at least one axis: axes<...>");
  // The rule sees the axes as a mask; its report (well_formed reads `result`) names them as written.
  static constexpr inference result = [] {
    inference r = reduce_node::op_node::result;
    if (r.v.what == problem::reduce_axes && sizeof...(A) <= max_rank) r.v.rhs = shape{static_cast<int>(sizeof...(A)), {A...}};
    return r;
  }();
};
}  // namespace detail

/// Mean over the axes `Axes` (an `axes<...>`), which are dropped unless `KeepDims`.
template <class X, class Axes, bool KeepDims = false>
struct reduce_mean : detail::reduce_node<op_id::reduce_mean, X, Axes, KeepDims> {
  static_assert(well_formed<reduce_mean, X>);
};

/// Sum over the axes `Axes` (an `axes<...>`), which are dropped unless `KeepDims`.
template <class X, class Axes, bool KeepDims = false>
struct reduce_sum : detail::reduce_node<op_id::reduce_sum, X, Axes, KeepDims> {
  static_assert(well_formed<reduce_sum, X>);
};

/// Maximum over the axes `Axes` (an `axes<...>`), which are dropped unless `KeepDims`; NaN
/// where any reduced element is NaN.
template <class X, class Axes, bool KeepDims = false>
struct reduce_max : detail::reduce_node<op_id::reduce_max, X, Axes, KeepDims> {
  static_assert(well_formed<reduce_max, X>);
};

}  // namespace partita
