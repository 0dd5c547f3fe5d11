#pragma once
/// Ops that compute indices from values: `topk`.
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

}  // namespace rules

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
