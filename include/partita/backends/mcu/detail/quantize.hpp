#pragma once
/// The mcu backend's quantize and dequantize of whole tensors quantized per tensor, in float arithmetic only.
// The reference's kernels compute ONNX's rule through `std::round` and doubles, which a Cortex-M4
// or M7 runs in software. These give the same bytes and floats with single-precision operations:
// x / s clamped to the type's range around the zero point, then rounded half to even with
// `round_small` (exact there: the bounds are integers, so clamping and rounding commute).
#include <cstdint>
#include <limits>

#include "partita/backend/detail/requantize.hpp"

namespace partita::detail::mcu {

/// q[i] = saturate(round_half_even(x[i] / scale) + zp) for `n` values, of T (u8 or i8); a NaN
/// gives T's lowest value, as the reference's.
template <class T>
void quantize_values(const float* x, std::int64_t n, float scale, std::int32_t zp, T* q) {
  constexpr std::int32_t lowest = std::numeric_limits<T>::min(), highest = std::numeric_limits<T>::max();
  const float lo = static_cast<float>(lowest - zp), hi = static_cast<float>(highest - zp);
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = x[i] / scale;
    q[i] = v != v ? static_cast<T>(lowest)
                  : static_cast<T>(static_cast<std::int32_t>(quant::round_small(v < lo ? lo : (v > hi ? hi : v))) + zp);
  }
}

/// y[i] = float(q[i] - zp) · scale for `n` values of T.
template <class T>
void dequantize_values(const T* q, std::int64_t n, float scale, std::int32_t zp, float* y) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(static_cast<std::int32_t>(q[i]) - zp) * scale;
}

}  // namespace partita::detail::mcu
