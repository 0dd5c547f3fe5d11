#pragma once
/// Scalar `quantize` and `dequantize`: ONNX's QuantizeLinear and DequantizeLinear.
#include <cmath>
#include <cstdint>

#include "partita/core/dtype.hpp"

namespace partita::reference_kernels {

/// `v` rounded to the nearest integer, ties to even (2.5 -> 2, -0.5 -> -0), whatever the
/// floating-point environment's rounding mode.
inline float round_half_even(float v) {
  const float r = std::round(v);  // ties away from zero
  if (std::fabs(v - std::trunc(v)) == 0.5f) return 2.0f * std::round(v * 0.5f);
  return r;
}

// Integer elements by dtype (core/dtype.hpp), for the kernels of this namespace.
using partita::detail::load_integer;
using partita::detail::store_integer;

/// One value quantized: `saturate(round_half_even(x / scale) + zero_point)` in the range of
/// `t`, computed as ONNX defines it (a true division in float). NaN quantizes to the dtype's
/// lowest value, as ONNX Runtime's kernels do.
inline std::int64_t quantize_value(float x, float scale, std::int64_t zero_point, dtype t) {
  const float q = x / scale;
  if (std::isnan(q)) return lowest_of(t);
  const double v = static_cast<double>(round_half_even(q)) + static_cast<double>(zero_point);
  const double lo = static_cast<double>(lowest_of(t)), hi = static_cast<double>(highest_of(t));
  return static_cast<std::int64_t>(v < lo ? lo : v > hi ? hi : v);
}

/// One value dequantized: `float(q - zero_point) · scale`.
inline float dequantize_value(std::int64_t q, float scale, std::int64_t zero_point) {
  return static_cast<float>(q - zero_point) * scale;
}

/// The quantization parameter index of element `i` of a tensor with `inner` elements per index
/// along the quantized axis and `axis_len` indices there (0 for a per-tensor one).
inline std::int64_t parameter_index(std::int64_t i, std::int64_t axis_len, std::int64_t inner, bool per_axis) {
  return per_axis ? (i / inner) % axis_len : 0;
}

/// `quantize` of `n` floats into `q` (dtype `t`, the zero point's): `scale` and `zero_point`
/// hold one value, or `axis_len` when `per_axis`, each for `inner` consecutive elements.
inline void quantize(const float* x, std::int64_t n, const float* scale, const void* zero_point, dtype t,
                     std::int64_t axis_len, std::int64_t inner, bool per_axis, void* q) {
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t c = parameter_index(i, axis_len, inner, per_axis);
    store_integer(q, t, i, quantize_value(x[i], scale[c], load_integer(zero_point, t, c), t));
  }
}

/// `dequantize` of `n` integers of dtype `t` into `y`, parameters as for `quantize`.
inline void dequantize(const void* q, dtype t, std::int64_t n, const float* scale, const void* zero_point,
                       std::int64_t axis_len, std::int64_t inner, bool per_axis, float* y) {
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t c = parameter_index(i, axis_len, inner, per_axis);
    y[i] = dequantize_value(load_integer(q, t, i), scale[c], load_integer(zero_point, t, c));
  }
}

}  // namespace partita::reference_kernels
