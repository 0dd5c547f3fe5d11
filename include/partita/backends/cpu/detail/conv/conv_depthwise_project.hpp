#pragma once
/// cpu: a depthwise convolution fused with the 1×1 projection that reads it (`cpu.conv2d_depthwise_project[_add]`).
// MobileNet's inverted residual ends in a depthwise convolution whose only reader is a 1×1
// projection back to a few channels (and a residual add). As two steps the depthwise result,
// the block's widest value (576 channels on 14×14: 450 KB), goes out to L2 or beyond and comes
// back. Fused, each thread convolves a band of output rows into its own scratch (a few rows of
// at least `band_positions` positions, in L1 or L2) and projects the band from there: the
// depthwise result never leaves the core. Both stages keep their kernels: the depthwise rows
// are `depthwise_nhwc_row`, the projection `pointwise_nhwc`. A planar image (the composite's
// input and output are the caller's, or another planar step's) runs the same rows through
// transposes: its input rows are turned channels-last into a ring of one window's rows, and
// the projected band back to planes with the residual (`nhwc_to_planar`).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "partita/backends/cpu/detail/conv/conv.hpp"
#include "partita/backends/cpu/detail/conv/conv_choice.hpp"
#include "partita/backends/cpu/detail/conv/conv_channels_last.hpp"
#include "partita/backends/cpu/detail/conv/conv_depthwise.hpp"
#include "partita/backends/cpu/detail/conv/conv_depthwise_nhwc.hpp"
#include "partita/backends/cpu/detail/conv/conv_expand_depthwise.hpp"
#include "partita/backends/cpu/detail/conv/conv_nhwc_direct.hpp"
#include "partita/backends/cpu/detail/conv/conv_pointwise_nhwc.hpp"
#include "partita/backends/cpu/detail/fused.hpp"
#include "partita/backends/cpu/detail/state.hpp"

namespace partita::detail::cpu {

/// True for a `cpu.conv2d_depthwise_project` or `cpu.conv2d_depthwise_project_add` step.
template <class S>
constexpr bool depthwise_project_composite() {
  if constexpr (requires { S::composite; })
    return S::composite.starts_with("cpu.conv2d_depthwise_project") && conv_stage_end<S>() >= 0;
  else return false;
}

/// The kernel a `cpu.conv2d_depthwise_project[_add]` step runs, and why: NHWC bands or a planar
/// ring, as the plan chose the step's layout (`choose_depthwise_project_kernel`).
template <class Step>
constexpr conv_choice depthwise_project_choice() {
  return choose_depthwise_project_kernel(out_layout_of<Step>() == tensor_layout::channels_last);
}

/// The kernel of a `cpu.conv2d_depthwise_project` step: x → depthwise conv2d + bias or batch
/// norm (→ activation) → 1×1 conv2d + bias or batch norm (+ residual) (→ activation).
template <class Step>
struct depthwise_project_kernel {
  using stages = conv_stages<Step>;
  static_assert(stages::well_formed,
                "partita: cpu: this composite (Step) is not a depthwise conv2d stage then a 1×1 conv2d stage, "
                "each with a bias or a batch norm");
  static constexpr gemm_step dw = stages::first, pj = stages::second;
  static constexpr conv_geometry g1 = stages::g1, g2 = stages::g2;
  static_assert(is_depthwise(g1) && g1.og == 1 && nhwc_pointwise(g2),
                "partita: cpu: the first stage must be a depthwise conv2d (one output channel per input channel), "
                "the second an unpadded 1×1 conv2d of stride 1, one group, at most 1024 input channels");

  // Channels-last (the plan's choice; the input, the residual and the output alike,
  // `layout_role::same`).
  static constexpr conv_choice choice = depthwise_project_choice<Step>();
  static constexpr bool nhwc = choice.kernel == conv_kernel_id::depthwise_project_bands;
  static_assert(nhwc == (in_layout_of<Step>(dw.x) == tensor_layout::channels_last) &&
                    (pj.residual < 0 || nhwc == (in_layout_of<Step>(pj.residual) == tensor_layout::channels_last)),
                "partita: cpu: a fused depthwise projection reads and writes one layout");

  /// Positions a band of rows holds at least: enough tiles of the projection's register block
  /// (24 positions with AVX-512) that a row of 7 or 14 does not run as short tiles.
  static constexpr int band_positions = 48;
  static constexpr int band_rows = std::min(g1.oh, (band_positions + g1.ow - 1) / g1.ow);
  static constexpr int ring = expand_ring_rows(g1);  // input rows a window spans (planar input)
  static constexpr std::ptrdiff_t x_row = static_cast<std::ptrdiff_t>(g1.w) * g1.c;
  static constexpr std::ptrdiff_t mid_row = static_cast<std::ptrdiff_t>(g1.ow) * g1.c;
  static constexpr std::ptrdiff_t y_row = static_cast<std::ptrdiff_t>(g2.ow) * g2.o;
  static constexpr std::ptrdiff_t in_plane = static_cast<std::ptrdiff_t>(g1.h) * g1.w;
  static constexpr std::ptrdiff_t out_plane = static_cast<std::ptrdiff_t>(g2.oh) * g2.ow;
  // Per thread: the band of depthwise rows; planar, also the ring of transposed input rows and
  // the projected band before its transpose.
  static constexpr std::size_t band_floats =
      align_up(static_cast<std::size_t>(band_rows) * static_cast<std::size_t>(mid_row), std::size_t{simd::line_floats});
  static constexpr std::size_t ring_floats =
      nhwc ? 0 : align_up(static_cast<std::size_t>(ring) * static_cast<std::size_t>(x_row), std::size_t{simd::line_floats});
  static constexpr std::size_t out_band_floats =
      nhwc ? 0 : static_cast<std::size_t>(band_rows) * static_cast<std::size_t>(y_row);
  // The step's cost for the thread split.
  static constexpr double flops = 2.0 * g1.o * g1.k * static_cast<double>(g1.oh * g1.ow) +
                                  2.0 * g2.o * g2.k * static_cast<double>(out_plane);

  // Packed: the depthwise weights [kh · kw][padded channels] and padded bias, the projection's
  // panels (`pack_nhwc_hwio`) and its bias, readable for a whole panel past the last channel.
  static constexpr std::size_t dw_bias_at = nhwc_taps_floats(g1);
  static constexpr std::size_t pj_at = dw_bias_at + static_cast<std::size_t>(padded_channels(g1.o));
  static constexpr std::size_t pj_bias_at = pj_at + wide_taps_floats(g2);
  static constexpr std::size_t packed_floats = pj_bias_at + static_cast<std::size_t>(g2.o + 4 * W);

  static void pack(float* dst, const float* const* in) {
    std::vector<float> w1(static_cast<std::size_t>(g1.o) * static_cast<std::size_t>(g1.k));
    std::vector<float> w2(static_cast<std::size_t>(g2.o) * static_cast<std::size_t>(g2.k));
    std::fill(dst, dst + packed_floats, 0.f);
    fold_stage(dw, in, w1.size(), g1.o, w1.data(), dst + dw_bias_at);
    pack_nhwc_taps(g1, w1.data(), dst);
    fold_stage(pj, in, w2.size(), g2.o, w2.data(), dst + pj_bias_at);
    pack_nhwc_hwio(g2, w2.data(), dst + pj_at);
  }

  static void prepare(state& st, const float* const* in, int step) {
    float* dst = st.reserve(step, packed_floats);
    st.need_scratch(0, band_floats + ring_floats + out_band_floats);
    if (in[dw.w]) pack(dst, in);
  }

  // Split by output rows, the shares of the chain's other steps (`row_share`), so that a core
  // reads the input rows it wrote at the step before.
  static void run(state& st, const float* const* in, float* out, int step) {
    const float* packed = st.packed(step);
    const int tasks = tasks_for(flops, st.workers(), g1.oh);
    for (int b = 0; b < g1.batch; ++b) {
      const float* xb = in[dw.x] + b * static_cast<std::ptrdiff_t>(g1.c) * in_plane;
      const float* rb = pj.residual >= 0 ? in[pj.residual] + b * static_cast<std::ptrdiff_t>(g2.o) * out_plane : nullptr;
      float* yb = out + b * static_cast<std::ptrdiff_t>(g2.o) * out_plane;
      st.parallel(tasks, [&](int t) {
        rows(packed, xb, rb, yb, row_share(g1.oh, t, tasks), row_share(g1.oh, t + 1, tasks), st.thread_scratch(t));
      });
    }
  }

  /// Output rows [r0, r1) of one image, a band of `band_rows` at a time: its depthwise rows into
  /// `scratch`, then their projection into the output (NHWC), or into scratch and from there to
  /// the output planes (planar).
  static void rows(const float* packed, const float* x, const float* residual, float* y, int r0, int r1,
                   float* scratch) {
    float* band = scratch;
    float* ring_rows = band + band_floats;
    float* out_band = ring_rows + ring_floats;
    int next = 0;  // planar input: the first input row not transposed into the ring yet
    for (int b0 = r0; b0 < r1; b0 += band_rows) {
      const int b1 = std::min(r1, b0 + band_rows);
      for (int r = b0; r < b1; ++r) {
        const float* window[std::size_t{g1.kh}];
        const int top = r * g1.sh - g1.ph;
        if constexpr (!nhwc) {
          // The rows this window reaches that no earlier window of the thread did, turned
          // channels-last (the first window's rows above r0 are its neighbour's too).
          const int bottom = std::min(g1.h - 1, top + ring - 1);
          for (int ih = std::max({next, top, 0}); ih <= bottom; ++ih)
            nchw_positions(x, g1.c, in_plane, ih * g1.w, g1.w, ring_rows + (ih % ring) * x_row);
          next = std::max(next, bottom + 1);
        }
        for (int i = 0; i < g1.kh; ++i) {
          const int ih = top + i * g1.dh;
          window[i] = ih < 0 || ih >= g1.h ? nullptr : nhwc ? x + ih * x_row : ring_rows + (ih % ring) * x_row;
        }
        depthwise_nhwc_row<g1, dw.act, false>(window, packed, packed + dw_bias_at, nullptr, dw.lo, dw.hi,
                                       band + (r - b0) * mid_row);
      }
      const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(b1 - b0) * g1.ow;
      const std::ptrdiff_t p0 = static_cast<std::ptrdiff_t>(b0) * g2.ow;
      constexpr pointwise_kernels k = pointwise_kernels_for(g2.c, g2.o).at_least(g1.ow);  // a band of whole rows
      if constexpr (nhwc) {
        pointwise_nhwc<pj.act, k>(band, g2.c, packed + pj_at, g2.o, packed + pj_bias_at,
                                  residual ? residual + b0 * y_row : nullptr, pj.lo, pj.hi, y + b0 * y_row, n);
      } else {
        pointwise_nhwc<activation::none, k>(band, g2.c, packed + pj_at, g2.o, packed + pj_bias_at, nullptr, 0.f, 0.f,
                                            out_band, n);
        nhwc_to_planar<pj.act>(out_band, g2.o, n, out_plane, residual ? residual + p0 : nullptr, pj.lo, pj.hi, y + p0);
      }
    }
  }
};

}  // namespace partita::detail::cpu
