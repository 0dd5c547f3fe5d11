#pragma once
/// Linear ops: dense, conv2d, matmul and bias_add.
#include "partita/ir/ops/rules.hpp"

namespace partita {
namespace rules {

constexpr inference dense(const attrs&, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  const shape& w = a[1].shp;
  if (x.rank < 1) return expect_rank(a[0], 2);
  if (w.rank != 2) return expect_rank(a[1], 2);
  if (x.back(0) != w[1]) return fail(problem::dense_inner_dimension, x, w);
  shape out = x;
  out.dims[static_cast<std::size_t>(x.rank - 1)] = w[0];
  return ok(out, a[0].type);
}

/// Output extent of a convolution or pooling window along one axis, `pad` before the input and
/// `pad_end` after it; 0 when the dilated window
/// does not fit in the padded input or the stride is not positive (the rules then report the
/// window). The span is tested before dividing: C++ division truncates toward zero, so a window
/// larger than the input by less than the stride would otherwise give an extent of 1.
constexpr std::int64_t conv_out(std::int64_t in, int k, int stride, int pad, int pad_end, int dilation) {
  const std::int64_t span = in + pad + pad_end - static_cast<std::int64_t>(dilation) * (k - 1) - 1;
  if (span < 0 || stride < 1) return 0;
  return span / stride + 1;
}
/// The same with `pad` on both sides.
constexpr std::int64_t conv_out(std::int64_t in, int k, int stride, int pad, int dilation) {
  return conv_out(in, k, stride, pad, pad, dilation);
}

constexpr inference conv2d(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  const shape& w = a[1].shp;
  if (x.rank != 4) return expect_rank(a[0], 4);
  if (w.rank != 4) return expect_rank(a[1], 4);
  if (at.groups < 1 || x[1] % at.groups != 0 || w[0] % at.groups != 0)
    return fail(problem::conv2d_groups, x, w);
  if (w[1] * at.groups != x[1]) return fail(problem::conv2d_channels, x, w);
  const std::int64_t oh = conv_out(x[2], static_cast<int>(w[2]), at.stride[0], at.padding[0], end_padding(at, 0), at.dilation[0]);
  const std::int64_t ow = conv_out(x[3], static_cast<int>(w[3]), at.stride[1], at.padding[1], end_padding(at, 1), at.dilation[1]);
  if (oh < 1 || ow < 1 || at.stride[0] < 1 || at.stride[1] < 1 || at.dilation[0] < 1 || at.dilation[1] < 1 ||
      at.padding_end[0] < -1 || at.padding_end[1] < -1)
    return fail(problem::conv2d_window, x, w);
  return ok(shape{4, {x[0], w[0], oh, ow}}, a[0].type);
}

constexpr inference bias_add(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  const int axis = normalize_axis(at.axis, x.rank);
  if (axis < 0 || axis >= x.rank) return fail(problem::axis_out_of_range, x, dims1(at.axis));
  if (a[1].shp.rank != 1 || a[1].shp[0] != x[axis]) return fail(problem::bias_size, x, a[1].shp);
  return ok(x, a[0].type);
}

/// numpy matmul of operands of rank ≥ 2: the last two axes are the matrix (swapped by the
/// transpose attributes), the others batch axes that broadcast.
constexpr inference matmul(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  const shape& y = a[1].shp;
  if (x.rank < 2) return expect_rank(a[0], 2);
  if (y.rank < 2) return expect_rank(a[1], 2);
  const std::int64_t m = at.transpose_a ? x.back(0) : x.back(1);
  const std::int64_t k = at.transpose_a ? x.back(1) : x.back(0);
  const std::int64_t k2 = at.transpose_b ? y.back(0) : y.back(1);
  const std::int64_t cols = at.transpose_b ? y.back(1) : y.back(0);
  if (k != k2) return fail(problem::matmul_inner_dimension, x, y);
  arg_info bx = a[0], by = a[1];
  bx.shp.rank -= 2;
  by.shp.rank -= 2;
  inference r = broadcast(bx, by);
  if (r.v.what != problem::none) return fail(problem::matmul_batch, x, y);
  r.out.dims[static_cast<std::size_t>(r.out.rank)] = m;
  r.out.dims[static_cast<std::size_t>(r.out.rank + 1)] = cols;
  r.out.rank += 2;
  return r;
}

}  // namespace rules

/// Fully connected layer, `y = x · wᵀ`: x is [..., in], w is [units, in], y is [..., units].
template <class X, class W>
struct dense : detail::op_node<op_id::dense, attrs{}, &rules::dense, X, W> {
  static_assert(well_formed<dense, X, W>);
};

namespace detail {
constexpr attrs to_attrs(const conv2d_attrs& c) {
  attrs a{};
  a.stride = c.stride;
  a.padding = c.padding;
  a.padding_end = stored_end_padding(c.padding, c.padding_end);
  a.dilation = c.dilation;
  a.groups = c.groups;
  return a;
}
}  // namespace detail

/// 2-D convolution, NCHW input and OIHW weight (O, I / groups, KH, KW):
/// `conv2d<x, w, {.stride = {2, 2}, .padding = {1, 1}}>`; ONNX's `pads = [0, 0, 1, 1]` is
/// `{.padding = {0, 0}, .padding_end = {1, 1}}`.
template <class X, class W, conv2d_attrs A = conv2d_attrs{}>
struct conv2d : detail::op_node<op_id::conv2d, detail::to_attrs(A), &rules::conv2d, X, W> {
  static_assert(well_formed<conv2d, X, W>);
};

namespace detail {
constexpr attrs to_attrs(const matmul_attrs& m) {
  attrs a{};
  a.transpose_a = m.transpose_a;
  a.transpose_b = m.transpose_b;
  return a;
}
}  // namespace detail

/// Matrix product with numpy semantics: `A` [..., M, K] times `B` [..., K, N] is [..., M, N],
/// the batch axes broadcasting (`[B, H, S, D]` by `[B, H, D, S]`, or `[B, S, D]` by a `[D, N]`
/// weight). Either operand may be a weight. `matmul<q, k, {.transpose_b = true}>` is Q·Kᵀ with
/// K read as [..., N, K]: no transpose is materialized.
template <class A, class B, matmul_attrs T = matmul_attrs{}>
struct matmul : detail::op_node<op_id::matmul, detail::to_attrs(T), &rules::matmul, A, B> {
  static_assert(well_formed<matmul, A, B>);
};

/// Adds a 1-D bias along `Axis` (default 1: the channels of NCHW, the units of dense).
template <class X, class B, int Axis = 1>
struct bias_add : detail::op_node<op_id::bias_add, detail::axis_attrs(Axis), &rules::bias_add, X, B> {
  static_assert(well_formed<bias_add, X, B>);
};

}  // namespace partita
