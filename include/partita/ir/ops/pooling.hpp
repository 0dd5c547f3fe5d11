#pragma once
/// Pooling ops: max, average and global average pooling.
#include "partita/ir/ops/linear.hpp"
#include "partita/ir/ops/rules.hpp"

namespace partita {
namespace rules {

constexpr inference pool2d(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  if (x.rank != 4) return expect_rank(a[0], 4);
  const std::int64_t oh = conv_out(x[2], at.window[0], at.stride[0], at.padding[0], 1);
  const std::int64_t ow = conv_out(x[3], at.window[1], at.stride[1], at.padding[1], 1);
  if (oh < 1 || ow < 1 || at.window[0] < 1 || at.window[1] < 1 || at.stride[0] < 1 || at.stride[1] < 1)
    return fail(problem::pool_window, x, shape{2, {at.window[0], at.window[1]}});
  return ok(shape{4, {x[0], x[1], oh, ow}}, a[0].type);
}

constexpr inference global_pool2d(const attrs&, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  if (x.rank != 4) return expect_rank(a[0], 4);
  return ok(shape{4, {x[0], x[1], 1, 1}}, a[0].type);
}

}  // namespace rules

namespace detail {
constexpr attrs to_attrs(const pool2d_attrs& p) {
  attrs a{};
  a.window = p.size;
  a.stride = {p.stride[0] ? p.stride[0] : p.size[0], p.stride[1] ? p.stride[1] : p.size[1]};
  a.padding = p.padding;
  a.count_include_pad = p.count_include_pad;
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

/// Mean over H and W: [N, C, H, W] → [N, C, 1, 1].
template <class X>
struct global_avg_pool2d : detail::op_node<op_id::global_avg_pool2d, attrs{}, &rules::global_pool2d, X> {
  static_assert(well_formed<global_avg_pool2d, X>);
};

}  // namespace partita
