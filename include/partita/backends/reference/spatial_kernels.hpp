#pragma once
/// Plain scalar kernels for conv1d, conv_transpose2d, depth_to_space and space_to_depth.
#include <cstdint>

#include "partita/backends/reference/kernels.hpp"
#include "partita/core/shape.hpp"
#include "partita/ir/attrs.hpp"

namespace partita::reference_kernels {

/// conv1d of NCL `x` by (O, C / groups, K) `w`: conv2d of the H = 1 views, whose attributes
/// conv1d's node already holds (its values on the width axis).
inline void conv1d(const float* x, const shape& xs, const float* w, const shape& ws, float* y, const shape& ys,
                   const attrs& a) {
  conv2d(x, shape{4, {xs[0], xs[1], 1, xs[2]}}, w, shape{4, {ws[0], ws[1], 1, ws[2]}}, y,
         shape{4, {ys[0], ys[1], 1, ys[2]}}, a);
}

/// Transposed convolution of NCHW `x` by (Cin, Cout / groups, KH, KW) `w` into `y` of shape
/// `ys`: y[n, o, oh, ow] sums x[n, c, ih, iw] · w[c, o mod (Cout / groups), kh, kw] over the
/// channels c of o's group and the taps with oh = ih · stride - padding + kh · dilation (the
/// same along w). Written as that gather, per output, in double; outputs no input reaches are 0.
inline void conv_transpose2d(const float* x, const shape& xs, const float* w, const shape& ws, float* y,
                             const shape& ys, const attrs& a) {
  const std::int64_t batch = xs[0], in_c = xs[1], in_h = xs[2], in_w = xs[3];
  const std::int64_t group_out_c = ws[1], k_h = ws[2], k_w = ws[3];
  const std::int64_t out_c = ys[1], out_h = ys[2], out_w = ys[3];
  const std::int64_t group_in_c = in_c / a.groups;
  const std::int64_t s_h = a.stride[0], s_w = a.stride[1], p_h = a.padding[0], p_w = a.padding[1];
  const std::int64_t d_h = a.dilation[0], d_w = a.dilation[1];
  // The input index a tap reads for output index o: -1 when it falls between strides or outside.
  const auto source = [](std::int64_t o, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t d,
                         std::int64_t extent) {
    const std::int64_t t = o + p - k * d;
    if (t < 0 || t % s != 0 || t / s >= extent) return std::int64_t{-1};
    return t / s;
  };
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t o = 0; o < out_c; ++o) {
      const std::int64_t group = o / group_out_c, co = o % group_out_c;
      for (std::int64_t oh = 0; oh < out_h; ++oh)
        for (std::int64_t ow = 0; ow < out_w; ++ow) {
          double acc = 0;
          for (std::int64_t ci = 0; ci < group_in_c; ++ci) {
            const std::int64_t c = group * group_in_c + ci;
            for (std::int64_t kh = 0; kh < k_h; ++kh) {
              const std::int64_t ih = source(oh, kh, s_h, p_h, d_h, in_h);
              if (ih < 0) continue;
              for (std::int64_t kw = 0; kw < k_w; ++kw) {
                const std::int64_t iw = source(ow, kw, s_w, p_w, d_w, in_w);
                if (iw < 0) continue;
                const float xv = x[((n * in_c + c) * in_h + ih) * in_w + iw];
                const float wv = w[((c * group_out_c + co) * k_h + kh) * k_w + kw];
                acc += static_cast<double>(xv) * static_cast<double>(wv);
              }
            }
          }
          y[((n * out_c + o) * out_h + oh) * out_w + ow] = static_cast<float>(acc);
        }
    }
}

/// depth_to_space of NCHW `x` with block a.block, in a.depth_order (ONNX DepthToSpace).
inline void depth_to_space(const float* x, const shape& xs, float* y, const shape& ys, const attrs& a) {
  const std::int64_t b = a.block, channels = ys[1], in_h = xs[2], in_w = xs[3];
  for (std::int64_t n = 0; n < ys[0]; ++n)
    for (std::int64_t c = 0; c < channels; ++c)
      for (std::int64_t oh = 0; oh < ys[2]; ++oh)
        for (std::int64_t ow = 0; ow < ys[3]; ++ow) {
          const std::int64_t i = oh % b, j = ow % b;
          const std::int64_t from = a.depth_order == depth_to_space_mode::dcr ? (i * b + j) * channels + c
                                                                               : (c * b + i) * b + j;
          y[((n * channels + c) * ys[2] + oh) * ys[3] + ow] = x[((n * xs[1] + from) * in_h + oh / b) * in_w + ow / b];
        }
}

/// space_to_depth of NCHW `x` with block a.block (ONNX SpaceToDepth): output channel
/// (i · B + j) · C + c holds x[c, h · B + i, w · B + j].
inline void space_to_depth(const float* x, const shape& xs, float* y, const shape& ys, const attrs& a) {
  const std::int64_t b = a.block, channels = xs[1];
  for (std::int64_t n = 0; n < ys[0]; ++n)
    for (std::int64_t oc = 0; oc < ys[1]; ++oc) {
      const std::int64_t c = oc % channels, i = oc / channels / b, j = oc / channels % b;
      for (std::int64_t oh = 0; oh < ys[2]; ++oh)
        for (std::int64_t ow = 0; ow < ys[3]; ++ow)
          y[((n * ys[1] + oc) * ys[2] + oh) * ys[3] + ow] = x[((n * channels + c) * xs[2] + oh * b + i) * xs[3] + ow * b + j];
    }
}

}  // namespace partita::reference_kernels
