#pragma once
/// A quantized conv2d's geometry and the layout of what its bind packs: the sizes, which kernel
/// runs it, where the parts of the packed blob start, and the depthwise kernel's plane copy.
#include <cstddef>
#include <cstdint>

#include "partita/backends/cpu/detail/int8/qgemm.hpp"
#include "partita/backends/cpu/detail/int8/requantize.hpp"
#include "partita/core/dtype.hpp"

namespace partita::detail::cpu::int8 {

/// A quantized conv2d's sizes and types: input n × c × h × w, o outputs of kh × kw taps
/// (c / groups input channels each), output n × o × oh × ow; the padding after each axis is
/// what oh and ow imply.
struct qconv_geometry {
  int n, c, h, w, o, kh, kw, oh, ow, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w, groups;
  dtype x_type, w_type, y_type;
};

/// A quantized conv2d's scales and zero points (per output channel or per tensor), float bias
/// and fused activation (`qlayer_params`).
using qconv_params = qlayer_params;

/// Whether the depthwise kernel runs the convolution (groups = c = o).
constexpr bool qconv_is_depthwise(const qconv_geometry& g) { return g.groups == g.c && g.c == g.o; }

/// Whether the im2col matrix is the input itself (1×1, stride 1, no padding).
constexpr bool qconv_is_pointwise(const qconv_geometry& g) {
  return g.kh == 1 && g.kw == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_top == 0 && g.pad_left == 0 &&
         g.oh == g.h && g.ow == g.w;
}

namespace qconv_detail {

/// Where the parts of the packed blob start: the header, the weights (for the depthwise kernel,
/// each channel's taps in pairs as A words, then the taps' offsets in the plane copy; A blocks of
/// each group otherwise), the integer bias and the multipliers (one per output channel, padded for
/// whole blocks).
struct layout {
  std::size_t weights, offsets, bias, mult, total;
};

constexpr int group_in(const qconv_geometry& g) { return g.c / g.groups; }
constexpr int group_out(const qconv_geometry& g) { return g.o / g.groups; }
constexpr int depth(const qconv_geometry& g) { return group_in(g) * g.kh * g.kw; }
constexpr int blocks(const qconv_geometry& g) { return (group_out(g) + qgemm_mr - 1) / qgemm_mr; }

constexpr layout layout_of(const qconv_geometry& g) {
  const std::size_t per_channel = align64((static_cast<std::size_t>(g.o) + 64) * 4);
  const std::size_t taps = static_cast<std::size_t>(g.kh * g.kw);
  const std::size_t weights =
      qconv_is_depthwise(g)
          ? align64(static_cast<std::size_t>(g.o) * static_cast<std::size_t>(pairs_of(g.kh * g.kw)) * sizeof(std::int32_t))
          : static_cast<std::size_t>(g.groups) * static_cast<std::size_t>(blocks(g)) *
                static_cast<std::size_t>(pairs_of(depth(g))) * qgemm_mr * sizeof(std::int32_t);
  layout l{};
  l.weights = align64(sizeof(qlayer_header));
  l.offsets = l.weights + align64(weights);
  l.bias = l.offsets + (qconv_is_depthwise(g) ? align64(taps * sizeof(std::int32_t)) : 0);
  l.mult = l.bias + per_channel;
  l.total = l.mult + per_channel;
  return l;
}

/// im2col panels a GEMM task packs at once: up to about 96 KB of them (in L2 while every block
/// of weight rows goes over them).
constexpr int chunk_panels(const qconv_geometry& g) {
  const int panels = (g.oh * g.ow + qgemm_nr - 1) / qgemm_nr;
  const int fit = static_cast<int>(98304 / panel_bytes(depth(g)));
  return std::max(1, std::min(panels, fit));
}

/// The depthwise kernel's copy of a plane, split into `stride_h` × `stride_w` phases: phase
/// (a, b) holds the padded rows a, a + stride_h, ... and columns b, b + stride_w, ..., as a grid
/// of `rows` × `ld`. Output (oy, ox) then reads tap (ky, kx) at a fixed offset from position
/// oy · ld + ox, so that the outputs run along one flat index (the ld - ow columns past each
/// row's end computed and dropped), whatever the stride, dilation or width.
struct plane_shape {
  int rows, ld;
  std::size_t elements;  // the phases and, zero, what a vector past the last one reads
};
constexpr plane_shape plane_of(const qconv_geometry& g) {
  const int rows = g.oh + (g.kh - 1) * g.dil_h / g.stride_h, ld = g.ow + (g.kw - 1) * g.dil_w / g.stride_w;
  const std::size_t phases = static_cast<std::size_t>(g.stride_h) * static_cast<std::size_t>(g.stride_w);
  return {rows, ld, phases * static_cast<std::size_t>(rows) * static_cast<std::size_t>(ld) + static_cast<std::size_t>(ld) + 16};
}
constexpr std::size_t plane_bytes(const qconv_geometry& g) { return align64(plane_of(g).elements * sizeof(std::int16_t)); }

/// Outputs along the flat index, rounded up to whole vectors, and one vector more that the copy
/// of the rows may read (the bytes the kernel stores before it copies each row's first `ow` into
/// place).
constexpr std::size_t flat_outputs(const qconv_geometry& g) {
  return (static_cast<std::size_t>(g.oh) * static_cast<std::size_t>(plane_of(g).ld) + 15) / 16 * 16 + 16;
}

/// Tap (ky, kx)'s offset in the plane copy (`plane_of`).
constexpr std::int32_t tap_offset(const qconv_geometry& g, int ky, int kx) {
  const plane_shape p = plane_of(g);
  const int dy = ky * g.dil_h, dx = kx * g.dil_w;
  const int phase = (dy % g.stride_h) * g.stride_w + dx % g.stride_w;
  return (phase * p.rows + dy / g.stride_h) * p.ld + dx / g.stride_w;
}

}  // namespace qconv_detail

}  // namespace partita::detail::cpu::int8
