#pragma once
/// The cpu kernel for dense and conv2d steps, alone or fused with their epilogue.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "partita/backends/cpu/detail/conv/conv.hpp"
#include "partita/backends/cpu/detail/conv/conv_channels_last.hpp"
#include "partita/backends/cpu/detail/conv/conv_nhwc_direct.hpp"
#include "partita/backends/cpu/detail/conv/conv_planar_direct.hpp"
#include "partita/backends/cpu/detail/conv/conv_pointwise_nhwc.hpp"
#include "partita/backends/cpu/detail/conv/conv_depthwise.hpp"
#include "partita/backends/cpu/detail/conv/conv_depthwise_nhwc.hpp"
#include "partita/backends/cpu/detail/conv/conv_small.hpp"
#include "partita/backends/cpu/detail/conv/conv_wide_passes.hpp"
#include "partita/backends/cpu/detail/conv/conv_winograd.hpp"
#include "partita/backends/cpu/detail/gemm/dense.hpp"
#include "partita/backends/cpu/detail/gemm/gemm_choice.hpp"
#include "partita/backends/cpu/detail/fused.hpp"
#include "partita/backends/cpu/detail/gemm/matmul.hpp"
#include "partita/backends/cpu/detail/pool/pool.hpp"
#include "partita/backends/cpu/detail/state.hpp"
#include "partita/backends/reference/kernels.hpp"

namespace partita::detail::cpu {

/// What a dense or conv2d step computes, read off its types, and the kernel that runs it
/// (gemm_choice.hpp): `gemm_kernel` dispatches on `choice`, and the plan shows it.
template <class Step>
struct gemm_operands {
  static constexpr gemm_step info = analyse<Step>();
  static constexpr bool fused = Step::op == op_id::call;
  static constexpr const graph_node& main = fused ? Step::body(info.main_node) : Step::node;
  static constexpr shape x_shape = fused ? Step::body(Step::body_arg(info.main_node, 0)).out : Step::arg(0).out;
  static constexpr shape w_shape = fused ? Step::body(Step::body_arg(info.main_node, 1)).out : Step::arg(1).out;
  static constexpr bool pooled = info.pool >= 0;  // `cpu.conv2d_bias_act_pool`: y_shape is the conv2d's
  static constexpr shape y_shape = pooled ? Step::body(Step::body_arg(info.pool, 0)).out : Step::node.out;
  static constexpr bool conv = info.main == op_id::conv2d;
  static constexpr conv_desc desc =
      conv ? conv_desc{make_conv_geometry(x_shape, w_shape, y_shape, *main.at),
                       in_layout_of<Step>(info.x) == tensor_layout::channels_last,
                       out_layout_of<Step>() == tensor_layout::channels_last, pooled, info.residual >= 0}
           : conv_desc{};
  static constexpr kernel_choice choice = conv ? choose_conv_kernel(desc) : choose_dense_kernel();
};

/// dense and conv2d steps, alone or fused.
template <class Step>
struct gemm_kernel {
  using operands = gemm_operands<Step>;
  static constexpr const gemm_step& info = operands::info;
  static_assert(info.ok, "partita: cpu: this composite (Step) is not one the cpu backend fuses");
  static constexpr bool fused = operands::fused;
  static constexpr const graph_node& main = operands::main;
  static constexpr shape x_shape = operands::x_shape;
  static constexpr shape w_shape = operands::w_shape;
  static constexpr bool pooled = operands::pooled;
  static constexpr const graph_node& pool_node = pooled ? Step::body(info.pool) : Step::node;
  static constexpr shape y_shape = operands::y_shape;
  static constexpr bool conv = operands::conv;
  /// The kernel that runs the step, and why (`choose_conv_kernel`, `choose_dense_kernel`).
  static constexpr kernel_choice choice = operands::choice;
  static constexpr gemm_kernel_id chosen = choice.kernel;
  // Weights are packed at bind when they are bound weights, at every run otherwise.
  static constexpr bool constant_weight = fused || Step::arg(1).op == op_id::weight;
  static constexpr bool has_bias = info.bias >= 0 || info.gamma >= 0;
  /// After `prepare`, `run` reads no weight argument (all are packed), so the executable keeps
  /// no raw copy of them; unless the activations or the residual are weights themselves.
  static constexpr bool packs_weights = constant_weight && Step::arg(info.x).op != op_id::weight &&
                                        (info.residual < 0 || Step::arg(info.residual).op != op_id::weight);
  static constexpr int channels = static_cast<int>(w_shape[0]);  // output channels or units

  // dense
  static constexpr int m_rows = static_cast<int>(conv ? 1 : x_shape.elements() / x_shape.back(0));
  static constexpr int k_depth = static_cast<int>(conv ? 1 : x_shape.back(0));
  using dblk = dense_blocking<(m_rows < 1 ? 1 : m_rows), channels>;
  // conv2d
  static constexpr conv_geometry geo = operands::desc.geo;
  static constexpr auto boff = conv_offsets<static_cast<std::size_t>(geo.k > 0 ? geo.k : 1)>(geo);
  static constexpr bool depthwise = conv && is_depthwise(geo);
  // Channels-last is the plan's choice (`cpu::layouts`).
  static constexpr bool nhwc_out = conv && operands::desc.nhwc_out;
  static constexpr bool nhwc_in = conv && operands::desc.nhwc_in;
  // A planar conv2d that copies its input into padded planes reads an NHWC one too.
  static constexpr bool copies_input = conv && !depthwise && !reads_input_in_place(geo);
  static_assert(!nhwc_in || nhwc_out || copies_input,
                "partita: cpu: a conv2d reading channels-last writes channels-last or copies its input");
  static_assert(!nhwc_out || (depthwise ? nhwc_in && geo.og == 1 : nhwc_writable(geo)),
                "partita: cpu: channels-last conv2d is a depthwise one (multiplier 1), an unpadded 1×1 of stride 1, "
                "one group whose rows hold a block of interior positions (or at most four input channels), or "
                "groups of whole vectors of output channels");
  static_assert(!nhwc_out || info.residual < 0 || in_layout_of<Step>(info.residual) == tensor_layout::channels_last,
                "partita: cpu: a channels-last conv2d adds a channels-last residual");
  // The kernel chosen (`choose_conv_kernel`), as the packing, scratch and loops below ask.
  static constexpr bool winograd = chosen == gemm_kernel_id::winograd_f2;
  static constexpr bool nhwc_pw = chosen == gemm_kernel_id::pointwise_nhwc;
  static constexpr bool nhwc_pw_strided = chosen == gemm_kernel_id::pointwise_nhwc_strided;
  static constexpr bool nhwc_gemm = chosen == gemm_kernel_id::gemm_nhwc;
  static constexpr bool nhwc_direct_conv = chosen == gemm_kernel_id::direct_nhwc;
  static constexpr bool nhwc_wide_conv = chosen == gemm_kernel_id::wide_nhwc;
  static constexpr bool wide_pooled = chosen == gemm_kernel_id::wide_pooled;
  static constexpr bool wide_to_planar = chosen == gemm_kernel_id::wide_planar || wide_pooled;
  static constexpr bool wide = nhwc_wide_conv || wide_to_planar;
  static constexpr bool planar_dc = chosen == gemm_kernel_id::planar_direct;
  static constexpr bool pointwise = chosen == gemm_kernel_id::pointwise_planar;
  static constexpr bool small_image = chosen == gemm_kernel_id::small_image;
  static constexpr bool in_place = chosen == gemm_kernel_id::in_place;
  // How the 1×1s split their work, and whether a planar depthwise one needs scratch.
  static constexpr bool pw_by_panels = (nhwc_pw || nhwc_pw_strided) && pointwise_by_panels(geo);
  static constexpr bool dw_flat = chosen == gemm_kernel_id::depthwise_planar && depthwise_flat(geo);
  static constexpr matmul_geometry nhwc_geo = nhwc_gemm ? nhwc_gemm_geometry(geo) : matmul_geometry{};
  static constexpr matmul_geometry pointwise_geo = planar_pointwise_geometry(geo);
  // A small image's tile: vectors of output channels by a few positions (conv_small.hpp).
  static constexpr int small_nv = geo.og <= W ? 1 : 2;
  static constexpr int small_mr = small_conv_rows(geo.oh * geo.ow, small_nv);
  static constexpr auto positions =
      position_offsets<static_cast<std::size_t>(small_image ? geo.oh * geo.ow : 1)>(small_image ? geo : conv_geometry{});

  static constexpr std::size_t packed_floats =
      !conv        ? packed_dense_floats(channels, k_depth, dblk::nr)
      : winograd   ? winograd_taps_floats(geo)
      : nhwc_pw || nhwc_pw_strided || wide ? wide_taps_floats(geo)
      : nhwc_gemm   ? matmul_packed_b_floats(nhwc_geo)
      : nhwc_out    ? nhwc_taps_floats(geo)
      : depthwise || planar_dc ? static_cast<std::size_t>(geo.o) * static_cast<std::size_t>(geo.k)
      : small_image ? static_cast<std::size_t>(geo.groups) * packed_dense_floats(geo.og, geo.k, small_nv * W)
                    : packed_conv_floats(geo);
  static constexpr std::size_t bias_floats = has_bias ? static_cast<std::size_t>(channels) + 64 : 0;
  // A pooled composite keeps its conv2d result (a small image's: at most 32 KB) for the pooling;
  // the wide kernel with no residual pools its NHWC sums (`wide_conv_pooled`), an image at a time.
  static constexpr std::size_t pooled_floats =
      !pooled       ? 0
      : wide_pooled ? static_cast<std::size_t>((y_shape.elements() + Step::node.out.elements()) / y_shape[0])
                    : static_cast<std::size_t>(y_shape.elements());
  static constexpr pool_geometry pooling = pooled ? make_pool_geometry(y_shape, Step::node.out, *pool_node.at) : pool_geometry{};
  static_assert(!pooled || pooling.w + pooling.pw + pooling.pw_fill <= 4096, "partita: cpu: a pooled row too wide");

  static void pack(float* dst, const float* const* in) {
    if constexpr (info.gamma >= 0) {
      std::vector<float> w(in[info.w], in[info.w] + w_shape.elements());
      fold_batch_norm(info, in, channels, static_cast<std::size_t>(w_shape.elements() / channels), w.data(),
                      dst + packed_floats);
      pack_weights(w.data(), dst);
    } else {
      pack_weights(in[info.w], dst);
      if constexpr (info.bias >= 0) std::copy(in[info.bias], in[info.bias] + channels, dst + packed_floats);
    }
  }

  static void pack_weights(const float* w, float* dst) {
    if constexpr (winograd) {
      pack_winograd(geo, w, dst);
    } else if constexpr (nhwc_pw || nhwc_pw_strided || wide) {
      pack_nhwc_hwio(geo, w, dst);
    } else if constexpr (nhwc_gemm) {
      pack_nhwc_conv(nhwc_geo, w, dst);
    } else if constexpr (nhwc_out) {
      pack_nhwc_taps(geo, w, dst);
    } else if constexpr (depthwise || planar_dc) {
      std::copy(w, w + static_cast<std::ptrdiff_t>(geo.o) * geo.k, dst);
    } else if constexpr (small_image) {
      const std::size_t per_group = packed_dense_floats(geo.og, geo.k, small_nv * W);
      for (int gr = 0; gr < geo.groups; ++gr)
        pack_dense_weights(w + static_cast<std::ptrdiff_t>(gr) * geo.og * geo.k, geo.og, geo.k, small_nv * W,
                           dst + static_cast<std::size_t>(gr) * per_group);
    } else if constexpr (conv) {
      pack_conv_weights(geo, w, dst);
    } else {
      pack_dense_weights(w, channels, k_depth, dblk::nr, dst);
    }
  }

  // `step` is the step being prepared or run (Step is the first step with its signature): its
  // packed weights are its own.
  static void prepare(state& st, const float* const* in, int step) {
    float* dst = st.reserve(step, packed_floats + bias_floats + pooled_floats);
    if constexpr (winograd) {
      st.need_scratch(0, winograd_scratch<geo, nhwc_in>());
    } else if constexpr (nhwc_pw) {
      // No scratch: it reads its input in place.
    } else if constexpr (nhwc_pw_strided) {
      st.need_scratch(0, gathered_floats(geo));
    } else if constexpr (nhwc_gemm) {
      st.need_scratch(0, nhwc_conv_scratch(geo, nhwc_in));
    } else if constexpr (wide_pooled) {
      // No scratch: the step's own buffer holds the sums and the pooled values.
    } else if constexpr (wide_to_planar) {
      st.need_scratch(wide_planar_shared<geo>(), wide_planar_per_thread<geo>());
    } else if constexpr (nhwc_out) {
      // No scratch: it reads its input in place.
    } else if constexpr (dw_flat) {
      // No scratch: it reads its input in place.
    } else if constexpr (depthwise) {
      st.need_scratch(0, depthwise_scratch(geo));
    } else if constexpr (pointwise) {
      st.need_scratch(0, matmul_scratch_floats(pointwise_geo));
    } else if constexpr (planar_dc) {
      st.need_scratch(geo.buffer_floats, 0);
    } else if constexpr (small_image) {
      st.need_scratch(geo.buffer_floats, small_conv_scratch(geo.oh * geo.ow, small_mr, small_nv));
    } else if constexpr (in_place) {
      st.need_scratch(static_cast<std::size_t>(geo.c) * conv_block::nr, 0);
    } else if constexpr (conv) {
      st.need_scratch(geo.buffer_floats, 0);
    } else {
      st.need_scratch(0, static_cast<std::size_t>(dblk::mr) * k_depth);
      if constexpr (m_rows <= 2) st.need_order_flag(step);
    }
    if constexpr (constant_weight) {
      if (in[info.w]) pack(dst, in);
    }
  }

  static void run(state& st, const float* const* in, float* out, int step) {
    float* packed = st.packed(step);
    if constexpr (!constant_weight) pack(packed, in);
    epilogue e;
    e.bias = has_bias ? packed + packed_floats : nullptr;
    e.bias_per_row = conv && !nhwc_out;
    e.act = info.act;
    e.lo = info.lo;
    e.hi = info.hi;
    const float* residual = info.residual >= 0 ? in[info.residual] : nullptr;
    const float* x = in[info.x];
    if constexpr (pooled) {
      // The convolution into the step's own buffer, then the pooling from there, one thread.
      float* conv_out = packed + packed_floats + bias_floats;
      if constexpr (wide_pooled) {
        wide_conv_pooled<geo, nhwc_in, info.act, pool_node.op == op_id::max_pool2d>(
            st, x, packed, e, pooling, conv_out, conv_out + y_shape.elements() / y_shape[0], out);
      } else {
        run_conv(st, x, packed, residual, e, conv_out);
        pool2d<pool_node.op == op_id::max_pool2d>(pooling, conv_out, out);
      }
    } else if constexpr (conv) {
      run_conv(st, x, packed, residual, e, out);
    } else {
      e.residual = residual;
      e.ld_residual = channels;
      dense_step<m_rows, channels>(st, x, k_depth, packed, out, e, step);
    }
  }

  // conv2d, image by image: copy the image into the padded phase planes (split by channels),
  // then compute its tiles, split statically by positions or by output-channel panels.
  static void run_conv(state& st, const float* x, const float* packed, const float* residual, epilogue e,
                       float* out) {
    if constexpr (winograd) {
      return winograd_conv<geo, nhwc_in, nhwc_out, info.act>(st, x, packed, residual, e, out);
    } else if constexpr (nhwc_out) {
      run_nhwc(st, x, packed, residual, e, out);
      return;
    } else if constexpr (wide_to_planar) {
      wide_conv_planar<geo, nhwc_in, info.act>(st, x, packed, residual, e, out);
      return;
    } else if constexpr (planar_dc) {
      planar_direct_conv<geo, info.act>(st, x, packed, residual, e, out);
      return;
    } else if constexpr (depthwise) {
      depthwise_planar_step<geo, info.act>(st, boff.data(), x, packed, residual, e, out);
      return;
    } else if constexpr (pointwise) {
      constexpr matmul_geometry g = pointwise_geo;
      e.residual = residual;
      e.ld_residual = g.n;
      matmul_packed_a(st, g, packed, x, out, &e);
      return;
    }
    constexpr int n = geo.oh * geo.ow;
    constexpr int tile = small_image ? small_mr : conv_block::nr;       // positions per tile
    constexpr int panel = small_image ? small_nv * W : conv_block::mr;  // output channels per panel
    constexpr int tiles = ((small_image ? n : geo.npos) + tile - 1) / tile;
    constexpr int panels = (geo.og + panel - 1) / panel;
    constexpr double flops = 2.0 * geo.o * geo.k * n;
    const int tasks = tasks_for(flops, st.workers(), tiles * panels);
    // Small images split their output channels (each core keeps its slice of the weights) when
    // there are enough; large ones split their positions when there are plenty.
    const bool by_tiles = small_image ? panels < tasks : tiles >= 8 * tasks || panels < tasks;
    float* buf = st.shared_scratch();
    const std::ptrdiff_t in_image = static_cast<std::ptrdiff_t>(geo.c) * geo.h * geo.w;
    const std::ptrdiff_t out_image = static_cast<std::ptrdiff_t>(geo.o) * n;
    // In place, only the last tile is staged, when it runs past the image's positions.
    constexpr int staged_from = in_place && n % tile != 0 ? tiles - 1 : 1 << 30;
    for (int b = 0; b < geo.batch; ++b) {
      const float* xb = x + b * in_image;
      if constexpr (in_place) {
        if (staged_from < tiles) stage_last_tile(geo, xb, staged_from, buf);
      } else {
        const int copy_tasks = std::min(tasks, geo.c);
        st.parallel(copy_tasks, [&](int t) {
          if constexpr (nhwc_in) conv_copy_input_nhwc(geo, xb, buf, geo.c * t / copy_tasks, geo.c * (t + 1) / copy_tasks);
          else conv_copy_input(geo, xb, buf, geo.c * t / copy_tasks, geo.c * (t + 1) / copy_tasks);
        });
      }
      const float* planes = in_place ? xb : buf;
      epilogue eb = e;
      eb.residual = residual ? residual + b * out_image : nullptr;
      float* yb = out + b * out_image;
      st.parallel(tasks, [&](int t) {
        const int p0 = by_tiles ? 0 : panels * t / tasks, p1 = by_tiles ? panels : panels * (t + 1) / tasks;
        const int t0 = by_tiles ? tiles * t / tasks : 0, t1 = by_tiles ? tiles * (t + 1) / tasks : tiles;
        for (int gr = 0; gr < geo.groups; ++gr) {
          if constexpr (small_image) {
            small_conv_tiles<small_mr, small_nv>(geo, boff.data(), positions.data(), packed, buf, yb, eb, gr, p0, p1,
                                                 t0, t1, st.thread_scratch(t));
          } else {
            conv_tiles(geo, boff.data(), packed, planes, yb, eb, gr, p0, p1, t0, t1, staged_from, buf);
          }
        }
      });
    }
  }

  // Channels-last: every image split by output rows, the same shares at every step of a chain
  // (`row_share`), so that each core reads the rows it wrote, but for small images of the wide
  // kernel and 1×1s (split by panels). Its few flops per value moved undercount a depthwise layer.
  static void run_nhwc(state& st, const float* x, const float* packed, const float* residual, const epilogue& e,
                       float* out) {
    constexpr int n = geo.oh * geo.ow;
    // The 1×1s' register tiles (`pointwise_kernels`): a task's calls hold the whole image where
    // it is a panel of channels, else whole rows.
    constexpr pointwise_kernels pw_kernels = pw_by_panels ? pointwise_kernels_for(geo.c, geo.o).positions(n)
                                                          : pointwise_kernels_for(geo.c, geo.o).at_least(geo.ow);
    constexpr double flops = 2.0 * geo.o * geo.k * n + moved_cost * (static_cast<double>(geo.c) * geo.h * geo.w +
                                                                     static_cast<double>(geo.o) * n);
    const std::ptrdiff_t in_image = static_cast<std::ptrdiff_t>(geo.c) * geo.h * geo.w;
    const std::ptrdiff_t out_image = static_cast<std::ptrdiff_t>(geo.o) * n;
    const int tasks = nhwc_wide_conv ? wide_tasks<geo>(st, flops)
                                     : tasks_for(flops, st.workers(), pw_by_panels ? pointwise_panels(geo) : geo.oh);
    for (int b = 0; b < geo.batch; ++b) {
      const float* xb = x + b * in_image;
      const float* rb = residual ? residual + b * out_image : nullptr;
      float* yb = out + b * out_image;
      st.parallel(tasks, [&](int t) {
        const int r0 = row_share(geo.oh, t, tasks), r1 = row_share(geo.oh, t + 1, tasks);
        if constexpr (nhwc_pw_strided) {
          // Every row where the task is a panel of channels, else its own rows.
          const int q0 = pw_by_panels ? 0 : r0, q1 = pw_by_panels ? geo.oh : r1;
          const pointwise_share v = pw_by_panels ? pointwise_share_of(geo, t, tasks) : pointwise_share{0, -1};
          float* gathered = st.thread_scratch(t);
          gather_positions(geo, xb, gathered, q0, q1);
          const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(q0) * geo.ow * geo.o;
          const std::ptrdiff_t positions = static_cast<std::ptrdiff_t>(q1 - q0) * geo.ow;
          pointwise_nhwc<info.act, pw_kernels>(gathered, geo.c, packed, geo.o, e.bias, rb ? rb + at : nullptr, e.lo,
                                               e.hi, yb + at, positions, v.v0, v.v1);
        } else if constexpr (pw_by_panels) {
          const pointwise_share v = pointwise_share_of(geo, t, tasks);
          pointwise_nhwc<info.act, pw_kernels>(xb, geo.c, packed, geo.o, e.bias, rb, e.lo, e.hi, yb, n, v.v0, v.v1);
        } else if constexpr (nhwc_pw) {
          const std::ptrdiff_t p0 = static_cast<std::ptrdiff_t>(r0) * geo.ow, at = p0 * geo.o;
          pointwise_nhwc<info.act, pw_kernels>(xb + p0 * geo.c, geo.c, packed, geo.o, e.bias, rb ? rb + at : nullptr,
                                               e.lo, e.hi, yb + at, static_cast<std::ptrdiff_t>(r1 - r0) * geo.ow);
        } else if constexpr (nhwc_gemm) {
          const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(r0) * geo.ow * geo.o;
          epilogue eb = e;
          eb.residual = rb ? rb + at : nullptr;
          with_matmul_tile(nhwc_geo.m, [&]<int MR, int NV>() {
            nhwc_conv_rows<MR, NV>(geo, xb, nhwc_in, packed, yb + at, eb, r0, r1, st.thread_scratch(t));
          });
        } else if constexpr (nhwc_direct_conv) {
          epilogue eb = e;
          eb.residual = rb;
          direct_nhwc_rows<geo, nhwc_in, info.act>(xb, packed, eb, yb, r0, r1);
        } else if constexpr (nhwc_wide_conv) {
          epilogue eb = e;
          eb.residual = rb;
          const wide_share w = wide_share_of<geo>(t, tasks);
          if constexpr (wide_depth_passes<geo>())
            wide_nhwc_passes<geo, nhwc_in, info.act>(xb, packed, eb, yb, w.v0, w.v1);
          else
            wide_nhwc_rows<geo, nhwc_in, info.act>(xb, packed, eb, yb, w.r0, w.r1, w.v0, w.v1);
        } else {
          depthwise_nhwc_rows<geo, info.act>(xb, packed, e.bias, rb, e.lo, e.hi, yb, r0, r1);
        }
      });
    }
  }
};

}  // namespace partita::detail::cpu
