#pragma once
/// The epilogue a cpu GEMM applies while storing: bias, scale, residual, activation.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "partita/backends/cpu/detail/simd.hpp"
#include "partita/backends/cpu/detail/simd_math.hpp"
#include "partita/ir/op_id.hpp"

namespace partita::detail::cpu {

/// The activation a fused kernel applies last.
enum class activation : std::uint8_t { none, relu, clip, sigmoid, tanh };

constexpr activation activation_of(op_id op) {
  switch (op) {
    case op_id::relu: return activation::relu;
    case op_id::clip: return activation::clip;
    case op_id::sigmoid: return activation::sigmoid;
    case op_id::tanh: return activation::tanh;
    default: return activation::none;
  }
}

/// What a GEMM tile does before its store: `act(acc + bias + residual)`. The pointers are
/// already offset to the tile; a row bias has one value per tile row (conv: per output
/// channel), a column bias one per column (dense: per unit).
struct epilogue {
  const float* bias = nullptr;
  bool bias_per_row = false;
  const float* residual = nullptr;
  std::ptrdiff_t ld_residual = 0;
  activation act = activation::none;
  float lo = 0.f, hi = 0.f;
};

inline simd::vec activate(const simd::vec& x, activation a, float lo, float hi) {
  switch (a) {
    case activation::none: return x;
    case activation::relu: return simd::at_least(x, simd::splat(0.f));
    case activation::clip: return simd::at_most(simd::at_least(x, simd::splat(lo)), simd::splat(hi));
    case activation::sigmoid: return simd::splat(1.f) / (simd::splat(1.f) + simd::exp(-x));
    case activation::tanh: return simd::tanh(x);
  }
  return x;
}

/// The scalar form of `activate`, for tails. Comparisons with NaN are false: written so that a
/// NaN input comes out as NaN.
inline float activate(float x, activation a, float lo, float hi) {
  switch (a) {
    case activation::none: return x;
    case activation::relu: return x < 0.f ? 0.f : x;
    case activation::clip: return x < lo ? lo : (x > hi ? hi : x);
    case activation::sigmoid: return 1.f / (1.f + std::exp(-x));
    case activation::tanh: return std::tanh(x);
  }
  return x;
}

}  // namespace partita::detail::cpu
