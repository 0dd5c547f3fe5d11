#pragma once
/// Convolutions beside conv2d: conv1d and conv_transpose2d.
#include "partita/ir/ops/linear.hpp"
#include "partita/ir/ops/rules.hpp"

namespace partita {

/// 1-D convolution, NCL input and (O, C / groups, K) weight: `conv1d<x, w, {.padding = 1}>`. It
/// is conv2d of the [N, C, 1, L] view by the [O, C / groups, 1, K] view, which its kernels run.
template <class X, class W, conv1d_attrs A = conv1d_attrs{}>
struct conv1d;

/// Transposed 2-D convolution (the gradient of conv2d with respect to its input), NCHW input and
/// PyTorch's / ONNX's weight layout (Cin, Cout / groups, KH, KW): each input pixel adds its
/// channels times the kernel into the output at stride steps. The output extent per axis is
/// `(in - 1) · stride - padding - padding_end + dilation · (k - 1) + output_padding + 1`.
/// `conv_transpose2d<x, w, {.stride = {2, 2}, .padding = {1, 1}, .output_padding = {1, 1}}>`
/// doubles H and W with a 3×3 kernel. No bias: `bias_add` after it, as after conv2d.
template <class X, class W, conv_transpose2d_attrs A = conv_transpose2d_attrs{}>
struct conv_transpose2d;

namespace rules {

/// conv1d's attributes live on the width axis (index 1), so that they are those of its H = 1 view.
constexpr inference conv1d(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  const shape& w = a[1].shp;
  if (x.rank != 3) return expect_rank(a[0], 3);
  if (w.rank != 3) return expect_rank(a[1], 3);
  if (at.groups < 1 || x[1] % at.groups != 0 || w[0] % at.groups != 0 || w[1] * at.groups != x[1])
    return fail(problem::conv1d_channels, x, w);
  const std::int64_t len = conv_out(x[2], static_cast<int>(w[2]), at.stride[1], at.padding[1], end_padding(at, 1), at.dilation[1]);
  if (len < 1 || at.stride[1] < 1 || at.dilation[1] < 1 || at.padding_end[1] < -1)
    return fail(problem::conv1d_window, x, w);
  return ok(shape{3, {x[0], w[0], len}}, a[0].type);
}

/// Output extent of a transposed convolution along one axis (< 1: none).
constexpr std::int64_t conv_transpose_out(std::int64_t in, std::int64_t k, int stride, int pad, int pad_end,
                                          int dilation, int output_padding) {
  return (in - 1) * stride - pad - pad_end + dilation * (k - 1) + output_padding + 1;
}

constexpr inference conv_transpose2d(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  const shape& w = a[1].shp;
  if (x.rank != 4) return expect_rank(a[0], 4);
  if (w.rank != 4) return expect_rank(a[1], 4);
  if (at.groups < 1 || x[1] != w[0] || x[1] % at.groups != 0) return fail(problem::conv_transpose2d_channels, x, w);
  std::int64_t out[2]{};
  for (int i = 0; i < 2; ++i) {
    const auto u = static_cast<std::size_t>(i);
    const int s = at.stride[u], d = at.dilation[u], op = at.output_padding[u];
    // PyTorch's rule: the extra rows must be fewer than the stride or the dilation, or they
    // would be rows no input reaches beyond those a larger input would give.
    if (s < 1 || d < 1 || op < 0 || (op >= s && op >= d) || at.padding[u] < 0 || at.padding_end[u] < -1)
      return fail(problem::conv_transpose2d_output, x, w);
    out[i] = conv_transpose_out(x[2 + i], w[2 + i], s, at.padding[u], end_padding(at, i), d, op);
    if (out[i] < 1) return fail(problem::conv_transpose2d_output, x, w);
  }
  return ok(shape{4, {x[0], w[1] * at.groups, out[0], out[1]}}, a[0].type);
}

}  // namespace rules

namespace detail {
constexpr attrs to_attrs(const conv1d_attrs& c) {
  attrs a{};
  a.stride = {1, c.stride};
  a.padding = {0, c.padding};
  a.padding_end = {-1, c.padding_end == c.padding ? -1 : c.padding_end};
  a.dilation = {1, c.dilation};
  a.groups = c.groups;
  return a;
}

constexpr attrs to_attrs(const conv_transpose2d_attrs& c) {
  attrs a = to_attrs(conv2d_attrs{c.stride, c.padding, c.padding_end, c.dilation, c.groups});
  a.output_padding = c.output_padding;
  return a;
}
}  // namespace detail

template <class X, class W, conv1d_attrs A>
struct conv1d : detail::op_node<op_id::conv1d, detail::to_attrs(A), &rules::conv1d, X, W> {
  static_assert(well_formed<conv1d, X, W>);
};

template <class X, class W, conv_transpose2d_attrs A>
struct conv_transpose2d : detail::op_node<op_id::conv_transpose2d, detail::to_attrs(A), &rules::conv_transpose2d, X, W> {
  static_assert(well_formed<conv_transpose2d, X, W>);
};

}  // namespace partita
