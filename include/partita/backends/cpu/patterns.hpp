#pragma once
/// The composites the cpu backend fuses (`cpu_patterns`).
#include <cstdint>

#include "partita/backends/cpu/detail/transform/strided_view.hpp"
#include "partita/pattern/qdq.hpp"
#include "partita/ir/attrs.hpp"
#include "partita/pattern/match_view.hpp"
#include "partita/pattern/pattern.hpp"
#include "partita/pattern/table.hpp"

namespace partita {
namespace detail::cpu {

/// dense, conv2d, conv1d or conv_transpose2d of a bound weight.
template <template <class, class> class Op>
using gemm_p = Op<any, constant>;
/// G with an optional bias, then an optional batch norm (one of the two at least).
template <class G>
using with_bias_p = alt<batch_norm_p<alt<bias_add_p<G, constant>, G>, constant, constant, constant, constant>,
                        bias_add_p<G, constant>>;
template <template <class, class> class Op>
using gemm_bias_p = with_bias_p<gemm_p<Op>>;
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
        const bool conv = v.arg(0).is(op_id::conv2d) || v.arg(0).is(op_id::conv1d) || v.arg(0).is(op_id::conv_transpose2d);
        if (axis != (conv ? 1 : v.shape().rank - 1)) return false;
      }
      if (v.is(op_id::add) && !(v.arg(0).shape() == v.arg(1).shape())) return false;
    }
    return true;
  }
};

/// conv2d of X by a bound weight with a bias or a batch norm, then optionally ReLU6, ReLU or
/// hard swish (the activations of MobileNets). Few alternatives on purpose: the expansion
/// pattern nests one stage in the other, so its size is the product of theirs, and every node
/// of every model is matched against it at compile time (with all of `activation_p` and bias
/// plus batch norm it was 30 times larger and put a 1600-node model past GCC's constexpr budget).
template <class X>
using conv_stage_core_p = alt<batch_norm_p<conv2d_p<X, constant>, constant, constant, constant, constant>,
                              bias_add_p<conv2d_p<X, constant>, constant>>;
template <class X>
using conv_stage_p =
    alt<alt<clip_p<conv_stage_core_p<X>>, alt<relu_p<conv_stage_core_p<X>>, hardswish_p<conv_stage_core_p<X>>>>,
        conv_stage_core_p<X>>;
/// A 1×1 convolution stage read by a depthwise convolution stage (MobileNet's expansion).
using expand_depthwise_p = conv_stage_p<conv_stage_p<any>>;

/// Whether node `v` is one of match `m`'s (not a value from outside it).
constexpr bool in_match(const match_view& m, const op_view& v) {
  for (int i = 0; i < m.size(); ++i)
    if (m.node(i).index() == v.index()) return true;
  return false;
}

/// The two convolutions of a two-stage match: the one reading a value from outside it (`inner`)
/// and the one reading the first stage's value (`outer`), as match indices; -1 where absent.
struct stage_convs {
  int inner = -1, outer = -1;
};
constexpr stage_convs stage_convs_of(const match_view& m) {
  stage_convs c;
  for (int i = 0; i < m.size(); ++i)
    if (m.node(i).is(op_id::conv2d)) (in_match(m, m.node(i).arg(0)) ? c.outer : c.inner) = i;
  return c;
}

/// Whether conv2d `v` is a 1×1 of one group, stride 1 and no padding: the expansion and the
/// projection that the two-stage kernels run on `pointwise_nhwc` or conv.hpp's in-place tiling.
constexpr bool unpadded_pointwise(const op_view& v) {
  const attrs& a = v.attributes();
  const shape& w = v.arg(1).shape();
  if (a.groups != 1 || w.rank != 4 || w[2] != 1 || w[3] != 1 || a.stride[0] != 1 || a.stride[1] != 1) return false;
  for (int axis = 0; axis < 2; ++axis)
    if (a.padding[static_cast<std::size_t>(axis)] != 0 || end_padding(a, axis) != 0) return false;
  return true;
}

/// An expand / depthwise pair the fused kernel implements, and where fusing pays: the 1×1
/// convolution unpadded, of stride 1 and one group; the second convolution depthwise with one
/// output channel per input channel; and the expanded value of an image at least
/// `min_bytes`. Smaller values stay in L2 between two steps, and the pointwise and depthwise
/// kernels run alone split their work more finely across threads.
struct expand_depthwise_fusable {
  static constexpr std::int64_t min_bytes = std::int64_t{1} << 20;
  static constexpr bool check(const match_view& m) {
    if (!fusable::check(m)) return false;
    const stage_convs c = stage_convs_of(m);
    if (c.inner < 0 || c.outer < 0) return false;
    const op_view e = m.node(c.inner), d = m.node(c.outer);
    if (!unpadded_pointwise(e)) return false;
    const shape& dw = d.arg(1).shape();
    const shape& mid = d.arg(0).shape();
    // One channel is a plain convolution (one group), which the depthwise kernel does not take.
    const std::int64_t channels = mid[1];
    if (channels < 2 || d.attributes().groups != channels || dw[0] != channels || dw[1] != 1) return false;
    return mid.elements() / mid[0] * static_cast<std::int64_t>(sizeof(float)) >= min_bytes;
  }
};

/// A depthwise convolution stage read by a 1×1 projection with its bias or batch norm (the end
/// of MobileNet's inverted residual; no activation after the projection, as in MobileNetV2's
/// linear bottleneck), and the same with a residual add. Two table entries, each after the
/// single-convolution chains that take most nodes of a model (a nested pattern tried at every
/// node of a 1600-node residual chain before those had claimed it took the composite pass past
/// GCC's default constant-evaluation budget), the one with the add before `cpu.conv2d_bias_add`,
/// which would claim the projection and its add.
using depthwise_project_p = conv_stage_core_p<conv_stage_p<any>>;
using depthwise_project_add_p = add_p<depthwise_project_p, any>;

/// A depthwise / projection pair the fused kernel implements, and where fusing pays: the first
/// convolution depthwise with one output channel per input channel; the second a 1×1 of stride
/// 1, unpadded, of one group and at most 1024 input channels (`pointwise_nhwc`'s); and an image
/// of at least `min_rows` output rows. The fused step splits its rows across threads, where the
/// projection alone splits a small image by panels of channels: 7 rows on two threads would be
/// 4 against 3. A depthwise convolution that reads an expansion large enough for
/// `cpu.conv2d_expand_depthwise` is left to it (that pair moves the larger value).
struct depthwise_project_fusable {
  /// Whether `v`, through an optional activation and a bias or batch norm, is a 1×1 conv2d
  /// stage that `expand_depthwise_fusable` would fuse with a depthwise reader.
  static constexpr bool large_expansion(op_view v) {
    if (v.is(op_id::clip) || v.is(op_id::relu) || v.is(op_id::hardswish)) v = v.arg(0);
    if (v.is(op_id::batch_norm) || v.is(op_id::bias_add)) v = v.arg(0);
    if (!v.is(op_id::conv2d) || !unpadded_pointwise(v)) return false;
    const shape& y = v.shape();
    return y.elements() / y[0] * static_cast<std::int64_t>(sizeof(float)) >= expand_depthwise_fusable::min_bytes;
  }
  static constexpr std::int64_t min_rows = 8;
  static constexpr bool check(const match_view& m) {
    if (!fusable::check(m)) return false;
    const stage_convs c = stage_convs_of(m);
    if (c.inner < 0 || c.outer < 0) return false;
    const op_view d = m.node(c.inner), p = m.node(c.outer);
    const shape& x = d.arg(0).shape();
    const shape& dw = d.arg(1).shape();
    const shape& mid = p.arg(0).shape();
    if (x.rank != 4 || mid.rank != 4) return false;
    const std::int64_t channels = x[1];
    if (channels < 2 || d.attributes().groups != channels || dw[0] != channels || dw[1] != 1) return false;
    if (!unpadded_pointwise(p) || mid[1] > 1024) return false;
    return mid[2] >= min_rows && !large_expansion(d.arg(0));
  }
};

/// A small image's convolution, its epilogue and the pooling that reads it (LeNet's layers):
/// `fusable`'s, and a convolution result of at most `max_floats` per image, which the kernel
/// keeps in its own buffer (in L1) for the pooling instead of passing it to a step of its own
/// (one step and one round trip through the arena fewer). A larger one, such as ResNet's stem,
/// keeps its two steps and its channels-last chain.
struct conv_pool_fusable {
  static constexpr std::int64_t max_floats = 8192;
  static constexpr bool check(const match_view& m) {
    if (!fusable::check(m)) return false;
    const shape& conv = m.root().arg(0).shape();
    return conv.rank == 4 && conv.elements() / conv[0] <= max_floats;
  }
};
template <class X>
using pooling_p = alt<max_pool2d_p<X>, avg_pool2d_p<X>>;
/// The convolution stage a pooling reads: ReLU, clip (ReLU6) or no activation. Every activation
/// of `activation_p` made the pattern table's size, computed in one constant evaluation, pass
/// Clang's default budget of 2^20 steps in a program built without `-fconstexpr-steps`.
template <class X>
using pooled_stage_p = alt<relu_p<X>, alt<clip_p<X>, X>>;

/// Scores X scaled by a constant (multiplied or divided) and/or masked (a value added): the
/// input of the softmax composites.
template <class X>
using scaled_p = alt<multiply_p<X, constant>, divide_p<X, constant>>;
template <class X>
using scores_p = alt<add_p<scaled_p<X>, any>, alt<scaled_p<X>, add_p<X, any>>>;
/// An operand of attention: heads split from a wider value (transpose of a reshape, of a slice
/// where Q, K and V come from one projection), read in place by the kernel; or any value.
using head_operand_p = alt<transpose_p<reshape_p<alt<slice_p<any>, any>>>, any>;
using attention_core_p = matmul_p<
    softmax_p<alt<scores_p<matmul_p<head_operand_p, head_operand_p>>, matmul_p<head_operand_p, head_operand_p>>>,
    head_operand_p>;
/// softmax(Q·op(K) · scale + mask)·op(V), each of scale and mask optional, its result
/// optionally transposed (heads merged back).
using attention_p = alt<transpose_p<attention_core_p>, attention_core_p>;

/// The softmax composites the cpu kernels implement: f32, the softmax over the last axis, a
/// one-element scale, a mask that broadcasts to the scores; for attention, products with
/// neither operand transposed-A and Q, K, V with the scores' leading dims (no broadcast).
struct softmax_fusable {
  static constexpr bool batch_matches(const shape& x, const shape& scores) {
    if (x.rank != scores.rank) return false;
    for (int d = 0; d + 2 < x.rank; ++d)
      if (x[d] != scores[d]) return false;
    return true;
  }
  /// Operand `v` of a product as the kernel reads it: a strided view, through the slices,
  /// reshapes and transposes of the match, of a value from outside it.
  static constexpr strided_view read_view(const match_view& m, const op_view& v, int depth = 0) {
    if (depth < 3 && in_match(m, v) && is_strided_view_op(v.op()))
      return view_through(read_view(m, v.arg(0), depth + 1), v.op(), v.attributes(), v.shape());
    return contiguous_view(v.shape());
  }
  /// Whether the kernel can read operand `v` in place: by rows, or for K and V (`columns`)
  /// also by columns, as the transposed matrix.
  static constexpr bool read_in_place(const match_view& m, const op_view& v, bool columns) {
    const matrix_order o = matrix_layout(read_view(m, v));
    return o == matrix_order::rows || (columns && o == matrix_order::columns);
  }
  static constexpr bool check(const match_view& m) {
    op_view v = m.root();
    if (!m.all([](const op_view& n) { return n.dtype() == dtype::f32; })) return false;
    if (v.is(op_id::transpose)) {
      // Heads merged back: the result's last axis must stay last (rows written in place).
      const int r = v.shape().rank;
      if (r < 2 || v.attributes().perm[static_cast<std::size_t>(r - 1)] != r - 1) return false;
      v = v.arg(0);
    }
    const bool attention = v.is(op_id::matmul);
    if (!attention && v.index() != m.root().index()) return false;
    if (attention) {
      if (v.attributes().transpose_a || !batch_matches(v.arg(1).shape(), v.shape()) ||
          !read_in_place(m, v.arg(1), true))
        return false;
      v = v.arg(0);
    }
    const shape& scores = v.shape();
    if (scores.rank < 1 || (v.attributes().axis != -1 && v.attributes().axis != scores.rank - 1)) return false;
    v = v.arg(0);
    if (v.is(op_id::add)) {
      const shape& mask = v.arg(1).shape();
      if (mask.rank > scores.rank) return false;
      for (int d = 1; d <= mask.rank; ++d)
        if (mask.back(d - 1) != 1 && mask.back(d - 1) != scores.back(d - 1)) return false;
      if (!(v.arg(0).shape() == scores)) return false;
      v = v.arg(0);
    }
    if (v.is(op_id::multiply) || v.is(op_id::divide)) {
      if (v.arg(1).shape().elements() != 1 || !(v.arg(0).shape() == scores)) return false;
      v = v.arg(0);
    }
    if (attention) {
      if (!v.is(op_id::matmul) || v.attributes().transpose_a || !batch_matches(v.arg(0).shape(), scores) ||
          !batch_matches(v.arg(1).shape(), scores) || !read_in_place(m, v.arg(0), false) ||
          !read_in_place(m, v.arg(1), true))
        return false;
    }
    return true;
  }
};

}  // namespace detail::cpu

/// The `cpu` backend's pattern table, in priority order: conv2d / conv1d / conv_transpose2d / dense
/// with bias (and/or a batch norm, folded at bind), optionally followed by a residual add and/or
/// an activation (relu, clip, sigmoid, tanh, gelu, gelu_tanh, silu, hardswish, hardsigmoid,
/// leaky_relu; a conv2d's `x · sigmoid(x)` counts as SiLU); a large 1×1 conv2d expansion and
/// the depthwise conv2d reading it, each with its bias or batch norm and optional ReLU6, ReLU
/// or hard swish, whose expanded value never reaches memory; a depthwise conv2d stage and the
/// 1×1 projection reading it, with its bias or batch norm and an optional residual, whose
/// depthwise result never reaches memory; matmul with a bias along its last
/// axis, optionally followed by an activation; attention, softmax(Q·op(K) · scale + mask)·op(V),
/// without its score matrices in memory; softmax of a scaled and/or masked value in one pass; a
/// small image's conv2d with its bias, optionally ReLU or clip, and the max or average pooling
/// after it; and quantized regions in QDQ form (docs/quantization.md): conv2d with its bias and
/// a ReLU or clip, dense likewise, matmul of two activations, add, pooling, concatenation, a
/// lone ReLU or clip and a reshape, each between dequantized inputs and a quantized output.
/// Each becomes one kernel.
using cpu_patterns = pattern_table<
    composite<"cpu.qconv2d_bias_act", qdq::qconv_p, qdq::qfusable>,
    composite<"cpu.qdense_bias_act", qdq::qdense_p, qdq::qfusable>,
    composite<"cpu.qmatmul", qdq::qmatmul_p, qdq::qfusable>,
    composite<"cpu.qadd", qdq::qadd_p, qdq::qfusable>,
    composite<"cpu.qpool2d", qdq::qpool_p, qdq::qfusable>,
    composite<"cpu.qconcat", qdq::qconcat_p, qdq::qfusable>,
    composite<"cpu.qclamp", qdq::qclamp_p, qdq::qfusable>,
    composite<"cpu.qreshape", qdq::qreshape_p, qdq::qfusable>,
    composite<"cpu.attention", detail::cpu::attention_p, detail::cpu::softmax_fusable>,
    composite<"cpu.conv2d_bias_act_pool", detail::cpu::pooling_p<detail::cpu::pooled_stage_p<detail::cpu::gemm_bias_p<conv2d_p>>>,
              detail::cpu::conv_pool_fusable>,
    composite<"cpu.conv2d_bias_silu", detail::cpu::silu_p<detail::cpu::gemm_bias_p<conv2d_p>>, detail::cpu::fusable>,
    composite<"cpu.conv2d_bias_add_act", detail::cpu::activation_p<add_p<detail::cpu::gemm_bias_p<conv2d_p>, any>>,
              detail::cpu::fusable>,
    composite<"cpu.conv2d_depthwise_project_add", detail::cpu::depthwise_project_add_p,
              detail::cpu::depthwise_project_fusable>,
    composite<"cpu.conv2d_bias_add", add_p<detail::cpu::gemm_bias_p<conv2d_p>, any>, detail::cpu::fusable>,
    composite<"cpu.conv2d_expand_depthwise", detail::cpu::expand_depthwise_p, detail::cpu::expand_depthwise_fusable>,
    composite<"cpu.conv2d_depthwise_project", detail::cpu::depthwise_project_p, detail::cpu::depthwise_project_fusable>,
    composite<"cpu.conv2d_bias_act", detail::cpu::activation_p<detail::cpu::gemm_bias_p<conv2d_p>>, detail::cpu::fusable>,
    composite<"cpu.conv2d_add_act", detail::cpu::activation_p<add_p<detail::cpu::gemm_p<conv2d_p>, any>>, detail::cpu::fusable>,
    composite<"cpu.conv2d_act", detail::cpu::activation_p<detail::cpu::gemm_p<conv2d_p>>, detail::cpu::fusable>,
    composite<"cpu.conv2d_bias", detail::cpu::gemm_bias_p<conv2d_p>, detail::cpu::fusable>,
    composite<"cpu.conv1d_bias_add_act", detail::cpu::activation_p<add_p<detail::cpu::gemm_bias_p<conv1d_p>, any>>,
              detail::cpu::fusable>,
    composite<"cpu.conv1d_bias_add", add_p<detail::cpu::gemm_bias_p<conv1d_p>, any>, detail::cpu::fusable>,
    composite<"cpu.conv1d_bias_act", detail::cpu::activation_p<detail::cpu::gemm_bias_p<conv1d_p>>, detail::cpu::fusable>,
    composite<"cpu.conv1d_act", detail::cpu::activation_p<detail::cpu::gemm_p<conv1d_p>>, detail::cpu::fusable>,
    composite<"cpu.conv1d_bias", detail::cpu::gemm_bias_p<conv1d_p>, detail::cpu::fusable>,
    composite<"cpu.conv_transpose2d_bias_add_act",
              detail::cpu::activation_p<add_p<detail::cpu::gemm_bias_p<conv_transpose2d_p>, any>>, detail::cpu::fusable>,
    composite<"cpu.conv_transpose2d_bias_add", add_p<detail::cpu::gemm_bias_p<conv_transpose2d_p>, any>, detail::cpu::fusable>,
    composite<"cpu.conv_transpose2d_bias_act", detail::cpu::activation_p<detail::cpu::gemm_bias_p<conv_transpose2d_p>>,
              detail::cpu::fusable>,
    composite<"cpu.conv_transpose2d_act", detail::cpu::activation_p<detail::cpu::gemm_p<conv_transpose2d_p>>, detail::cpu::fusable>,
    composite<"cpu.conv_transpose2d_bias", detail::cpu::gemm_bias_p<conv_transpose2d_p>, detail::cpu::fusable>,
    composite<"cpu.dense_bias_add_act", detail::cpu::activation_p<add_p<detail::cpu::gemm_bias_p<dense_p>, any>>,
              detail::cpu::fusable>,
    composite<"cpu.dense_bias_add", add_p<detail::cpu::gemm_bias_p<dense_p>, any>, detail::cpu::fusable>,
    composite<"cpu.dense_bias_act", detail::cpu::activation_p<detail::cpu::gemm_bias_p<dense_p>>, detail::cpu::fusable>,
    composite<"cpu.dense_act", detail::cpu::activation_p<detail::cpu::gemm_p<dense_p>>, detail::cpu::fusable>,
    composite<"cpu.dense_bias", detail::cpu::gemm_bias_p<dense_p>, detail::cpu::fusable>,
    composite<"cpu.matmul_bias_act", detail::cpu::activation_p<bias_add_p<matmul_p<any, any>, constant>>,
              detail::cpu::fusable>,
    composite<"cpu.matmul_bias", bias_add_p<matmul_p<any, any>, constant>, detail::cpu::fusable>,
    composite<"cpu.softmax_scaled", softmax_p<detail::cpu::scores_p<any>>, detail::cpu::softmax_fusable>>;

}  // namespace partita
