#pragma once
/// The mcu backend: portable scalar kernels for cores without vector units (Cortex-M4 and M7).
#include <string_view>

#include "partita/backend/backend.hpp"
#include "partita/backends/mcu/detail/conv.hpp"
#include "partita/backends/mcu/detail/dense.hpp"
#include "partita/backends/mcu/detail/epilogue.hpp"
#include "partita/backends/mcu/detail/quantize.hpp"
#include "partita/backends/mcu/detail/quantized.hpp"
#include "partita/backends/reference/reference.hpp"
#include "partita/core/fixed_string.hpp"
#include "partita/ir/view.hpp"
#include "partita/pattern/match_view.hpp"
#include "partita/pattern/pattern.hpp"
#include "partita/pattern/qdq.hpp"
#include "partita/pattern/table.hpp"
#include "partita/runtime/step_ref.hpp"

namespace partita {
namespace detail::mcu {

/// A convolution or dense layer with its bias, then optionally a residual added, then
/// optionally ReLU or a clip (ReLU6): the mcu backend's composites.
template <class Op>
using with_bias_p = bias_add_p<Op, constant>;
template <class X>
using activated_p = alt<relu_p<X>, clip_p<X>>;

/// f32 throughout, the bias along the channels (convolutions) or the units (dense), a
/// convolution without dilation, a residual of the output's shape: what the kernels of conv.hpp
/// and dense.hpp compute.
struct fusable {
  static constexpr bool check(const match_view& m) {
    for (int i = 0; i < m.size(); ++i) {
      const op_view v = m.node(i);
      if (v.dtype() != dtype::f32) return false;
      if (v.is(op_id::bias_add)) {
        const int rank = v.shape().rank, axis = v.attributes().axis < 0 ? v.attributes().axis + rank : v.attributes().axis;
        if (axis != (v.arg(0).is(op_id::dense) ? rank - 1 : 1)) return false;
      }
      if (v.is(op_id::conv2d) && (v.attributes().dilation != std::array{1, 1} || v.arg(0).shape().rank != 4)) return false;
      // The kernels add the residual element by element: one of the output's shape, not broadcast.
      if (v.is(op_id::add) && !(v.arg(0).shape() == v.arg(1).shape())) return false;
      if (v.is(op_id::dense) && v.arg(1).shape().rank != 2) return false;
    }
    return true;
  }
};

}  // namespace detail::mcu

/// Kernels for microcontrollers whose cores xsimd does not cover (Cortex-M4 and M7 with a
/// single-precision FPU, or any core at all): scalar C++ whose register tiles (four output
/// channels by four positions, four dense units at a time) keep the FPU's registers full, in
/// the manner of CMSIS-DSP's unrolled loops, and which GCC vectorizes where the target has
/// vectors. A host backend: the convolutions (dense, depthwise, and other grouped ones group by
/// group) and dense layers it fuses run here, every other op on the reference kernels. Quantized
/// models (QDQ regions, pattern/qdq.hpp) run as int8 kernels: convolutions and dense layers on
/// the DSP extension's dual 16-bit multiply-accumulate where the core has it (M4, M7, M33),
/// bit for bit the cpu backend's results. Selected in the backend list only:
/// `static_executable<net, weights, mcu>`; the model does not change.
struct mcu {
  static constexpr fixed_string name = "mcu";
  static constexpr bool host = true;
  /// No per-executable state: the kernels read weights where they lie.
  struct state {};
  static constexpr bool supports(const op_view&) { return true; }
  /// Steps with the same signature share one kernel: they keep nothing per step.
  static constexpr bool shares_kernels = true;

  using patterns = pattern_table<
      composite<"mcu.qconv2d_bias_act", qdq::qconv_p, detail::mcu::qfusable>,
      composite<"mcu.qdense_bias_act", qdq::qdense_p, detail::mcu::qfusable>,
      composite<"mcu.qmatmul", qdq::qmatmul_p, detail::mcu::qfusable>,
      composite<"mcu.qadd", qdq::qadd_p, detail::mcu::qfusable>,
      composite<"mcu.qpool2d", qdq::qpool_p, detail::mcu::qfusable>,
      composite<"mcu.qconcat", qdq::qconcat_p, detail::mcu::qfusable>,
      composite<"mcu.qclamp", qdq::qclamp_p, detail::mcu::qfusable>,
      composite<"mcu.qreshape", qdq::qreshape_p, detail::mcu::qfusable>,
      composite<"mcu.conv2d_bias_add_act",
                detail::mcu::activated_p<add_p<detail::mcu::with_bias_p<conv2d_p<any, constant>>, any>>,
                detail::mcu::fusable>,
      composite<"mcu.conv2d_bias_act", detail::mcu::activated_p<detail::mcu::with_bias_p<conv2d_p<any, constant>>>,
                detail::mcu::fusable>,
      composite<"mcu.conv2d_bias", detail::mcu::with_bias_p<conv2d_p<any, constant>>, detail::mcu::fusable>,
      composite<"mcu.dense_bias_act", detail::mcu::activated_p<detail::mcu::with_bias_p<dense_p<any, constant>>>,
                detail::mcu::fusable>,
      composite<"mcu.dense_bias", detail::mcu::with_bias_p<dense_p<any, constant>>, detail::mcu::fusable>>;
  static constexpr bool fuses(std::string_view c) { return c.starts_with("mcu."); }

  template <class Step>
  struct kernel {
    static void run(state& s, const float* const* in, float* out, int step = 0) {
      if constexpr (quantized) {
        detail::mcu::quantized_kernel<Step>::run(in, out);
      } else if constexpr (eight_bit_quantization) {
        run_quantization(in, out);
      } else if constexpr (Step::op == op_id::call) {
        run_composite(in, out);
      } else {
        reference::state r;
        reference::kernel<Step>::run(r, in, out, step);
        (void)s;
      }
    }

   private:
    static constexpr bool quantized = [] {
      if constexpr (Step::op == op_id::call) return std::string_view(Step::composite).starts_with("mcu.q");
      else return false;
    }();
    // A quantize or dequantize of a tensor quantized per tensor to u8 or i8: quantize.hpp.
    static constexpr bool eight_bit_quantization = [] {
      if constexpr (Step::op == op_id::quantize || Step::op == op_id::dequantize) {
        const dtype t = Step::op == op_id::quantize ? Step::node.type : Step::arg(0).type;
        return Step::arg(1).out.elements() == 1 && (t == dtype::u8 || t == dtype::i8);
      } else {
        return false;
      }
    }();
    static void run_quantization(const float* const* in, float* out) {
      constexpr bool to_integers = Step::op == op_id::quantize;
      constexpr dtype t = to_integers ? Step::node.type : Step::arg(0).type;
      using T = element_of<t>;
      constexpr std::int64_t n = Step::node.out.elements();
      const auto zp = static_cast<std::int32_t>(detail::load_integer(in[2], t, 0));
      if constexpr (to_integers) detail::mcu::quantize_values(in[0], n, in[1][0], zp, reinterpret_cast<T*>(out));
      else detail::mcu::dequantize_values(reinterpret_cast<const T*>(in[0]), n, in[1][0], zp, out);
    }

    // The float composites' parts (none for the quantized ones, which quantized.hpp reads).
    static constexpr bool fused = Step::op == op_id::call && !quantized;
    static constexpr int conv = fused ? Step::find(op_id::conv2d) : -1;
    static constexpr int main_op = conv >= 0 ? conv : (fused ? Step::find(op_id::dense) : -1);
    static constexpr int bias = fused ? Step::find(op_id::bias_add) : -1;
    static constexpr int add = fused ? Step::find(op_id::add) : -1;

    // Where the weight, the bias and the residual arrive among the kernel's inputs.
    static constexpr int input_at(int body_index) { return Step::input_of(Step::body_node(body_index)); }
    static constexpr int input_in = main_op >= 0 ? input_at(Step::body_arg(main_op, 0)) : 0;
    static constexpr int weight_in = main_op >= 0 ? input_at(Step::body_arg(main_op, 1)) : -1;
    static constexpr int bias_in = bias >= 0 ? input_at(Step::body_arg(bias, 1)) : -1;
    static constexpr int residual_in =
        add < 0 ? -1 : input_at(Step::body_arg(add, Step::body_arg(add, 0) == bias ? 1 : 0));

    static constexpr detail::mcu::epilogue ending() {
      detail::mcu::epilogue e{};
      e.residual = add >= 0;
      if (Step::find(op_id::relu) >= 0) e.activation = detail::mcu::act::relu;
      if (const int c = Step::find(op_id::clip); c >= 0) {
        e.activation = detail::mcu::act::clip;
        e.lo = Step::body(c).at->lo;
        e.hi = Step::body(c).at->hi;
      }
      return e;
    }

    static void run_composite(const float* const* in, float* out) {
      constexpr detail::mcu::epilogue e = ending();
      const float* residual = residual_in >= 0 ? in[residual_in] : nullptr;
      if constexpr (conv >= 0) {
        constexpr detail::mcu::conv_shape g =
            detail::mcu::conv_geometry(Step::body(Step::body_arg(conv, 0)).out, Step::body(Step::body_arg(conv, 1)).out,
                                       Step::body(conv).out, *Step::body(conv).at);
        if constexpr (g.groups == 1 && g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pt == 0 && g.pl == 0 &&
                      g.oh == g.h && g.ow == g.w) {
          detail::mcu::pointwise<g, e>(in[input_in], in[weight_in], in[bias_in], residual, out);
        } else if constexpr (g.groups == 1) {
          detail::mcu::conv<g, e>(in[input_in], in[weight_in], in[bias_in], residual, out);
        } else if constexpr (g.groups == g.c && g.o == g.c) {
          detail::mcu::depthwise<g, e>(in[input_in], in[weight_in], in[bias_in], residual, out);
        } else {
          grouped<g, e>(in[input_in], in[weight_in], in[bias_in], residual, out);
        }
      } else {
        constexpr shape x = Step::body(Step::body_arg(main_op, 0)).out, w = Step::body(Step::body_arg(main_op, 1)).out;
        detail::mcu::dense<x.elements() / x.back(0), w[0], w[1], e>(in[input_in], in[weight_in], in[bias_in], residual, out);
      }
    }

    // A grouped convolution that is not depthwise: each group as a dense convolution of its own.
    template <detail::mcu::conv_shape G, detail::mcu::epilogue E>
    static void grouped(const float* x, const float* w, const float* b, const float* res, float* y) {
      constexpr detail::mcu::conv_shape one = [] {
        detail::mcu::conv_shape g = detail::mcu::group_shape(G);
        g.n = 1;
        return g;
      }();
      constexpr int ci = one.c, co = one.o;
      for (int n = 0; n < G.n; ++n)
        for (int group = 0; group < G.groups; ++group) {
          const int out_at = (n * G.o + group * co) * G.oh * G.ow;
          detail::mcu::conv<one, E>(x + (n * G.c + group * ci) * G.h * G.w, w + group * co * ci * G.kh * G.kw,
                                    b ? b + group * co : nullptr, res ? res + out_at : nullptr, y + out_at);
        }
    }
  };
};

}  // namespace partita
