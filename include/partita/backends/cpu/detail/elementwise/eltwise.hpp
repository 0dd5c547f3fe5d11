#pragma once
/// cpu memory-bound kernels: unary and broadcasting binary elementwise ops, copies, bias, batch norm.
// Vectorized memory-bound kernels: elementwise ops, bias, batch norm. The elementwise
// ones work on a range of the flat elements (or of broadcast rows), so that callers split them
// across threads.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "partita/backends/cpu/detail/gemm/epilogue.hpp"
#include "partita/backends/cpu/detail/simd/simd.hpp"
#include "partita/backends/cpu/detail/simd/simd_math.hpp"
#include "partita/core/shape.hpp"
#include "partita/ir/op_id.hpp"

namespace partita::detail::cpu {

using simd::vec;

/// The n - i < width elements left after a loop of whole vectors, as an int that the compiler
/// sees is below width (GCC 12 otherwise warns of out-of-bounds copies in `load_first`).
inline int tail_count(std::int64_t n, std::int64_t i) { return static_cast<int>(n - i) & (simd::width - 1); }

// The map functions finish a length that is no multiple of the width with one more whole vector
// ending at n, computed from the inputs before anything is stored (so that in place stays
// right) and stored last, over results equal to its own: no masked, per-lane tail (on AVX2 a
// copy through the stack) in kernels that map many short rows. Lengths under one vector take
// the masked path.

/// y[i] = f(x[i]) over n elements. In place is fine.
template <class F>
inline void map1(const float* x, float* y, std::int64_t n, F f) {
  constexpr int w = simd::width;
  if (n < w) {
    if (n > 0) simd::store_first(y, f(simd::load_first(x, tail_count(n, 0))), tail_count(n, 0));
    return;
  }
  const vec last = f(simd::load(x + n - w));
  std::int64_t i = 0;
  for (; i + w <= n; i += w) simd::store(y + i, f(simd::load(x + i)));
  if (i < n) simd::store(y + n - w, last);
}

/// y[i] = f(a[i], b[i]) over n elements.
template <class F>
inline void map2(const float* a, const float* b, float* y, std::int64_t n, F f) {
  constexpr int w = simd::width;
  if (n < w) {
    const int r = tail_count(n, 0);
    if (n > 0) simd::store_first(y, f(simd::load_first(a, r), simd::load_first(b, r)), r);
    return;
  }
  const vec last = f(simd::load(a + n - w), simd::load(b + n - w));
  std::int64_t i = 0;
  for (; i + w <= n; i += w) simd::store(y + i, f(simd::load(a + i), simd::load(b + i)));
  if (i < n) simd::store(y + n - w, last);
}

/// y[i] = f(a[i], b[i], c[i]) over n elements.
template <class F>
inline void map3(const float* a, const float* b, const float* c, float* y, std::int64_t n, F f) {
  constexpr int w = simd::width;
  if (n < w) {
    const int r = tail_count(n, 0);
    if (n > 0) simd::store_first(y, f(simd::load_first(a, r), simd::load_first(b, r), simd::load_first(c, r)), r);
    return;
  }
  const vec last = f(simd::load(a + n - w), simd::load(b + n - w), simd::load(c + n - w));
  std::int64_t i = 0;
  for (; i + w <= n; i += w) simd::store(y + i, f(simd::load(a + i), simd::load(b + i), simd::load(c + i)));
  if (i < n) simd::store(y + n - w, last);
}

/// x^N for a whole N, by squaring (std::pow's results at 0, ±inf and NaN, as 1/x^-N for N < 0).
template <int N>
inline vec ipow(const vec& x) {
  if constexpr (N < 0) {
    return simd::splat(1.f) / ipow<-N>(x);
  } else if constexpr (N == 0) {
    return simd::splat(1.f);
  } else if constexpr (N == 1) {
    return x;
  } else {
    const vec h = ipow<N / 2>(x);
    if constexpr (N % 2 == 1) return h * h * x;
    else return h * h;
  }
}

/// True for the exponents `power` vectorizes: whole numbers in [-16, 16] and ±0.5; others take
/// std::pow in double, one element at a time.
constexpr bool power_vectorized(float e) {
  return e == 0.5f || e == -0.5f || (e >= -16.f && e <= 16.f && static_cast<float>(static_cast<int>(e)) == e);
}

/// The unary ops that are no activation: power (exponent Alpha), sqrt, rsqrt, exp, log, erf,
/// abs, neg. NaN gives NaN; zeros and infinities give what std::pow and <cmath> give.
template <op_id Op, float Alpha>
inline vec math(const vec& x) {
  const vec zero = simd::splat(0.f), inf = simd::splat(std::numeric_limits<float>::infinity());
  if constexpr (Op == op_id::sqrt) return simd::sqrt(x);
  else if constexpr (Op == op_id::rsqrt) return simd::rsqrt(x);
  else if constexpr (Op == op_id::exp) return simd::exp(x);
  else if constexpr (Op == op_id::log) return simd::log(x);
  else if constexpr (Op == op_id::erf) return simd::erf(x);
  else if constexpr (Op == op_id::abs) return xsimd::abs(x);
  else if constexpr (Op == op_id::neg) return -x;
  else if constexpr (Alpha == 0.5f) return xsimd::select(x == -inf, inf, simd::sqrt(x));  // pow(-inf, .5) = inf
  else if constexpr (Alpha == -0.5f)  // pow(±0, -.5) = inf, pow(-inf, -.5) = 0
    return xsimd::select(x == -inf, zero, xsimd::select(x == zero, inf, simd::splat(1.f) / simd::sqrt(x)));
  else if constexpr (power_vectorized(Alpha)) return ipow<static_cast<int>(Alpha)>(x);
  else return x;  // (unary_range takes std::pow)
}

/// y = op(x) over elements [i0, i1): the activations through `apply`, the others through `math`.
template <op_id Op, float Lo, float Hi>
inline void unary_range(const float* x, float* y, std::int64_t i0, std::int64_t i1) {
  constexpr activation act = activation_of(Op);
  if constexpr (act != activation::none) {
    map1(x + i0, y + i0, i1 - i0, [](const vec& v) { return apply<act>(v, Lo, Hi); });
  } else if constexpr (Op == op_id::power && !power_vectorized(Lo)) {
    for (std::int64_t i = i0; i < i1; ++i)
      y[i] = static_cast<float>(std::pow(static_cast<double>(x[i]), static_cast<double>(Lo)));
  } else {
    map1(x + i0, y + i0, i1 - i0, [](const vec& v) { return math<Op, Lo>(v); });
  }
}

/// The binary elementwise ops: maximum and minimum propagate NaN, prelu is `u >= 0 ? u : u · v`.
template <op_id Op>
inline vec combine(const vec& u, const vec& v) {
  if constexpr (Op == op_id::add) return u + v;
  else if constexpr (Op == op_id::subtract) return u - v;
  else if constexpr (Op == op_id::multiply) return u * v;
  else if constexpr (Op == op_id::divide) return u / v;
  else if constexpr (Op == op_id::maximum) return simd::max_nan(u, v);
  else if constexpr (Op == op_id::minimum) return xsimd::select(xsimd::isnan(u), u, xsimd::min(u, v));
  else return xsimd::select(u >= simd::splat(0.f), u, u * v);  // prelu
}

/// How a binary op's operands broadcast into its output, read off the shapes at compile time.
/// `same`: neither broadcasts. Else one operand (`full`) has the output's elements and the other
/// is, over the output's axes, [1.., C, 1..] with C the output's extents on consecutive axes:
/// `scalar` (C = 1), `rows` (nothing after C: the operand repeats every C elements, as a [N]
/// bias on [..., N]) or `per_channel` (a value per run of `inner`, as [C, 1, 1] on NCHW). `other`:
/// both broadcast, left to the reference.
struct broadcast_plan {
  enum kind_t : std::uint8_t { same, scalar, rows, per_channel, other } kind = other;
  bool swap = false;  // the broadcast operand is the first
  std::int64_t outer = 1, channels = 1, inner = 1;
};

constexpr broadcast_plan plan_broadcast(const shape& ys, const shape& as, const shape& bs) {
  broadcast_plan p;
  const std::int64_t n = ys.elements();
  const bool a_full = as.elements() == n, b_full = bs.elements() == n;
  if (a_full && b_full) {
    p.kind = broadcast_plan::same;
    return p;
  }
  if (a_full == b_full) return p;
  p.swap = b_full;
  const shape& g = b_full ? as : bs;
  if (g.elements() == 1) {
    p.kind = broadcast_plan::scalar;
    return p;
  }
  const auto dim = [&](int d) { return d >= ys.rank - g.rank ? g[d - (ys.rank - g.rank)] : std::int64_t{1}; };
  int lo = ys.rank, hi = 0;
  for (int d = 0; d < ys.rank; ++d)
    if (dim(d) != 1) {
      lo = std::min(lo, d);
      hi = d + 1;
    }
  for (int d = lo; d < hi; ++d)
    if (dim(d) != ys[d]) return p;
  for (int d = 0; d < ys.rank; ++d) (d < lo ? p.outer : d < hi ? p.channels : p.inner) *= ys[d];
  p.kind = p.inner == 1 ? broadcast_plan::rows : broadcast_plan::per_channel;
  return p;
}

/// y = a ∘ b over a range of units: elements [u0, u1) for `same` and `scalar`, rows of C for
/// `rows`, runs of `inner` for `per_channel` (b is the broadcast operand; with `Swap` it is the
/// first operand of ∘).
template <op_id Op, bool Swap, broadcast_plan::kind_t Kind>
inline void broadcast_range(const broadcast_plan& p, const float* full, const float* b, float* y, std::int64_t u0,
                            std::int64_t u1) {
  const auto f = [](const vec& u, const vec& v) { return Swap ? combine<Op>(v, u) : combine<Op>(u, v); };
  if constexpr (Kind == broadcast_plan::same) {
    map2(full + u0, b + u0, y + u0, u1 - u0, f);
  } else if constexpr (Kind == broadcast_plan::scalar) {
    const vec s = simd::splat(b[0]);
    map1(full + u0, y + u0, u1 - u0, [&](const vec& u) { return f(u, s); });
  } else if constexpr (Kind == broadcast_plan::rows) {
    for (std::int64_t r = u0; r < u1; ++r) map2(full + r * p.channels, b, y + r * p.channels, p.channels, f);
  } else {
    for (std::int64_t r = u0, c = u0 % p.channels; r < u1; ++r, c = c + 1 == p.channels ? 0 : c + 1) {
      const vec s = simd::splat(b[c]);
      map1(full + r * p.inner, y + r * p.inner, p.inner, [&](const vec& u) { return f(u, s); });
    }
  }
}

/// dst[0, n) = src[0, n) for n < 16, in straight-line moves (a loop of them would become a
/// call to memcpy, whose cost a short row cannot pay).
inline void copy_short(float* dst, const float* src, std::int64_t n) {
  const auto move = [&](auto k) {
    for (int j = 0; j < decltype(k)::value; ++j) dst[j] = src[j];
    dst += decltype(k)::value;
    src += decltype(k)::value;
  };
  if (n & 8) move(std::integral_constant<int, 8>{});
  if (n & 4) move(std::integral_constant<int, 4>{});
  if (n & 2) move(std::integral_constant<int, 2>{});
  if (n & 1) *dst = *src;
}

/// dst[0, n) = src[0, n) (not overlapping): short runs (the common case: a head of 64 floats, a
/// row of a few hundred) with vector moves inline, the last one overlapping the one before
/// instead of a masked tail; long runs through memcpy.
inline void copy_floats(float* dst, const float* src, std::int64_t n) {
  constexpr int w = simd::width;
  if (n >= 2048) {
    std::memcpy(dst, src, sizeof(float) * static_cast<std::size_t>(n));
    return;
  }
  if (n < w) {
    copy_short(dst, src, n);
    return;
  }
  std::int64_t i = 0;
  for (; i + 4 * w <= n; i += 4 * w) {
    const vec a = simd::load(src + i), b = simd::load(src + i + w), c = simd::load(src + i + 2 * w),
              d = simd::load(src + i + 3 * w);
    simd::store(dst + i, a);
    simd::store(dst + i + w, b);
    simd::store(dst + i + 2 * w, c);
    simd::store(dst + i + 3 * w, d);
  }
  for (; i + w <= n; i += w) simd::store(dst + i, simd::load(src + i));
  if (i < n) simd::store(dst + n - w, simd::load(src + n - w));
}

/// dst[0, n) = value, the same way.
inline void fill_floats(float* dst, std::int64_t n, float value) {
  constexpr int w = simd::width;
  if (n < w) {
    for (std::int64_t b = 8; b >= 1; b /= 2)
      if (n & b) {
        for (std::int64_t j = 0; j < b; ++j) dst[j] = value;
        dst += b;
      }
    return;
  }
  const vec v = simd::splat(value);
  std::int64_t i = 0;
  for (; i + w <= n; i += w) simd::store(dst + i, v);
  if (i < n) simd::store(dst + n - w, v);
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

}  // namespace partita::detail::cpu
