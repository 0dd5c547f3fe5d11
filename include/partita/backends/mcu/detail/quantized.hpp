#pragma once
/// The mcu backend's quantized composites: each reads its QDQ body at compile time and runs an int8 kernel.
// Convolutions and dense layers run the kernels of qconv.hpp and qdense.hpp; additions, pooling,
// concatenation, clamps, reshapes and matmuls the reference's integer kernels, which compute the
// same rule plainly. Every result equals the cpu backend's integer kernels', bit for bit.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "partita/backend/detail/qdq_body.hpp"
#include "partita/backend/detail/requantize.hpp"
#include "partita/backends/mcu/detail/conv.hpp"
#include "partita/backends/mcu/detail/qconv.hpp"
#include "partita/backends/mcu/detail/qdense.hpp"
#include "partita/backends/mcu/detail/qlayer.hpp"
#include "partita/backends/reference/qeltwise_kernels.hpp"
#include "partita/backends/reference/qgemm_kernels.hpp"
#include "partita/core/dtype.hpp"
#include "partita/ir/attrs.hpp"
#include "partita/ir/op_id.hpp"
#include "partita/pattern/match_view.hpp"
#include "partita/pattern/qdq.hpp"

namespace partita::detail::mcu {

/// What the int8 kernels take beyond `qdq::qfusable`: no batch norm to fold (deployed models
/// have it folded; PyTorch's fake-quantized conv-bn stays on the reference), convolutions over
/// 4-d inputs, at most `max_depth` values summed per output.
struct qfusable {
  static constexpr bool check(const match_view& m) {
    if (!qdq::qfusable::check(m)) return false;
    for (int i = 0; i < m.size(); ++i) {
      const op_view v = m.node(i);
      if (v.is(op_id::batch_norm) || v.is(op_id::divide)) return false;
      if (v.is(op_id::conv2d) && v.arg(0).shape().rank != 4) return false;
      if (v.is(op_id::conv2d) || v.is(op_id::dense)) {
        const partita::shape& w = v.arg(1).shape();
        if (w.elements() / w[0] > max_depth) return false;
      }
    }
    return true;
  }
};

/// The int8 kernel of quantized composite step S (`mcu.q...`).
template <class S>
struct quantized_kernel {
  static constexpr std::string_view name = S::composite;
  static constexpr int quant = S::find(op_id::quantize);
  static constexpr quant::qnode y = quant::qnode_of<S>(quant);
  static constexpr quant::act_bounds act = quant::act_bounds_of<S>();
  // The op between the dequantizations and the quantization (below its activation, if any).
  static constexpr int main_op = [] {
    for (op_id op : {op_id::conv2d, op_id::dense, op_id::matmul, op_id::add, op_id::avg_pool2d,
                     op_id::global_avg_pool2d, op_id::max_pool2d, op_id::concatenate})
      if (S::find(op) >= 0) return S::find(op);
    return S::body_arg(quant, 0);  // a clamp or a reshape
  }();
  using Y = element_of<y.type>;

  static void run(const float* const* in, float* out) {
    const quant::requant r = requant_of(in);
    if constexpr (S::body(main_op).op == op_id::conv2d || S::body(main_op).op == op_id::dense) {
      layer(in, reinterpret_cast<Y*>(out), r);
    } else {
      elementwise(in, reinterpret_cast<Y*>(out));
    }
  }

 private:
  static quant::requant requant_of(const float* const* in) {
    const float s = quant::scale_at(in, y);
    const std::int32_t z = quant::zp_at(in, y);
    return quant::make_requant(quant::output_bounds(y.type, s, z, act.lo, act.hi), z);
  }
  static reference_kernels::qparams qparams_at(const float* const* in, const quant::qnode& q) {
    return {quant::scale_at(in, q), quant::zp_at(in, q)};
  }

  static void layer(const float* const* in, Y* out, const quant::requant& r) {
    constexpr quant::qnode x = quant::qnode_of<S>(S::body_arg(main_op, 0)), w = quant::qnode_of<S>(S::body_arg(main_op, 1));
    constexpr int b = quant::bias_of<S>(main_op);
    using X = element_of<x.type>;
    using W = element_of<w.type>;
    qlayer q;
    q.x_scale = quant::scale_at(in, x);
    q.x_zp = quant::zp_at(in, x);
    q.w_scale = in[w.scale];
    q.w_zp = in[w.zp];
    q.w_type = w.type;
    q.w_count = w.count;
    q.y_scale = quant::scale_at(in, y);
    q.r = bounds_of(r);
    if constexpr (b >= 0) {
      if constexpr (S::body(b).op == op_id::dequantize) {
        constexpr quant::qnode bq = quant::qnode_of<S>(b);
        q.bias_q = in[bq.value];
        q.bias_scale = in[bq.scale];
        q.bias_zp = in[bq.zp];
        q.bias_type = bq.type;
        q.bias_count = bq.count;
      } else {
        q.bias_f32 = in[S::input_of(S::body_node(b))];
      }
    }
    const X* xv = reinterpret_cast<const X*>(in[x.value]);
    const W* wv = reinterpret_cast<const W*>(in[w.value]);
    if constexpr (S::body(main_op).op == op_id::dense) {
      constexpr shape xs = S::body(S::body_arg(main_op, 0)).out, ws = S::body(S::body_arg(main_op, 1)).out;
      qdense<xs.elements() / ws[1], ws[0], ws[1]>(xv, wv, q, out);
    } else {
      constexpr conv_shape g = conv_geometry(S::body(S::body_arg(main_op, 0)).out, S::body(S::body_arg(main_op, 1)).out,
                                             S::body(main_op).out, *S::body(main_op).at);
      const qchannels<g.o> channels(q);
      const qout o = channels.view(q);
      if constexpr (g.groups == 1) {
        qconv_group<g>(xv, g.c, wv, o, out, g.o);
      } else if constexpr (g.groups == g.c && g.o == g.c) {
        qdepthwise<g>(xv, wv, o, out);
      } else {
        // Each group a convolution of its own, over its channels of every image.
        constexpr conv_shape one = group_shape(g);
        constexpr int ci = one.c, co = one.o, per_group = co * ci * g.kh * g.kw;
        for (int group = 0; group < g.groups; ++group)
          qconv_group<one>(xv + group * ci * g.h * g.w, g.c, wv + group * per_group, o.from(group * co),
                           out + group * co * g.oh * g.ow, g.o);
      }
    }
  }

  static void elementwise(const float* const* in, Y* out) {
    constexpr op_id op = S::body(main_op).op;
    const reference_kernels::qparams qy = qparams_at(in, y);
    const quant::clamp_bounds c = quant::output_bounds(y.type, qy.scale, qy.zp, act.lo, act.hi);
    constexpr auto operand = [](int k) { return quant::qnode_of<S>(S::body_arg(main_op, k)); };
    constexpr std::int64_t n = S::node.out.elements();
    if constexpr (op == op_id::matmul) {
      constexpr quant::qnode a = operand(0), b = operand(1);
      constexpr shape as = S::body(S::body_arg(main_op, 0)).out, bs = S::body(S::body_arg(main_op, 1)).out;
      constexpr std::int64_t m = as[as.rank - 2], k = as[as.rank - 1], cols = bs[bs.rank - 1];
      reference_kernels::qmatmul(in[a.value], {a.type, quant::scale_at(in, a), quant::zp_at(in, a)}, in[b.value],
                                 {b.type, quant::scale_at(in, b), quant::zp_at(in, b)}, bs.elements() != k * cols, out,
                                 {y.type, qy.scale, qy.zp, act.lo, act.hi}, as.elements() / (m * k), m, k, cols);
    } else if constexpr (op == op_id::add) {
      constexpr quant::qnode a = operand(0), b = operand(1);
      reference_kernels::qadd(reinterpret_cast<const Y*>(in[a.value]), qparams_at(in, a),
                              reinterpret_cast<const Y*>(in[b.value]), qparams_at(in, b), out, qy, n, c.lo, c.hi);
    } else if constexpr (op == op_id::concatenate) {
      constexpr int count = S::body(main_op).nargs;
      constexpr shape ys = S::body(main_op).out;
      constexpr int axis = normalize_axis(S::body(main_op).at->axis, ys.rank);
      const Y* src[static_cast<std::size_t>(count)];
      reference_kernels::qparams q[static_cast<std::size_t>(count)];
      std::int64_t lens[static_cast<std::size_t>(count)];
      for (int i = 0; i < count; ++i) {
        const quant::qnode part = quant::qnode_of<S>(S::body_arg(main_op, i));
        src[i] = reinterpret_cast<const Y*>(in[part.value]);
        q[i] = qparams_at(in, part);
        lens[i] = S::body(S::body_arg(main_op, i)).out[axis];
      }
      std::int64_t outer = 1;
      for (int i = 0; i < axis; ++i) outer *= ys[i];
      reference_kernels::qconcat(src, q, lens, count, out, qy, outer, n / outer / ys[axis]);
    } else {
      constexpr quant::qnode x = operand(0);
      const Y* xv = reinterpret_cast<const Y*>(in[x.value]);
      const reference_kernels::qparams qx = qparams_at(in, x);
      constexpr shape xs = S::body(S::body_arg(main_op, 0)).out, ys = S::body(main_op).out;
      if constexpr (op == op_id::global_avg_pool2d) {
        reference_kernels::qglobal_avg_pool2d(xv, qx, out, qy, xs[0] * xs[1], xs[2] * xs[3]);
      } else if constexpr (op == op_id::avg_pool2d) {
        reference_kernels::qavg_pool2d(xv, xs, qx, out, ys, qy, *S::body(main_op).at);
      } else {
        // A max pool (the maximum of the integers, then requantized: max commutes with the
        // monotonic map), a clamp or a reshape: the values, requantized, then clamped in integers.
        if constexpr (op == op_id::max_pool2d) {
          reference_kernels::qmax_pool2d(xv, xs, out, ys, *S::body(main_op).at);
          xv = out;
        }
        const std::int64_t len = n;
        reference_kernels::qconcat(&xv, &qx, &len, 1, out, qy, 1, 1);
        for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<Y>(out[i] < c.lo ? c.lo : out[i] > c.hi ? c.hi : out[i]);
      }
    }
  }
};

}  // namespace partita::detail::mcu
