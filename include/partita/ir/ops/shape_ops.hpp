#pragma once
/// Shape ops: flatten, reshape and concatenate.
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
