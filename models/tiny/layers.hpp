#pragma once
// The layers the tiny models are built from, with their batch norms folded into biases, as the
// models are deployed (TensorFlow Lite's converter folds them the same way). Each model is
// written once over a layer set: `f32_layers`, float throughout, or `int8_layers`, the same
// network quantized as TensorFlow Lite's int8 scheme has it (i8 activations quantized per
// tensor, i8 weights per output channel with zero points 0), in QDQ form, which the mcu and cpu
// backends run as integer kernels and the reference evaluates as written.
#include <cstdint>

#include <partita/embedded.hpp>

namespace models::tiny {
using namespace partita;

/// Float layers.
struct f32_layers {
  /// The model's input, as the layers take it.
  template <class X>
  using in = X;
  /// A KH×KW convolution of `Out` channels with attributes A and a bias; and then a ReLU.
  template <class X, fixed_string P, std::int64_t Out, std::int64_t In, int KH, int KW, conv2d_attrs A>
  using conv = bias_add<conv2d<X, weight<cat(P, ".w"), f32, Out, In, KH, KW>, A>, weight<cat(P, ".b"), f32, Out>>;
  template <class X, fixed_string P, std::int64_t Out, std::int64_t In, int KH, int KW, conv2d_attrs A>
  using conv_relu = relu<conv<X, P, Out, In, KH, KW, A>>;
  /// A 3×3 depthwise convolution of C channels with stride S, a bias and a ReLU.
  template <class X, fixed_string P, std::int64_t C, int S>
  using depthwise_relu = relu<bias_add<conv2d<X, weight<cat(P, ".w"), f32, C, 1, 3, 3>,
                                              {.stride = {S, S}, .padding = {1, 1}, .groups = static_cast<int>(C)}>,
                                       weight<cat(P, ".b"), f32, C>>>;
  /// A fully connected layer of `Out` units on `In` features, with a bias; and with a ReLU.
  template <class X, fixed_string P, std::int64_t Out, std::int64_t In>
  using fc = bias_add<dense<X, weight<cat(P, ".w"), f32, Out, In>>, weight<cat(P, ".b"), f32, Out>>;
  template <class X, fixed_string P, std::int64_t Out, std::int64_t In>
  using fc_relu = relu<fc<X, P, Out, In>>;
  /// relu(a + b): a residual block's end.
  template <class A, class B>
  using add_relu = relu<add<A, B>>;
  /// Pooling and flattening.
  template <class X>
  using global_pool = global_avg_pool2d<X>;
  template <class X, pool2d_attrs A>
  using avg_pool = avg_pool2d<X, A>;
  template <class X>
  using flat = flatten<X>;
  /// What the model outputs from its logits: class probabilities.
  template <class X>
  using out = softmax<X>;
};

/// int8 layers: every layer's result is quantized, to a scale of 6/255 with zero point -128
/// after a ReLU ([0, 6]) and 1/32 with zero point 0 otherwise ([-4, 4)); the input to 1/127.
struct int8_layers {
  /// A quantized tensor's dequantization, from the quantize that made it.
  template <class X>
  struct dq_of;
  template <class Y, float S, std::int64_t Z, int A>
  struct dq_of<quantize<Y, scalar<S>, int_scalar<i8, Z>, A>> {
    using type = dequantize<quantize<Y, scalar<S>, int_scalar<i8, Z>, A>, scalar<S>, int_scalar<i8, Z>>;
  };
  template <class X>
  using dq = typename dq_of<X>::type;
  template <class Y>
  using q_relu = quantize<Y, scalar<6.f / 255.f>, int_scalar<i8, -128>>;
  template <class Y>
  using q_linear = quantize<Y, scalar<1.f / 32.f>, int_scalar<i8, 0>>;
  /// i8 weights of `Out` output channels, scaled per channel (named "<P>.w", "<P>.w.scale",
  /// "<P>.w.zp").
  template <fixed_string P, std::int64_t Out, std::int64_t... Dims>
  using qweight = dequantize<weight<cat(P, ".w"), i8, Out, Dims...>, weight<cat(P, ".w.scale"), f32, Out>,
                             weight<cat(P, ".w.zp"), i8, Out>, 0>;

  template <class X>
  using in = quantize<X, scalar<1.f / 127.f>, int_scalar<i8, 0>>;
  template <class X, fixed_string P, std::int64_t Out, std::int64_t In, int KH, int KW, conv2d_attrs A>
  using conv_float = bias_add<conv2d<dq<X>, qweight<P, Out, In, KH, KW>, A>, weight<cat(P, ".b"), f32, Out>>;
  template <class X, fixed_string P, std::int64_t Out, std::int64_t In, int KH, int KW, conv2d_attrs A>
  using conv = q_linear<conv_float<X, P, Out, In, KH, KW, A>>;
  template <class X, fixed_string P, std::int64_t Out, std::int64_t In, int KH, int KW, conv2d_attrs A>
  using conv_relu = q_relu<relu<conv_float<X, P, Out, In, KH, KW, A>>>;
  template <class X, fixed_string P, std::int64_t C, int S>
  using depthwise_relu = q_relu<relu<bias_add<conv2d<dq<X>, qweight<P, C, 1, 3, 3>,
                                                     {.stride = {S, S}, .padding = {1, 1}, .groups = static_cast<int>(C)}>,
                                              weight<cat(P, ".b"), f32, C>>>>;
  template <class X, fixed_string P, std::int64_t Out, std::int64_t In>
  using fc_float = bias_add<dense<dq<X>, qweight<P, Out, In>>, weight<cat(P, ".b"), f32, Out>>;
  template <class X, fixed_string P, std::int64_t Out, std::int64_t In>
  using fc = q_linear<fc_float<X, P, Out, In>>;
  template <class X, fixed_string P, std::int64_t Out, std::int64_t In>
  using fc_relu = q_relu<relu<fc_float<X, P, Out, In>>>;
  template <class A, class B>
  using add_relu = q_relu<relu<add<dq<A>, dq<B>>>>;
  template <class X>
  using global_pool = q_relu<global_avg_pool2d<dq<X>>>;
  template <class X, pool2d_attrs A>
  using avg_pool = q_relu<avg_pool2d<dq<X>, A>>;
  template <class X>
  using flat = q_relu<flatten<dq<X>>>;
  /// What the model outputs from its logits: the logits dequantized, float values the integer
  /// kernels determine exactly.
  template <class X>
  using out = dq<X>;
};

// The layers of layer set L, for the models' definitions.
template <class L, class X>
using in = typename L::template in<X>;
/// A K×K convolution with stride S and padding Pad on every side, a bias; and then a ReLU.
template <class L, class X, fixed_string P, std::int64_t Out, std::int64_t In, int K, int S, int Pad>
using conv = typename L::template conv<X, P, Out, In, K, K, conv2d_attrs{.stride = {S, S}, .padding = {Pad, Pad}}>;
template <class L, class X, fixed_string P, std::int64_t Out, std::int64_t In, int K, int S, int Pad>
using conv_relu = typename L::template conv_relu<X, P, Out, In, K, K, conv2d_attrs{.stride = {S, S}, .padding = {Pad, Pad}}>;
template <class L, class X, fixed_string P, std::int64_t C, int S>
using depthwise_relu = typename L::template depthwise_relu<X, P, C, S>;
template <class L, class X, fixed_string P, std::int64_t Out, std::int64_t In>
using fc = typename L::template fc<X, P, Out, In>;
template <class L, class X, fixed_string P, std::int64_t Out, std::int64_t In>
using fc_relu = typename L::template fc_relu<X, P, Out, In>;
template <class L, class A, class B>
using add_relu = typename L::template add_relu<A, B>;
template <class L, class X>
using global_pool = typename L::template global_pool<X>;
template <class L, class X, pool2d_attrs A>
using avg_pool = typename L::template avg_pool<X, A>;
template <class L, class X>
using flat = typename L::template flat<X>;
template <class L, class X>
using out = typename L::template out<X>;

/// A depthwise-separable block: 3×3 depthwise (stride S), then a 1×1 convolution to `Out` channels.
template <class L, class X, fixed_string P, std::int64_t In, std::int64_t Out, int S>
using separable = conv_relu<L, depthwise_relu<L, X, cat(P, ".dw"), In, S>, cat(P, ".pw"), Out, In, 1, 1, 0>;

}  // namespace models::tiny
