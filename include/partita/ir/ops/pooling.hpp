#pragma once
/// Pooling and resampling ops: max, average and global average pooling, resize.
#include "partita/ir/ops/linear.hpp"
#include "partita/ir/ops/rules.hpp"

namespace partita {
namespace rules {

/// Output extent of a pooling window along one axis, `pad` before it and `pad_end` after. With
/// `ceil` the division rounds up, but a last window that would start in the trailing padding is
/// dropped (PyTorch's rule).
constexpr std::int64_t pool_out(std::int64_t in, int k, int stride, int pad, int pad_end, bool ceil) {
  const std::int64_t floor_out = conv_out(in, k, stride, pad, pad_end, 1);
  if (!ceil || floor_out < 1) return floor_out;
  const std::int64_t span = in + pad + pad_end - k;
  std::int64_t out = (span + stride - 1) / stride + 1;
  if ((out - 1) * stride >= in + pad) --out;
  return out;
}

constexpr inference pool2d(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  if (x.rank != 4) return expect_rank(a[0], 4);
  const std::int64_t oh = pool_out(x[2], at.window[0], at.stride[0], at.padding[0], end_padding(at, 0), at.ceil_mode);
  const std::int64_t ow = pool_out(x[3], at.window[1], at.stride[1], at.padding[1], end_padding(at, 1), at.ceil_mode);
  if (oh < 1 || ow < 1 || at.window[0] < 1 || at.window[1] < 1 || at.stride[0] < 1 || at.stride[1] < 1 ||
      at.padding_end[0] < -1 || at.padding_end[1] < -1)
    return fail(problem::pool_window, x, shape{2, {at.window[0], at.window[1]}});
  return ok(shape{4, {x[0], x[1], oh, ow}}, a[0].type);
}

constexpr inference global_pool2d(const attrs&, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  if (x.rank != 4) return expect_rank(a[0], 4);
  return ok(shape{4, {x[0], x[1], 1, 1}}, a[0].type);
}

constexpr inference resize(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  if (x.rank != 4) return expect_rank(a[0], 4);
  if (at.window[0] < 1 || at.window[1] < 1) return fail(problem::resize_size, x, shape{2, {at.window[0], at.window[1]}});
  return ok(shape{4, {x[0], x[1], at.window[0], at.window[1]}}, a[0].type);
}

}  // namespace rules

namespace detail {
constexpr attrs to_attrs(std::int64_t oh, std::int64_t ow, const resize_attrs& r) {
  attrs a{};
  a.window = {static_cast<int>(oh), static_cast<int>(ow)};
  a.resize = r.mode;
  a.align_corners = r.align_corners;
  return a;
}

constexpr attrs to_attrs(const pool2d_attrs& p) {
  attrs a{};
  a.window = p.size;
  a.stride = {p.stride[0] ? p.stride[0] : p.size[0], p.stride[1] ? p.stride[1] : p.size[1]};
  a.padding = p.padding;
  a.padding_end = stored_end_padding(p.padding, p.padding_end);
  a.count_include_pad = p.count_include_pad;
  a.ceil_mode = p.ceil_mode;
  return a;
}
}  // namespace detail

/// Max pooling over NCHW: `max_pool2d<x, {.size = {2, 2}}>` (stride defaults to the size).
template <class X, pool2d_attrs A>
struct max_pool2d : detail::op_node<op_id::max_pool2d, detail::to_attrs(A), &rules::pool2d, X> {
  static_assert(well_formed<max_pool2d, X>);
};

/// Average pooling over NCHW: `avg_pool2d<x, {.size = {3, 3}, .stride = {1, 1}, .padding = {1, 1}}>`.
template <class X, pool2d_attrs A>
struct avg_pool2d : detail::op_node<op_id::avg_pool2d, detail::to_attrs(A), &rules::pool2d, X> {
  static_assert(well_formed<avg_pool2d, X>);
};

/// Resamples NCHW `X` to `OH` × `OW` pixels (nearest or bilinear, see `resize_attrs`):
/// `resize<x, 2 * 20, 2 * 20>` is YOLO's 2× nearest upsampling.
template <class X, std::int64_t OH, std::int64_t OW, resize_attrs A = resize_attrs{}>
struct resize : detail::op_node<op_id::resize, detail::to_attrs(OH, OW, A), &rules::resize, X> {
  // The attributes hold the size as ints: a larger one would wrap around silently.
  static_assert(OH < (std::int64_t{1} << 31) && OW < (std::int64_t{1} << 31),
                "partita: resize<X, OH, OW>: the output size must be below 2^31 along each axis");
  static_assert(well_formed<resize, X>);
};

/// Mean over H and W: [N, C, H, W] → [N, C, 1, 1].
template <class X>
struct global_avg_pool2d : detail::op_node<op_id::global_avg_pool2d, attrs{}, &rules::global_pool2d, X> {
  static_assert(well_formed<global_avg_pool2d, X>);
};

}  // namespace partita
