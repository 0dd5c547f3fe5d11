#pragma once
/// The cpu kernel for every op but dense and conv2d: elementwise ops, pooling, normalization, resize.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "partita/backends/cpu/detail/conv/conv_channels_last.hpp"
#include "partita/backends/cpu/detail/elementwise/eltwise.hpp"
#include "partita/backends/cpu/detail/elementwise/select.hpp"
#include "partita/backends/cpu/detail/fused.hpp"
#include "partita/backends/cpu/detail/int8/quantize.hpp"
#include "partita/backends/cpu/detail/pool/pool_choice.hpp"
#include "partita/backends/cpu/detail/norm/norm.hpp"
#include "partita/backends/cpu/detail/reduce/reduce.hpp"
#include "partita/backends/cpu/detail/transform/resize.hpp"
#include "partita/backends/cpu/detail/state.hpp"
#include "partita/backends/cpu/detail/transform/transform.hpp"
#include "partita/backends/reference/kernels.hpp"
#include "partita/backends/reference/reference.hpp"
#include "partita/ir/ops/quantization.hpp"

namespace partita::detail::cpu {

/// The cost of one element of a unary op.
constexpr double unary_cost(op_id op) {
  switch (op) {
    case op_id::relu: case op_id::clip: case op_id::abs: case op_id::neg: case op_id::leaky_relu:
    case op_id::hardswish: case op_id::hardsigmoid: case op_id::sqrt: case op_id::rsqrt: return moved_cost;
    case op_id::power: return 2 * moved_cost;
    case op_id::erf: case op_id::gelu: case op_id::gelu_tanh: return erf_cost;
    default: return exp_cost;  // exp, log, tanh, sigmoid, silu
  }
}

/// Input rows up to this wide resize on the cpu kernel (its row of blended source rows is on
/// the stack); wider ones on the reference kernel.
inline constexpr std::int64_t max_resize_row = 4096;

/// Every other op.
template <class Step>
struct simple_kernel {
  static constexpr const graph_node& n = Step::node;
  static constexpr op_id op = Step::op;
  static constexpr bool pooling = op == op_id::max_pool2d || op == op_id::avg_pool2d || op == op_id::global_avg_pool2d;

  /// For a pooling step: the kernel that runs it, and why (`choose_pool_kernel`); nothing for
  /// any other step.
  static constexpr pool_choice choice() {
    constexpr bool global = op == op_id::global_avg_pool2d;
    if constexpr (pooling) {
      return choose_pool_kernel({global ? pool_geometry{} : pool(), op == op_id::max_pool2d, global,
                                 in_layout_of<Step>(0) == tensor_layout::channels_last});
    } else {
      return {};
    }
  }

  // Shapes and attributes are read as constexpr copies: a reference into the plan at run time
  // would make the plan part of the program (see reference::kernel::run).
  static void run(state& st, const float* const* in, float* out, int /*step*/) {
    constexpr shape ys = n.out;
    constexpr attrs at = *n.at;
    constexpr shape xs = Step::arg(0).out;
    if constexpr (is_unary_elementwise(op)) {
      constexpr activation_params ap = op == op_id::power ? activation_params{at.alpha, 0.f} : params_of(op, at);
      flat(st, ys.elements(), unary_cost(op),
           [&](std::int64_t i0, std::int64_t i1) { unary_range<op, ap.lo, ap.hi>(in[0], out, i0, i1); });
    } else if constexpr (is_binary_elementwise(op)) {
      // Channels-last (the plan's choice, `channels_last_operands`): the shapes broadcast in
      // the order of the buffers' elements.
      constexpr bool cl = out_layout_of<Step>() == tensor_layout::channels_last;
      constexpr broadcast_plan p = cl ? plan_broadcast(channels_last_order(ys), channels_last_order(xs),
                                                       channels_last_order(Step::arg(1).out))
                                      : plan_broadcast(ys, xs, Step::arg(1).out);
      static_assert(!cl || p.kind != broadcast_plan::other, "partita: cpu: a channels-last elementwise step broadcasts");
      const float* full = p.swap ? in[1] : in[0];
      const float* part = p.swap ? in[0] : in[1];
      const auto f = [&](std::int64_t u0, std::int64_t u1) {
        broadcast_range<op, p.swap, p.kind>(p, full, part, out, u0, u1);
      };
      if constexpr (p.kind == broadcast_plan::same || p.kind == broadcast_plan::scalar) {
        flat(st, ys.elements(), moved_cost, f);
      } else if constexpr (p.kind == broadcast_plan::rows) {
        split(st, p.outer, moved_cost * static_cast<double>(p.channels), f);
      } else if constexpr (p.kind == broadcast_plan::per_channel) {
        split(st, p.outer * p.channels, moved_cost * static_cast<double>(p.inner), f);
      } else {
        on_reference(in, out);  // both operands broadcast
      }
    } else if constexpr (periodic_select()) {
      // Comparisons, logical ops and where whose operands repeat whole (select.hpp); booleans
      // and other dtypes arrive through the float pointers every argument has.
      constexpr auto p = plan_periodic<static_cast<std::size_t>(Step::num_args)>(ys, arg_shapes_of<Step>());
      const auto block = [&](std::int64_t y, std::int64_t len, const auto& base) {
        const auto stride = [&](std::size_t k) -> std::ptrdiff_t { return p.period[k] > 1 ? 1 : 0; };
        const auto* b0 = reinterpret_cast<const bool*>(in[0]) + base[0];
        if constexpr (op == op_id::where) {
          where_block(b0, stride(0), in[1] + base[1], stride(1), in[2] + base[2], stride(2), out + y, len);
        } else if constexpr (is_comparison(op)) {
          compare_block<op>(in[0] + base[0], stride(0), in[1] + base[1], stride(1), reinterpret_cast<bool*>(out) + y, len);
        } else {
          logical_block<op>(b0, stride(0), reinterpret_cast<const bool*>(in[1]) + base[1], stride(1),
                            reinterpret_cast<bool*>(out) + y, len);
        }
      };
      split(st, p.total / p.block, moved_cost * static_cast<double>(p.block),
            [&](std::int64_t b0, std::int64_t b1) { periodic_blocks(p, b0, b1, block); });
    } else if constexpr (is_dtype_generic(op) || is_recurrent(op)) {
      on_reference(in, out);  // other broadcasts and dtypes, conversions, triangles: once per run, small
    } else if constexpr (op == op_id::bias_add) {
      // An add of the bias broadcast along every other axis: a row or a per-channel plan.
      constexpr int a = normalize_axis(at.axis, ys.rank);
      constexpr std::int64_t outer = product(ys, 0, a), inner = product(ys, a + 1, ys.rank);
      constexpr broadcast_plan p{inner == 1 ? broadcast_plan::rows : broadcast_plan::per_channel, false, outer, ys[a],
                                 inner};
      const auto f = [&](std::int64_t u0, std::int64_t u1) {
        broadcast_range<op_id::add, false, p.kind>(p, in[0], in[1], out, u0, u1);
      };
      if constexpr (inner == 1) split(st, outer, moved_cost * static_cast<double>(ys[a]), f);
      else split(st, outer * ys[a], moved_cost * static_cast<double>(inner), f);
    } else if constexpr (op == op_id::batch_norm) {
      const std::int64_t outer = ys[0], channels = ys[1], inner = product(ys, 2, ys.rank);
      for (std::int64_t c = 0; c < channels; ++c) {
        const double s = static_cast<double>(in[1][c]) / std::sqrt(static_cast<double>(in[4][c]) + at.epsilon);
        const float scale = static_cast<float>(s);
        const float shift = static_cast<float>(in[2][c] - in[3][c] * s);
        for (std::int64_t o = 0; o < outer; ++o)
          channel_affine(in[0] + (o * channels + c) * inner, out + (o * channels + c) * inner, 1, 1, inner, &scale, &shift);
      }
    } else if constexpr (pooling && choice().kernel == pool_kernel_id::nhwc_windows) {
      // NHWC (the plan's choice, `layout_role::same`): split by output rows.
      constexpr pool_geometry g = pool_nhwc();
      constexpr int rows = static_cast<int>(xs[0]) * g.oh;
      split(st, rows, moved_cost * static_cast<double>(g.ow) * g.kh * g.kw * g.planes,
            [&](std::int64_t r0, std::int64_t r1) {
              pool2d_nhwc<op == op_id::max_pool2d>(g, in[0], out, static_cast<int>(r0), static_cast<int>(r1));
            });
    } else if constexpr (pooling && choice().kernel == pool_kernel_id::reference_rows) {
      on_reference(in, out);
    } else if constexpr (op == op_id::max_pool2d || op == op_id::avg_pool2d) {
      constexpr pool_geometry g = pool();
      // Planes split across threads when the pooling is large enough to pay for it.
      constexpr double work = 1.0 * g.planes * g.oh * g.ow * g.kh * g.kw;
      const int tasks = tasks_for(work, st.workers(), g.planes);
      st.parallel(tasks, [&](int t) {
        pool_geometry part = g;
        const int p0 = g.planes * t / tasks, p1 = g.planes * (t + 1) / tasks;
        part.planes = p1 - p0;
        const float* x = in[0] + static_cast<std::size_t>(p0) * g.h * g.w;
        float* y = out + static_cast<std::size_t>(p0) * g.oh * g.ow;
        if constexpr (choice().kernel == pool_kernel_id::max_2x2) {
          max_pool_2x2(part, x, y);
        } else {
          pool2d<op == op_id::max_pool2d>(part, x, y);  // its rows fit: it does not decline
        }
      });
    } else if constexpr (pooling && choice().kernel == pool_kernel_id::channel_means_nhwc) {
      // NHWC: a position's channels are adjacent, so the means are sums of whole rows of vectors.
      // Each float weighs twice a moved one: on one thread, the half of the input that the
      // other core wrote (a 1×1 before it split by panels of channels, as split here) comes
      // from that core's cache, slower than from its own (MobileNetV2's 1280 channels on 7×7):
      // split as the 1×1 was, each core reads what it wrote.
      constexpr std::int64_t area = xs[2] * xs[3], vectors = (xs[1] + simd::width - 1) / simd::width;
      split(st, vectors, 2 * moved_cost * static_cast<double>(xs[0] * area * simd::width),
            [&](std::int64_t v0, std::int64_t v1) { nhwc_channel_means(in[0], out, xs[0], area, xs[1], v0, v1); });
    } else if constexpr (op == op_id::global_avg_pool2d) {
      constexpr std::int64_t area = xs[2] * xs[3];
      split(st, xs[0] * xs[1], moved_cost * static_cast<double>(area),
            [&](std::int64_t p0, std::int64_t p1) { plane_means(in[0] + p0 * area, out + p0, p1 - p0, area); });
    } else if constexpr (op == op_id::softmax) {
      constexpr int a = normalize_axis(at.axis, ys.rank);
      constexpr std::int64_t len = ys[a], inner = product(ys, a + 1, ys.rank), outer = product(ys, 0, a);
      if constexpr (inner == 1) {
        split(st, outer, (exp_cost + moved_cost) * static_cast<double>(len),
              [&](std::int64_t r0, std::int64_t r1) { softmax_rows(in[0], out, r0, r1, len); });
      } else {
        constexpr std::int64_t columns = outer * ((inner + simd::width - 1) / simd::width);
        split(st, columns, (exp_cost + moved_cost) * static_cast<double>(len * simd::width),
              [&](std::int64_t c0, std::int64_t c1) { softmax_columns(in[0], out, c0, c1, len, inner); });
      }
    } else if constexpr (op == op_id::layer_norm || op == op_id::rms_norm) {
      constexpr int a = normalize_axis(at.axis, xs.rank);
      constexpr std::int64_t len = product(xs, a, xs.rank), rows = xs.elements() / len;
      const float* beta = op == op_id::layer_norm ? in[2] : nullptr;
      split(st, rows, 2.5 * moved_cost * static_cast<double>(len),
            [&](std::int64_t r0, std::int64_t r1) { norm_rows(in[0], out, r0, r1, len, in[1], beta, at.epsilon); });
    } else if constexpr (is_reduction(op)) {
      constexpr reduce_plan p = plan_reduce(xs, at.axes);
      constexpr bool max = op == op_id::reduce_max, mean = op == op_id::reduce_mean;
      if constexpr (p.inner_reduced) {
        split(st, p.kept, moved_cost * static_cast<double>(p.count),
              [&](std::int64_t q0, std::int64_t q1) { reduce_rows<max, mean>(p, in[0], out, q0, q1); });
      } else {
        constexpr std::int64_t columns = p.kept * ((p.inner + reduce_block - 1) / reduce_block);
        split(st, columns, moved_cost * static_cast<double>(p.count * reduce_block),
              [&](std::int64_t c0, std::int64_t c1) { reduce_columns<max, mean>(p, in[0], out, c0, c1); });
      }
    } else if constexpr (op == op_id::transpose || op == op_id::depth_to_space || op == op_id::space_to_depth) {
      constexpr block_transpose v = op == op_id::transpose ? block_transpose{xs, at.perm} : plan_block_transpose(op, xs, at);
      constexpr transpose_plan p = plan_transpose(v.view, v.perm);
      if constexpr (p.rows) {
        rows(st, p.copy, in[0], out);
      } else {
        constexpr std::int64_t units = p.tiles.batch() * ((p.tiles.a + transpose_tile - 1) / transpose_tile);
        split(st, units, 2 * moved_cost * static_cast<double>(transpose_tile * p.tiles.b),
              [&](std::int64_t u0, std::int64_t u1) { transpose_tiles(p.tiles, in[0], out, u0, u1); });
      }
    } else if constexpr (op == op_id::slice) {
      constexpr row_copy_plan p = plan_slice(xs, normalize_axis(at.axis, xs.rank), at.start, at.stop, at.step);
      rows(st, p, in[0], out);
    } else if constexpr (op == op_id::pad) {
      constexpr pad_plan p = plan_pad(xs, at.pad_before, at.pad_after);
      split(st, p.rows(), moved_cost * static_cast<double>(p.before_p + p.in_p + p.after_p),
            [&](std::int64_t r0, std::int64_t r1) { pad_rows(p, in[0], out, at.alpha, r0, r1); });
    } else if constexpr (op == op_id::gather) {
      constexpr int a = normalize_axis(at.axis, xs.rank);
      constexpr dtype type = Step::arg(1).type;
      constexpr std::int64_t count = Step::arg(1).out.elements(), extent = xs[a], inner = product(xs, a + 1, xs.rank);
      const void* indices = static_cast<const void*>(in[1]);
      // Checked here, before the threads start: an out-of-range index throws the reference's error.
      for (std::int64_t i = 0; i < count; ++i) reference_kernels::checked_index(indices, type, i, extent);
      const auto copy = [&](std::int64_t r0, std::int64_t r1) {
        gather_rows(in[0], indices, type, count, extent, inner, out, r0, r1);
      };
      split(st, product(xs, 0, a) * count, moved_cost * static_cast<double>(inner), copy);
    } else if constexpr (op == op_id::concatenate) {
      // Each input gives one run of its extent along the axis times the inner extent, per outer index.
      constexpr int a = normalize_axis(at.axis, ys.rank);
      constexpr std::int64_t inner = product(ys, a + 1, ys.rank), row = ys[a] * inner;
      constexpr auto runs = concat_runs(inner);
      split(st, product(ys, 0, a), moved_cost * static_cast<double>(row), [&](std::int64_t o0, std::int64_t o1) {
        for (std::int64_t o = o0; o < o1; ++o) {
          float* y = out + o * row;
          for (std::size_t t = 0; t < runs.size(); ++t) {
            copy_floats(y, in[t] + o * runs[t], runs[t]);
            y += runs[t];
          }
        }
      });
    } else if constexpr (op == op_id::resize && xs[3] <= max_resize_row) {
      static constexpr auto rows = make_resize_axis<xs[2], ys[2]>(at.resize, at.align_corners);
      static constexpr auto cols = make_resize_axis<xs[3], ys[3]>(at.resize, at.align_corners);
      constexpr bool bilinear = at.resize == resize_mode::bilinear;
      split(st, xs[0] * xs[1], moved_cost * static_cast<double>(ys[2] * ys[3]) * (bilinear ? 2 : 1),
            [&](std::int64_t p0, std::int64_t p1) {
              alignas(64) float blend[bilinear ? max_resize_row : 1];
              resize_planes<bilinear>(rows, cols, xs[2], xs[3], ys[2], ys[3], in[0], out, p0, p1, blend);
            });
    } else if constexpr (op == op_id::quantize || op == op_id::dequantize) {
      // Integer tensors arrive through the float pointers every argument has.
      constexpr quantization_extents e = quantization_extents_of(xs, at.axis, Step::arg(1).out.elements());
      if constexpr (op == op_id::quantize)
        int8::quantize(in[0], out, n.type, e.outer, e.axis_len, e.inner, in[1], in[2], n.type, e.per_axis);
      else
        int8::dequantize(in[0], Step::arg(0).type, out, e.outer, e.axis_len, e.inner, in[1], in[2], e.per_axis);
    } else if constexpr (op == op_id::matmul || op == op_id::resize) {
      on_reference(in, out);
    } else {
      static_assert(op == op_id::relu, "partita: the cpu backend has no kernel for this op (Step)");
    }
  }

 private:
  static constexpr std::int64_t product(const shape& s, int from, int to) {
    std::int64_t p = 1;
    for (int i = from; i < to; ++i) p *= s[i];
    return p;
  }
  template <class F>
  static void split(state& st, std::int64_t units, double unit_cost, F&& f) {
    split_units(st, units, unit_cost, f);
  }
  // f(i0, i1) on ranges of n elements, cut at multiples of 64 floats (whole cache lines).
  template <class F>
  static void flat(state& st, std::int64_t elements, double cost, F&& f) {
    constexpr std::int64_t block = 64;
    split(st, (elements + block - 1) / block, cost * block,
          [&](std::int64_t b0, std::int64_t b1) { f(b0 * block, std::min(elements, b1 * block)); });
  }
  static void rows(state& st, const row_copy_plan& p, const float* x, float* y) {
    const std::int64_t units = copy_units(p);
    split(st, units, moved_cost * static_cast<double>(p.rows() * p.row / units),
          [&](std::int64_t u0, std::int64_t u1) { copy_rows(p, x, y, u0, u1); });
  }
  static constexpr auto concat_runs(std::int64_t inner) {
    std::array<std::int64_t, static_cast<std::size_t>(Step::num_args)> r{};
    const int a = normalize_axis(n.at->axis, n.out.rank);
    for (int t = 0; t < Step::num_args; ++t) r[static_cast<std::size_t>(t)] = Step::arg(t).out[a] * inner;
    return r;
  }
  /// Whether the step is a comparison of f32 values, a logical op of two booleans or a where of
  /// f32 values whose operands each repeat whole along the output (`plan_periodic`).
  static constexpr bool periodic_select() {
    constexpr bool kind = (op == op_id::where && n.type == dtype::f32) ||
                          (is_comparison(op) && Step::arg(0).type == dtype::f32) ||
                          (is_logical(op) && Step::num_args == 2);
    if constexpr (kind) {
      return plan_periodic<static_cast<std::size_t>(Step::num_args)>(n.out, arg_shapes_of<Step>()).ok;
    } else {
      return false;
    }
  }
  static constexpr pool_geometry pool() { return make_pool_geometry(Step::arg(0).out, n.out, *n.at); }
  // The same geometry for NHWC images: `planes` counts the channels of one image.
  static constexpr pool_geometry pool_nhwc() {
    pool_geometry g = pool();
    g.planes = static_cast<int>(Step::arg(0).out[1]);
    return g;
  }
  // The cases the cpu kernels leave to the reference backend's.
  static void on_reference(const float* const* in, float* out) {
    reference::state none;
    reference::kernel<Step>::run(none, in, out);
  }
};

}  // namespace partita::detail::cpu
