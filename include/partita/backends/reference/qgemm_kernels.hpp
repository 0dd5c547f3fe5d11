#pragma once
/// Plain integer kernels for quantized conv2d, dense and matmul: the oracles of the int8 kernels.
// Each output is the rule's formula computed literally: an int64 sum of (x - zx)(w - zw), the
// bias quantized to an integer, q = round_half_even(float(acc) · M) + zp_y with M = (s_x · s_w) /
// s_y in float, then clamped to the output type's range narrowed by the fused activation. No
// packing, no blocking, no threads.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "partita/backends/reference/quantize_kernels.hpp"
#include "partita/core/dtype.hpp"
#include "partita/core/shape.hpp"
#include "partita/ir/attrs.hpp"

namespace partita::reference_kernels {

/// A per-tensor quantized operand: its type (u8 or i8), scale and zero point.
struct quantized {
  dtype type;
  float scale;
  std::int32_t zero_point;
};

/// Quantized weights: their type and `count` scales and zero points (1, or one per output).
struct quantized_weights {
  dtype type;
  const float* scale;
  const std::int32_t* zero_point;
  int count;
};

/// A quantized output: its type (u8 or i8), scale and zero point, and the float bounds of a
/// fused activation (none: -inf, +inf; relu: 0, +inf; clip(a, b): a, b).
struct quantized_output {
  dtype type;
  float scale;
  std::int32_t zero_point;
  float act_lo = -std::numeric_limits<float>::infinity();
  float act_hi = std::numeric_limits<float>::infinity();
};

namespace quantized_detail {

/// round_half_even(v) as an integer.
inline std::int64_t rounded(float v) { return static_cast<std::int64_t>(round_half_even(v)); }

/// The quantized value of the sum `acc` for multiplier scale `s_x · s_w`: the rule, literally.
inline std::int64_t requantize(std::int64_t acc, float s_x, float s_w, const quantized_output& y) {
  std::int64_t lo = lowest_of(y.type), hi = highest_of(y.type);
  if (y.act_lo > -std::numeric_limits<float>::infinity())
    lo = std::max(lo, rounded(y.act_lo / y.scale) + y.zero_point);
  if (y.act_hi < std::numeric_limits<float>::infinity())
    hi = std::min(hi, rounded(y.act_hi / y.scale) + y.zero_point);
  const float m = (s_x * s_w) / y.scale;
  const std::int64_t q = rounded(static_cast<float>(acc) * m) + y.zero_point;
  return std::clamp(q, lo, hi);
}

/// The bias of output `o` as an integer: round_half_even(b / (s_x · s_w)).
inline std::int64_t integer_bias(const float* bias, std::int64_t o, float s_x, float s_w) {
  return bias ? rounded(bias[o] / (s_x * s_w)) : 0;
}

}  // namespace quantized_detail

/// Quantized conv2d of NCHW `x` by OIHW `w` (O × C / groups × KH × KW) into NCHW `y` of shape
/// `ys`, with the dequantized float `bias` (O values, or null): padding reads the input's zero
/// point.
inline void qconv2d(const void* x, const shape& xs, const quantized& xq, const void* w, const shape& ws,
                    const quantized_weights& wq, const float* bias, void* y, const shape& ys, const quantized_output& yq,
                    const conv2d_attrs& a) {
  using namespace quantized_detail;
  const std::int64_t batch = xs[0], in_c = xs[1], in_h = xs[2], in_w = xs[3];
  const std::int64_t out_c = ws[0], group_in_c = ws[1], k_h = ws[2], k_w = ws[3];
  const std::int64_t out_h = ys[2], out_w = ys[3], group_out_c = out_c / a.groups;
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t o = 0; o < out_c; ++o) {
      const std::int64_t group = o / group_out_c, wi = wq.count == 1 ? 0 : o;
      const std::int64_t zw = wq.zero_point[wi];
      for (std::int64_t oh = 0; oh < out_h; ++oh)
        for (std::int64_t ow = 0; ow < out_w; ++ow) {
          std::int64_t acc = integer_bias(bias, o, xq.scale, wq.scale[wi]);
          for (std::int64_t ci = 0; ci < group_in_c; ++ci)
            for (std::int64_t kh = 0; kh < k_h; ++kh)
              for (std::int64_t kw = 0; kw < k_w; ++kw) {
                const std::int64_t ih = oh * a.stride[0] - a.padding[0] + kh * a.dilation[0];
                const std::int64_t iw = ow * a.stride[1] - a.padding[1] + kw * a.dilation[1];
                const bool inside = ih >= 0 && ih < in_h && iw >= 0 && iw < in_w;
                const std::int64_t c = group * group_in_c + ci;
                const std::int64_t xv = inside ? load_integer(x, xq.type, ((n * in_c + c) * in_h + ih) * in_w + iw) : xq.zero_point;
                const std::int64_t wv = load_integer(w, wq.type, ((o * group_in_c + ci) * k_h + kh) * k_w + kw);
                acc += (xv - xq.zero_point) * (wv - zw);
              }
          store_integer(y, yq.type, ((n * out_c + o) * out_h + oh) * out_w + ow, requantize(acc, xq.scale, wq.scale[wi], yq));
        }
    }
}

/// Quantized dense: y[m, j] from x (m × k) and the rows of w (n × k), with the dequantized
/// float `bias` (n values, or null).
inline void qdense(const void* x, const quantized& xq, const void* w, const quantized_weights& wq, const float* bias,
                   void* y, const quantized_output& yq, std::int64_t m, std::int64_t k, std::int64_t n) {
  using namespace quantized_detail;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t wi = wq.count == 1 ? 0 : j;
      std::int64_t acc = integer_bias(bias, j, xq.scale, wq.scale[wi]);
      for (std::int64_t kk = 0; kk < k; ++kk)
        acc += (load_integer(x, xq.type, i * k + kk) - xq.zero_point) * (load_integer(w, wq.type, j * k + kk) - wq.zero_point[wi]);
      store_integer(y, yq.type, i * n + j, requantize(acc, xq.scale, wq.scale[wi], yq));
    }
}

/// Quantized matmul of `a` (batch × m × k) by `b` (batch × k × n, or k × n for every batch when
/// not `b_batched`) into y (batch × m × n).
inline void qmatmul(const void* a, const quantized& aq, const void* b, const quantized& bq, bool b_batched, void* y,
                    const quantized_output& yq, std::int64_t batch, std::int64_t m, std::int64_t k, std::int64_t n) {
  using namespace quantized_detail;
  for (std::int64_t t = 0; t < batch; ++t)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        std::int64_t acc = 0;
        for (std::int64_t kk = 0; kk < k; ++kk) {
          const std::int64_t av = load_integer(a, aq.type, (t * m + i) * k + kk);
          const std::int64_t bv = load_integer(b, bq.type, ((b_batched ? t : 0) * k + kk) * n + j);
          acc += (av - aq.zero_point) * (bv - bq.zero_point);
        }
        store_integer(y, yq.type, (t * m + i) * n + j, requantize(acc, aq.scale, bq.scale, yq));
      }
}

}  // namespace partita::reference_kernels
