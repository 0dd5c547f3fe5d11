#pragma once
/// The composites the cpu backend fuses (`cpu_patterns`).
#include "partita/pattern/match_view.hpp"
#include "partita/pattern/pattern.hpp"
#include "partita/pattern/table.hpp"

namespace partita {
namespace detail::cpu {

/// dense or conv2d of a bound weight.
template <template <class, class> class Op>
using gemm_p = Op<any, constant>;
/// ... with an optional bias, then an optional batch norm.
template <template <class, class> class Op>
using gemm_bias_p = alt<batch_norm_p<alt<bias_add_p<gemm_p<Op>, constant>, gemm_p<Op>>, constant, constant, constant, constant>,
                        bias_add_p<gemm_p<Op>, constant>>;
template <class X>
using activation_p =
    alt<relu_p<X>, alt<clip_p<X>, alt<sigmoid_p<X>, alt<tanh_p<X>, alt<gelu_p<X>, alt<gelu_tanh_p<X>,
    alt<silu_p<X>, alt<hardswish_p<X>, alt<hardsigmoid_p<X>, leaky_relu_p<X>>>>>>>>>>;

/// `x · sigmoid(x)` of the value X matches: SiLU as exporters write it (YOLO, EfficientNet).
template <class X>
using silu_p = multiply_p<var<"silu.x", X>, sigmoid_p<var<"silu.x">>>;
/// The composites the cpu kernels implement: f32, a bias along the channels (conv2d) or the
/// units (dense), and a residual of exactly the output's shape.
struct fusable {
  static constexpr bool check(const match_view& m) {
    for (int i = 0; i < m.size(); ++i) {
      const op_view v = m.node(i);
      if (v.dtype() != dtype::f32) return false;
      if (v.is(op_id::bias_add)) {
        const int axis = v.attributes().axis < 0 ? v.attributes().axis + v.shape().rank : v.attributes().axis;
        const bool conv = v.arg(0).is(op_id::conv2d);
        if (axis != (conv ? 1 : v.shape().rank - 1)) return false;
      }
      if (v.is(op_id::add) && !(v.arg(0).shape() == v.arg(1).shape())) return false;
    }
    return true;
  }
};

}  // namespace detail::cpu

/// The `cpu` backend's pattern table, in priority order: conv2d / dense with bias (and/or a
/// batch norm, folded at bind), optionally followed by a residual add and/or an activation
/// (relu, clip, sigmoid, tanh, gelu, gelu_tanh, silu, hardswish, hardsigmoid, leaky_relu; a
/// conv2d's `x · sigmoid(x)` counts as SiLU); matmul with a bias along its last axis, optionally
/// followed by an activation. Each becomes one kernel.
using cpu_patterns = pattern_table<
    composite<"cpu.conv2d_bias_silu", detail::cpu::silu_p<detail::cpu::gemm_bias_p<conv2d_p>>, detail::cpu::fusable>,
    composite<"cpu.conv2d_bias_add_act", detail::cpu::activation_p<add_p<detail::cpu::gemm_bias_p<conv2d_p>, any>>,
              detail::cpu::fusable>,
    composite<"cpu.conv2d_bias_add", add_p<detail::cpu::gemm_bias_p<conv2d_p>, any>, detail::cpu::fusable>,
    composite<"cpu.conv2d_bias_act", detail::cpu::activation_p<detail::cpu::gemm_bias_p<conv2d_p>>, detail::cpu::fusable>,
    composite<"cpu.conv2d_add_act", detail::cpu::activation_p<add_p<detail::cpu::gemm_p<conv2d_p>, any>>, detail::cpu::fusable>,
    composite<"cpu.conv2d_act", detail::cpu::activation_p<detail::cpu::gemm_p<conv2d_p>>, detail::cpu::fusable>,
    composite<"cpu.conv2d_bias", detail::cpu::gemm_bias_p<conv2d_p>, detail::cpu::fusable>,
    composite<"cpu.dense_bias_add_act", detail::cpu::activation_p<add_p<detail::cpu::gemm_bias_p<dense_p>, any>>,
              detail::cpu::fusable>,
    composite<"cpu.dense_bias_act", detail::cpu::activation_p<detail::cpu::gemm_bias_p<dense_p>>, detail::cpu::fusable>,
    composite<"cpu.dense_act", detail::cpu::activation_p<detail::cpu::gemm_p<dense_p>>, detail::cpu::fusable>,
    composite<"cpu.dense_bias", detail::cpu::gemm_bias_p<dense_p>, detail::cpu::fusable>,
    composite<"cpu.matmul_bias_act", detail::cpu::activation_p<bias_add_p<matmul_p<any, any>, constant>>,
              detail::cpu::fusable>,
    composite<"cpu.matmul_bias", bias_add_p<matmul_p<any, any>, constant>, detail::cpu::fusable>>;

}  // namespace partita
