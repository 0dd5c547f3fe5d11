#pragma once
/// Shape and dtype rules shared by several ops.
#include "partita/ir/node.hpp"

/// Shape and dtype rules shared by several ops.
namespace partita::rules {

constexpr inference fail(problem p, shape lhs, shape rhs) {
  inference r{};
  r.v = verdict{p, lhs, rhs};
  return r;
}

constexpr inference ok(shape out, dtype t) { return inference{out, t, false, {}}; }

constexpr shape dims1(std::int64_t d) { return shape{1, {d}}; }

/// A tuple among the arguments of an op that takes tensors: `tuple_as_tensor`, else none.
constexpr verdict tuple_args(const arg_info* a, int n) {
  for (int i = 0; i < n; ++i)
    if (a[i].is_tuple) return verdict{problem::tuple_as_tensor, a[i].shp, shape{}};
  return {};
}

/// The first problem common to every tensor op: a tuple argument or differing dtypes.
constexpr verdict tensor_args(const arg_info* a, int n) {
  if (auto v = tuple_args(a, n); v.what != problem::none) return v;
  for (int i = 1; i < n; ++i)
    if (a[i].type != a[0].type) return verdict{problem::dtype_mismatch, a[0].shp, a[i].shp, a[0].type, a[i].type};
  return {};
}

constexpr inference expect_rank(const arg_info& a, int rank) {
  return fail(problem::rank_mismatch, a.shp, dims1(rank));
}

/// One tensor and an axis of it (`at.axis`, negative from the back); the result has its shape
/// and dtype (softmax, cumsum).
constexpr inference along_axis(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const int axis = normalize_axis(at.axis, a[0].shp.rank);
  if (axis < 0 || axis >= a[0].shp.rank) return fail(problem::axis_out_of_range, a[0].shp, dims1(at.axis));
  return ok(a[0].shp, a[0].type);
}

/// numpy broadcasting: dimensions aligned from the back must be equal or 1.
constexpr inference broadcast(const arg_info& a, const arg_info& b) {
  const int rank = a.shp.rank > b.shp.rank ? a.shp.rank : b.shp.rank;
  shape out{rank, {}};
  for (int i = 0; i < rank; ++i) {
    const std::int64_t da = i < a.shp.rank ? a.shp.back(i) : 1;
    const std::int64_t db = i < b.shp.rank ? b.shp.back(i) : 1;
    if (da != db && da != 1 && db != 1) return fail(problem::broadcast, a.shp, b.shp);
    out.dims[static_cast<std::size_t>(rank - 1 - i)] = da == 1 ? db : da;
  }
  return ok(out, a.type);
}

}  // namespace partita::rules

namespace partita::detail {
constexpr attrs axis_attrs(int axis) {
  attrs a{};
  a.axis = axis;
  return a;
}
}  // namespace partita::detail
