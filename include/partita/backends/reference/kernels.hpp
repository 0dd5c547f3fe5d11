#pragma once
/// Plain scalar kernels for every op: the semantics every backend is tested against.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "partita/core/error.hpp"
#include "partita/core/shape.hpp"
#include "partita/ir/attrs.hpp"
#include "partita/ir/op_id.hpp"

/// Scalar fp32 kernels of the reference backend. They are the oracle every other backend is
/// tested against, so they favour obviously-correct loops over speed and accumulate in double.
/// 4-D tensors are NCHW; conv2d weights are OIHW (O, I/groups, KH, KW).
namespace partita::reference_kernels {

namespace detail {

/// Product of the dimensions in [from, to).
inline std::int64_t product(const shape& s, int from, int to) {
  std::int64_t n = 1;
  for (int i = from; i < to; ++i) n *= s[i];
  return n;
}

/// Row-major strides of `s`, with the stride of every size-1 dimension of `s` set to zero so
/// that reading with them broadcasts the tensor along that dimension. Right-aligned to `rank`.
inline std::array<std::int64_t, max_rank> broadcast_strides(const shape& s, int rank) {
  std::array<std::int64_t, max_rank> st{};
  std::int64_t step = 1;
  for (int i = s.rank - 1; i >= 0; --i) {
    const int out = rank - s.rank + i;
    st[static_cast<std::size_t>(out)] = s[i] == 1 ? 0 : step;
    step *= s[i];
  }
  return st;
}

/// The effective pooling stride: zero means "equal to the window", as in PyTorch.
constexpr int pool_stride(const attrs& a, int axis) {
  const auto i = static_cast<std::size_t>(axis);
  return a.stride[i] > 0 ? a.stride[i] : a.window[i];
}

}  // namespace detail

/// Numpy-style broadcast of two shapes (right-aligned, dims equal or 1).
inline shape broadcast_shape(const shape& a, const shape& b) {
  shape r;
  r.rank = std::max(a.rank, b.rank);
  for (int i = 0; i < r.rank; ++i) {
    const std::int64_t da = i < a.rank ? a.back(i) : 1;
    const std::int64_t db = i < b.rank ? b.back(i) : 1;
    if (da != db && da != 1 && db != 1)
      partita::detail::raise(error("broadcast_shape: " + to_string(a) + " and " + to_string(b) + " are not broadcastable"));
    r.dims[static_cast<std::size_t>(r.rank - 1 - i)] = da == 1 ? db : da;
  }
  return r;
}

/// y[n, m] = sum_k x[n, k] * w[m, k]; w is [units, in_features] and the leading dims of x are
/// flattened into n.
inline void dense(const float* x, const shape& xs, const float* w, const shape& ws, float* y) {
  const std::int64_t k_len = xs.back(0);
  const std::int64_t rows = xs.elements() / k_len;
  const std::int64_t units = ws[0];
  for (std::int64_t n = 0; n < rows; ++n)
    for (std::int64_t m = 0; m < units; ++m) {
      double acc = 0;
      for (std::int64_t k = 0; k < k_len; ++k)
        acc += static_cast<double>(x[n * k_len + k]) * static_cast<double>(w[m * k_len + k]);
      y[n * units + m] = static_cast<float>(acc);
    }
}

/// Direct 2-D convolution (cross-correlation, as in PyTorch) of NCHW `x` with OIHW `w` into `y`
/// of shape `ys`, using the stride, padding, dilation and groups of `a` (the padding after each
/// axis is implied by `ys`: output positions past the input read zeros).
inline void conv2d(const float* x, const shape& xs, const float* w, const shape& ws, float* y, const shape& ys,
                   const attrs& a) {
  const std::int64_t batch = xs[0], in_c = xs[1], in_h = xs[2], in_w = xs[3];
  const std::int64_t out_c = ws[0], group_in_c = ws[1], k_h = ws[2], k_w = ws[3];
  const std::int64_t out_h = ys[2], out_w = ys[3];
  const std::int64_t group_out_c = out_c / a.groups;
  const std::int64_t s_h = a.stride[0], s_w = a.stride[1];
  const std::int64_t p_h = a.padding[0], p_w = a.padding[1];
  const std::int64_t d_h = a.dilation[0], d_w = a.dilation[1];

  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t o = 0; o < out_c; ++o) {
      const std::int64_t group = o / group_out_c;
      for (std::int64_t oh = 0; oh < out_h; ++oh)
        for (std::int64_t ow = 0; ow < out_w; ++ow) {
          double acc = 0;
          for (std::int64_t ci = 0; ci < group_in_c; ++ci) {
            const std::int64_t c = group * group_in_c + ci;
            for (std::int64_t kh = 0; kh < k_h; ++kh) {
              const std::int64_t ih = oh * s_h - p_h + kh * d_h;
              const bool row_inside = ih >= 0 && ih < in_h;
              for (std::int64_t kw = 0; kw < k_w; ++kw) {
                const std::int64_t iw = ow * s_w - p_w + kw * d_w;
                // Padding is zeros that are multiplied like any input (as ONNX and PyTorch
                // define it): a NaN or infinite weight over the padding gives NaN.
                const bool inside = row_inside && iw >= 0 && iw < in_w;
                const float xv = inside ? x[((n * in_c + c) * in_h + ih) * in_w + iw] : 0.f;
                const float wv = w[((o * group_in_c + ci) * k_h + kh) * k_w + kw];
                acc += static_cast<double>(xv) * static_cast<double>(wv);
              }
            }
          }
          y[((n * out_c + o) * out_h + oh) * out_w + ow] = static_cast<float>(acc);
        }
    }
}

/// y = x + b, with b (xs[axis] elements) broadcast along every other axis.
inline void bias_add(const float* x, const shape& xs, const float* b, int axis, float* y) {
  const std::int64_t outer = detail::product(xs, 0, axis);
  const std::int64_t len = xs[axis];
  const std::int64_t inner = detail::product(xs, axis + 1, xs.rank);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t c = 0; c < len; ++c)
      for (std::int64_t i = 0; i < inner; ++i) {
        const std::int64_t at = (o * len + c) * inner + i;
        y[at] = x[at] + b[c];
      }
}

/// A broadcasting binary op (add, subtract, multiply, divide, maximum, minimum, prelu) of `a`
/// and `b`, numpy-style, into `y` of shape `ys`. maximum and minimum propagate NaN.
inline void binary(op_id op, const float* a, const shape& as, const float* b, const shape& bs, float* y,
                   const shape& ys) {
  if (!is_binary_elementwise(op))
    partita::detail::raise(error("reference_kernels::binary: " + std::string(name_of(op)) + " is not a binary op"));
  const auto a_st = detail::broadcast_strides(as, ys.rank);
  const auto b_st = detail::broadcast_strides(bs, ys.rank);
  // Odometer over the output's rows (every axis but the last); the input offsets follow it
  // through their strides, and each row is one loop along the last axis.
  const int rows_rank = ys.rank > 0 ? ys.rank - 1 : 0;
  const std::int64_t n = ys.rank > 0 ? ys[ys.rank - 1] : 1;
  const std::int64_t a_step = ys.rank > 0 ? a_st[static_cast<std::size_t>(rows_rank)] : 0;
  const std::int64_t b_step = ys.rank > 0 ? b_st[static_cast<std::size_t>(rows_rank)] : 0;
  std::array<std::int64_t, max_rank> idx{};
  const std::int64_t total = ys.elements();
  for (std::int64_t at = 0; at < total; at += n) {
    std::int64_t ai = 0, bi = 0;
    for (int d = 0; d < rows_rank; ++d) {
      const auto u = static_cast<std::size_t>(d);
      ai += idx[u] * a_st[u];
      bi += idx[u] * b_st[u];
    }
    const float* ar = a + ai;
    const float* br = b + bi;
    float* yr = y + at;
    const auto apply = [&](auto f) {
      for (std::int64_t i = 0; i < n; ++i) yr[i] = f(ar[i * a_step], br[i * b_step]);
    };
    switch (op) {
      case op_id::add: apply([](float u, float v) { return u + v; }); break;
      case op_id::subtract: apply([](float u, float v) { return u - v; }); break;
      case op_id::multiply: apply([](float u, float v) { return u * v; }); break;
      case op_id::divide: apply([](float u, float v) { return u / v; }); break;
      case op_id::maximum: apply([](float u, float v) { return std::isnan(u) || std::isnan(v) ? u + v : std::max(u, v); }); break;
      case op_id::minimum: apply([](float u, float v) { return std::isnan(u) || std::isnan(v) ? u + v : std::min(u, v); }); break;
      default: apply([](float u, float v) { return u >= 0.f ? u : u * v; }); break;  // prelu
    }
    for (int d = rows_rank - 1; d >= 0; --d) {
      const auto u = static_cast<std::size_t>(d);
      if (++idx[u] < ys[d]) break;
      idx[u] = 0;
    }
  }
}

/// A unary op on one value, in double as PyTorch defines it: the activations, clip (to [a.lo,
/// a.hi]), power (a.alpha), leaky_relu (slope a.alpha), hardsigmoid (a.alpha · x + a.beta) and
/// the math functions. NaN in gives NaN out; at ±inf each formula gives what PyTorch does
/// (gelu, silu and hardswish of -inf are NaN: -inf · 0).
inline float unary_value(op_id op, float v, const attrs& a) {
  const double x = v;
  constexpr double sqrt1_2 = 0.70710678118654752440, sqrt_2_pi = 0.79788456080286535588;
  switch (op) {
    // std::max/min return their first argument when comparing with NaN, so NaN propagates.
    case op_id::relu: return std::max(v, 0.f);
    case op_id::clip: return std::min(std::max(v, a.lo), a.hi);
    case op_id::sigmoid: return static_cast<float>(1.0 / (1.0 + std::exp(-x)));
    case op_id::tanh: return static_cast<float>(std::tanh(x));
    case op_id::power: return static_cast<float>(std::pow(x, static_cast<double>(a.alpha)));
    case op_id::sqrt: return static_cast<float>(std::sqrt(x));
    case op_id::rsqrt: return static_cast<float>(1.0 / std::sqrt(x));
    case op_id::exp: return static_cast<float>(std::exp(x));
    case op_id::log: return static_cast<float>(std::log(x));
    case op_id::erf: return static_cast<float>(std::erf(x));
    // 1 + erf(t) and 1 + tanh(u) cancel for negative arguments; erfc and the exp form do not.
    case op_id::gelu: return static_cast<float>(0.5 * x * std::erfc(-x * sqrt1_2));
    case op_id::gelu_tanh: return static_cast<float>(x / (1.0 + std::exp(-2.0 * sqrt_2_pi * (x + 0.044715 * x * x * x))));
    case op_id::silu: return static_cast<float>(x / (1.0 + std::exp(-x)));
    case op_id::hardswish: return static_cast<float>(x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0);
    case op_id::hardsigmoid:
      return static_cast<float>(std::max(std::min(static_cast<double>(a.alpha) * x + static_cast<double>(a.beta), 1.0), 0.0));
    case op_id::leaky_relu: return v >= 0.f ? v : static_cast<float>(static_cast<double>(a.alpha) * x);
    case op_id::abs: return std::fabs(v);
    case op_id::neg: return -v;
    default:
      partita::detail::raise(error("reference_kernels::unary: " + std::string(name_of(op)) + " is not a unary op"));
  }
}

/// A unary elementwise op (`unary_value`) over n elements.
inline void unary(op_id op, const float* x, std::int64_t n, float* y, const attrs& a) {
  if (!is_unary_elementwise(op))
    partita::detail::raise(error("reference_kernels::unary: " + std::string(name_of(op)) + " is not a unary op"));
  for (std::int64_t i = 0; i < n; ++i) y[i] = unary_value(op, x[i], a);
}

namespace detail {

/// Walks each pooling window (a.window, a.stride, a.padding) of NCHW `x` into `y`: `start()`
/// makes a window's accumulator, `add(acc, v)` takes each in-bounds cell, `finish(acc)` is the
/// output value. Padded cells are never visited.
template <class Start, class Add, class Finish>
void pool2d(const float* x, const shape& xs, float* y, const shape& ys, const attrs& a, Start start, Add add, Finish finish) {
  const std::int64_t planes = xs[0] * xs[1], in_h = xs[2], in_w = xs[3];
  const std::int64_t out_h = ys[2], out_w = ys[3];
  const std::int64_t s_h = pool_stride(a, 0), s_w = pool_stride(a, 1);
  for (std::int64_t p = 0; p < planes; ++p) {
    const float* plane = x + p * in_h * in_w;
    for (std::int64_t oh = 0; oh < out_h; ++oh)
      for (std::int64_t ow = 0; ow < out_w; ++ow) {
        auto acc = start();
        for (std::int64_t kh = 0; kh < a.window[0]; ++kh) {
          const std::int64_t ih = oh * s_h - a.padding[0] + kh;
          if (ih < 0 || ih >= in_h) continue;
          for (std::int64_t kw = 0; kw < a.window[1]; ++kw) {
            const std::int64_t iw = ow * s_w - a.padding[1] + kw;
            if (iw >= 0 && iw < in_w) add(acc, plane[ih * in_w + iw]);
          }
        }
        y[(p * out_h + oh) * out_w + ow] = finish(acc);
      }
  }
}

}  // namespace detail

/// Max over each window (a.window, a.stride, a.padding) of NCHW `x`; padded cells never win.
inline void max_pool2d(const float* x, const shape& xs, float* y, const shape& ys, const attrs& a) {
  detail::pool2d(
      x, xs, y, ys, a, [] { return -std::numeric_limits<float>::infinity(); },
      // Once the maximum is NaN no comparison is true, so a NaN input propagates, as in PyTorch.
      [](float& best, float v) {
        if (v > best || std::isnan(v)) best = v;
      },
      [](float best) { return best; });
}

/// Mean over each window (a.window, a.stride, a.padding) of NCHW `x`; divides by the number of
/// in-bounds cells, or, when a.count_include_pad is set, by the cells inside the padded input
/// (the whole window, except a ceil_mode window running past the padding).
inline void avg_pool2d(const float* x, const shape& xs, float* y, const shape& ys, const attrs& a) {
  const std::int64_t s_h = detail::pool_stride(a, 0), s_w = detail::pool_stride(a, 1);
  const auto padded = [&](std::int64_t o, std::int64_t s, int axis) {
    const auto u = static_cast<std::size_t>(axis);
    const std::int64_t lo = o * s - a.padding[u];
    const std::int64_t hi = std::min(lo + a.window[u], xs[2 + axis] + end_padding(a, axis));
    return hi - lo;
  };
  const std::int64_t planes = xs[0] * xs[1], in_h = xs[2], in_w = xs[3];
  for (std::int64_t p = 0; p < planes; ++p)
    for (std::int64_t oh = 0; oh < ys[2]; ++oh)
      for (std::int64_t ow = 0; ow < ys[3]; ++ow) {
        double sum = 0;
        std::int64_t count = 0;
        for (std::int64_t kh = 0; kh < a.window[0]; ++kh) {
          const std::int64_t ih = oh * s_h - a.padding[0] + kh;
          if (ih < 0 || ih >= in_h) continue;
          for (std::int64_t kw = 0; kw < a.window[1]; ++kw) {
            const std::int64_t iw = ow * s_w - a.padding[1] + kw;
            if (iw < 0 || iw >= in_w) continue;
            sum += x[(p * in_h + ih) * in_w + iw];
            ++count;
          }
        }
        const std::int64_t divisor = a.count_include_pad ? padded(oh, s_h, 0) * padded(ow, s_w, 1) : count;
        y[(p * ys[2] + oh) * ys[3] + ow] = static_cast<float>(sum / static_cast<double>(divisor));
      }
}

/// Mean of each H x W plane of NCHW `x`, into [N, C, 1, 1].
inline void global_avg_pool2d(const float* x, const shape& xs, float* y) {
  const std::int64_t planes = xs[0] * xs[1], area = xs[2] * xs[3];
  for (std::int64_t p = 0; p < planes; ++p) {
    double sum = 0;
    for (std::int64_t i = 0; i < area; ++i) sum += x[p * area + i];
    y[p] = static_cast<float>(sum / static_cast<double>(area));
  }
}

/// Inference batch norm over axis 1: y = (x - mean) / sqrt(var + eps) * gamma + beta.
inline void batch_norm(const float* x, const shape& xs, const float* gamma, const float* beta, const float* mean,
                       const float* var, float eps, float* y) {
  const std::int64_t outer = xs[0], channels = xs[1];
  const std::int64_t inner = detail::product(xs, 2, xs.rank);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t c = 0; c < channels; ++c) {
      const double inv_std = 1.0 / std::sqrt(static_cast<double>(var[c]) + static_cast<double>(eps));
      for (std::int64_t i = 0; i < inner; ++i) {
        const std::int64_t at = (o * channels + c) * inner + i;
        const double centred = static_cast<double>(x[at]) - static_cast<double>(mean[c]);
        y[at] = static_cast<float>(centred * inv_std * static_cast<double>(gamma[c]) + static_cast<double>(beta[c]));
      }
    }
}

/// Concatenates the n tensors `xs` (shapes `shapes`) along `axis` into `y` of shape `ys`.
inline void concatenate(const float* const* xs, const shape* shapes, int n, int axis, float* y, const shape& ys) {
  const std::int64_t outer = detail::product(ys, 0, axis);
  const std::int64_t inner = detail::product(ys, axis + 1, ys.rank);
  for (std::int64_t o = 0; o < outer; ++o)
    for (int t = 0; t < n; ++t) {
      // Each input contributes one contiguous run of shapes[t][axis] * inner per outer index.
      const std::int64_t run = shapes[t][axis] * inner;
      const float* src = xs[t] + o * run;
      y = std::copy(src, src + run, y);
    }
}

/// Softmax along `axis`; subtracts the maximum first so that large inputs do not overflow.
inline void softmax(const float* x, const shape& xs, int axis, float* y) {
  const std::int64_t outer = detail::product(xs, 0, axis);
  const std::int64_t len = xs[axis];
  const std::int64_t inner = detail::product(xs, axis + 1, xs.rank);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      const std::int64_t base = o * len * inner + i;
      auto at = [&](std::int64_t k) { return base + k * inner; };
      double top = -std::numeric_limits<double>::infinity();
      for (std::int64_t k = 0; k < len; ++k) top = std::max(top, static_cast<double>(x[at(k)]));
      double sum = 0;
      for (std::int64_t k = 0; k < len; ++k) sum += std::exp(static_cast<double>(x[at(k)]) - top);
      for (std::int64_t k = 0; k < len; ++k)
        y[at(k)] = static_cast<float>(std::exp(static_cast<double>(x[at(k)]) - top) / sum);
    }
}

}  // namespace partita::reference_kernels
