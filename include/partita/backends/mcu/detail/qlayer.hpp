#pragma once
/// A quantized layer's scales, zero points and bias as the mcu backend's int8 kernels read them.
#include <cstdint>

#include "partita/backend/detail/requantize.hpp"
#include "partita/backends/reference/quantize_kernels.hpp"
#include "partita/core/dtype.hpp"

namespace partita::detail::mcu {

/// What an int8 convolution or dense layer reads besides its operands, all of it where it lies
/// (the weights' scales and zero points and the bias in flash, next to the weights): the input's
/// zero point and scale, the weights' scales and zero points (one, or one per output channel),
/// the output's requantization, and the bias, f32 or dequantized from i32 (or none). The kernels
/// derive each channel's multiplier and integer bias from these once per run, by the rule of
/// backend/detail/requantize.hpp, so that they equal the cpu backend's, which derives them at
/// bind.
struct qlayer {
  float x_scale = 1.f;
  std::int32_t x_zp = 0;
  const float* w_scale = nullptr;
  const void* w_zp = nullptr;
  dtype w_type = dtype::i8;
  int w_count = 1;
  float y_scale = 1.f;
  quant::requant r{};
  const float* bias_f32 = nullptr;      // an f32 bias, or null
  const void* bias_q = nullptr;         // an i32 bias dequantized with the next two, or null
  const float* bias_scale = nullptr;
  const void* bias_zp = nullptr;
  int bias_count = 1;

  /// The zero point of output channel `o`'s weights.
  std::int32_t w_zero(int o) const {
    return static_cast<std::int32_t>(reference_kernels::load_integer(w_zp, w_type, w_count == 1 ? 0 : o));
  }

  /// Output channel `o`'s bias in float (0 without one), as the cpu backend reads it at bind.
  float bias(int o) const {
    if (bias_f32) return bias_f32[o];
    if (!bias_q) return 0.f;
    const int i = bias_count == 1 ? 0 : o;
    return reference_kernels::dequantize_value(reference_kernels::load_integer(bias_q, dtype::i32, o), bias_scale[i],
                                               reference_kernels::load_integer(bias_zp, dtype::i32, i));
  }

  /// Output channel `o`'s multiplier and integer bias.
  void channel(int o, float& m, std::int32_t& b) const {
    const float s = w_scale[w_count == 1 ? 0 : o];
    m = quant::multiplier(x_scale, s, y_scale);
    b = bias_f32 || bias_q ? quant::integer_bias(bias(o), x_scale, s) : 0;
  }
};

/// What the int8 convolutions read per output channel, derived once per run (`qchannels`): the
/// multiplier, the integer bias and the weights' zero point; and the input's zero point and the
/// output's requantization.
struct qout {
  const float* m;
  const std::int32_t* bias;
  const std::int32_t* zw;
  std::int32_t zx;
  quant::requant r;

  /// The same from output channel `o` on (a group's channels).
  qout from(int o) const { return {m + o, bias + o, zw + o, zx, r}; }
};

/// The per-channel values of a layer of O output channels, on the stack of its run.
template <int O>
struct qchannels {
  float m[O];
  std::int32_t bias[O], zw[O];

  explicit qchannels(const qlayer& q) {
    for (int o = 0; o < O; ++o) {
      q.channel(o, m[o], bias[o]);
      zw[o] = q.w_zero(o);
    }
  }
  qout view(const qlayer& q) const { return {m, bias, zw, q.x_zp, q.r}; }
};

/// `v` requantized by the rule and stored as T (the clamp keeps it in T's range).
template <class T>
inline T quantized_out(std::int32_t acc, float m, const quant::requant& r) {
  return static_cast<T>(quant::requantize_small(acc, m, r));
}

}  // namespace partita::detail::mcu
