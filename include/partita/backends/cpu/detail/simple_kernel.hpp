#pragma once
/// The cpu kernel for every op but dense and conv2d: elementwise ops, pooling, normalization.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "partita/backends/cpu/detail/eltwise.hpp"
#include "partita/backends/cpu/detail/state.hpp"
#include "partita/backends/reference/kernels.hpp"
#include "partita/backends/reference/reference.hpp"

namespace partita::detail::cpu {

/// Every other op.
template <class Step>
struct simple_kernel {
  static constexpr const graph_node& n = Step::node;
  static constexpr op_id op = Step::op;
  static constexpr int axis(int a, int rank) { return a < 0 ? a + rank : a; }

  static void run(state& st, const float* const* in, float* out, int /*step*/) {
    if constexpr (is_unary_elementwise(op) && activation_of(op) != activation::none) {
      unary(activation_of(op), n.at->lo, n.at->hi, in[0], out, n.out.elements());
    } else if constexpr (is_binary_elementwise(op) && op != op_id::add && op != op_id::subtract && op != op_id::multiply) {
      on_reference(in, out);
    } else if constexpr (is_binary_elementwise(op)) {
      if constexpr (Step::arg(0).out == n.out && Step::arg(1).out == n.out) {
        binary_same_shape(op, in[0], in[1], out, n.out.elements());
      } else {
        on_reference(in, out);  // broadcasting
      }
    } else if constexpr (op == op_id::bias_add) {
      constexpr int a = axis(n.at->axis, n.out.rank);
      channel_affine(in[0], out, product(0, a), n.out[a], product(a + 1, n.out.rank), nullptr, in[1]);
    } else if constexpr (op == op_id::batch_norm) {
      const std::int64_t outer = n.out[0], channels = n.out[1], inner = product(2, n.out.rank);
      for (std::int64_t c = 0; c < channels; ++c) {
        const double s = static_cast<double>(in[1][c]) / std::sqrt(static_cast<double>(in[4][c]) + n.at->epsilon);
        const float scale = static_cast<float>(s);
        const float shift = static_cast<float>(in[2][c] - in[3][c] * s);
        for (std::int64_t o = 0; o < outer; ++o)
          channel_affine(in[0] + (o * channels + c) * inner, out + (o * channels + c) * inner, 1, 1, inner, &scale, &shift);
      }
    } else if constexpr ((op == op_id::max_pool2d || op == op_id::avg_pool2d) && n.at->ceil_mode) {
      on_reference(in, out);  // windows past the padded input: the reference kernel's geometry
    } else if constexpr (op == op_id::max_pool2d || op == op_id::avg_pool2d) {
      constexpr pool_geometry g = pool();
      // Planes split across threads when the pooling is large enough to pay for it.
      constexpr double work = 1.0 * g.planes * g.oh * g.ow * g.kh * g.kw;
      const int tasks = tasks_for(work, st.workers(), g.planes);
      bool done = true;
      st.parallel(tasks, [&](int t) {
        pool_geometry part = g;
        const int p0 = g.planes * t / tasks, p1 = g.planes * (t + 1) / tasks;
        part.planes = p1 - p0;
        const bool ok = pool2d<op == op_id::max_pool2d>(part, in[0] + static_cast<std::size_t>(p0) * g.h * g.w,
                                                         out + static_cast<std::size_t>(p0) * g.oh * g.ow);
        if (!ok && t == 0) done = false;
      });
      if (!done) on_reference(in, out);
    } else if constexpr (op == op_id::global_avg_pool2d) {
      constexpr shape xs = Step::arg(0).out;  // a copy: see reference::kernel::run
      plane_means(in[0], out, xs[0] * xs[1], xs[2] * xs[3]);
    } else if constexpr (op == op_id::softmax) {
      constexpr int a = axis(n.at->axis, n.out.rank);
      if constexpr (a == n.out.rank - 1) {
        softmax_rows(in[0], out, n.out.elements() / n.out[a], n.out[a]);
      } else {
        on_reference(in, out);
      }
    } else if constexpr (op == op_id::concatenate || is_unary_elementwise(op) || op == op_id::matmul ||
                         op == op_id::transpose || op == op_id::slice || op == op_id::pad || op == op_id::gather ||
                         op == op_id::resize || is_reduction(op) || op == op_id::layer_norm || op == op_id::rms_norm) {
      on_reference(in, out);
    } else {
      static_assert(op == op_id::relu, "partita: the cpu backend has no kernel for this op (Step)");
    }
  }

 private:
  static constexpr std::int64_t product(int from, int to) {
    std::int64_t p = 1;
    for (int i = from; i < to; ++i) p *= n.out[i];
    return p;
  }
  static constexpr pool_geometry pool() {
    const shape& xs = Step::arg(0).out;
    pool_geometry g;
    g.planes = static_cast<int>(xs[0] * xs[1]);
    g.h = static_cast<int>(xs[2]);
    g.w = static_cast<int>(xs[3]);
    g.oh = static_cast<int>(n.out[2]);
    g.ow = static_cast<int>(n.out[3]);
    g.kh = n.at->window[0];
    g.kw = n.at->window[1];
    g.sh = reference_kernels::detail::pool_stride(*n.at, 0);
    g.sw = reference_kernels::detail::pool_stride(*n.at, 1);
    g.ph = n.at->padding[0];
    g.pw = n.at->padding[1];
    g.count_include_pad = n.at->count_include_pad;
    return g;
  }
  // The cases the cpu kernels leave to the reference backend's.
  static void on_reference(const float* const* in, float* out) {
    reference::state none;
    reference::kernel<Step>::run(none, in, out);
  }
};

}  // namespace partita::detail::cpu
