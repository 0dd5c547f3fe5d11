#pragma once
/// Op attributes (`attrs`): strides, padding, axes and the like.
#include <array>
#include <cstdint>

#include "partita/core/shape.hpp"

namespace partita {

/// Attributes of `conv2d`: `conv2d<x, w, {.stride = {2, 2}, .padding = {1, 1}}>`.
/// `padding` goes before each spatial axis (height, width) and, unless `padding_end` says
/// otherwise, after it too, as in PyTorch. `padding_end` is the padding after the axis (ONNX's
/// `pads = [top, left, bottom, right]` is `.padding = {top, left}, .padding_end = {bottom,
/// right}`; TF's "SAME" pads one more at the end when the total is odd); -1 means "as `padding`".
struct conv2d_attrs {
  std::array<int, 2> stride{1, 1};
  std::array<int, 2> padding{0, 0};
  std::array<int, 2> padding_end{-1, -1};
  std::array<int, 2> dilation{1, 1};
  int groups = 1;
};

/// Attributes of `max_pool2d` and `avg_pool2d`: `max_pool2d<x, {.size = {2, 2}}>`. A stride of
/// zero means "equal to the window size", as in PyTorch. Average pooling divides by the number
/// of in-bounds elements unless `count_include_pad` is set (then by the cells inside the padded
/// input).
struct pool2d_attrs {
  std::array<int, 2> size{1, 1};
  std::array<int, 2> stride{0, 0};
  std::array<int, 2> padding{0, 0};
  /// Padding after each axis, as conv2d's (ONNX pools' asymmetric `pads`); -1: as `padding`.
  std::array<int, 2> padding_end{-1, -1};
  bool count_include_pad = false;
  /// Output extent rounded up, as PyTorch's `ceil_mode`: a last window may start in the padded
  /// input and run past it (it never starts in the right/bottom padding).
  bool ceil_mode = false;
};

/// Attributes of `conv1d`: `conv1d<x, w, {.stride = 2, .padding = 1}>`, each as conv2d's along
/// the one spatial axis (`padding_end` -1: as `padding`).
struct conv1d_attrs {
  int stride = 1;
  int padding = 0;
  int padding_end = -1;
  int dilation = 1;
  int groups = 1;
};

/// Attributes of `conv_transpose2d`: `conv_transpose2d<x, w, {.stride = {2, 2}, .padding = {1,
/// 1}, .output_padding = {1, 1}}>`, as PyTorch's ConvTranspose2d and ONNX's ConvTranspose:
/// `padding` (and `padding_end`, -1: as `padding`) removes rows and columns from the output's
/// borders, `output_padding` adds them at its end.
struct conv_transpose2d_attrs {
  std::array<int, 2> stride{1, 1};
  std::array<int, 2> padding{0, 0};
  std::array<int, 2> padding_end{-1, -1};
  std::array<int, 2> output_padding{0, 0};
  std::array<int, 2> dilation{1, 1};
  int groups = 1;
};

/// How `depth_to_space` orders the channels it moves into space (ONNX's `mode`).
enum class depth_to_space_mode : std::uint8_t {
  dcr,  ///< depth, column, row: channel (i · B + j) · C' + c goes to c at offset (i, j) (ONNX's default)
  crd,  ///< column, row, depth: channel c · B² + i · B + j (PyTorch's pixel_shuffle)
};

/// Attributes of `matmul`: read an operand with its last two axes swapped, so that Q·Kᵀ
/// copies nothing: `matmul<q, k, {.transpose_b = true}>`.
struct matmul_attrs {
  bool transpose_a = false;
  bool transpose_b = false;
};

/// How `resize` computes an output pixel from the input.
enum class resize_mode : std::uint8_t {
  nearest,   ///< the input pixel at floor(dst · in / out) (PyTorch's "nearest", ONNX asymmetric + floor)
  bilinear,  ///< the 2 × 2 neighbours, weighted by distance
};

/// Attributes of `resize`: `resize<x, 56, 56, {.mode = resize_mode::bilinear}>`. Without
/// `align_corners`, pixel centres map as in PyTorch's default (ONNX "pytorch_half_pixel" for
/// bilinear); with it, the corner pixels of input and output coincide.
struct resize_attrs {
  resize_mode mode = resize_mode::nearest;
  bool align_corners = false;
};

/// Which way a recurrent layer reads its sequence (ONNX's `direction`).
enum class rnn_direction : std::uint8_t {
  forward,        ///< first step to last
  reverse,        ///< last step to first
  bidirectional,  ///< both, as two directions of the outputs
};

/// The activation of a plain `rnn` (ONNX's RNN `activations`; PyTorch's `nonlinearity`).
enum class rnn_activation : std::uint8_t { tanh, relu };

/// Attributes of the recurrent layers `lstm`, `gru` and `rnn`, as ONNX defines them:
/// `gru<x, w, r, b, {.direction = rnn_direction::bidirectional, .linear_before_reset = true}>`.
/// `batch_first` is ONNX's `layout = 1` (X [batch, seq, input], Y [batch, seq, dirs, hidden]);
/// `clip`, when positive, bounds every gate's input to [-clip, clip]; `linear_before_reset`
/// (gru) applies the reset gate after the recurrent product, as PyTorch's GRU does;
/// `activation` is the plain rnn's.
struct recurrent_attrs {
  rnn_direction direction = rnn_direction::forward;
  bool batch_first = false;
  bool linear_before_reset = false;
  rnn_activation activation = rnn_activation::tanh;
  float clip = 0.f;
};

/// Where a literal's values live: static storage in the literal's own type, as elements of its
/// dtype (`float` for f32, `std::uint8_t` for u8...). Left out of equality: a literal is
/// identified by its name, which hashes its dtype, shape and values.
struct literal_data {
  const void* values = nullptr;
  friend constexpr bool operator==(const literal_data&, const literal_data&) { return true; }
};

/// Every attribute any op has, in one structural value stored in each node. Ops read only the
/// fields that concern them; unused fields keep their defaults, so equal ops compare equal.
/// A new field must also be mixed into `detail::mix_all_attrs` (node_desc.hpp).
struct attrs {
  std::array<int, 2> stride{1, 1};
  std::array<int, 2> padding{0, 0};
  std::array<int, 2> padding_end{-1, -1};  // convolutions, pooling: after each axis; -1 = as padding
  std::array<int, 2> dilation{1, 1};
  std::array<int, 2> window{0, 0};
  std::array<int, 2> output_padding{0, 0};  // conv_transpose2d
  int groups = 1;
  int block = 1;  // depth_to_space, space_to_depth
  depth_to_space_mode depth_order = depth_to_space_mode::dcr;
  int axis = 0;     // bias_add, concatenate, softmax, slice, gather, layer_norm (first normalized axis)
  float lo = 0.f, hi = 0.f;  // clip bounds
  float epsilon = 0.f;       // batch_norm, layer_norm, rms_norm
  float alpha = 0.f, beta = 0.f;  // leaky_relu slope, power exponent, hardsigmoid, pad value
  bool count_include_pad = false;
  bool ceil_mode = false;  // pooling
  bool transpose_a = false, transpose_b = false;  // matmul
  bool keepdims = false;    // reductions
  resize_mode resize = resize_mode::nearest;  // resize; with align_corners
  bool align_corners = false;
  int axes = 0;             // reductions: bit i set = axis i reduced (normalized)
  std::int64_t start = 0, stop = 0, step = 1;  // slice, normalized and clamped; trilu: start = the diagonal
  bool upper = false;                          // trilu: keep the upper triangle
  bool largest = true;                         // topk: the largest values (else the smallest)
  rnn_direction direction = rnn_direction::forward;  // lstm, gru, rnn (recurrent_attrs)
  bool batch_first = false;
  bool linear_before_reset = false;
  rnn_activation activation = rnn_activation::tanh;
  float rnn_clip = 0.f;  // recurrent_attrs::clip
  bool select_last = false;  // argmax, argmin: the last of equal extremes (else the first)
  bool exclusive = false, reverse = false;  // cumsum
  std::array<int, max_rank> perm{};            // transpose
  std::array<int, max_rank> pad_before{}, pad_after{};  // pad
  shape target{};  // reshape
  literal_data data{};  // literals
  friend constexpr bool operator==(const attrs&, const attrs&) = default;
};

/// The padding after spatial axis `axis` (0: height, 1: width) of a convolution or pooling:
/// `padding_end` where it is set, else the padding before the axis.
constexpr int end_padding(const attrs& a, int axis) {
  const auto u = static_cast<std::size_t>(axis);
  return a.padding_end[u] >= 0 ? a.padding_end[u] : a.padding[u];
}

/// `end` as a node stores it: -1 where it equals `begin`, so that a padding written out in full
/// and one left to its default make equal attributes (and one node).
constexpr std::array<int, 2> stored_end_padding(const std::array<int, 2>& begin, const std::array<int, 2>& end) {
  return {end[0] == begin[0] ? -1 : end[0], end[1] == begin[1] ? -1 : end[1]};
}

/// The attributes of nodes that have none (all defaults).
inline constexpr attrs no_attrs{};

/// Axis `axis` of a rank-`rank` tensor counted from the front: a negative axis counts from the
/// back, as in ONNX and PyTorch (-1 is the last). Range checks are the op rules' business.
constexpr int normalize_axis(int axis, int rank) { return axis < 0 ? axis + rank : axis; }

}  // namespace partita
