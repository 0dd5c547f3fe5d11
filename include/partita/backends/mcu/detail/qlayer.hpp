#pragma once
/// A quantized layer's scales, zero points and bias as the mcu backend's int8 kernels read them.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "partita/backend/detail/requantize.hpp"
#include "partita/backends/reference/quantize_kernels.hpp"
#include "partita/core/dtype.hpp"

#if defined(__arm__) && defined(__ARM_FP) && (__ARM_FP & 4) && !defined(__aarch64__)
#define PARTITA_MCU_VCVTR 1
#else
#define PARTITA_MCU_VCVTR 0
#endif

namespace partita::detail::mcu {

/// The most values one output of an int8 convolution or dense layer sums: every sum stays exact
/// in int32 (at most 2 · 255² per pair of values).
inline constexpr std::int64_t max_depth = 16384;

/// A step's requantization (`quant::requant`, bounds relative to the output's zero point as
/// floats) with the same bounds as integers, for cores that round in the conversion.
struct qbounds : quant::requant {
  std::int32_t lo_i = 0, hi_i = 0;
};
inline qbounds bounds_of(const quant::requant& r) {
  qbounds b;
  static_cast<quant::requant&>(b) = r;
  b.hi_i = static_cast<std::int32_t>(r.hi);
  // Bounds that cross (a clip narrower than one step of the output) give hi, as the rule's
  // min(max(v, lo), hi) does.
  b.lo_i = r.lo > r.hi ? b.hi_i : static_cast<std::int32_t>(r.lo);
  return b;
}

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
  qbounds r{};
  const float* bias_f32 = nullptr;      // an f32 bias, or null
  const void* bias_q = nullptr;         // a bias dequantized with the next two, or null
  const float* bias_scale = nullptr;
  const void* bias_zp = nullptr;
  dtype bias_type = dtype::i32;         // its integer dtype (i32 as exporters write it, or 8-bit)
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
    return reference_kernels::dequantize_value(reference_kernels::load_integer(bias_q, bias_type, o), bias_scale[i],
                                               reference_kernels::load_integer(bias_zp, bias_type, i));
  }

  /// Output channel `o`'s multiplier and integer bias.
  void channel(int o, float& m, std::int32_t& b) const {
    const float s = w_scale[w_count == 1 ? 0 : o];
    m = quant::multiplier(x_scale, s, y_scale);
    b = bias_f32 || bias_q ? quant::integer_bias_float(bias(o), x_scale, s) : 0;
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
  qbounds r;

  /// The same from output channel `o` on (a group's channels).
  qout from(int o) const { return {m + o, bias + o, zw + o, zx, r}; }
};

/// The per-channel values of a layer of O output channels, on the stack of its run.
template <int O>
struct qchannels {
  float m[static_cast<std::size_t>(O)];
  std::int32_t bias[static_cast<std::size_t>(O)], zw[static_cast<std::size_t>(O)];

  explicit qchannels(const qlayer& q) {
    for (int o = 0; o < O; ++o) {
      q.channel(o, m[o], bias[o]);
      zw[o] = q.w_zero(o);
    }
  }
  qout view(const qlayer& q) const { return {m, bias, zw, q.x_zp, q.r}; }
};

/// `acc` requantized by the rule and stored as T (the clamp keeps it in T's range). On an ARMv7
/// core with a single-precision FPU, VCVTR rounds to nearest even as it converts (the default
/// rounding mode) and saturates, and the clamp follows in integers: the same q, since the bounds
/// are integers and rounding commutes with clamping to them. Elsewhere `requantize_small`.
template <class T>
inline T quantized_out(std::int32_t acc, float m, const qbounds& r) {
#if PARTITA_MCU_VCVTR
  const float v = static_cast<float>(acc) * m;
  float rounded;
  asm("vcvtr.s32.f32 %0, %1" : "=t"(rounded) : "t"(v));
  std::int32_t i;
  std::memcpy(&i, &rounded, sizeof i);
  i = i < r.lo_i ? r.lo_i : (i > r.hi_i ? r.hi_i : i);
  return static_cast<T>(i + r.zp);
#else
  return static_cast<T>(quant::requantize_small(acc, m, r));
#endif
}

}  // namespace partita::detail::mcu
