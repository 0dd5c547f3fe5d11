#pragma once
/// The epilogue a cpu GEMM applies while storing: bias, scale, residual, activation.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "partita/backends/cpu/detail/simd/simd.hpp"
#include "partita/backends/cpu/detail/simd/simd_math.hpp"
#include "partita/ir/attrs.hpp"
#include "partita/ir/op_id.hpp"

namespace partita::detail::cpu {

/// The activation a fused kernel applies last.
enum class activation : std::uint8_t {
  none, relu, clip, sigmoid, tanh,
  gelu, gelu_tanh, silu, hardswish, hardsigmoid, leaky_relu
};

constexpr activation activation_of(op_id op) {
  switch (op) {
    case op_id::relu: return activation::relu;
    case op_id::clip: return activation::clip;
    case op_id::sigmoid: return activation::sigmoid;
    case op_id::tanh: return activation::tanh;
    case op_id::gelu: return activation::gelu;
    case op_id::gelu_tanh: return activation::gelu_tanh;
    case op_id::silu: return activation::silu;
    case op_id::hardswish: return activation::hardswish;
    case op_id::hardsigmoid: return activation::hardsigmoid;
    case op_id::leaky_relu: return activation::leaky_relu;
    default: return activation::none;
  }
}

/// The two numbers `activate` takes for op `op` with attributes `a`: clip's bounds,
/// leaky_relu's slope (lo), hardsigmoid's alpha (lo) and beta (hi); zeros for the others.
struct activation_params {
  float lo = 0.f, hi = 0.f;
};
constexpr activation_params params_of(op_id op, const attrs& a) {
  switch (op) {
    case op_id::clip: return {a.lo, a.hi};
    case op_id::leaky_relu: return {a.alpha, 0.f};
    case op_id::hardsigmoid: return {a.alpha, a.beta};
    default: return {};
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

/// Activation A on a vector, NaN where x is NaN, and at ±inf what the reference gives (gelu,
/// silu and hardswish of -inf are NaN: -inf · 0). Inlined: the unary kernels know A at compile
/// time.
template <activation A>
inline simd::vec apply(const simd::vec& x, float lo, float hi) {
  if constexpr (A == activation::relu) return simd::at_least(x, simd::splat(0.f));
  else if constexpr (A == activation::clip) return simd::at_most(simd::at_least(x, simd::splat(lo)), simd::splat(hi));
  else if constexpr (A == activation::sigmoid) return simd::sigmoid(x);
  else if constexpr (A == activation::tanh) return simd::tanh(x);
  else if constexpr (A == activation::gelu) return simd::gelu(x);
  else if constexpr (A == activation::gelu_tanh) return simd::gelu_tanh(x);
  else if constexpr (A == activation::silu) return simd::silu(x);
  else if constexpr (A == activation::hardswish)
    return x * simd::at_most(simd::at_least(x + simd::splat(3.f), simd::splat(0.f)), simd::splat(6.f)) *
           simd::splat(1.f / 6.f);
  else if constexpr (A == activation::hardsigmoid)
    return simd::at_least(simd::at_most(simd::fma(x, simd::splat(lo), simd::splat(hi)), simd::splat(1.f)),
                          simd::splat(0.f));
  else if constexpr (A == activation::leaky_relu) return xsimd::select(x >= simd::splat(0.f), x, x * simd::splat(lo));
  else return x;
}

namespace activation_detail {
// The transcendental activations out of line: a GEMM epilogue picks one at run time at every
// accumulator of a tile, and inlined there each would grow every micro-kernel severalfold.
[[gnu::noinline]] inline simd::vec transcendental(simd::vec x, activation a) {
  switch (a) {
    case activation::sigmoid: return apply<activation::sigmoid>(x, 0.f, 0.f);
    case activation::tanh: return apply<activation::tanh>(x, 0.f, 0.f);
    case activation::gelu: return apply<activation::gelu>(x, 0.f, 0.f);
    case activation::gelu_tanh: return apply<activation::gelu_tanh>(x, 0.f, 0.f);
    case activation::silu: return apply<activation::silu>(x, 0.f, 0.f);
    default: return x;
  }
}
}  // namespace activation_detail

/// Whether `a` is computed out of line (exp, erf, ...); the others are a few instructions.
constexpr bool is_transcendental(activation a) {
  return a == activation::sigmoid || a == activation::tanh || a == activation::gelu || a == activation::gelu_tanh ||
         a == activation::silu;
}

namespace activation_detail {
template <activation A>
inline void apply_rows(float* c, std::ptrdiff_t ldc, int rows, int vecs) {
  for (int m = 0; m < rows; ++m)
    for (int v = 0; v < vecs; ++v) {
      float* p = c + m * ldc + v * simd::width;
      simd::store(p, apply<A>(simd::load(p), 0.f, 0.f));
    }
}
}  // namespace activation_detail

/// Transcendental activation `a` in place on `rows` rows of `vecs` vectors at `c` (row stride
/// `ldc`). A GEMM tile stores its accumulators, then makes one call: called per accumulator,
/// each call had the tile's other accumulators saved around it (every vector register is
/// caller-saved) and chose `a` again (a transformer's dense + bias + GELU step is where it
/// shows).
[[gnu::noinline]] inline void transcendental_rows(float* c, std::ptrdiff_t ldc, int rows, int vecs, activation a) {
  switch (a) {
    case activation::sigmoid: return activation_detail::apply_rows<activation::sigmoid>(c, ldc, rows, vecs);
    case activation::tanh: return activation_detail::apply_rows<activation::tanh>(c, ldc, rows, vecs);
    case activation::gelu: return activation_detail::apply_rows<activation::gelu>(c, ldc, rows, vecs);
    case activation::gelu_tanh: return activation_detail::apply_rows<activation::gelu_tanh>(c, ldc, rows, vecs);
    case activation::silu: return activation_detail::apply_rows<activation::silu>(c, ldc, rows, vecs);
    default: return;
  }
}

/// `apply<a>(x, lo, hi)` for an activation chosen at run time.
inline simd::vec activate(const simd::vec& x, activation a, float lo, float hi) {
  switch (a) {
    case activation::none: return x;
    case activation::relu: return apply<activation::relu>(x, lo, hi);
    case activation::clip: return apply<activation::clip>(x, lo, hi);
    case activation::hardswish: return apply<activation::hardswish>(x, lo, hi);
    case activation::hardsigmoid: return apply<activation::hardsigmoid>(x, lo, hi);
    case activation::leaky_relu: return apply<activation::leaky_relu>(x, lo, hi);
    default: return activation_detail::transcendental(x, a);
  }
}

/// The scalar form of `activate`, for tails, in double as the reference computes it.
/// Comparisons with NaN are false: written so that a NaN input comes out as NaN.
inline float activate(float x, activation a, float lo, float hi) {
  const double d = x;
  switch (a) {
    case activation::none: return x;
    case activation::relu: return x < 0.f ? 0.f : x;
    case activation::clip: return x < lo ? lo : (x > hi ? hi : x);
    case activation::sigmoid: return static_cast<float>(1.0 / (1.0 + std::exp(-d)));
    case activation::tanh: return std::tanh(x);
    case activation::gelu: return static_cast<float>(0.5 * d * (1.0 + std::erf(d * 0.70710678118654752440)));
    case activation::gelu_tanh:
      return static_cast<float>(0.5 * d * (1.0 + std::tanh(0.79788456080286535588 * (d + 0.044715 * d * d * d))));
    case activation::silu: return static_cast<float>(d / (1.0 + std::exp(-d)));
    case activation::hardswish: {
      const double r = d + 3.0 < 0.0 ? 0.0 : (d + 3.0 > 6.0 ? 6.0 : d + 3.0);
      return static_cast<float>(d * r / 6.0);
    }
    case activation::hardsigmoid: {
      const double v = static_cast<double>(lo) * d + static_cast<double>(hi);
      return static_cast<float>(v > 1.0 ? 1.0 : (v < 0.0 ? 0.0 : v));
    }
    case activation::leaky_relu: return x >= 0.f ? x : static_cast<float>(static_cast<double>(lo) * d);
  }
  return x;
}

}  // namespace partita::detail::cpu
