#pragma once
/// Scalar int8 oracles: qadd, qconcat and average, global average and max pooling of u8 or i8.
// The arithmetic the cpu backend's int8 kernels state, written plainly (float operations in
// the order stated, each rounded, never fused; round half to even; clamp to the range):
//   qadd:       y = clamp(round((a - za) · (sa / sy) + (b - zb) · (sb / sy)) + zy, lo, hi)
//   qconcat:    y = clamp(round((x - zx) · (sx / sy)) + zy), each input to the output's
//   avg pools:  y = clamp(round(float(Σ_taps (x - zx)) · (sx / (sy · count))) + zy), `count`
//               what the float op divides by (`avg_pool2d`'s rule), taps those inside the input
//   max pool:   the largest integer of the window's taps inside the input
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "partita/backends/reference/kernels.hpp"
#include "partita/backends/reference/quantize_kernels.hpp"
#include "partita/core/shape.hpp"
#include "partita/ir/attrs.hpp"

namespace partita::reference_kernels {

/// A tensor's quantization: real value = (q - zp) · scale.
struct qparams {
  float scale;
  std::int32_t zp;
};

namespace detail {

/// `v`, which the compiler can no longer fuse into a multiply-add with what reads it.
inline float rounded(float v) {
  volatile float kept = v;
  return kept;
}

/// round_half_even(v) + zp clamped to [lo, hi]. v is finite here.
inline std::int32_t to_quantized(float v, std::int32_t zp, std::int64_t lo, std::int64_t hi) {
  const auto r = static_cast<std::int64_t>(round_half_even(v)) + zp;
  return static_cast<std::int32_t>(std::clamp(r, lo, hi));
}

}  // namespace detail

/// y[i] = a[i] + b[i] for `n` values of T (std::uint8_t or std::int8_t), clamped to [lo, hi].
template <class T>
void qadd(const T* a, qparams qa, const T* b, qparams qb, T* y, qparams qy, std::int64_t n, std::int32_t lo,
          std::int32_t hi) {
  const float ra = qa.scale / qy.scale;
  const float rb = qb.scale / qy.scale;
  for (std::int64_t i = 0; i < n; ++i) {
    const float pa = detail::rounded(static_cast<float>(a[i] - qa.zp) * ra);
    const float pb = detail::rounded(static_cast<float>(b[i] - qb.zp) * rb);
    y[i] = static_cast<T>(detail::to_quantized(pa + pb, qy.zp, lo, hi));
  }
}

/// Concatenation of `count` tensors in[i] ([outer, axis_len[i], inner]) along the middle axis,
/// each requantized to `qy`.
template <class T>
void qconcat(const T* const* in, const qparams* qin, const std::int64_t* axis_len, int count, T* y, qparams qy,
             std::int64_t outer, std::int64_t inner) {
  std::int64_t total = 0;
  for (int i = 0; i < count; ++i) total += axis_len[i];
  for (std::int64_t o = 0; o < outer; ++o) {
    std::int64_t at = 0;
    for (int i = 0; i < count; ++i) {
      const float m = qin[i].scale / qy.scale;
      for (std::int64_t j = 0; j < axis_len[i] * inner; ++j) {
        const T x = in[i][o * axis_len[i] * inner + j];
        y[o * total * inner + at + j] = static_cast<T>(detail::to_quantized(
            static_cast<float>(x - qin[i].zp) * m, qy.zp, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
      }
      at += axis_len[i] * inner;
    }
  }
}

namespace detail {

/// The quantized mean of a window: Σ (x - zx) over `taps` values summing to `sum`, divided by `count`.
template <class T>
T quantized_mean(std::int64_t sum, std::int64_t taps, std::int64_t count, qparams qx, qparams qy) {
  const std::int64_t acc = sum - taps * qx.zp;
  const float m = qx.scale / (qy.scale * static_cast<float>(count));
  return static_cast<T>(
      to_quantized(static_cast<float>(acc) * m, qy.zp, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}

}  // namespace detail

/// Average pooling of NCHW `x` (shape `xs`) into `y` (shape `ys`) with the float op's
/// attributes `a` (window, stride, padding, count_include_pad).
template <class T>
void qavg_pool2d(const T* x, const shape& xs, qparams qx, T* y, const shape& ys, qparams qy, const attrs& a) {
  const std::int64_t s_h = detail::pool_stride(a, 0), s_w = detail::pool_stride(a, 1);
  const auto padded = [&](std::int64_t o, std::int64_t s, int axis) {
    const auto u = static_cast<std::size_t>(axis);
    const std::int64_t lo = o * s - a.padding[u];
    return std::min(lo + a.window[u], xs[2 + axis] + end_padding(a, axis)) - lo;
  };
  const std::int64_t planes = xs[0] * xs[1], in_h = xs[2], in_w = xs[3];
  for (std::int64_t p = 0; p < planes; ++p)
    for (std::int64_t oh = 0; oh < ys[2]; ++oh)
      for (std::int64_t ow = 0; ow < ys[3]; ++ow) {
        std::int64_t sum = 0, taps = 0;
        for (std::int64_t kh = 0; kh < a.window[0]; ++kh)
          for (std::int64_t kw = 0; kw < a.window[1]; ++kw) {
            const std::int64_t ih = oh * s_h - a.padding[0] + kh, iw = ow * s_w - a.padding[1] + kw;
            if (ih < 0 || ih >= in_h || iw < 0 || iw >= in_w) continue;
            sum += x[(p * in_h + ih) * in_w + iw];
            ++taps;
          }
        const std::int64_t count = a.count_include_pad ? padded(oh, s_h, 0) * padded(ow, s_w, 1) : taps;
        y[(p * ys[2] + oh) * ys[3] + ow] = detail::quantized_mean<T>(sum, taps, count, qx, qy);
      }
}

/// Global average pooling: the mean of each of `planes` planes of `area` values.
template <class T>
void qglobal_avg_pool2d(const T* x, qparams qx, T* y, qparams qy, std::int64_t planes, std::int64_t area) {
  for (std::int64_t p = 0; p < planes; ++p) {
    std::int64_t sum = 0;
    for (std::int64_t i = 0; i < area; ++i) sum += x[p * area + i];
    y[p] = detail::quantized_mean<T>(sum, area, area, qx, qy);
  }
}

/// Max pooling of NCHW `x` into `y` with the float op's attributes `a`; padded taps never win
/// (a window with no tap inside the input gives the type's smallest value).
template <class T>
void qmax_pool2d(const T* x, const shape& xs, T* y, const shape& ys, const attrs& a) {
  const std::int64_t s_h = detail::pool_stride(a, 0), s_w = detail::pool_stride(a, 1);
  const std::int64_t planes = xs[0] * xs[1], in_h = xs[2], in_w = xs[3];
  for (std::int64_t p = 0; p < planes; ++p)
    for (std::int64_t oh = 0; oh < ys[2]; ++oh)
      for (std::int64_t ow = 0; ow < ys[3]; ++ow) {
        T best = std::numeric_limits<T>::min();
        for (std::int64_t kh = 0; kh < a.window[0]; ++kh)
          for (std::int64_t kw = 0; kw < a.window[1]; ++kw) {
            const std::int64_t ih = oh * s_h - a.padding[0] + kh, iw = ow * s_w - a.padding[1] + kw;
            if (ih >= 0 && ih < in_h && iw >= 0 && iw < in_w) best = std::max(best, x[(p * in_h + ih) * in_w + iw]);
          }
        y[(p * ys[2] + oh) * ys[3] + ow] = best;
      }
}

}  // namespace partita::reference_kernels
