#pragma once
/// Block rearrangements between channels and space: depth_to_space and space_to_depth.
#include "partita/ir/ops/rules.hpp"

namespace partita {

/// Moves channels into B × B blocks of space: NCHW [N, C, H, W] becomes [N, C / B², H · B,
/// W · B] (ONNX DepthToSpace; `depth_to_space_mode::crd` is PyTorch's `pixel_shuffle`):
/// `depth_to_space<x, 2>` is the sub-pixel upsampling of super-resolution models.
template <class X, std::int64_t Block, depth_to_space_mode Mode = depth_to_space_mode::dcr>
struct depth_to_space;

/// The inverse of DCR `depth_to_space`: each B × B block of space becomes B² channels, [N, C, H,
/// W] becoming [N, C · B², H / B, W / B]; output channel (i · B + j) · C + c holds offset (i, j)
/// of the blocks of channel c (ONNX SpaceToDepth).
template <class X, std::int64_t Block>
struct space_to_depth;

namespace rules {

constexpr inference depth_to_space(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  if (x.rank != 4) return expect_rank(a[0], 4);
  const std::int64_t b = at.block;
  if (b < 1 || x[1] % (b * b) != 0) return fail(problem::depth_to_space_block, x, dims1(b));
  return ok(shape{4, {x[0], x[1] / (b * b), x[2] * b, x[3] * b}}, a[0].type);
}

constexpr inference space_to_depth(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  if (x.rank != 4) return expect_rank(a[0], 4);
  const std::int64_t b = at.block;
  if (b < 1 || x[2] % b != 0 || x[3] % b != 0) return fail(problem::space_to_depth_block, x, dims1(b));
  return ok(shape{4, {x[0], x[1] * b * b, x[2] / b, x[3] / b}}, a[0].type);
}

}  // namespace rules

namespace detail {
constexpr attrs block_attrs(std::int64_t block, depth_to_space_mode mode) {
  attrs a{};
  // Out-of-range blocks become 0, which the rules reject.
  a.block = block > 0 && block < (1 << 15) ? static_cast<int>(block) : 0;
  a.depth_order = mode;
  return a;
}
}  // namespace detail

template <class X, std::int64_t Block, depth_to_space_mode Mode>
struct depth_to_space
    : detail::op_node<op_id::depth_to_space, detail::block_attrs(Block, Mode), &rules::depth_to_space, X> {
  static_assert(well_formed<depth_to_space, X>);
};

template <class X, std::int64_t Block>
struct space_to_depth
    : detail::op_node<op_id::space_to_depth, detail::block_attrs(Block, depth_to_space_mode::dcr), &rules::space_to_depth,
                      X> {
  static_assert(well_formed<space_to_depth, X>);
};

}  // namespace partita
