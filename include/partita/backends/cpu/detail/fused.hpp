#pragma once
/// What a fused cpu composite computes, read off its body at compile time.
// What a fused cpu composite computes, read off its body at compile time: one dense, conv2d or
// matmul, then optionally a bias, a batch norm (folded into the weights at bind), a residual add
// and an activation (x · sigmoid(x) counting as SiLU), in that order; a conv2d's chain may end
// in a max or average pooling.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "partita/backends/cpu/detail/gemm/epilogue.hpp"
#include "partita/ir/layout.hpp"
#include "partita/ir/module.hpp"

namespace partita::detail::cpu {

/// Kernel input slots (-1: absent) and epilogue of a GEMM step, fused or not.
struct gemm_step {
  op_id main = op_id::dense;
  int main_node = -1;  // body index (fused) of the dense / conv2d
  int x = 0, w = 1;
  int bias = -1;
  int gamma = -1, beta = -1, mean = -1, var = -1;
  float epsilon = 0.f;
  int residual = -1;
  activation act = activation::none;
  float lo = 0.f, hi = 0.f;
  int pool = -1;  // body index of a max or average pooling that ends the chain
  bool ok = true;  // false: the body holds something else (not a cpu composite)
};

/// The layout the plan gave step `S`'s output and its argument `k` (`step_ref::out_layout`,
/// `in_layout`); planar for a step type that does not say.
template <class S>
constexpr tensor_layout out_layout_of() {
  if constexpr (requires { S::out_layout; }) return S::out_layout;
  else return tensor_layout::planar;
}
template <class S>
constexpr tensor_layout in_layout_of(int k) {
  if constexpr (requires { S::in_layout(k); }) return S::in_layout(k);
  else return tensor_layout::planar;
}

/// The kernel input that body node `i` of fused step `S` arrives in: parameters first, then
/// the weights bound inside, in body order.
template <class S>
constexpr int input_slot(int i) {
  const graph_node& n = S::body(i);
  if (n.op == op_id::param) return n.index;
  if (n.op != op_id::weight) return -1;
  int slot = S::num_params;
  for (int j = 0; j < i; ++j) slot += S::body(j).op == op_id::weight ? 1 : 0;
  return slot;
}

/// Body nodes [first, last] of fused step S: one dense, conv2d, conv_transpose2d or matmul and
/// its epilogue. A range that is not the whole body is one stage of a composite of several
/// (conv_expand_depthwise.hpp): its main op may read a value computed before `first` (input
/// slot -1), and it ends at `last`, whatever reads that value later.
template <class S>
constexpr gemm_step analyse_fused(int first, int last) {
  gemm_step g;
  int chain = -1;  // body index of the value the epilogue is applied to so far
  for (int i = first; i <= last; ++i) {
    const graph_node& n = S::body(i);
    if (g.pool >= 0 && n.op != op_id::param && n.op != op_id::weight) g.ok = false;  // the pooling ends it
    switch (n.op) {
      case op_id::param:
      case op_id::weight: break;
      case op_id::dense:
      case op_id::conv2d:
      case op_id::conv_transpose2d:
      case op_id::matmul:
        if (chain != -1) g.ok = false;
        g.main = n.op;
        g.main_node = i;
        g.x = input_slot<S>(S::body_arg(i, 0));
        g.w = input_slot<S>(S::body_arg(i, 1));
        // dense and the convolutions pack a bound weight; matmul's B may be any value.
        if (n.op != op_id::matmul && S::body(S::body_arg(i, 1)).op != op_id::weight) g.ok = false;
        chain = i;
        break;
      case op_id::bias_add:
        if (S::body_arg(i, 0) != chain || g.bias != -1 || g.gamma != -1 || g.residual != -1 || g.act != activation::none)
          g.ok = false;
        g.bias = input_slot<S>(S::body_arg(i, 1));
        chain = i;
        break;
      case op_id::batch_norm:
        if (S::body_arg(i, 0) != chain || g.gamma != -1 || g.residual != -1 || g.act != activation::none) g.ok = false;
        g.gamma = input_slot<S>(S::body_arg(i, 1));
        g.beta = input_slot<S>(S::body_arg(i, 2));
        g.mean = input_slot<S>(S::body_arg(i, 3));
        g.var = input_slot<S>(S::body_arg(i, 4));
        g.epsilon = n.at->epsilon;
        chain = i;
        break;
      case op_id::add: {
        const int a = S::body_arg(i, 0), b = S::body_arg(i, 1);
        if ((a != chain && b != chain) || g.residual != -1 || g.act != activation::none) g.ok = false;
        const int other = a == chain ? b : a;
        g.residual = input_slot<S>(other);
        if (g.residual < 0 || !(S::body(other).out == n.out)) g.ok = false;
        chain = i;
        break;
      }
      case op_id::relu:
      case op_id::clip:
      case op_id::sigmoid:
      case op_id::tanh:
      case op_id::gelu:
      case op_id::gelu_tanh:
      case op_id::silu:
      case op_id::hardswish:
      case op_id::hardsigmoid:
      case op_id::leaky_relu: {
        if (S::body_arg(i, 0) != chain || g.act != activation::none) g.ok = false;
        g.act = activation_of(n.op);
        const activation_params p = params_of(n.op, *n.at);
        g.lo = p.lo;
        g.hi = p.hi;
        chain = i;
        break;
      }
      case op_id::multiply: {
        // x · sigmoid(x), the SiLU that exporters spell out: the sigmoid already read the chain.
        const int a = S::body_arg(i, 0), b = S::body_arg(i, 1);
        const int sig = a == chain ? a : b, other = a == chain ? b : a;
        if (sig != chain || g.act != activation::sigmoid || S::body(sig).op != op_id::sigmoid ||
            S::body_arg(sig, 0) != other)
          g.ok = false;
        g.act = activation::silu;
        chain = i;
        break;
      }
      case op_id::max_pool2d:
      case op_id::avg_pool2d:
        if (S::body_arg(i, 0) != chain || g.main != op_id::conv2d) g.ok = false;
        g.pool = i;
        chain = i;
        break;
      default: g.ok = false; break;
    }
  }
  if (g.main_node < 0 || chain != last) g.ok = false;
  return g;
}

/// The whole body of fused step S as one main op and its epilogue.
template <class S>
constexpr gemm_step analyse_fused() {
  return analyse_fused<S>(0, S::body_size() - 1);
}

/// Folds a stage's batch norm into its weights: w' = w · s and b' = (b - mean) · s + beta per
/// output channel, s = gamma / sqrt(var + eps). `w` (channels · per floats, OIHW or [units][k])
/// is scaled in place; `bias` receives the channels' folded biases.
inline void fold_batch_norm(const gemm_step& info, const float* const* in, int channels, std::size_t per, float* w,
                            float* bias) {
  for (int o = 0; o < channels; ++o) {
    const double s = static_cast<double>(in[info.gamma][o]) /
                     std::sqrt(static_cast<double>(in[info.var][o]) + static_cast<double>(info.epsilon));
    for (std::size_t i = 0; i < per; ++i) {
      const std::size_t at = static_cast<std::size_t>(o) * per + i;
      w[at] = static_cast<float>(w[at] * s);
    }
    const double b = info.bias >= 0 ? in[info.bias][o] : 0.0;
    bias[o] = static_cast<float>((b - in[info.mean][o]) * s + in[info.beta][o]);
  }
}

/// A stage's weights (`n` floats) and per-channel bias as its kernel runs them: its bias, or
/// its batch norm folded in (the stages of conv_expand_depthwise.hpp and
/// conv_depthwise_project.hpp).
inline void fold_stage(const gemm_step& info, const float* const* in, std::size_t n, int channels, float* w,
                       float* bias) {
  std::copy(in[info.w], in[info.w] + n, w);
  if (info.gamma >= 0) fold_batch_norm(info, in, channels, n / static_cast<std::size_t>(channels), w, bias);
  else std::copy(in[info.bias], in[info.bias] + channels, bias);
}

/// True for a composite step whose body holds an `o` node.
template <class S>
constexpr bool body_has(op_id o) {
  if constexpr (S::op != op_id::call) {
    return false;
  } else {
    for (int i = 0; i < S::body_size(); ++i)
      if (S::body(i).op == o) return true;
    return false;
  }
}

/// What step S's kernel computes: a fused composite's body analysed, else its own op alone.
template <class S>
constexpr gemm_step analyse() {
  if constexpr (S::op == op_id::call) {
    return analyse_fused<S>();
  } else {
    gemm_step g;
    g.main = S::op;
    return g;
  }
}

/// The op step S's kernel is built around: a fused composite's dense, conv2d, conv_transpose2d
/// or matmul, else the step's own op.
template <class S>
constexpr op_id main_op() {
  return analyse<S>().main;
}

}  // namespace partita::detail::cpu
