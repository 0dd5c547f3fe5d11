#pragma once
/// cpu row-wise normalizations: layer_norm, rms_norm and softmax along any axis.
// Each kernel takes a range of independent units (rows, or columns of vectors), so that the
// caller splits a step across threads by handing each its own range.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "partita/backends/cpu/detail/elementwise/eltwise.hpp"
#include "partita/backends/cpu/detail/simd/simd.hpp"

namespace partita::detail::cpu {

/// Σ(x - k) and Σ(x - k)² over n floats, in one pass. Float vectors over chunks, each chunk's
/// sums added in double, so that long rows keep the precision of short ones.
struct moments {
  double s1 = 0, s2 = 0;
};
inline moments row_moments(const float* x, std::int64_t n, float k) {
  constexpr int w = simd::width;
  constexpr std::int64_t chunk = 1024;
  const vec kv = simd::splat(k);
  moments m;
  for (std::int64_t c0 = 0; c0 < n; c0 += chunk) {
    const std::int64_t c1 = std::min(n, c0 + chunk);
    vec a0 = simd::splat(0.f), a1 = a0, a2 = a0, a3 = a0, q0 = a0, q1 = a0, q2 = a0, q3 = a0;
    std::int64_t i = c0;
    for (; i + 4 * w <= c1; i += 4 * w) {
      const vec d0 = simd::load(x + i) - kv, d1 = simd::load(x + i + w) - kv;
      const vec d2 = simd::load(x + i + 2 * w) - kv, d3 = simd::load(x + i + 3 * w) - kv;
      a0 = a0 + d0;
      a1 = a1 + d1;
      a2 = a2 + d2;
      a3 = a3 + d3;
      q0 = simd::fma(d0, d0, q0);
      q1 = simd::fma(d1, d1, q1);
      q2 = simd::fma(d2, d2, q2);
      q3 = simd::fma(d3, d3, q3);
    }
    a0 = (a0 + a1) + (a2 + a3);
    q0 = (q0 + q1) + (q2 + q3);
    for (; i + w <= c1; i += w) {
      const vec d = simd::load(x + i) - kv;
      a0 = a0 + d;
      q0 = simd::fma(d, d, q0);
    }
    for (int j = 0, left = tail_count(c1, i); j < left; ++j) {  // (a bound GCC 12 does not misread)
      const double d = static_cast<double>(x[i + j] - k);
      m.s1 += d;
      m.s2 += d * d;
    }
    m.s1 += static_cast<double>(simd::sum(a0));
    m.s2 += static_cast<double>(simd::sum(q0));
  }
  return m;
}

/// The mean of a row's first vector (its first value if shorter): a shift for `row_moments`
/// close enough to the row's mean that the variance does not cancel away.
inline float shift_estimate(const float* x, std::int64_t n) {
  return n >= simd::width ? simd::sum(simd::load(x)) / static_cast<float>(simd::width) : x[0];
}

/// One row of layer_norm (beta non-null) or rms_norm (beta null) computed in double, as the
/// reference computes it: for the rows whose float statistics overflow (values beyond about
/// 1.8e19, whose squares float cannot hold, up to 3.4e38) and the rows with NaN or ±inf. Out of
/// the hot loop: ordinary rows never come here.
[[gnu::cold, gnu::noinline]] inline void norm_row_wide(const float* x, float* y, std::int64_t len, const float* gamma,
                                                       const float* beta, float eps) {
  double mean = 0, sq = 0;
  if (beta) {
    for (std::int64_t i = 0; i < len; ++i) mean += static_cast<double>(x[i]);
    mean /= static_cast<double>(len);
  }
  for (std::int64_t i = 0; i < len; ++i) sq += (static_cast<double>(x[i]) - mean) * (static_cast<double>(x[i]) - mean);
  const double inv = 1.0 / std::sqrt(sq / static_cast<double>(len) + static_cast<double>(eps));
  for (std::int64_t i = 0; i < len; ++i)
    y[i] = static_cast<float>((static_cast<double>(x[i]) - mean) * inv * static_cast<double>(gamma[i]) +
                              (beta ? static_cast<double>(beta[i]) : 0.0));
}

/// layer_norm (beta non-null) or rms_norm (beta null) of rows [r0, r1) of `len` floats:
/// (x - mean) / sqrt(var + eps) · gamma + beta, or x / sqrt(mean(x²) + eps) · gamma. One pass
/// for the statistics (shifted by the mean of its first vector, so that a large mean does not cancel
/// the variance away), one to write. A row whose float sums overflow or meet NaN or ±inf (the
/// statistics are not finite) is done again in double (`norm_row_wide`): finite values give
/// finite results wherever the reference's are, and NaN and ±inf behave as there.
inline void norm_rows(const float* x, float* y, std::int64_t r0, std::int64_t r1, std::int64_t len, const float* gamma,
                      const float* beta, float eps) {
  for (std::int64_t r = r0; r < r1; ++r) {
    const float* xr = x + r * len;
    float* yr = y + r * len;
    const float k = beta ? shift_estimate(xr, len) : 0.f;
    const moments m = row_moments(xr, len, k);
    // Σ(x - k)² is finite only if every x - k is well below the float limit, so Σ(x - k) is too.
    if (!std::isfinite(m.s2)) [[unlikely]] {
      norm_row_wide(xr, yr, len, gamma, beta, eps);
      continue;
    }
    const double n = static_cast<double>(len);
    const double shift = m.s1 / n;
    double var = beta ? m.s2 / n - shift * shift : m.s2 / n;
    if (var < 0) var = 0;  // rounding
    const float mean = beta ? static_cast<float>(static_cast<double>(k) + shift) : 0.f;
    const float inv = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(eps)));
    const vec mv = simd::splat(mean), iv = simd::splat(inv);
    if (beta) {
      map3(xr, gamma, beta, yr, len,
           [&](const vec& v, const vec& g, const vec& b) { return simd::fma((v - mv) * iv, g, b); });
    } else {
      map2(xr, gamma, yr, len, [&](const vec& v, const vec& g) { return v * iv * g; });
    }
  }
}

/// One row of softmax(x · scale + mask) (x / scale with `divide`) over `len` floats into `d`,
/// which may be `x`: the scaled, masked row is stored first, then exponentiated and normalized
/// in place. `mask` (or null) holds one value per element (`mask_step` 1) or one for the whole
/// row (0). Each element is rounded as the reference rounds the separate ops; NaN and ±inf
/// behave as in `softmax_rows`.
inline void softmax_scaled_row(const float* x, float* d, std::int64_t len, float scale, bool divide,
                               const float* mask, int mask_step) {
  constexpr int w = simd::width;
  const vec s = simd::splat(scale), one_mask = simd::splat(mask && mask_step == 0 ? *mask : 0.f);
  const auto scaled = [&](const vec& v, std::int64_t at) {
    const vec y = divide ? v / s : v * s;
    return !mask ? y : mask_step == 0 ? y + one_mask : y + simd::load(mask + at);
  };
  vec m = simd::splat(-std::numeric_limits<float>::infinity());
  std::int64_t i = 0;
  for (; i + w <= len; i += w) {
    const vec y = scaled(simd::load(x + i), i);
    simd::store(d + i, y);
    m = simd::max(m, y);
  }
  float top = len >= w ? simd::max_lane(m) : -std::numeric_limits<float>::infinity();
  const int left = tail_count(len, i);
  if (left > 0) {
    vec y = simd::load_first(x + i, left);
    y = divide ? y / s : y * s;
    if (mask) y = y + (mask_step == 0 ? one_mask : simd::load_first(mask + i, left));
    simd::store_first(d + i, y, left);
    for (int j = 0; j < left; ++j) top = std::max(top, d[i + j]);
  }
  const vec t = simd::splat(top);
  vec acc = simd::splat(0.f);
  for (i = 0; i + w <= len; i += w) {
    const vec e = simd::exp(simd::load(d + i) - t);
    simd::store(d + i, e);
    acc = acc + e;
  }
  float total = 0.f;
  if (left > 0) {
    simd::store_first(d + i, simd::exp(simd::load_first(d + i, left) - t), left);
    for (int j = 0; j < left; ++j) total += d[i + j];
  }
  const vec inv = simd::splat(1.f / (simd::sum(acc) + total));
  map1(d, d, len, [&](const vec& v) { return v * inv; });
}

/// Softmax over the last axis of rows [r0, r1) of `len` floats: `softmax_scaled_row` with a
/// scale of 1 (exact), so a NaN anywhere in a row, +inf, or a row of -inf makes the row NaN, as
/// in the reference.
inline void softmax_rows(const float* x, float* y, std::int64_t r0, std::int64_t r1, std::int64_t len) {
  for (std::int64_t r = r0; r < r1; ++r) softmax_scaled_row(x + r * len, y + r * len, len, 1.f, false, nullptr, 0);
}

/// Softmax over the middle axis of [outer, len, inner], one column of `width` floats of the
/// inner axis at a time: columns [c0, c1) of the outer · ceil(inner / width) there are.
inline void softmax_columns(const float* x, float* y, std::int64_t c0, std::int64_t c1, std::int64_t len,
                            std::int64_t inner) {
  constexpr int w = simd::width;
  const std::int64_t per_outer = (inner + w - 1) / w;
  for (std::int64_t c = c0; c < c1; ++c) {
    const std::int64_t o = c / per_outer, i = (c % per_outer) * w;
    const int lanes = inner - i >= w ? w : tail_count(inner, i);
    const float* s = x + o * len * inner + i;
    float* d = y + o * len * inner + i;
    const auto load = [&](const float* p) { return lanes == w ? simd::load(p) : simd::load_first(p, lanes); };
    const auto store = [&](float* p, const vec& v) {
      if (lanes == w) simd::store(p, v);
      else simd::store_first(p, v, lanes);
    };
    vec top = load(s);
    for (std::int64_t k = 1; k < len; ++k) top = simd::max(top, load(s + k * inner));
    vec total = simd::splat(0.f);
    for (std::int64_t k = 0; k < len; ++k) {
      const vec e = simd::exp(load(s + k * inner) - top);
      store(d + k * inner, e);
      total = total + e;
    }
    const vec inv = simd::splat(1.f) / total;
    for (std::int64_t k = 0; k < len; ++k) store(d + k * inner, load(d + k * inner) * inv);
  }
}

}  // namespace partita::detail::cpu
