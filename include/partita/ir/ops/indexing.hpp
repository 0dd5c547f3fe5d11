#pragma once
/// Ops that compute or follow indices: `topk`, `argmax`, `argmin`, `cumsum`, `gather_elements`,
/// `non_max_suppression`.
#include <limits>

#include "partita/ir/ops/rules.hpp"

namespace partita {

/// One tensor of a tuple-valued op's value (`is_tuple_op`): its shape and dtype.
struct op_field {
  shape out{};
  dtype type = dtype::f32;
};

/// Most fields a tuple-valued op has (lstm: Y, Y_h, Y_c).
inline constexpr int max_op_fields = 3;
/// Most arguments a tuple-valued op takes (lstm: X, W, R, B, sequence lengths, initial states,
/// peepholes).
inline constexpr int max_op_args = 8;

/// The fields of a tuple-valued op, in order: `get<Op, I>` reads field I.
struct op_fields {
  std::array<op_field, max_op_fields> at{};
  int count = 0;
};

namespace rules {

/// topk's two fields: the values (X's dtype) and their indices (i64), X's shape with K along the
/// axis; none when K or the axis does not fit X (`topk` reports it).
constexpr op_fields topk_fields(const attrs& at, const arg_info* a, int) {
  const shape& x = a[0].shp;
  const int axis = normalize_axis(at.axis, x.rank);
  if (axis < 0 || axis >= x.rank || at.start < 1 || at.start > x[axis]) return {};
  shape y = x;
  y.dims[static_cast<std::size_t>(axis)] = at.start;
  return {{op_field{y, a[0].type}, op_field{y, dtype::i64}}, 2};
}

constexpr inference topk(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const int axis = normalize_axis(at.axis, a[0].shp.rank);
  if (axis < 0 || axis >= a[0].shp.rank) return fail(problem::axis_out_of_range, a[0].shp, dims1(at.axis));
  if (topk_fields(at, a, n).count == 0 || a[0].type == dtype::boolean || a[0].type == dtype::f16)
    return fail(problem::topk_count, a[0].shp, shape{2, {at.start, at.axis}});
  return inference{{}, a[0].type, true, {}};
}

/// argmax, argmin: X (f32, integers or booleans) reduced along an axis to the index of its extreme, i64.
constexpr inference arg_reduce(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  const int axis = normalize_axis(at.axis, x.rank);
  if (axis < 0 || axis >= x.rank) return fail(problem::axis_out_of_range, x, dims1(at.axis));
  shape y{};
  for (int d = 0; d < x.rank; ++d)
    if (d != axis || at.keepdims) y.dims[static_cast<std::size_t>(y.rank++)] = d == axis ? 1 : x[d];
  return ok(y, dtype::i64);
}

/// gather_elements: indices (i32 or i64) of X's rank, no larger than X outside the axis; the
/// result has the indices' shape and X's dtype.
constexpr inference gather_elements(const attrs& at, const arg_info* a, int n) {
  if (auto v = tuple_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape &x = a[0].shp, &idx = a[1].shp;
  const int axis = normalize_axis(at.axis, x.rank);
  if (axis < 0 || axis >= x.rank) return fail(problem::axis_out_of_range, x, dims1(at.axis));
  bool fits = idx.rank == x.rank && (a[1].type == dtype::i32 || a[1].type == dtype::i64);
  for (int d = 0; fits && d < x.rank; ++d) fits = d == axis || idx[d] <= x[d];
  if (!fits) return fail(problem::gather_elements_indices, x, idx);
  return ok(idx, a[0].type);
}

}  // namespace rules

namespace detail {
constexpr attrs arg_reduce_attrs(int axis, bool keepdims, bool select_last) {
  attrs a{};
  a.axis = axis;
  a.keepdims = keepdims;
  a.select_last = select_last;
  return a;
}
constexpr attrs cumsum_attrs(int axis, bool exclusive, bool reverse) {
  attrs a{};
  a.axis = axis;
  a.exclusive = exclusive;
  a.reverse = reverse;
  return a;
}
}  // namespace detail

/// The index (i64) of the largest element of X along `Axis` (ONNX's ArgMax, PyTorch's
/// `argmax`): the axis kept with extent 1 where `KeepDims`, else dropped; of equal largest
/// values the first, or the last where `SelectLast`; a NaN is larger than every number.
template <class X, int Axis = 0, bool KeepDims = true, bool SelectLast = false>
struct argmax : detail::op_node<op_id::argmax, detail::arg_reduce_attrs(Axis, KeepDims, SelectLast), &rules::arg_reduce, X> {
  static_assert(well_formed<argmax, X>);
};

/// The index of the smallest element, as `argmax` (a NaN is smaller than every number: it wins
/// both, as in PyTorch).
template <class X, int Axis = 0, bool KeepDims = true, bool SelectLast = false>
struct argmin : detail::op_node<op_id::argmin, detail::arg_reduce_attrs(Axis, KeepDims, SelectLast), &rules::arg_reduce, X> {
  static_assert(well_formed<argmin, X>);
};

/// Running sums of X along `Axis` (ONNX's CumSum): element i is the sum of elements 0..i, or
/// 0..i-1 where `Exclusive`, or from the end where `Reverse`. X's dtype (f32 sums in double).
template <class X, int Axis, bool Exclusive = false, bool Reverse = false>
struct cumsum : detail::op_node<op_id::cumsum, detail::cumsum_attrs(Axis, Exclusive, Reverse), &rules::along_axis, X> {
  static_assert(well_formed<cumsum, X>);
};

/// y[i, j, k] = x[indices[i, j, k], j, k] for `Axis` 0, and alike for the others (ONNX's
/// GatherElements, PyTorch's `gather`): `Indices` (i32 or i64, computed or given) has X's rank
/// and at most X's extents outside the axis; negative indices count from the back, and an index
/// out of range makes `run` throw.
template <class X, class Indices, int Axis = 0>
struct gather_elements
    : detail::op_node<op_id::gather_elements, detail::axis_attrs(Axis), &rules::gather_elements, X, Indices> {
  static_assert(well_formed<gather_elements, X, Indices>);
};

namespace rules {

/// non_max_suppression's fields: the selected (batch, class, box) triples, i64 [batch · classes ·
/// max per class, 3], and their count, i64 [1]; none when the shapes do not fit.
constexpr op_fields nms_fields(const attrs& at, const arg_info* a, int n) {
  if (n != 2) return {};
  const shape &b = a[0].shp, &s = a[1].shp;
  const bool fits = a[0].type == dtype::f32 && a[1].type == dtype::f32 && b.rank == 3 && b[2] == 4 && s.rank == 3 &&
                    s[0] == b[0] && s[2] == b[1] && at.start >= 1;
  if (!fits) return {};
  return {{op_field{shape{2, {b[0] * s[1] * at.start, 3}}, dtype::i64}, op_field{shape{1, {1}}, dtype::i64}}, 2};
}

constexpr inference nms(const attrs& at, const arg_info* a, int n) {
  if (auto v = tuple_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  if (nms_fields(at, a, n).count == 0) return fail(problem::nms_shapes, a[0].shp, a[1].shp);
  return inference{{}, dtype::i64, true, {}};
}

}  // namespace rules

namespace detail {
constexpr attrs nms_attrs(std::int64_t max_per_class, float iou, float score, bool center) {
  attrs a{};
  a.start = max_per_class;
  a.alpha = iou;
  a.beta = score;
  a.upper = center;
  return a;
}
}  // namespace detail

/// Greedy non-maximum suppression (ONNX's NonMaxSuppression, with a static maximum): for each
/// image and class, the boxes in order of decreasing score (of equal scores the lower index
/// first) whose score is above `ScoreThreshold`, each kept unless its IoU with a box kept before
/// it exceeds `IouThreshold`, at most `MaxPerClass`. Boxes [batch, boxes, 4] are corners (y1,
/// x1, y2, x2, in either order) or, with `CenterPointBox`, (x_center, y_center, width, height);
/// Scores are [batch, classes, boxes]. A tuple: `get<.., 0>` the selected (batch, class, box)
/// triples, i64 [batch · classes · MaxPerClass, 3], ordered by batch, class, then score, the
/// rows after the count filled with -1; `get<.., 1>` the count, i64 [1].
template <class Boxes, class Scores, std::int64_t MaxPerClass, float IouThreshold = 0.5f,
          float ScoreThreshold = -std::numeric_limits<float>::infinity(), bool CenterPointBox = false>
struct non_max_suppression
    : detail::op_node<op_id::non_max_suppression, detail::nms_attrs(MaxPerClass, IouThreshold, ScoreThreshold, CenterPointBox),
                      &rules::nms, Boxes, Scores> {
  static_assert(well_formed<non_max_suppression, Boxes, Scores>);
};

namespace detail {
constexpr attrs topk_attrs(std::int64_t k, int axis, bool largest) {
  attrs a{};
  a.start = k;
  a.axis = axis;
  a.largest = largest;
  return a;
}
}  // namespace detail

/// The `K` largest elements of `x` along `Axis` (the smallest where `Largest` is false), sorted
/// (largest first, or smallest first), and their indices: a tuple of values (X's dtype) and
/// indices (i64), each X's shape with extent K along the axis, read with `get<topk<...>, 0>` and
/// `get<..., 1>` (ONNX's TopK, PyTorch's `torch.topk`). Of equal values the lower index comes
/// first; NaN counts as larger than every number. One kernel writes both.
template <class X, std::int64_t K, int Axis = -1, bool Largest = true>
struct topk : detail::op_node<op_id::topk, detail::topk_attrs(K, Axis, Largest), &rules::topk, X> {
  static_assert(well_formed<topk, X>);
};

}  // namespace partita
