#pragma once
/// cpu comparisons, logical ops and `where` where every operand repeats along the output whole.
// A mask broadcast into attention scores ([1, 1, T, T] into [1, H, T, T]), a scalar fill value
// and the scores themselves: each operand is the whole output, a value for all of it, or a block
// of the output's trailing axes repeated. The output then runs in blocks of the shortest
// repeating operand, inside which every operand is contiguous (or one value), so the loops
// vectorize; other broadcasts run on the reference's odometer.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "partita/core/shape.hpp"
#include "partita/ir/op_id.hpp"

namespace partita::detail::cpu {

/// How the operands of an elementwise step read along its output: `ok` when each is the whole
/// output, a scalar, or the output's trailing axes (its own element count its period); `block`
/// the shortest period of an operand that is not a scalar (the output's size if none repeats).
template <std::size_t N>
struct periodic_plan {
  bool ok = false;
  std::int64_t block = 1, total = 0;
  std::array<std::int64_t, N> period{};  // 1 for a scalar operand
};

/// Whether `in`, aligned to the back of `out`, has extent 1 on a run of leading axes and
/// `out`'s extents after it: its elements then repeat every `in.elements()` of the output.
constexpr bool trailing_block_of(const shape& in, const shape& out) {
  if (in.rank > out.rank) return false;
  bool inside = false;  // past the leading ones, walking from the front of out
  for (int d = 0; d < out.rank; ++d) {
    const int k = d - (out.rank - in.rank);
    const std::int64_t e = k < 0 ? 1 : in[k];
    if (inside && e != out[d]) return false;
    if (e != 1) {
      if (e != out[d]) return false;
      inside = true;
    }
  }
  return true;
}

template <std::size_t N>
constexpr periodic_plan<N> plan_periodic(const shape& out, const std::array<shape, N>& in) {
  periodic_plan<N> p;
  p.total = out.elements();
  p.block = p.total;
  for (std::size_t k = 0; k < N; ++k) {
    if (!trailing_block_of(in[k], out)) return p;
    p.period[k] = in[k].elements();
    if (p.period[k] > 1) p.block = std::min(p.block, p.period[k]);
  }
  p.ok = p.total > 0;
  return p;
}

/// Blocks [b0, b1) of `p`: `f(y, len, base)` per block, `y` the block's first output element
/// and `base[k]` operand k's element there (0 for a scalar, whose stride is 0).
template <std::size_t N, class F>
void periodic_blocks(const periodic_plan<N>& p, std::int64_t b0, std::int64_t b1, F&& f) {
  for (std::int64_t b = b0; b < b1; ++b) {
    const std::int64_t y = b * p.block;
    std::array<std::int64_t, N> base{};
    for (std::size_t k = 0; k < N; ++k) base[k] = p.period[k] == 1 ? 0 : y % p.period[k];
    f(y, p.block, base);
  }
}

/// One block of a comparison of two f32 operands; `sa`, `sb` are 0 for a scalar, else 1.
template <op_id Op>
inline void compare_block(const float* a, std::ptrdiff_t sa, const float* b, std::ptrdiff_t sb, bool* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float u = a[i * sa], v = b[i * sb];
    if constexpr (Op == op_id::equal) y[i] = u == v;
    else if constexpr (Op == op_id::less) y[i] = u < v;
    else if constexpr (Op == op_id::less_equal) y[i] = u <= v;
    else if constexpr (Op == op_id::greater) y[i] = u > v;
    else y[i] = u >= v;
  }
}

/// One block of logical_and, _or or _xor.
template <op_id Op>
inline void logical_block(const bool* a, std::ptrdiff_t sa, const bool* b, std::ptrdiff_t sb, bool* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const bool u = a[i * sa], v = b[i * sb];
    if constexpr (Op == op_id::logical_and) y[i] = u && v;
    else if constexpr (Op == op_id::logical_or) y[i] = u || v;
    else y[i] = u != v;
  }
}

/// One block of `where` of elements of type T; a scalar operand has stride 0.
template <class T>
inline void where_block(const bool* c, std::ptrdiff_t sc, const T* a, std::ptrdiff_t sa, const T* b, std::ptrdiff_t sb,
                        T* y, std::int64_t n) {
  if (sa == 0 && sb == 1 && sc == 1) {  // masked_fill: one fill value
    const T fill = a[0];
    for (std::int64_t i = 0; i < n; ++i) y[i] = c[i] ? fill : b[i];
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) y[i] = c[i * sc] ? a[i * sa] : b[i * sb];
}

}  // namespace partita::detail::cpu
