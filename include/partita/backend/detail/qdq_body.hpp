#pragma once
/// Reading a quantized composite's QDQ body at compile time: which of the kernel's inputs hold
/// each quantized tensor, its scales and zero points; the activation; the bias. What every
/// backend's integer kernels for the patterns of pattern/qdq.hpp start from.
#include <cstdint>
#include <limits>

#include "partita/core/dtype.hpp"
#include "partita/ir/module.hpp"
#include "partita/ir/op_id.hpp"

namespace partita::detail::quant {

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
  return static_cast<std::int32_t>(load_integer(in[q.zp], q.type, i));
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

}  // namespace partita::detail::quant
