#pragma once
/// Reference kernels of the boolean ops: comparisons, logical ops, where, cast and trilu.
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "partita/backends/reference/kernels.hpp"
#include "partita/core/dtype.hpp"
#include "partita/core/shape.hpp"
#include "partita/ir/op_id.hpp"

namespace partita::reference_kernels {

namespace detail {

/// Calls `f(i, offsets)` for every element `i` of `ys` in order, `offsets[k]` being the element
/// of input `k` (of shape `shapes[k]`, broadcast numpy-style into `ys`) that element `i` reads.
template <std::size_t N, class F>
void for_each_broadcast(const shape& ys, const std::array<shape, N>& shapes, F&& f) {
  std::array<std::array<std::int64_t, max_rank>, N> strides{};
  for (std::size_t k = 0; k < N; ++k) strides[k] = broadcast_strides(shapes[k], ys.rank);
  std::array<std::int64_t, max_rank> idx{};
  std::array<std::int64_t, N> off{};
  const std::int64_t total = ys.elements();
  for (std::int64_t i = 0; i < total; ++i) {
    f(i, off);
    // The odometer: the last axis moves fastest; each input's offset follows its strides.
    for (int d = ys.rank - 1; d >= 0; --d) {
      const auto u = static_cast<std::size_t>(d);
      for (std::size_t k = 0; k < N; ++k) off[k] += strides[k][u];
      if (++idx[u] < ys[d]) break;
      for (std::size_t k = 0; k < N; ++k) off[k] -= strides[k][u] * ys[d];
      idx[u] = 0;
    }
  }
}

/// The truth of one comparison of two numbers.
template <class T>
bool compare_values(op_id op, T a, T b) {
  switch (op) {
    case op_id::equal: return a == b;
    case op_id::less: return a < b;
    case op_id::less_equal: return a <= b;
    case op_id::greater: return a > b;
    default: return a >= b;  // greater_equal
  }
}

/// `v` as an integer of dtype `t`: truncated toward zero, saturated to the dtype's range; NaN
/// is 0.
inline std::int64_t float_to_integer(double v, dtype t) {
  if (std::isnan(v)) return 0;
  const double lo = static_cast<double>(lowest_of(t)), hi = static_cast<double>(highest_of(t));
  if (v <= lo) return lowest_of(t);
  if (v >= hi) return highest_of(t);
  return static_cast<std::int64_t>(v);
}

/// `v` wrapped into integer dtype `t` (two's complement, as C++'s and numpy's conversions).
inline std::int64_t wrap_integer(std::int64_t v, dtype t) {
  switch (t) {
    case dtype::u8: return static_cast<std::uint8_t>(v);
    case dtype::i8: return static_cast<std::int8_t>(v);
    case dtype::i32: return static_cast<std::int32_t>(v);
    default: return v;
  }
}

}  // namespace detail

/// `a op b` (equal, less, less_equal, greater, greater_equal) of two tensors of dtype `t` (f32
/// or an integer dtype), broadcast into `y` of shape `ys`. f32 compares as IEEE: NaN is not
/// equal to, less or greater than anything.
inline void compare(op_id op, const void* a, const shape& as, const void* b, const shape& bs, dtype t, bool* y,
                    const shape& ys) {
  if (!is_comparison(op))
    partita::detail::raise(error("reference_kernels::compare: " + std::string(name_of(op)) + " is not a comparison"));
  if (t == dtype::f32) {
    const auto* x0 = static_cast<const float*>(a);
    const auto* x1 = static_cast<const float*>(b);
    detail::for_each_broadcast<2>(ys, {as, bs}, [&](std::int64_t i, const std::array<std::int64_t, 2>& o) {
      y[i] = detail::compare_values(op, x0[o[0]], x1[o[1]]);
    });
  } else {
    detail::for_each_broadcast<2>(ys, {as, bs}, [&](std::int64_t i, const std::array<std::int64_t, 2>& o) {
      y[i] = detail::compare_values(op, partita::detail::load_integer(a, t, o[0]),
                                    partita::detail::load_integer(b, t, o[1]));
    });
  }
}

/// logical_not of `a` (then `b` is unused), or logical_and, _or, _xor of `a` and `b`, broadcast.
inline void logical(op_id op, const bool* a, const shape& as, const bool* b, const shape& bs, bool* y, const shape& ys) {
  if (op == op_id::logical_not) {
    for (std::int64_t i = 0, n = ys.elements(); i < n; ++i) y[i] = !a[i];
    return;
  }
  detail::for_each_broadcast<2>(ys, {as, bs}, [&](std::int64_t i, const std::array<std::int64_t, 2>& o) {
    const bool u = a[o[0]], v = b[o[1]];
    y[i] = op == op_id::logical_and ? (u && v) : op == op_id::logical_or ? (u || v) : (u != v);
  });
}

/// `a` where `c`, else `b`: elements of `bytes` bytes each (any dtype), the three broadcast into
/// `y` of shape `ys`.
inline void where(const bool* c, const shape& cs, const void* a, const shape& as, const void* b, const shape& bs,
                  std::size_t bytes, void* y, const shape& ys) {
  const auto* pa = static_cast<const unsigned char*>(a);
  const auto* pb = static_cast<const unsigned char*>(b);
  auto* py = static_cast<unsigned char*>(y);
  const auto sz = static_cast<std::int64_t>(bytes);
  detail::for_each_broadcast<3>(ys, {cs, as, bs}, [&](std::int64_t i, const std::array<std::int64_t, 3>& o) {
    std::memcpy(py + i * sz, c[o[0]] ? pa + o[1] * sz : pb + o[2] * sz, bytes);
  });
}

/// `n` elements of dtype `from` converted to dtype `to` (cast's rules: to boolean, nonzero is
/// true; f32 to an integer truncates and saturates, NaN to 0; integer to integer wraps).
inline void cast(const void* x, dtype from, std::int64_t n, void* y, dtype to) {
  for (std::int64_t i = 0; i < n; ++i) {
    if (from == dtype::f32) {
      const float v = static_cast<const float*>(x)[i];
      if (to == dtype::f32) static_cast<float*>(y)[i] = v;
      else if (to == dtype::boolean) static_cast<bool*>(y)[i] = v != 0.f;
      else partita::detail::store_integer(y, to, i, detail::float_to_integer(static_cast<double>(v), to));
    } else {
      const std::int64_t v = partita::detail::load_integer(x, from, i);
      if (to == dtype::f32) static_cast<float*>(y)[i] = static_cast<float>(v);
      else if (to == dtype::boolean) static_cast<bool*>(y)[i] = v != 0;
      else partita::detail::store_integer(y, to, i, detail::wrap_integer(v, to));
    }
  }
}

/// tril (`upper` false: element (i, j) of each matrix of the last two axes kept where
/// j - i <= k) or triu (kept where j - i >= k) of `x`, elements of `bytes` bytes; the others are
/// all-zero bytes (0, 0.f or false).
inline void trilu(const void* x, const shape& xs, std::size_t bytes, bool upper, std::int64_t k, void* y) {
  const std::int64_t rows = xs[xs.rank - 2], cols = xs[xs.rank - 1];
  const std::int64_t matrices = xs.elements() / (rows * cols);
  const auto* px = static_cast<const unsigned char*>(x);
  auto* py = static_cast<unsigned char*>(y);
  for (std::int64_t m = 0, e = 0; m < matrices; ++m)
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j, ++e) {
        const bool keep = upper ? j - i >= k : j - i <= k;
        if (keep) std::memcpy(py + e * static_cast<std::int64_t>(bytes), px + e * static_cast<std::int64_t>(bytes), bytes);
        else std::memset(py + e * static_cast<std::int64_t>(bytes), 0, bytes);
      }
}

}  // namespace partita::reference_kernels
