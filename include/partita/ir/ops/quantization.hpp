#pragma once
/// Quantization ops: `quantize` and `dequantize`, ONNX's QuantizeLinear and DequantizeLinear.
#include "partita/ir/ops/rules.hpp"

namespace partita {
namespace rules {

/// Scale (f32) and zero point of one shape, rank 0 or 1, with one element or as many as `x`
/// has along `axis`.
constexpr inference quantization_parameters(const attrs& at, const arg_info* a, dtype out) {
  const shape& x = a[0].shp;
  const shape& s = a[1].shp;
  const shape& z = a[2].shp;
  if (a[1].type != dtype::f32) {
    inference r = fail(problem::quantization_scale, x, s);
    r.v.rhs_type = a[1].type;
    return r;
  }
  const int axis = normalize_axis(at.axis, x.rank);
  const bool per_axis = s.elements() > 1;
  const bool fits = s.rank <= 1 && z.rank == s.rank && z.elements() == s.elements() &&
                    (!per_axis || (axis >= 0 && axis < x.rank && s[0] == x[axis]));
  if (!fits) return fail(problem::quantization_parameters, x, shape{3, {at.axis, s.elements(), z.elements()}});
  return ok(x, out);
}

/// quantize: f32 to the zero point's dtype (u8, i8 or i32).
constexpr inference quantize(const attrs& at, const arg_info* a, int n) {
  if (auto v = tuple_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  if (a[0].type != dtype::f32 || !is_quantized_type(a[2].type)) {
    inference r = fail(problem::quantize_dtype, a[0].shp, a[2].shp);
    r.v.lhs_type = a[0].type;
    r.v.rhs_type = a[2].type;
    return r;
  }
  return quantization_parameters(at, a, a[2].type);
}

/// dequantize: u8, i8 or i32 (with a zero point of the same dtype) to f32.
constexpr inference dequantize(const attrs& at, const arg_info* a, int n) {
  if (auto v = tuple_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  if (!is_quantized_type(a[0].type) || a[2].type != a[0].type) {
    inference r = fail(problem::dequantize_dtype, a[0].shp, a[2].shp);
    r.v.lhs_type = a[0].type;
    r.v.rhs_type = a[2].type;
    return r;
  }
  return quantization_parameters(at, a, dtype::f32);
}

}  // namespace rules

/// How a quantize or dequantize of a tensor of shape `x` applies its `scales` parameters (and
/// as many zero points): the tensor seen as `outer` × `axis_len` × `inner` elements, parameter
/// `a` serving index `a` of the middle extent when `per_axis`, parameter 0 every element
/// otherwise (then `axis_len` and `inner` are 1).
struct quantization_extents {
  std::int64_t outer = 1, axis_len = 1, inner = 1;
  bool per_axis = false;
};
constexpr quantization_extents quantization_extents_of(const shape& x, int axis, std::int64_t scales) {
  quantization_extents e;
  e.per_axis = scales > 1;
  if (e.per_axis) {
    const int a = normalize_axis(axis, x.rank);
    e.axis_len = x[a];
    for (int i = a + 1; i < x.rank; ++i) e.inner *= x[i];
  }
  e.outer = x.elements() / e.axis_len / e.inner;
  return e;
}

/// ONNX's QuantizeLinear: `q = saturate(round_half_even(x / Scale) + ZeroPoint)`, of the zero
/// point's dtype (u8, i8 or i32). Scale (f32) and ZeroPoint have one element (per tensor; a
/// rank-0 or a one-element rank-1 tensor) or one per index of X along `Axis` (per axis). Both
/// are usually weights, bound at `bind` (a new calibration needs no recompile), or literals:
/// `quantize<x, scalar<0.02f>, int_scalar<u8, 128>>`. docs/quantization.md.
template <class X, class Scale, class ZeroPoint, int Axis = 1>
struct quantize
    : detail::op_node<op_id::quantize, detail::axis_attrs(Axis), &rules::quantize, X, Scale, ZeroPoint> {
  static_assert(well_formed<quantize, X, Scale, ZeroPoint>);
};

/// ONNX's DequantizeLinear: `y = float(q - ZeroPoint) · Scale`, f32. Q is u8, i8 or i32 and
/// ZeroPoint of the same dtype; Scale and ZeroPoint as for `quantize`.
template <class Q, class Scale, class ZeroPoint, int Axis = 1>
struct dequantize
    : detail::op_node<op_id::dequantize, detail::axis_attrs(Axis), &rules::dequantize, Q, Scale, ZeroPoint> {
  static_assert(well_formed<dequantize, Q, Scale, ZeroPoint>);
};

}  // namespace partita
