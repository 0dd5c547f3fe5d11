#pragma once
/// The kernels of the cpu backend's quantized composites (quantized_patterns.hpp): each reads
/// its QDQ body at compile time and runs the integer kernel it describes.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "partita/backends/cpu/detail/int8/qconv.hpp"
#include "partita/backends/cpu/detail/state.hpp"
#include "partita/backends/reference/quantize_kernels.hpp"
#include "partita/runtime/plan_records.hpp"

namespace partita::detail::cpu::int8 {

/// Whether step S runs one of the cpu backend's quantized composites (named `cpu.q...`).
template <class S>
constexpr bool quantized_composite() {
  if constexpr (S::op != op_id::call) {
    return false;
  } else {
    return S::composite.starts_with("cpu.q");
  }
}

/// A quantize or dequantize node of a composite's body, as its kernel reads it: the kernel
/// inputs of its quantized tensor (a dequantize's argument; -1 for a quantize, whose value is
/// computed in the body), scale and zero point; the integer dtype; the number of scales.
struct qnode {
  int value = -1, scale = -1, zp = -1;
  dtype type = dtype::u8;
  int count = 1;
};

/// Body node `b` of step S (a quantize or dequantize) as a `qnode`.
template <class S>
constexpr qnode qnode_of(int b) {
  const graph_node& n = S::body(b);
  qnode r;
  const int arg = S::body_arg(b, 0);
  r.value = n.op == op_id::dequantize ? S::input_of(S::body_node(arg)) : -1;
  r.scale = S::input_of(S::body_node(S::body_arg(b, 1)));
  r.zp = S::input_of(S::body_node(S::body_arg(b, 2)));
  r.type = n.op == op_id::quantize ? n.type : S::body(arg).type;
  r.count = static_cast<int>(S::body(S::body_arg(b, 1)).out.elements());
  return r;
}

/// Scale `i` and zero point `i` of a `qnode`, read from the kernel's inputs (at bind for bound
/// parameters).
inline float scale_at(const float* const* in, const qnode& q, int i = 0) { return in[q.scale][i]; }
inline std::int32_t zp_at(const float* const* in, const qnode& q, int i = 0) {
  return static_cast<std::int32_t>(reference_kernels::load_integer(in[q.zp], q.type, i));
}

/// The float bounds of the relu or clip a body applies before its quantization (none: ±inf).
struct act_bounds {
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
};
template <class S>
constexpr act_bounds act_bounds_of() {
  act_bounds a;
  for (int i = 0; i < S::body_size(); ++i) {
    if (S::body(i).op == op_id::relu) a.lo = 0.f;
    if (S::body(i).op == op_id::clip) {
      a.lo = S::body(i).at->lo;
      a.hi = S::body(i).at->hi;
    }
  }
  return a;
}

/// The body index of the node a bias_add or add feeds to gemm node `g` as its bias (a
/// dequantize or an f32 weight), or -1.
template <class S>
constexpr int bias_of(int g) {
  for (int i = 0; i < S::body_size(); ++i) {
    const op_id op = S::body(i).op;
    if (op != op_id::bias_add && op != op_id::add) continue;
    if (S::body_arg(i, 0) == g) return S::body_arg(i, 1);
    if (S::body_arg(i, 1) == g) return S::body_arg(i, 0);
  }
  return -1;
}

/// A bias's float values (dequantized when it is a dequantize of an i32 weight): `channels`
/// values into `to`.
template <class S>
void read_bias(const float* const* in, int b, int channels, std::vector<float>& to) {
  to.assign(static_cast<std::size_t>(channels), 0.f);
  if (S::body(b).op == op_id::dequantize) {
    const qnode q = qnode_of<S>(b);
    for (int c = 0; c < channels; ++c) {
      const int i = q.count == 1 ? 0 : c;
      to[static_cast<std::size_t>(c)] = reference_kernels::dequantize_value(
          reference_kernels::load_integer(in[q.value], q.type, c), scale_at(in, q, i), zp_at(in, q, i));
    }
  } else {
    const float* v = in[S::input_of(S::body_node(b))];
    for (int c = 0; c < channels; ++c) to[static_cast<std::size_t>(c)] = v[c];
  }
}

/// Bytes as the floats `state::reserve` and `need_scratch` count.
constexpr std::size_t floats_for(std::size_t bytes) { return (bytes + sizeof(float) - 1) / sizeof(float); }

/// `cpu.qconv2d_bias_act`: quantize(act(conv2d(dequantize(x), dequantize(w)) + bias)).
template <class S>
struct qconv_kernel {
  static constexpr int conv = S::find(op_id::conv2d);
  static constexpr int root = S::body_size() - 1;
  static constexpr qnode x = qnode_of<S>(S::body_arg(conv, 0));
  static constexpr qnode w = qnode_of<S>(S::body_arg(conv, 1));
  static constexpr qnode y = qnode_of<S>(root);
  static constexpr int bias = bias_of<S>(conv);
  static constexpr act_bounds act = act_bounds_of<S>();
  static constexpr qconv_geometry geo = [] {
    const shape xs = S::body(S::body_arg(conv, 0)).out, ws = S::body(S::body_arg(conv, 1)).out, ys = S::body(conv).out;
    const attrs& a = *S::body(conv).at;
    return qconv_geometry{static_cast<int>(xs[0]), static_cast<int>(xs[1]), static_cast<int>(xs[2]),
                          static_cast<int>(xs[3]), static_cast<int>(ws[0]), static_cast<int>(ws[2]),
                          static_cast<int>(ws[3]), static_cast<int>(ys[2]), static_cast<int>(ys[3]),
                          a.stride[0], a.stride[1], a.padding[0], a.padding[1], a.dilation[0], a.dilation[1],
                          a.groups, x.type, w.type, y.type};
  }();
  static constexpr std::size_t packed_bytes = qconv_packed_bytes(geo);

  static void prepare(state& st, const float* const* in, int step) {
    float* packed = st.reserve(step, floats_for(packed_bytes));
    st.need_scratch(0, floats_for(qconv_scratch_bytes(geo)));
    if (!in[w.value]) return;  // planned before bind: the weights come later
    std::vector<std::int32_t> w_zp(static_cast<std::size_t>(w.count));
    for (int i = 0; i < w.count; ++i) w_zp[static_cast<std::size_t>(i)] = zp_at(in, w, i);
    std::vector<float> b;
    if constexpr (bias >= 0) read_bias<S>(in, bias, geo.o, b);
    const qconv_params p{scale_at(in, x), zp_at(in, x), in[w.scale], w_zp.data(), w.count, scale_at(in, y),
                         zp_at(in, y), bias >= 0 ? b.data() : nullptr, act.lo, act.hi};
    qconv_prepare(geo, in[w.value], p, packed);
  }

  static void run(state& st, const float* const* in, float* out, int step) {
    qconv_run(st, geo, st.packed(step), in[x.value], out);
  }

  static constexpr kernel_note note() {
    return {qconv_is_depthwise(geo) ? "qconv_depthwise" : qconv_is_pointwise(geo) ? "qconv_pointwise" : "qconv_im2col",
            "u8/s8 products on 16-bit lanes, int32 sums, requantized in float"};
  }
};

/// The kernel of quantized composite step S.
template <class S>
struct quantized_kernel : qconv_kernel<S> {
  static_assert(S::composite == "cpu.qconv2d_bias_act", "partita: no integer kernel for this quantized composite (S)");
};

}  // namespace partita::detail::cpu::int8
