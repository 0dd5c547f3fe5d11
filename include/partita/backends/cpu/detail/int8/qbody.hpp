#pragma once
/// A quantized composite's layer parameters, read at bind for the cpu backend's integer kernels
/// (the body's reading at compile time is backend/detail/qdq_body.hpp).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "partita/backend/detail/qdq_body.hpp"
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

// The body's reading is shared with every backend's integer kernels.
using partita::detail::quant::act_bounds;
using partita::detail::quant::act_bounds_of;
using partita::detail::quant::bias_of;
using partita::detail::quant::qnode;
using partita::detail::quant::qnode_of;
using partita::detail::quant::scale_at;
using partita::detail::quant::zp_at;

/// A qnode's per-tensor scale and zero point, read from the kernel's inputs.
inline qparams qparams_at(const float* const* in, const qnode& q) { return {scale_at(in, q), zp_at(in, q)}; }

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
