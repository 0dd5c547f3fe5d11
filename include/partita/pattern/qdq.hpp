#pragma once
/// QDQ regions as patterns: quantize(op(dequantize(x), ...)) in the forms exporters write, and
/// the predicate that says which of them integer kernels run. The cpu and mcu backends claim
/// them; a backend with integer kernels of its own can reuse them (docs/quantization.md).
#include <cstdint>

#include "partita/ir/attrs.hpp"
#include "partita/pattern/match_view.hpp"
#include "partita/pattern/pattern.hpp"

namespace partita {

template <class X, class Scale, class ZeroPoint> using quantize_p = op_p<op_id::quantize, X, Scale, ZeroPoint>;
template <class Q, class Scale, class ZeroPoint> using dequantize_p = op_p<op_id::dequantize, Q, Scale, ZeroPoint>;

/// Patterns of the QDQ regions integer kernels run, and their predicate `qfusable`.
namespace qdq {

/// A quantized activation read as floats: `dequantize(x, scale, zero point)` with bound
/// parameters; x is a parameter of the composite.
using dq_activation_p = dequantize_p<any, constant, constant>;
/// A quantized weight read as floats: all three bound.
using dq_weight_p = dequantize_p<constant, constant, constant>;
/// A float result quantized with bound parameters.
template <class X>
using q_p = quantize_p<X, constant, constant>;
/// An optional ReLU or clip before the quantization: the integer kernels clamp instead.
template <class X>
using q_act_p = alt<relu_p<X>, alt<clip_p<X>, X>>;
/// A bias in the float body: a dequantized i32 weight, as QDQ exporters write it, or an f32 one.
template <class G>
using q_bias_p = alt<bias_add_p<G, alt<dq_weight_p, constant>>, alt<add_p<G, dq_weight_p>, G>>;

/// An optional batch norm after G, itself after an optional division by a constant: PyTorch's
/// export of a fused conv-bn trained with fake quantization. Folded into the weight scales and
/// the bias at bind.
template <class G>
using q_bn_p = alt<batch_norm_p<alt<divide_p<G, constant>, G>, constant, constant, constant, constant>, G>;

/// quantize(act(batch_norm(conv2d(dequantize(x), dequantize(w)) + bias))): QLinearConv in QDQ
/// form, and PyTorch's conv-bn.
using qconv_p = q_p<q_act_p<q_bn_p<q_bias_p<conv2d_p<dq_activation_p, dq_weight_p>>>>>;
/// quantize(act(dense(dequantize(x), dequantize(w)) + bias)).
using qdense_p = q_p<q_act_p<q_bias_p<dense_p<dq_activation_p, dq_weight_p>>>>;
/// quantize(matmul(dequantize(a), dequantize(b))): two activations.
using qmatmul_p = q_p<q_act_p<matmul_p<dq_activation_p, dq_activation_p>>>;
/// quantize(act(dequantize(a) + dequantize(b))).
using qadd_p = q_p<q_act_p<add_p<dq_activation_p, dq_activation_p>>>;
/// quantize of a pooling of a dequantized value.
using qpool_p = q_p<alt<avg_pool2d_p<dq_activation_p>, alt<global_avg_pool2d_p<dq_activation_p>, max_pool2d_p<dq_activation_p>>>>;
/// quantize(concatenate(dequantize(a), dequantize(b), ...)) of two to four values.
using qconcat_p = q_p<alt<concatenate_p<dq_activation_p, dq_activation_p>,
                          alt<concatenate_p<dq_activation_p, dq_activation_p, dq_activation_p>,
                              concatenate_p<dq_activation_p, dq_activation_p, dq_activation_p, dq_activation_p>>>>;
/// quantize(relu or clip(dequantize(x))): a clamp between two QDQ pairs, in integers.
using qclamp_p = q_p<alt<relu_p<dq_activation_p>, clip_p<dq_activation_p>>>;
/// quantize(flatten or reshape(dequantize(x))): a reshape between two QDQ pairs (before a
/// classifier), in integers.
using qreshape_p = q_p<alt<flatten_p<dq_activation_p>, reshape_p<dq_activation_p>>>;

/// Whether a quantize or dequantize node has one scale and zero point (per tensor).
constexpr bool per_tensor(const op_view& v) { return v.arg(1).shape().elements() == 1; }

/// Whether `v` (a quantize or dequantize) is of an 8-bit tensor: u8 or i8.
constexpr bool eight_bit(partita::dtype t) { return t == partita::dtype::u8 || t == partita::dtype::i8; }

/// Whether `b`, added to conv2d or dense `g`, holds one value per output channel laid out
/// along the channels ([C, 1, 1] or [1, C, 1, 1] for conv2d, [C] for dense).
constexpr bool per_channel_bias(const op_view& g, const op_view& b) {
  const partita::shape& s = b.shape();
  if (g.is(op_id::dense)) return s.rank == 1 && s[0] == g.shape()[g.shape().rank - 1];
  const std::int64_t c = g.shape()[1];
  return (s.rank == 3 && s[0] == c && s[1] == 1 && s[2] == 1) ||
         (s.rank == 4 && s[0] == 1 && s[1] == c && s[2] == 1 && s[3] == 1);
}

/// Whether `v` is a conv2d or a dense layer.
constexpr bool gemm_layer(const op_view& v) { return v.is(op_id::conv2d) || v.is(op_id::dense); }

/// Whether node `v` of match `m` is a bias a bias_add or add of the match adds to a layer.
constexpr bool layer_bias(const match_view& m, const op_view& v) {
  for (int i = 0; i < m.size(); ++i) {
    const op_view n = m.node(i);
    if (!(n.is(op_id::bias_add) || n.is(op_id::add)) || n.num_args() != 2) continue;
    if ((n.arg(1).index() == v.index() && gemm_layer(n.arg(0))) || (n.arg(0).index() == v.index() && gemm_layer(n.arg(1))))
      return true;
  }
  return false;
}

/// Whether node `v` of match `m` is the weight of a conv2d or dense layer of the match (its
/// second operand), or a layer's bias (`layer_bias`).
constexpr bool layer_weight_or_bias(const match_view& m, const op_view& v) {
  for (int i = 0; i < m.size(); ++i)
    if (gemm_layer(m.node(i)) && m.node(i).arg(1).index() == v.index()) return true;
  return layer_bias(m, v);
}

/// Whether matmul `v`'s operands are what the integer kernels multiply: b of rank 2, shared by
/// every matrix of a; or a and b of one rank with the same batch extents.
constexpr bool batched_alike(const op_view& v) {
  const partita::shape &a = v.arg(0).shape(), &b = v.arg(1).shape();
  if (b.rank == 2) return a.rank >= 2;
  if (a.rank != b.rank) return false;
  for (int i = 0; i + 2 < a.rank; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

/// What the integer kernels take: 8-bit activations quantized per tensor, and weights
/// quantized per tensor or per output channel (axis 0); a bias along the channels (conv2d)
/// or the units (dense). Anything else stays in float, where it runs correctly
/// (`explain` names the predicate that refused it).
struct qfusable {
  static constexpr bool check(const match_view& m) {
    // Without a convolution, dense or matmul (add, pooling, concatenation, clamp), the integer
    // kernels keep one dtype from the inputs to the result.
    bool gemm = false;
    for (int i = 0; i < m.size(); ++i)
      gemm = gemm || m.node(i).is(op_id::conv2d) || m.node(i).is(op_id::dense) || m.node(i).is(op_id::matmul);
    for (int i = 0; i < m.size(); ++i)
      if (!gemm && m.node(i).is(op_id::dequantize) && m.node(i).arg(0).dtype() != m.root().dtype()) return false;
    for (int i = 0; i < m.size(); ++i) {
      const op_view v = m.node(i);
      if (v.is(op_id::quantize)) {
        if (!eight_bit(v.dtype()) || !per_tensor(v)) return false;
      } else if (v.is(op_id::dequantize)) {
        const op_view q = v.arg(0);
        const bool weight = q.is(op_id::weight);
        if (weight && q.dtype() == partita::dtype::i32) {
          // A bias of a layer, nothing else: per tensor, or per channel along its only axis.
          if (!layer_bias(m, v) || (!per_tensor(v) && v.shape().rank != 1)) return false;
        } else if (!eight_bit(q.dtype())) {
          return false;
        } else if (!per_tensor(v) && !(weight && normalize_axis(v.attributes().axis, v.shape().rank) == 0 &&
                                       layer_weight_or_bias(m, v))) {
          // Per channel: a layer's weights or bias only; the other kernels read one scale.
          return false;
        }
      } else if (v.is(op_id::bias_add)) {
        const int axis = normalize_axis(v.attributes().axis, v.shape().rank);
        if (axis != (v.arg(0).is(op_id::conv2d) ? 1 : v.shape().rank - 1)) return false;
      } else if (v.is(op_id::add)) {
        // conv2d or dense plus a dequantized bias, one value per output channel; or qadd's
        // two operands, of one shape.
        const bool gemm0 = v.arg(0).is(op_id::conv2d) || v.arg(0).is(op_id::dense);
        const bool gemm1 = v.arg(1).is(op_id::conv2d) || v.arg(1).is(op_id::dense);
        if (gemm0 || gemm1) {
          if (!per_channel_bias(v.arg(gemm0 ? 0 : 1), v.arg(gemm0 ? 1 : 0))) return false;
        } else if (!(v.arg(0).shape() == v.arg(1).shape())) {
          return false;
        }
      } else if (v.is(op_id::divide)) {
        // The divisor of a folded batch norm: one value, or one per channel.
        const op_view d = v.arg(1);
        if (d.shape().elements() != 1 && !per_channel_bias(v.arg(0), d)) return false;
      } else if (v.is(op_id::matmul) && (v.attributes().transpose_a || v.attributes().transpose_b || !batched_alike(v))) {
        return false;
      }
    }
    return true;
  }
};

}  // namespace qdq
}  // namespace partita
