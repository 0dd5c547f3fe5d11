#pragma once
/// cpu memory-bound kernels: elementwise ops, bias, batch norm, pooling, softmax.
// Vectorized memory-bound kernels: elementwise ops, bias, batch norm, pooling, softmax.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "partita/backends/cpu/detail/epilogue.hpp"
#include "partita/backends/cpu/detail/simd.hpp"
#include "partita/backends/cpu/detail/simd_math.hpp"

namespace partita::detail::cpu {

using simd::vec;

/// y[i] = f(x[i]) over n elements, the tail through a zero-padded vector. In place is fine.
template <class F>
inline void map1(const float* x, float* y, std::int64_t n, F f) {
  constexpr int w = simd::width;
  std::int64_t i = 0;
  for (; i + w <= n; i += w) simd::store(y + i, f(simd::load(x + i)));
  if (i < n) simd::store_first(y + i, f(simd::load_first(x + i, static_cast<int>(n - i))), static_cast<int>(n - i));
}

/// y[i] = f(a[i], b[i]) over n elements.
template <class F>
inline void map2(const float* a, const float* b, float* y, std::int64_t n, F f) {
  constexpr int w = simd::width;
  std::int64_t i = 0;
  for (; i + w <= n; i += w) simd::store(y + i, f(simd::load(a + i), simd::load(b + i)));
  if (i < n) {
    const int r = static_cast<int>(n - i);
    simd::store_first(y + i, f(simd::load_first(a + i, r), simd::load_first(b + i, r)), r);
  }
}

inline void unary(activation act, float lo, float hi, const float* x, float* y, std::int64_t n) {
  map1(x, y, n, [&](const vec& v) { return activate(v, act, lo, hi); });
}

/// Same-shape a ∘ b for add, subtract, multiply.
inline void binary_same_shape(op_id op, const float* a, const float* b, float* y, std::int64_t n) {
  switch (op) {
    case op_id::add: map2(a, b, y, n, [](const vec& u, const vec& v) { return u + v; }); break;
    case op_id::subtract: map2(a, b, y, n, [](const vec& u, const vec& v) { return u - v; }); break;
    default: map2(a, b, y, n, [](const vec& u, const vec& v) { return u * v; }); break;
  }
}

/// y = x · scale[c] + shift[c] over [outer, channels, inner] (bias: scale null).
inline void channel_affine(const float* x, float* y, std::int64_t outer, std::int64_t channels, std::int64_t inner,
                           const float* scale, const float* shift) {
  if (inner == 1) {
    for (std::int64_t o = 0; o < outer; ++o) {
      const float* xr = x + o * channels;
      float* yr = y + o * channels;
      if (scale) {
        for (std::int64_t c = 0; c < channels; ++c) yr[c] = xr[c] * scale[c] + shift[c];
      } else {
        map2(xr, shift, yr, channels, [](const vec& u, const vec& v) { return u + v; });
      }
    }
    return;
  }
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t c = 0; c < channels; ++c) {
      const std::int64_t at = (o * channels + c) * inner;
      const vec s = simd::splat(scale ? scale[c] : 1.f), t = simd::splat(shift[c]);
      map1(x + at, y + at, inner, [&](const vec& v) { return simd::fma(v, s, t); });
    }
}

/// Mean of each plane of `area` elements.
inline void plane_means(const float* x, float* y, std::int64_t planes, std::int64_t area) {
  constexpr int w = simd::width;
  for (std::int64_t p = 0; p < planes; ++p) {
    const float* s = x + p * area;
    vec acc = simd::splat(0.f);
    const std::int64_t body = area - area % w;  // (a bound GCC 12 does not misread as overflowing)
    for (std::int64_t i = 0; i < body; i += w) acc = acc + simd::load(s + i);
    float total = simd::sum(acc);
    for (std::int64_t i = body; i < area; ++i) total += s[i];
    y[p] = total / static_cast<float>(area);
  }
}

/// Softmax over the last axis, rows of `len`.
inline void softmax_rows(const float* x, float* y, std::int64_t rows, std::int64_t len) {
  constexpr int w = simd::width;
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* s = x + r * len;
    float* d = y + r * len;
    float top = -std::numeric_limits<float>::infinity();
    std::int64_t i = 0;
    if (len >= w) {
      vec m = simd::load(s);
      for (i = w; i + w <= len; i += w) m = simd::max(m, simd::load(s + i));
      top = simd::max_lane(m);
    }
    for (; i < len; ++i) top = std::max(top, s[i]);
    const vec t = simd::splat(top);
    map1(s, d, len, [&](const vec& v) { return simd::exp(v - t); });
    vec acc = simd::splat(0.f);
    for (i = 0; i + w <= len; i += w) acc = acc + simd::load(d + i);
    float total = simd::sum(acc);
    for (; i < len; ++i) total += d[i];
    const vec inv = simd::splat(1.f / total);
    map1(d, d, len, [&](const vec& v) { return v * inv; });
  }
}

struct pool_geometry {
  int planes = 0, h = 0, w = 0, oh = 0, ow = 0, kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  bool count_include_pad = false;
};

/// Max (Max = true) or average pooling, one output row at a time: the window's input rows are
/// reduced vertically into a padded row (vectorized), that row horizontally over the window
/// width (vectorized, at every column), and the output picks every stride-th column. Returns
/// false, doing nothing, when a padded row does not fit its row buffers (over 4000 columns).
template <bool Max>
inline bool pool2d(const pool_geometry& g, const float* x, float* y) {
  constexpr int w = simd::width;
  constexpr int max_row = 4096;
  const int wp = g.w + 2 * g.pw;
  if (wp + g.kw + 2 * w > max_row) return false;
  const float fill = Max ? -std::numeric_limits<float>::infinity() : 0.f;
  alignas(64) float v[max_row];
  alignas(64) float h[max_row];
  std::fill(v, v + wp + g.kw + 2 * w, fill);
  // max_nan: a NaN anywhere in the window makes the output NaN, as in the reference backend.
  const auto reduce = [](const vec& a, const vec& b) { return Max ? simd::max_nan(a, b) : a + b; };
  const int hn = wp - g.kw + 1;  // columns of h
  for (int p = 0; p < g.planes; ++p) {
    const float* plane = x + static_cast<std::ptrdiff_t>(p) * g.h * g.w;
    float* out = y + static_cast<std::ptrdiff_t>(p) * g.oh * g.ow;
    for (int oh = 0; oh < g.oh; ++oh) {
      const int ih0 = oh * g.sh - g.ph;
      const int i_lo = std::max(0, ih0), i_hi = std::min(g.h, ih0 + g.kh);
      float* row = v + g.pw;
      if (i_lo >= i_hi) {
        std::fill(row, row + g.w, fill);
      } else {
        std::memcpy(row, plane + static_cast<std::ptrdiff_t>(i_lo) * g.w, sizeof(float) * static_cast<std::size_t>(g.w));
        for (int i = i_lo + 1; i < i_hi; ++i) map2(row, plane + static_cast<std::ptrdiff_t>(i) * g.w, row, g.w, reduce);
      }
      for (int j = 0; j < hn; j += w) {
        vec acc = simd::load(v + j);
        for (int k = 1; k < g.kw; ++k) acc = reduce(acc, simd::load(v + j + k));
        simd::store(h + j, acc);
      }
      float* o = out + static_cast<std::ptrdiff_t>(oh) * g.ow;
      if constexpr (Max) {
        for (int ow = 0; ow < g.ow; ++ow) o[ow] = h[ow * g.sw];
      } else {
        const int rows = g.count_include_pad ? g.kh : i_hi - i_lo;
        for (int ow = 0; ow < g.ow; ++ow) {
          const int iw0 = ow * g.sw - g.pw;
          const int cols = g.count_include_pad ? g.kw : std::min(g.w, iw0 + g.kw) - std::max(0, iw0);
          o[ow] = h[ow * g.sw] / static_cast<float>(rows * cols);
        }
      }
    }
  }
  return true;
}

}  // namespace partita::detail::cpu
