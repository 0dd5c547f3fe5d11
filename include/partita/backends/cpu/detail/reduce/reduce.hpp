#pragma once
/// cpu reductions (reduce_mean, reduce_sum, reduce_max), vectorized along the contiguous axis.
// The input's axes are merged into groups, each all reduced or all kept; the innermost group is
// contiguous. Reduced, it is summed along its rows; kept, the rows of the reduced groups are
// added column-wise. Sums are taken in double (floats widened a vector at a time), so that long
// reductions keep the reference's precision; the maximum, in float vectors, propagates NaN.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "partita/backends/cpu/detail/elementwise/eltwise.hpp"
#include "partita/backends/cpu/detail/simd/simd.hpp"
#include "partita/core/shape.hpp"

namespace partita::detail::cpu {

using simd::vec;

/// A reduction read off its input shape and axis mask at compile time.
struct reduce_plan {
  int kept_rank = 0, gone_rank = 0;  // the groups outside the innermost one
  std::array<std::int64_t, max_rank> kept_ext{}, kept_st{}, gone_ext{}, gone_st{};
  std::int64_t inner = 1;    // extent of the innermost group (stride 1)
  bool inner_reduced = true;
  std::int64_t kept = 1;     // outputs per column of the innermost group (all outputs when it is reduced)
  std::int64_t gone = 1;     // rows of the innermost group reduced into each output
  std::int64_t count = 1;    // elements reduced into each output
};

constexpr reduce_plan plan_reduce(const shape& xs, int axes) {
  struct group {
    std::int64_t ext, st;
    bool reduced;
  };
  std::array<group, max_rank> g{};
  int n = 0;
  std::int64_t st = 1;
  for (int d = xs.rank - 1; d >= 0; --d) {  // innermost first; extents of 1 do not matter
    const bool r = (axes >> d) & 1;
    if (xs[d] != 1) {
      if (n > 0 && g[static_cast<std::size_t>(n - 1)].reduced == r) g[static_cast<std::size_t>(n - 1)].ext *= xs[d];
      else g[static_cast<std::size_t>(n++)] = {xs[d], st, r};
    }
    st *= xs[d];
  }
  reduce_plan p;
  if (n == 0) return p;
  p.inner = g[0].ext;
  p.inner_reduced = g[0].reduced;
  if (p.inner_reduced) p.count = p.inner;
  for (int i = n - 1; i >= 1; --i) {  // outermost first
    const group& e = g[static_cast<std::size_t>(i)];
    if (e.reduced) {
      p.gone_ext[static_cast<std::size_t>(p.gone_rank)] = e.ext;
      p.gone_st[static_cast<std::size_t>(p.gone_rank++)] = e.st;
      p.gone *= e.ext;
      p.count *= e.ext;
    } else {
      p.kept_ext[static_cast<std::size_t>(p.kept_rank)] = e.ext;
      p.kept_st[static_cast<std::size_t>(p.kept_rank++)] = e.st;
      p.kept *= e.ext;
    }
  }
  return p;
}

/// The input offset of kept index q (row-major over the kept groups).
inline std::int64_t kept_offset(const reduce_plan& p, std::int64_t q) {
  std::int64_t at = 0;
  for (int d = p.kept_rank - 1; d >= 0; --d) {
    const auto u = static_cast<std::size_t>(d);
    at += (q % p.kept_ext[u]) * p.kept_st[u];
    q /= p.kept_ext[u];
  }
  return at;
}

/// Calls row(p) for the start of every row that the reduced groups select from `base`.
template <class Row>
inline void for_each_gone(const reduce_plan& p, const float* base, Row row) {
  std::array<std::int64_t, max_rank> idx{};
  for (std::int64_t r = 0; r < p.gone; ++r) {
    row(base);
    for (int d = p.gone_rank - 1; d >= 0; --d) {
      const auto u = static_cast<std::size_t>(d);
      base += p.gone_st[u];
      if (++idx[u] < p.gone_ext[u]) break;
      base -= p.gone_st[u] * p.gone_ext[u];
      idx[u] = 0;
    }
  }
}

/// The larger of a and b, NaN if either is.
inline double max_nan(double a, double b) { return std::isnan(a) ? a : (std::isnan(b) || b > a ? b : a); }

/// Sum of n contiguous floats in double, so that long sums keep the reference's precision: 32
/// running sums, which the compiler turns into vector adds of widened floats, eight chains of
/// them. `Paired` first adds four floats in float, pairwise (two roundings of short sums per
/// four elements, a thousandth of a mean's tolerance), to go at the speed of float sums; where
/// those overflow (values near the float limit) or meet NaN or ±inf, the row is summed again
/// unpaired, so that a finite row's sum is what the reference's double sum is. Out of line:
/// inlined where n is a constant, GCC 12 vectorizes the loop with lane permutations, at half the
/// speed.
template <bool Paired>
[[gnu::noinline]] inline double sum_row(const float* x, std::int64_t n) {
  constexpr int k = 32;
  const std::int64_t body = n - n % k;  // (a bound GCC 12 does not misread as overflowing)
  double acc[k] = {};
  for (std::int64_t i = 0; i < body; i += k) {
    if constexpr (Paired) {
      for (int j = 0; j < 8; ++j)
        acc[j] += static_cast<double>((x[i + j] + x[i + j + 8]) + (x[i + j + 16] + x[i + j + 24]));
    } else {
      for (int j = 0; j < k; ++j) acc[j] += static_cast<double>(x[i + j]);
    }
  }
  for (int h = k / 2; h >= 1; h /= 2)
    for (int j = 0; j < h; ++j) acc[j] += acc[j + h];
  double total = acc[0];
  for (std::int64_t i = body; i < n; ++i) total += static_cast<double>(x[i]);
  if constexpr (Paired)
    if (!std::isfinite(total)) [[unlikely]] return sum_row<false>(x, n);
  return total;
}

/// NaN-propagating maximum of n contiguous floats.
inline float max_row(const float* x, std::int64_t n) {
  constexpr int w = simd::width;
  vec a0 = simd::splat(-std::numeric_limits<float>::infinity()), a1 = a0;
  std::int64_t i = 0;
  for (; i + 2 * w <= n; i += 2 * w) {
    a0 = simd::max_nan(a0, simd::load(x + i));
    a1 = simd::max_nan(a1, simd::load(x + i + w));
  }
  if (i + w <= n) {
    a0 = simd::max_nan(a0, simd::load(x + i));
    i += w;
  }
  a0 = simd::max_nan(a0, a1);
  alignas(64) float lanes[w];
  a0.store_aligned(lanes);
  double top = -std::numeric_limits<double>::infinity();
  for (int j = 0; j < w; ++j) top = max_nan(top, lanes[j]);
  for (int j = 0, left = tail_count(n, i); j < left; ++j) top = max_nan(top, x[i + j]);
  return static_cast<float>(top);
}

/// Outputs [q0, q1) of a reduction whose innermost group is reduced; the kept index walks as an
/// odometer (no division per output: outputs may be short rows).
template <bool Max, bool Mean>
inline void reduce_rows(const reduce_plan& p, const float* x, float* y, std::int64_t q0, std::int64_t q1) {
  std::array<std::int64_t, max_rank> idx{};
  std::int64_t at = 0;
  for (std::int64_t q = q0, d = p.kept_rank - 1; d >= 0; --d) {
    const auto u = static_cast<std::size_t>(d);
    idx[u] = q % p.kept_ext[u];
    q /= p.kept_ext[u];
    at += idx[u] * p.kept_st[u];
  }
  for (std::int64_t q = q0; q < q1; ++q) {
    double total = Max ? -std::numeric_limits<double>::infinity() : 0.0;
    for_each_gone(p, x + at, [&](const float* row) {
      const double v = Max ? static_cast<double>(max_row(row, p.inner)) : sum_row<Mean>(row, p.inner);
      total = Max ? max_nan(total, v) : total + v;
    });
    y[q] = static_cast<float>(Mean ? total / static_cast<double>(p.count) : total);
    for (int d = p.kept_rank - 1; d >= 0; --d) {
      const auto u = static_cast<std::size_t>(d);
      at += p.kept_st[u];
      if (++idx[u] < p.kept_ext[u]) break;
      at -= p.kept_st[u] * p.kept_ext[u];
      idx[u] = 0;
    }
  }
}

/// Columns [c0, c1) of a reduction whose innermost group is kept: column c is `block` floats of
/// the innermost group (the last one shorter) for kept index c / ceil(inner / block).
inline constexpr int reduce_block = 4 * simd::width;

template <bool Max, bool Mean>
inline void reduce_columns(const reduce_plan& p, const float* x, float* y, std::int64_t c0, std::int64_t c1) {
  constexpr int w = simd::width, nv = reduce_block / w;
  const std::int64_t per_kept = (p.inner + reduce_block - 1) / reduce_block;
  for (std::int64_t c = c0; c < c1; ++c) {
    const std::int64_t q = c / per_kept, i0 = (c % per_kept) * reduce_block;
    const int len = static_cast<int>(std::min<std::int64_t>(reduce_block, p.inner - i0));
    const float* base = x + kept_offset(p, q) + i0;
    float* out = y + q * p.inner + i0;
    if constexpr (Max) {
      vec acc[nv];
      for (vec& a : acc) a = simd::splat(-std::numeric_limits<float>::infinity());
      for_each_gone(p, base, [&](const float* row) {
        for (int j = 0; j < nv && j * w < len; ++j) {
          const int lanes = len - j * w >= w ? w : tail_count(len, j * w);
          acc[j] = simd::max_nan(acc[j], lanes == w ? simd::load(row + j * w) : simd::load_first(row + j * w, lanes));
        }
      });
      alignas(64) float lanes[reduce_block];
      for (int j = 0; j < nv; ++j) acc[j].store_aligned(lanes + j * w);
      std::copy(lanes, lanes + len, out);
    } else {
      // In double, as in `sum_row`: the compiler widens and adds a vector at a time.
      double wide[reduce_block] = {};
      for_each_gone(p, base, [&](const float* row) {
        for (int j = 0; j < len; ++j) wide[j] += static_cast<double>(row[j]);
      });
      for (int j = 0; j < len; ++j)
        out[j] = static_cast<float>(Mean ? wide[j] / static_cast<double>(p.count) : wide[j]);
    }
  }
}

}  // namespace partita::detail::cpu
