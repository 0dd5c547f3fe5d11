#pragma once
/// The reference backend: every op on the plain scalar kernels, nothing fused.
#include <array>
#include <string_view>

#include "partita/runtime/step_ref.hpp"
#include "partita/backends/reference/kernels.hpp"
#include "partita/backends/reference/index_kernels.hpp"
#include "partita/backends/reference/logical_kernels.hpp"
#include "partita/backends/reference/recurrent_kernels.hpp"
#include "partita/backends/reference/quantize_kernels.hpp"
#include "partita/backends/reference/spatial_kernels.hpp"
#include "partita/backends/reference/tensor_kernels.hpp"
#include "partita/core/fixed_string.hpp"
#include "partita/ir/ops/quantization.hpp"
#include "partita/ir/view.hpp"

namespace partita {

/// The reference backend: plain scalar kernels for every op, written for clarity rather than
/// speed. It is the oracle that every other backend is tested against.
struct reference {
  static constexpr fixed_string name = "reference";
  static constexpr bool host = true;

  /// No per-executable state: the kernels read weights where `bind` put them.
  struct state {};

  /// Every op of the IR.
  static constexpr bool supports(const op_view&) { return true; }
  /// Steps with the same signature run one kernel (it keeps nothing per step).
  static constexpr bool shares_kernels = true;

  template <class Step>
  struct kernel {
    static_assert(Step::node.type == dtype::f32 || Step::op == op_id::quantize || is_dtype_generic(Step::op),
                  "partita: the reference backend computes in f32 (integers only through quantize and "
                  "dequantize, other dtypes through comparisons, logical ops, where, cast, tril/triu and the "
                  "index ops); this step (Step) has another dtype");

    /// `step` is unused: other backends' kernels call this one with three arguments.
    static void run(state&, const float* const* in, float* out, int /*step*/ = 0) {
      static_assert(!is_dtype_generic(Step::op) || no_f16_argument(),
                    "partita: the reference backend has no f16 kernels; this step (Step) reads an f16 tensor");
      namespace k = reference_kernels;
      constexpr const graph_node& n = Step::node;
      constexpr op_id op = Step::op;
      // Shapes and attributes go to the kernels as copies: a reference into the plan would make
      // the plan (and every node type's descriptor it points at) part of the program.
      constexpr shape ys = n.out, xs = arg_shape(0), ws = arg_shape(1);
      constexpr attrs at = *n.at;
      if constexpr (op == op_id::dense) {
        k::dense(in[0], xs, in[1], ws, out);
      } else if constexpr (op == op_id::conv2d) {
        k::conv2d(in[0], xs, in[1], ws, out, ys, at);
      } else if constexpr (op == op_id::conv1d) {
        k::conv1d(in[0], xs, in[1], ws, out, ys, at);
      } else if constexpr (op == op_id::conv_transpose2d) {
        k::conv_transpose2d(in[0], xs, in[1], ws, out, ys, at);
      } else if constexpr (op == op_id::depth_to_space) {
        k::depth_to_space(in[0], xs, out, ys, at);
      } else if constexpr (op == op_id::space_to_depth) {
        k::space_to_depth(in[0], xs, out, ys, at);
      } else if constexpr (op == op_id::bias_add) {
        k::bias_add(in[0], ys, in[1], normalize_axis(at.axis, ys.rank), out);
      } else if constexpr (is_binary_elementwise(op)) {
        k::binary(op, in[0], xs, in[1], ws, out, ys);
      } else if constexpr (is_unary_elementwise(op)) {
        k::unary(op, in[0], ys.elements(), out, at);
      } else if constexpr (op == op_id::max_pool2d) {
        k::max_pool2d(in[0], xs, out, ys, at);
      } else if constexpr (op == op_id::avg_pool2d) {
        k::avg_pool2d(in[0], xs, out, ys, at);
      } else if constexpr (op == op_id::global_avg_pool2d) {
        k::global_avg_pool2d(in[0], xs, out);
      } else if constexpr (op == op_id::batch_norm) {
        k::batch_norm(in[0], ys, in[1], in[2], in[3], in[4], at.epsilon, out);
      } else if constexpr (op == op_id::concatenate) {
        constexpr auto shapes = detail::arg_shapes_of<Step>();
        k::concatenate(in, shapes.data(), Step::num_args, normalize_axis(at.axis, ys.rank), out, ys);
      } else if constexpr (op == op_id::softmax) {
        k::softmax(in[0], ys, normalize_axis(at.axis, ys.rank), out);
      } else if constexpr (op == op_id::matmul) {
        k::matmul(in[0], xs, in[1], ws, out, ys, at.transpose_a, at.transpose_b);
      } else if constexpr (op == op_id::transpose) {
        k::transpose(in[0], xs, at.perm, out, ys);
      } else if constexpr (op == op_id::slice) {
        k::slice(in[0], xs, normalize_axis(at.axis, xs.rank), at.start, at.stop, at.step, out, ys);
      } else if constexpr (op == op_id::pad) {
        k::pad(in[0], xs, at.pad_before, at.alpha, out, ys);
      } else if constexpr (op == op_id::gather) {
        // The indices arrive through the float pointer every argument has; they are i32 or i64.
        k::gather(in[0], xs, static_cast<const void*>(in[1]), Step::arg(1).type, ws.elements(),
                  normalize_axis(at.axis, xs.rank), out);
      } else if constexpr (op == op_id::quantize || op == op_id::dequantize) {
        // Integer tensors arrive through the float pointers every argument has.
        constexpr quantization_extents e = quantization_extents_of(xs, at.axis, ws.elements());
        if constexpr (op == op_id::quantize)
          k::quantize(in[0], ys.elements(), in[1], in[2], n.type, e.axis_len, e.inner, e.per_axis, out);
        else
          k::dequantize(in[0], Step::arg(0).type, ys.elements(), in[1], in[2], e.axis_len, e.inner, e.per_axis, out);
      } else if constexpr (is_comparison(op)) {
        // Tensors of any dtype arrive through the float pointers every argument has.
        k::compare(op, in[0], xs, in[1], ws, Step::arg(0).type, reinterpret_cast<bool*>(out), ys);
      } else if constexpr (is_logical(op)) {
        k::logical(op, reinterpret_cast<const bool*>(in[0]), xs,
                   reinterpret_cast<const bool*>(Step::num_args > 1 ? in[Step::num_args - 1] : in[0]), ws,
                   reinterpret_cast<bool*>(out), ys);
      } else if constexpr (op == op_id::where) {
        k::where(reinterpret_cast<const bool*>(in[0]), xs, in[1], ws, in[2], arg_shape(2), size_of(n.type), out, ys);
      } else if constexpr (op == op_id::cast) {
        k::cast(in[0], Step::arg(0).type, ys.elements(), out, n.type);
      } else if constexpr (op == op_id::topk) {
        k::topk(in[0], xs, Step::arg(0).type, normalize_axis(at.axis, xs.rank), at.start, at.largest, out,
                Step::output_offset(1));
      } else if constexpr (is_recurrent(op)) {
        constexpr reference_kernels::recurrent_geometry g = recurrent_geometry();
        std::array<float, static_cast<std::size_t>(g.hidden)> scratch{};
        auto* y = reinterpret_cast<unsigned char*>(out);
        constexpr bool states = Step::num_args > 4;
        k::recurrent(g, in[0], in[1], in[2], in[3], states ? in[4] : nullptr,
                     states && op == op_id::lstm ? in[Step::num_args - 1] : nullptr, out,
                     reinterpret_cast<float*>(y + Step::output_offset(1)),
                     op == op_id::lstm ? reinterpret_cast<float*>(y + Step::output_offset(2)) : nullptr, scratch.data());
      } else if constexpr (op == op_id::argmax || op == op_id::argmin) {
        k::arg_reduce(in[0], xs, Step::arg(0).type, normalize_axis(at.axis, xs.rank), op == op_id::argmax, at.select_last,
                      reinterpret_cast<std::int64_t*>(out));
      } else if constexpr (op == op_id::cumsum) {
        k::cumsum(in[0], xs, n.type, normalize_axis(at.axis, xs.rank), at.exclusive, at.reverse, out);
      } else if constexpr (op == op_id::gather_elements) {
        k::gather_elements(in[0], xs, size_of(n.type), in[1], Step::arg(1).type, ws, normalize_axis(at.axis, xs.rank), out);
      } else if constexpr (op == op_id::non_max_suppression) {
        constexpr reference_kernels::nms_geometry g{xs[0], xs[1], ws[1], at.start, at.alpha, at.beta, at.upper};
        std::array<std::int32_t, static_cast<std::size_t>(g.boxes)> order{};
        auto* bytes = reinterpret_cast<unsigned char*>(out);
        k::non_max_suppression(g, in[0], in[1], reinterpret_cast<std::int64_t*>(out),
                               reinterpret_cast<std::int64_t*>(bytes + Step::output_offset(1)), order.data());
      } else if constexpr (op == op_id::trilu) {
        k::trilu(in[0], xs, size_of(n.type), at.upper, at.start, out);
      } else if constexpr (op == op_id::resize) {
        k::resize(in[0], xs, out, ys, at.resize, at.align_corners);
      } else if constexpr (is_reduction(op)) {
        k::reduce(op, in[0], xs, at.axes, out);
      } else if constexpr (op == op_id::layer_norm || op == op_id::rms_norm) {
        k::axis_norm(in[0], xs, normalize_axis(at.axis, xs.rank), in[1], op == op_id::layer_norm ? in[2] : nullptr,
                     at.epsilon, out);
      } else {
        static_assert(op == op_id::dense, "partita: the reference backend has no kernel for this op (Step)");
      }
    }

   private:
    static constexpr bool no_f16_argument() {
      for (int i = 0; i < Step::num_args; ++i)
        if (Step::arg(i).type == dtype::f16) return false;
      return Step::node.type != dtype::f16;
    }
    // The layer's sizes as its shape rule read them.
    static constexpr reference_kernels::recurrent_geometry recurrent_geometry() {
      constexpr rules::recurrent_sizes s =
          rules::recurrent_shapes(Step::op, *Step::node.at, detail::arg_infos_of<Step>().data(), Step::num_args);
      return {Step::op, s.seq, s.batch, s.input, s.hidden, s.dirs, detail::recurrent_attrs_in(*Step::node.at)};
    }
    static constexpr shape arg_shape(int i) { return i < Step::num_args ? Step::arg(i).out : shape{}; }
  };
};

}  // namespace partita
