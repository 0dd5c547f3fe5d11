#pragma once
/// cpu: strided views of a tensor through slice, reshape and transpose, worked out at compile time.
#include <array>
#include <cstddef>
#include <cstdint>

#include "partita/core/shape.hpp"
#include "partita/ir/attrs.hpp"
#include "partita/ir/op_id.hpp"
#include "partita/ir/ops/slicing.hpp"

namespace partita::detail::cpu {

/// A tensor read in place: element (i_0, ..., i_(rank-1)) lies at `offset` + Σ i_d · stride[d]
/// elements of the storage. `ok` is false where a reshape could not be written as strides.
struct strided_view {
  shape dims{};
  std::array<std::int64_t, max_rank> stride{};
  std::int64_t offset = 0;
  bool ok = true;
};

constexpr strided_view contiguous_view(const shape& s) {
  strided_view v;
  v.dims = s;
  for (std::int64_t st = 1, d = s.rank - 1; d >= 0; --d) {
    v.stride[static_cast<std::size_t>(d)] = st;
    st *= s[static_cast<int>(d)];
  }
  return v;
}

constexpr strided_view slice_view(strided_view v, int axis, std::int64_t begin, std::int64_t end, std::int64_t step) {
  const auto a = static_cast<std::size_t>(axis);
  const slice_range r = slice_bounds(v.dims[axis], begin, end, step);
  v.offset += r.start * v.stride[a];
  v.stride[a] *= r.step;
  v.dims.dims[a] = r.count;
  return v;
}

/// v seen with shape `to` (same element count), where strides can say it: the axes of extent
/// above 1 are grouped into runs of equal products on both sides, and each run of v's axes must
/// be contiguous within itself (numpy's rule for a reshape without a copy).
constexpr strided_view reshape_view(const strided_view& v, const shape& to) {
  std::array<std::int64_t, max_rank> od{}, os{};
  int on = 0;
  for (int d = 0; d < v.dims.rank; ++d)
    if (v.dims[d] != 1) {
      od[static_cast<std::size_t>(on)] = v.dims[d];
      os[static_cast<std::size_t>(on++)] = v.stride[static_cast<std::size_t>(d)];
    }
  std::array<int, max_rank> at{};  // the axes of `to` of extent above 1
  int nn = 0;
  for (int d = 0; d < to.rank; ++d)
    if (to[d] != 1) at[static_cast<std::size_t>(nn++)] = d;
  strided_view r;
  r.dims = to;
  r.offset = v.offset;
  int oi = 0, ni = 0;
  while (oi < on && ni < nn) {
    int oj = oi + 1, nj = ni + 1;
    std::int64_t op = od[static_cast<std::size_t>(oi)], np = to[at[static_cast<std::size_t>(ni)]];
    while (op != np) {
      if (np < op) {
        if (nj == nn) return {.ok = false};
        np *= to[at[static_cast<std::size_t>(nj++)]];
      } else {
        if (oj == on) return {.ok = false};
        op *= od[static_cast<std::size_t>(oj++)];
      }
    }
    for (int k = oi; k + 1 < oj; ++k)
      if (os[static_cast<std::size_t>(k)] != od[static_cast<std::size_t>(k + 1)] * os[static_cast<std::size_t>(k + 1)])
        return {.ok = false};
    std::int64_t st = os[static_cast<std::size_t>(oj - 1)];
    for (int k = nj - 1; k >= ni; --k) {
      const int d = at[static_cast<std::size_t>(k)];
      r.stride[static_cast<std::size_t>(d)] = st;
      st *= to[d];
    }
    oi = oj;
    ni = nj;
  }
  if (oi != on || ni != nn) return {.ok = false};
  return r;
}

constexpr strided_view transpose_view(const strided_view& v, const std::array<int, max_rank>& perm) {
  strided_view r = v;
  for (int i = 0; i < v.dims.rank; ++i) {
    const auto from = static_cast<std::size_t>(perm[static_cast<std::size_t>(i)]);
    r.dims.dims[static_cast<std::size_t>(i)] = v.dims.dims[from];
    r.stride[static_cast<std::size_t>(i)] = v.stride[from];
  }
  return r;
}

/// True for the ops `view_through` follows.
constexpr bool is_strided_view_op(op_id op) {
  return op == op_id::slice || op == op_id::reshape || op == op_id::transpose;
}

/// `v` seen through one slice, reshape or transpose whose result has shape `out`.
constexpr strided_view view_through(const strided_view& v, op_id op, const attrs& at, const shape& out) {
  switch (op) {
    case op_id::slice: return slice_view(v, normalize_axis(at.axis, v.dims.rank), at.start, at.stop, at.step);
    case op_id::reshape: return reshape_view(v, out);
    case op_id::transpose: return transpose_view(v, at.perm);
    default: return {.ok = false};
  }
}

/// How a GEMM reads the matrices of view `v` (its last two axes): by rows (stride 1 along the
/// last axis), by columns (stride 1 along the other: the rows of the transposed matrix), or
/// neither.
enum class matrix_order { rows, columns, neither };
constexpr matrix_order matrix_layout(const strided_view& v) {
  const int r = v.dims.rank;
  if (r < 2 || !v.ok) return matrix_order::neither;
  if (v.dims[r - 1] == 1 || v.stride[static_cast<std::size_t>(r - 1)] == 1) return matrix_order::rows;
  if (v.dims[r - 2] == 1 || v.stride[static_cast<std::size_t>(r - 2)] == 1) return matrix_order::columns;
  return matrix_order::neither;
}

/// The stride between the runs a GEMM reads of v's matrices (rows, or columns where
/// `matrix_layout` says so); 0 where a matrix is one run.
constexpr std::int64_t matrix_ld(const strided_view& v) {
  const int r = v.dims.rank;
  const int d = matrix_layout(v) == matrix_order::columns ? r - 1 : r - 2;  // the axis between runs
  return v.dims[d] == 1 ? 0 : v.stride[static_cast<std::size_t>(d)];
}

/// Where v's matrix `i` starts: `i` counted over the axes before the last two, row-major.
constexpr std::int64_t matrix_offset(const strided_view& v, std::int64_t i) {
  std::int64_t o = v.offset;
  for (int d = v.dims.rank - 3; d >= 0; --d) {
    const std::int64_t n = v.dims[d];
    o += (i % n) * v.stride[static_cast<std::size_t>(d)];
    i /= n;
  }
  return o;
}

}  // namespace partita::detail::cpu
