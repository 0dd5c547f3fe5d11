#pragma once
/// Shape ops: flatten, reshape, squeeze, unsqueeze (and its alias expand_dims), transpose and concatenate.
#include <initializer_list>

#include "partita/ir/ops/linear.hpp"
#include "partita/ir/ops/rules.hpp"

namespace partita {
namespace rules {

constexpr inference flatten(const attrs&, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  if (x.rank < 1) return expect_rank(a[0], 2);
  return ok(shape{2, {x[0], x.elements() / x[0]}}, a[0].type);
}

constexpr inference reshape(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  shape out = at.target;
  std::int64_t known = 1;
  int infer_at = -1;
  for (int i = 0; i < out.rank; ++i) {
    if (out[i] == -1 && infer_at < 0) {
      infer_at = i;
    } else if (out[i] < 1) {
      return fail(problem::reshape_elements, a[0].shp, at.target);
    } else {
      known *= out[i];
    }
  }
  const std::int64_t total = a[0].shp.elements();
  if (infer_at >= 0) {
    if (total % known != 0) return fail(problem::reshape_elements, a[0].shp, at.target);
    out.dims[static_cast<std::size_t>(infer_at)] = total / known;
  }
  if (out.elements() != total) return fail(problem::reshape_elements, a[0].shp, at.target);
  return ok(out, a[0].type);
}

constexpr inference concatenate(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  shape out = a[0].shp;
  const int axis = normalize_axis(at.axis, out.rank);
  if (axis < 0 || axis >= out.rank) return fail(problem::axis_out_of_range, out, dims1(at.axis));
  for (int i = 1; i < n; ++i) {
    const shape& s = a[i].shp;
    if (s.rank != out.rank) return fail(problem::concatenate_dimensions, a[0].shp, s);
    for (int d = 0; d < s.rank; ++d)
      if (d != axis && s[d] != out[d]) return fail(problem::concatenate_dimensions, a[0].shp, s);
    out.dims[static_cast<std::size_t>(axis)] += s[axis];
  }
  return ok(out, a[0].type);
}

constexpr inference transpose(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  shape out{x.rank, {}};
  int seen = 0;
  shape perm{x.rank, {}};
  for (int i = 0; i < x.rank; ++i) perm.dims[static_cast<std::size_t>(i)] = at.perm[static_cast<std::size_t>(i)];
  for (int i = 0; i < x.rank; ++i) {
    const int p = at.perm[static_cast<std::size_t>(i)];
    if (p < 0 || p >= x.rank || (seen >> p) & 1) return fail(problem::transpose_permutation, x, perm);
    seen |= 1 << p;
    out.dims[static_cast<std::size_t>(i)] = x[p];
  }
  return ok(out, a[0].type);
}

}  // namespace rules

/// [N, d1, d2, ...] → [N, d1 · d2 · ...]. A view: no data moves.
template <class X>
struct flatten : detail::op_node<op_id::flatten, attrs{}, &rules::flatten, X> {
  static_assert(well_formed<flatten, X>);
};

namespace detail {
template <std::int64_t... D>
constexpr attrs reshape_attrs() {
  attrs a{};
  a.target = shape{static_cast<int>(sizeof...(D)), {D...}};
  return a;
}
}  // namespace detail

/// Reinterprets X with the target dims; one of them may be -1 (inferred). A view: no data moves.
template <class X, std::int64_t... Dims>
struct reshape : detail::op_node<op_id::reshape, detail::reshape_attrs<Dims...>(), &rules::reshape, X> {
  static_assert(sizeof...(Dims) >= 1 && sizeof...(Dims) <= max_rank, "partita: reshape needs 1 to 6 target dims");
  static_assert(well_formed<reshape, X>);
};

/// Joins tensors along `Axis`: `concatenate<1, a, b, c>`.
template <int Axis, class... Xs>
struct concatenate : detail::op_node<op_id::concatenate, detail::axis_attrs(Axis), &rules::concatenate, Xs...> {
  static_assert(sizeof...(Xs) >= 1, "partita: concatenate needs at least one input");
  static_assert(well_formed<concatenate, Xs...>);
};

}  // namespace partita

namespace partita {
namespace detail {
template <int... P>
constexpr attrs perm_attrs() {
  attrs a{};
  const int p[] = {P...};
  for (std::size_t i = 0; i < sizeof...(P); ++i) a.perm[i] = p[i];
  return a;
}

/// The shape `x` with the listed axes dropped (squeeze) or inserted as 1 (unsqueeze); rank 0
/// (and `bad` set) when an axis is out of range, repeated, or (squeeze) not of extent 1.
struct axes_result {
  shape out{};
  bool bad = false;
};

template <bool Insert>
constexpr axes_result squeezed(const shape& x, std::initializer_list<int> axes) {
  axes_result r{};
  const int rank = Insert ? x.rank + static_cast<int>(axes.size()) : x.rank;
  int marked = 0;
  for (int ax : axes) {
    const int a = normalize_axis(ax, rank);
    if (a < 0 || a >= rank || (marked >> a) & 1 || (!Insert && x[a] != 1)) r.bad = true;
    else marked |= 1 << a;
  }
  if (r.bad || rank > max_rank) return {shape{}, true};
  int from = 0;
  for (int i = 0; i < rank; ++i) {
    const bool listed = (marked >> i) & 1;
    if (Insert) {
      r.out.dims[static_cast<std::size_t>(r.out.rank++)] = listed ? 1 : x[from++];
    } else if (!listed) {
      r.out.dims[static_cast<std::size_t>(r.out.rank++)] = x[i];
    }
  }
  return r;
}

template <bool Insert, class X, int... Axes>
struct squeeze_node {
  static constexpr axes_result r = squeezed<Insert>(desc_of<X>().out, {Axes...});
  static constexpr attrs at = [] {
    attrs a{};
    a.target = r.bad ? desc_of<X>().out : r.out;
    return a;
  }();
  static constexpr verdict v = r.bad ? verdict{problem::axis_out_of_range, desc_of<X>().out, shape{static_cast<int>(sizeof...(Axes)), {Axes...}}} : verdict{};
};
}  // namespace detail

/// Permutes the axes: output axis i is input axis `Perm[i]` (`transpose<x, 0, 2, 1, 3>` turns
/// [B, S, H, D] into [B, H, S, D]). A copy; `matmul`'s transpose attributes avoid one for Q·Kᵀ.
template <class X, int... Perm>
struct transpose : detail::op_node<op_id::transpose, detail::perm_attrs<Perm...>(), &rules::transpose, X> {
  static_assert(sizeof...(Perm) == static_cast<std::size_t>(detail::desc_of<X>().out.rank) || !node<X>,
                "partita: transpose<X, Perm...> needs one entry of Perm per axis of X");
  static_assert(well_formed<transpose, X>);
};

/// Drops the listed axes, each of extent 1 (negative axes count from the back). A view.
template <class X, int... Axes>
struct squeeze : detail::op_node<op_id::reshape, detail::squeeze_node<false, X, Axes...>::at, &rules::reshape, X> {
  static_assert(sizeof...(Axes) >= 1, "partita: squeeze<X, Axes...> needs at least one axis");
  static_assert(checked<squeeze, detail::squeeze_node<false, X, Axes...>::v> && well_formed<squeeze, X>);
};

/// Inserts axes of extent 1 at the listed positions of the result (`unsqueeze<x, 0>` makes [S, D]
/// into [1, S, D]). A view.
template <class X, int... Axes>
struct unsqueeze : detail::op_node<op_id::reshape, detail::squeeze_node<true, X, Axes...>::at, &rules::reshape, X> {
  static_assert(sizeof...(Axes) >= 1, "partita: unsqueeze<X, Axes...> needs at least one axis");
  static_assert(checked<unsqueeze, detail::squeeze_node<true, X, Axes...>::v> && well_formed<unsqueeze, X>);
};

/// numpy's and TensorFlow's name for `unsqueeze`: `expand_dims<x, -1>` makes [N, C] into
/// [N, C, 1]. The same node, a reshape as `unsqueeze` and `squeeze` are: it prints as
/// `reshape`, matches `reshape_p` and runs as a view.
template <class X, int... Axes>
using expand_dims = unsqueeze<X, Axes...>;

}  // namespace partita
