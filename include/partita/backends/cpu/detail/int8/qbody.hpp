#pragma once
/// Reading a quantized composite's QDQ body at compile time (which nodes quantize and
/// dequantize, the activation, the bias) and its layer parameters at bind.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "partita/backends/cpu/detail/int8/qeltwise.hpp"
#include "partita/backends/cpu/detail/int8/qgemm.hpp"
#include "partita/backends/cpu/detail/int8/requantize.hpp"
#include "partita/backends/reference/quantize_kernels.hpp"
#include "partita/core/error.hpp"
#include "partita/ir/module.hpp"
#include "partita/ir/op_id.hpp"

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

/// A qnode's per-tensor scale and zero point, read from the kernel's inputs.
inline qparams qparams_at(const float* const* in, const qnode& q) { return {scale_at(in, q), zp_at(in, q)}; }

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

/// What `layer_params` converts and the params point at: weight zero points as int32, the
/// bias dequantized, and the weight scales when a batch norm is folded into them.
struct layer_storage {
  std::vector<std::int32_t> w_zp;
  std::vector<float> bias;
  std::vector<float> w_scale;
};

/// Folds the division by a constant and the batch norm after a layer (PyTorch's export of a
/// fused conv-bn: conv, then a division by a per-channel constant, then the batch norm) into
/// its weight scales and bias: with g = gamma / sqrt(var + eps), the layer's float result v
/// becomes (v / d - mean) · g + beta, i.e. a weight scale s_w · g / d and a bias
/// (b / d - mean) · g + beta. Computed in double at bind; a channel whose factor is 0 cannot
/// be expressed so and fails the bind.
template <class S>
void fold_batch_norm(const float* const* in, int channels, const float* w_scale, int w_count, layer_storage& keep) {
  constexpr int bn = S::find(op_id::batch_norm);
  constexpr int div = S::find(op_id::divide);
  const auto at = [&](int body, int k) { return in[S::input_of(S::body_node(S::body_arg(body, k)))]; };
  const float* d = div >= 0 ? at(div, 1) : nullptr;
  const std::int64_t d_count = div >= 0 ? S::body(S::body_arg(div, 1)).out.elements() : 1;
  const float *gamma = at(bn, 1), *beta = at(bn, 2), *mean = at(bn, 3), *var = at(bn, 4);
  const double eps = S::body(bn).at->epsilon;
  keep.bias.resize(static_cast<std::size_t>(channels), 0.f);
  keep.w_scale.resize(static_cast<std::size_t>(channels));
  for (int c = 0; c < channels; ++c) {
    const auto u = static_cast<std::size_t>(c);
    const double dc = d ? static_cast<double>(d[d_count == 1 ? 0 : c]) : 1.0;
    const double g = static_cast<double>(gamma[c]) / std::sqrt(static_cast<double>(var[c]) + eps);
    const double f = g / dc;
    if (!(f != 0.0) || !std::isfinite(f))
      throw error(concat("partita: bind: ", S::composite, ": the batch norm after the layer scales channel ",
                         std::to_string(c), " by ", std::to_string(f), ", which an integer layer cannot fold"));
    keep.w_scale[u] = static_cast<float>(static_cast<double>(w_scale[w_count == 1 ? 0 : c]) * f);
    keep.bias[u] = static_cast<float>((static_cast<double>(keep.bias[u]) / dc - static_cast<double>(mean[c])) * g +
                                      static_cast<double>(beta[c]));
  }
}

/// The parameters of a conv2d or dense layer with inputs `x` and `w`, result `y`, a bias at
/// body index `bias` (or -1), an optional batch norm after it (`fold_batch_norm`) and
/// `channels` outputs, read at bind.
template <class S>
qlayer_params layer_params(const float* const* in, const qnode& x, const qnode& w, const qnode& y, int bias,
                           int channels, const act_bounds& act, layer_storage& keep) {
  keep.w_zp.resize(static_cast<std::size_t>(w.count));
  for (int i = 0; i < w.count; ++i) keep.w_zp[static_cast<std::size_t>(i)] = zp_at(in, w, i);
  if (bias >= 0) read_bias<S>(in, bias, channels, keep.bias);
  const float* w_scale = in[w.scale];
  int w_count = w.count;
  if constexpr (S::find(op_id::batch_norm) >= 0) {
    fold_batch_norm<S>(in, channels, w_scale, w_count, keep);
    w_scale = keep.w_scale.data();
    w_count = channels;  // scales per channel now, and zero points with them
    keep.w_zp.resize(static_cast<std::size_t>(channels), keep.w_zp.front());
  }
  return qlayer_params{scale_at(in, x), zp_at(in, x), w_scale, keep.w_zp.data(), w_count, scale_at(in, y),
                       zp_at(in, y), keep.bias.empty() ? nullptr : keep.bias.data(), act.lo, act.hi};
}

}  // namespace partita::detail::cpu::int8
