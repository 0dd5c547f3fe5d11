#pragma once
/// cpu: a 1×1 convolution fused with the depthwise convolution that reads it (`cpu.conv2d_expand_depthwise`).
// MobileNet's inverted residual widens its input with a 1×1 convolution that only the next
// depthwise convolution reads: on 112×112, 16 → 96 channels is 4.8 MB, more than a core's L2.
// Run as two steps that value goes out to L3 or memory and comes back. Fused, each thread
// expands one panel of output channels (conv_block::mr of them, 400 KB on 112×112) into its own
// scratch, where it stays in L2, and runs those channels' depthwise convolution from there.
// The expansion is conv.hpp's in-place 1×1 tiling; the depthwise part conv_depthwise.hpp's
// kernel, so both keep their epilogues (bias or folded batch norm, activation).
// Where the plan lays the input and output out channels-last (`cpu::layouts`), the step runs
// by output rows instead: each thread expands the rows its depthwise windows cover into a ring
// of a few rows (`expand_depthwise_nhwc_rows` below), so it reads the input rows it wrote at the step
// before and keeps the expansion in L1 and L2. A row's expansion is `pointwise_nhwc`.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "partita/backends/cpu/detail/conv/conv.hpp"
#include "partita/backends/cpu/detail/conv/conv_choice.hpp"
#include "partita/backends/cpu/detail/conv/conv_channels_last.hpp"
#include "partita/backends/cpu/detail/conv/conv_depthwise.hpp"
#include "partita/backends/cpu/detail/conv/conv_depthwise_nhwc.hpp"
#include "partita/backends/cpu/detail/conv/conv_pointwise_nhwc.hpp"
#include "partita/backends/cpu/detail/fused.hpp"
#include "partita/backends/cpu/detail/state.hpp"

namespace partita::detail::cpu {

/// Rows of the expanded image that `expand_depthwise_nhwc_rows` keeps: one depthwise window's.
constexpr int expand_ring_rows(const conv_geometry& g2) { return (g2.kh - 1) * g2.dh + 1; }

/// Per-thread scratch of `expand_depthwise_nhwc_rows`: the ring of expanded rows.
constexpr std::size_t expand_depthwise_nhwc_scratch(const conv_geometry& g1, const conv_geometry& g2) {
  return static_cast<std::size_t>(expand_ring_rows(g2)) * static_cast<std::size_t>(g1.ow) *
         static_cast<std::size_t>(g1.o);
}

/// Output rows [r0, r1) of one NHWC image of a 1×1 expansion (`g1`) read by a depthwise
/// convolution (`G2`, with activation A), the expanded value never leaving the core: each
/// expanded row is computed once into a ring of `expand_ring_rows(G2)` rows (the rows of a
/// thread's first window that lie above r0 are computed by its neighbour too), and every output
/// row convolves the ring rows its window covers.
/// `w1`, `bias1` are the expansion's weights (`pack_nhwc_hwio`) and padded column bias, A1 its
/// activation with bounds `lo1`, `hi1`; `w2`, `bias2` are the depthwise weights and bias as `depthwise_nhwc_row`
/// reads them. `y` is the whole output image, `scratch` holds
/// `expand_depthwise_nhwc_scratch(g1, G2)` floats. K1 holds the expansion's register tiles
/// (`pointwise_kernels_for(g1.c, g1.o).positions(g1.ow)`: a call expands one row).
template <conv_geometry G2, activation A1, activation A, pointwise_kernels K1 = pointwise_kernels{}>
inline void expand_depthwise_nhwc_rows(const conv_geometry& g1, const float* x, const float* w1, const float* bias1,
                                       float lo1, float hi1, const float* w2, const float* bias2, float lo2, float hi2,
                                       float* y, int r0, int r1, float* scratch) {
  constexpr conv_geometry g2 = G2;
  constexpr int span = expand_ring_rows(g2);
  const std::ptrdiff_t mid_row = static_cast<std::ptrdiff_t>(g1.ow) * g1.o;
  const std::ptrdiff_t x_row = static_cast<std::ptrdiff_t>(g1.w) * g1.c;
  constexpr std::ptrdiff_t y_row = static_cast<std::ptrdiff_t>(g2.ow) * g2.c;
  float* ring = scratch;
  int next = 0;  // the first expanded row not computed yet
  for (int r = r0; r < r1; ++r) {
    const int top = r * g2.sh - g2.ph, bottom = std::min(g2.h - 1, top + span - 1);
    for (int ih = std::max({next, top, 0}); ih <= bottom; ++ih)
      pointwise_nhwc<A1, K1>(x + ih * x_row, g1.c, w1, g1.o, bias1, nullptr, lo1, hi1, ring + (ih % span) * mid_row,
                             g1.ow);
    next = std::max(next, bottom + 1);
    const float* window[std::size_t{g2.kh}];
    for (int i = 0; i < g2.kh; ++i) {
      const int ih = top + i * g2.dh;
      window[i] = ih >= 0 && ih < g2.h ? ring + (ih % span) * mid_row : nullptr;
    }
    depthwise_nhwc_row<G2, A>(window, w2, bias2, nullptr, lo2, hi2, y + r * y_row);
  }
}

/// In a composite of two conv2d stages, the body index of the value the second convolution
/// reads (the first stage's last node); -1 for any other step.
template <class S>
constexpr int conv_stage_end() {
  if constexpr (S::op != op_id::call) {
    return -1;
  } else {
    int convs = 0, end = -1;
    for (int i = 0; i < S::body_size(); ++i)
      if (S::body(i).op == op_id::conv2d && ++convs == 2) end = S::body_arg(i, 0);
    return convs == 2 ? end : -1;
  }
}

/// The two conv2d stages of a fused composite (`cpu.conv2d_expand_depthwise`,
/// `cpu.conv2d_depthwise_project`): each stage's analysis, and the geometry of each convolution
/// (the first reads the step's input, the second the first stage's value).
template <class Step>
struct conv_stages {
  static constexpr int split = conv_stage_end<Step>();
  static constexpr gemm_step first = analyse_fused<Step>(0, split);
  static constexpr gemm_step second = analyse_fused<Step>(split + 1, Step::body_size() - 1);
  /// Each stage a conv2d of a bound weight with a bias or a batch norm, the first with no residual.
  static constexpr bool well_formed = first.ok && second.ok && first.main == op_id::conv2d &&
                                      second.main == op_id::conv2d && first.residual < 0 && first.w >= 0 &&
                                      second.w >= 0 && (first.bias >= 0 || first.gamma >= 0) &&
                                      (second.bias >= 0 || second.gamma >= 0);
  static constexpr shape x_shape = Step::body(Step::body_arg(first.main_node, 0)).out;
  static constexpr shape mid_shape = Step::body(split).out;
  static constexpr conv_geometry g1 = make_conv_geometry(x_shape, Step::body(Step::body_arg(first.main_node, 1)).out,
                                                         mid_shape, *Step::body(first.main_node).at);
  static constexpr conv_geometry g2 = make_conv_geometry(mid_shape, Step::body(Step::body_arg(second.main_node, 1)).out,
                                                         Step::node.out, *Step::body(second.main_node).at);
};

/// True for a `cpu.conv2d_expand_depthwise` step.
template <class S>
constexpr bool expand_depthwise_composite() {
  if constexpr (requires { S::composite; }) return S::composite == "cpu.conv2d_expand_depthwise" && conv_stage_end<S>() >= 0;
  else return false;
}

/// The kernel a `cpu.conv2d_expand_depthwise` step runs, and why: NHWC rows or planar panels, as
/// the plan chose the step's layout (`choose_expand_depthwise_kernel`).
template <class Step>
constexpr conv_choice expand_depthwise_choice() {
  return choose_expand_depthwise_kernel(out_layout_of<Step>() == tensor_layout::channels_last);
}

/// The kernel of a `cpu.conv2d_expand_depthwise` step: x → 1×1 conv2d + bias or batch norm
/// (→ activation) → depthwise conv2d + bias or batch norm (→ activation).
template <class Step>
struct expand_depthwise_kernel {
  using stages = conv_stages<Step>;
  static_assert(stages::well_formed && stages::second.residual < 0,
                "partita: cpu: this composite (Step) is not a 1×1 conv2d stage then a depthwise conv2d stage, "
                "each with a bias or a batch norm");
  static constexpr gemm_step pw = stages::first, dw = stages::second;
  static constexpr conv_geometry g1 = stages::g1, g2 = stages::g2;
  static_assert(reads_input_in_place(g1) && g1.groups == 1 && is_depthwise(g2) && g2.og == 1,
                "partita: cpu: the expand stage must be an unpadded 1×1 conv2d of stride 1, the second a depthwise one");

  static constexpr int mr = conv_block::mr, nr = conv_block::nr;
  static constexpr int panels = (g1.o + mr - 1) / mr;  // the unit of work: mr expanded channels
  static constexpr int tiles = (g1.npos + nr - 1) / nr;
  // The last tile of positions runs past the image: its B rows are staged, zero-padded, once per image.
  static constexpr bool staged_tail = g1.npos % nr != 0;
  static constexpr auto boff1 = conv_offsets<static_cast<std::size_t>(g1.k)>(g1);
  static constexpr auto boff2 = conv_offsets<static_cast<std::size_t>(g2.k)>(g2);
  static constexpr depthwise_blocking dw_block = depthwise_block(g2);
  static constexpr std::ptrdiff_t mid_plane = static_cast<std::ptrdiff_t>(g1.oh) * g1.ow;
  static constexpr std::ptrdiff_t out_plane = static_cast<std::ptrdiff_t>(g2.oh) * g2.ow;
  static constexpr std::size_t mid_floats = static_cast<std::size_t>(mr) * static_cast<std::size_t>(mid_plane);
  static constexpr std::ptrdiff_t in_image = static_cast<std::ptrdiff_t>(g1.c) * mid_plane;
  // The step's cost for the thread split, either layout.
  static constexpr double flops = 2.0 * g1.o * g1.k * g1.npos + 2.0 * g2.o * g2.k * static_cast<double>(out_plane) +
                                  moved_cost * static_cast<double>(g2.o) * static_cast<double>(mid_plane);

  // Packed: the 1×1 panels, its bias (readable for a whole panel past the last channel), the
  // depthwise weights [channel][kh · kw], their bias.
  static constexpr std::size_t pw_bias_at = packed_conv_floats(g1);
  static constexpr std::size_t dw_at = pw_bias_at + static_cast<std::size_t>(g1.o + mr);
  static constexpr std::size_t dw_bias_at = dw_at + static_cast<std::size_t>(g2.o) * static_cast<std::size_t>(g2.k);
  static constexpr std::size_t packed_floats = dw_bias_at + static_cast<std::size_t>(g2.o);

  static void pack(float* dst, const float* const* in) {
    std::vector<float> w(static_cast<std::size_t>(g1.o) * static_cast<std::size_t>(g1.k));
    std::fill(dst + pw_bias_at, dst + dw_at, 0.f);
    fold_stage(pw, in, w.size(), g1.o, w.data(), dst + pw_bias_at);
    pack_conv_weights(g1, w.data(), dst);
    fold_stage(dw, in, static_cast<std::size_t>(g2.o) * static_cast<std::size_t>(g2.k), g2.o, dst + dw_at,
               dst + dw_bias_at);
  }

  // Channels-last (the plan's choice; the input and the output alike, `layout_role::same`).
  static constexpr conv_choice choice = expand_depthwise_choice<Step>();
  static constexpr bool nhwc = choice.kernel == conv_kernel_id::expand_depthwise_rows;
  static_assert(nhwc == (in_layout_of<Step>(pw.x) == tensor_layout::channels_last),
                "partita: cpu: a channels-last expansion reads a channels-last input");
  // Packed for NHWC: the expansion's panels, its column bias (readable for a whole panel past
  // the last channel), the depthwise weights [kh · kw][padded channels], their padded bias.
  static constexpr std::size_t nhwc_bias_at = wide_taps_floats(g1);
  static constexpr std::size_t nhwc_dw_at = nhwc_bias_at + static_cast<std::size_t>(g1.o + 4 * W);
  static constexpr std::size_t nhwc_dw_bias_at = nhwc_dw_at + nhwc_taps_floats(g2);
  static constexpr std::size_t nhwc_floats = nhwc_dw_bias_at + static_cast<std::size_t>(padded_channels(g2.o));

  static void pack_nhwc(float* dst, const float* const* in) {
    std::vector<float> w1(static_cast<std::size_t>(g1.o) * static_cast<std::size_t>(g1.k));
    std::vector<float> w2(static_cast<std::size_t>(g2.o) * static_cast<std::size_t>(g2.k));
    std::fill(dst + nhwc_bias_at, dst + nhwc_floats, 0.f);
    fold_stage(pw, in, w1.size(), g1.o, w1.data(), dst + nhwc_bias_at);
    pack_nhwc_hwio(g1, w1.data(), dst);
    fold_stage(dw, in, w2.size(), g2.o, w2.data(), dst + nhwc_dw_bias_at);
    pack_nhwc_taps(g2, w2.data(), dst + nhwc_dw_at);
  }

  static void prepare(state& st, const float* const* in, int step) {
    if constexpr (nhwc) {
      float* dst = st.reserve(step, nhwc_floats);
      st.need_scratch(0, expand_depthwise_nhwc_scratch(g1, g2));
      if (in[pw.w]) pack_nhwc(dst, in);
    } else {
      float* dst = st.reserve(step, packed_floats);
      st.need_scratch(staged_tail ? static_cast<std::size_t>(g1.c) * nr : 0, mid_floats + depthwise_scratch(g2));
      if (in[pw.w]) pack(dst, in);
    }
  }

  static void run(state& st, const float* const* in, float* out, int step) {
    if constexpr (nhwc) run_nhwc(st, in, out, step);
    else run_planar(st, in, out, step);
  }

  // Channels-last: split by output rows, the shares of the chain's other steps (`row_share`).
  static void run_nhwc(state& st, const float* const* in, float* out, int step) {
    const float* packed = st.packed(step);
    const int tasks = tasks_for(flops, st.workers(), g2.oh);
    for (int b = 0; b < g1.batch; ++b) {
      const float* xb = in[pw.x] + b * in_image;
      float* yb = out + b * static_cast<std::ptrdiff_t>(g2.o) * out_plane;
      st.parallel(tasks, [&](int t) {
        const int r0 = row_share(g2.oh, t, tasks), r1 = row_share(g2.oh, t + 1, tasks);
        constexpr pointwise_kernels k1 = pointwise_kernels_for(g1.c, g1.o).positions(g1.ow);
        expand_depthwise_nhwc_rows<g2, pw.act, dw.act, k1>(g1, xb, packed, packed + nhwc_bias_at, pw.lo, pw.hi,
                                                            packed + nhwc_dw_at, packed + nhwc_dw_bias_at, dw.lo,
                                                            dw.hi, yb, r0, r1, st.thread_scratch(t));
      });
    }
  }

  // Split by panels: a thread expands its channels and convolves them, reading only the input
  // image (shared, in L2) and its own scratch.
  static void run_planar(state& st, const float* const* in, float* out, int step) {
    const float* packed = st.packed(step);
    const float* x = in[pw.x];
    float* staged = st.shared_scratch();
    const int tasks = tasks_for(flops, st.workers(), panels);
    for (int b = 0; b < g1.batch; ++b) {
      const float* xb = x + b * in_image;
      float* yb = out + b * static_cast<std::ptrdiff_t>(g2.o) * out_plane;
      if constexpr (staged_tail) stage_last_tile(g1, xb, tiles - 1, staged);
      st.parallel(tasks, [&](int t) {
        float* mid = st.thread_scratch(t);
        float* planes = mid + mid_floats;
        zero_depthwise_scratch(g2, planes);
        for (int p = panels * t / tasks; p < panels * (t + 1) / tasks; ++p) panel(packed, xb, staged, mid, planes, yb, p);
      });
    }
  }

  /// Expands channels [p · mr, p · mr + mr) of one image into `mid`, then convolves them into
  /// their output planes, `planes` holding the depthwise copies.
  static void panel(const float* packed, const float* xb, const float* staged, float* mid, float* planes, float* yb,
                    int p) {
    // The panel seen as a convolution of its own: one panel of output channels, whose packed
    // weights and bias start at the panel's.
    conv_geometry gp = g1;
    gp.o = gp.og = std::min(mr, g1.o - p * mr);
    epilogue e;
    e.bias = packed + pw_bias_at + p * mr;
    e.bias_per_row = true;
    e.act = pw.act;
    e.lo = pw.lo;
    e.hi = pw.hi;
    conv_tiles(gp, boff1.data(), packed + static_cast<std::ptrdiff_t>(p) * g1.k * mr, xb, mid, e, 0, 0, 1, 0, tiles,
               staged_tail ? tiles - 1 : 1 << 30, staged);
    // `mid` holds the panel's channels only: seen from it, they are channels [0, gp.o).
    const std::ptrdiff_t c0 = static_cast<std::ptrdiff_t>(p) * mr;
    depthwise_channels<dw_block.rows, dw_block.vecs, g2.k, dw.act>(
        g2, boff2.data(), mid, packed + dw_at + c0 * g2.k, packed + dw_bias_at + c0, nullptr, dw.lo, dw.hi,
        yb + c0 * out_plane, 0, gp.o, 0, g2.oh, planes);
  }
};

}  // namespace partita::detail::cpu
