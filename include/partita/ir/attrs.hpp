#pragma once
/// Op attributes (`attrs`): strides, padding, axes and the like.
#include <array>

#include "partita/core/shape.hpp"

namespace partita {

/// Attributes of `conv2d`: `conv2d<x, w, {.stride = {2, 2}, .padding = {1, 1}}>`.
/// Padding is symmetric per spatial axis (height, width), as in PyTorch.
struct conv2d_attrs {
  std::array<int, 2> stride{1, 1};
  std::array<int, 2> padding{0, 0};
  std::array<int, 2> dilation{1, 1};
  int groups = 1;
};

/// Attributes of `max_pool2d` and `avg_pool2d`: `max_pool2d<x, {.size = {2, 2}}>`. A stride of
/// zero means "equal to the window size", as in PyTorch. Average pooling divides by the number
/// of in-bounds elements unless `count_include_pad` is set.
struct pool2d_attrs {
  std::array<int, 2> size{1, 1};
  std::array<int, 2> stride{0, 0};
  std::array<int, 2> padding{0, 0};
  bool count_include_pad = false;
};

/// Every attribute any op has, in one structural value stored in each node. Ops read only the
/// fields that concern them; unused fields keep their defaults, so equal ops compare equal.
struct attrs {
  std::array<int, 2> stride{1, 1};
  std::array<int, 2> padding{0, 0};
  std::array<int, 2> dilation{1, 1};
  std::array<int, 2> window{0, 0};
  int groups = 1;
  int axis = 0;     // bias_add, concatenate, softmax; tuple index for get; parameter index
  int callee = -1;  // function index of a call node
  float lo = 0.f, hi = 0.f;  // clip bounds
  float epsilon = 0.f;       // batch_norm
  bool count_include_pad = false;
  shape target{};  // reshape
  friend constexpr bool operator==(const attrs&, const attrs&) = default;
};

/// The attributes of nodes that have none (all defaults).
inline constexpr attrs no_attrs{};

/// Axis `axis` of a rank-`rank` tensor counted from the front: a negative axis counts from the
/// back, as in ONNX and PyTorch (-1 is the last). Range checks are the op rules' business.
constexpr int normalize_axis(int axis, int rank) { return axis < 0 ? axis + rank : axis; }

}  // namespace partita
