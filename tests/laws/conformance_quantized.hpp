#pragma once
// The conformance law's quantized models (laws/conformance.hpp), in QDQ form: convolutions
// quantized per tensor and per channel over odd channel counts, depthwise, dense with a bias,
// matmul of two activations, add, pooling, concatenation, ReLU and ReLU6 between QDQ pairs and a
// residual block, with u8 and i8 activations, zero points at the ends of their range and output
// scales small enough that results saturate at both ends. A backend that claims quantized
// regions runs them as `conformance<B>::check<quantized_models>()`; the reference evaluates the
// QDQ graph as written, and integer outputs may differ from it by 1 in the last place
// (docs/quantization.md). Weights follow the law's rules for quantized ones (laws/oracle.hpp):
// scales named "<tensor>.scale", drawn positive; activations' scales and zero points are
// literals, chosen per model.
#include <cstdint>

#include <partita/partita.hpp>

#include "conformance_models.hpp"

namespace laws {
namespace nets {
using namespace partita;

namespace quantized_net {
/// `x` of dtype A dequantized with the literal scale S and zero point Z.
template <class X, float S, dtype A, std::int64_t Z>
using dq = dequantize<X, scalar<S>, int_scalar<A, Z>>;
/// `y` quantized to dtype A with the literal scale S and zero point Z.
template <class Y, float S, dtype A, std::int64_t Z>
using q = quantize<Y, scalar<S>, int_scalar<A, Z>>;
/// i8 convolution weights [O, I, K, K], quantized per output channel (drawn scales and zero points).
template <std::int64_t O, std::int64_t I, std::int64_t K>
using channel_w = dequantize<weight<"w", i8, O, I, K, K>, weight<"w.scale", f32, O>, weight<"w.zp", i8, O>, 0>;
/// The same, quantized per tensor.
template <std::int64_t O, std::int64_t I, std::int64_t K>
using tensor_w = dequantize<weight<"w", i8, O, I, K, K>, weight<"w.scale", f32>, weight<"w.zp", i8>>;
/// An i32 bias of O values, quantized per channel as QDQ exporters write it.
template <std::int64_t O>
using bias_q = dequantize<weight<"b", i32, O>, weight<"b.scale", f32, O>, weight<"b.zp", i32, O>, 0>;

/// 5 -> 7 channels, 3x3, padded: per-tensor weights, a bias, a ReLU; u8 with the input's zero
/// point at 0 and the result's at 128.
using conv_tensor = q<relu<bias_add<conv2d<dq<input<"x", u8, 1, 5, 9, 9>, 0.02f, u8, 0>, tensor_w<7, 5, 3>,
                                           {.padding = {1, 1}}>,
                                    bias_q<7>>>,
                      0.1f, u8, 128>;
/// 7 -> 5 channels, 3x3, stride 2, unequal padding: per-channel weights, no bias; i8 with zero
/// points at both ends of the range.
using conv_channel = q<conv2d<dq<input<"x", i8, 1, 7, 11, 10>, 0.03f, i8, 127>, channel_w<5, 7, 3>,
                              {.stride = {2, 2}, .padding = {1, 0}, .padding_end = {0, 1}}>,
                       0.1f, i8, -128>;
/// 5 -> 7 channels, 1x1 with a bias and ReLU6; u8 with the input's zero point at 255, the
/// result's at 0.
using conv_pointwise_relu6 =
    q<clip<bias_add<conv2d<dq<input<"x", u8, 2, 5, 6, 7>, 0.01f, u8, 255>, channel_w<7, 5, 1>>, bias_q<7>>, 0.f, 6.f>,
      0.03f, u8, 0>;
/// Depthwise over 7 channels, 3x3, padded, per-channel weights and a bias; i8.
using depthwise = q<bias_add<conv2d<dq<input<"x", i8, 1, 7, 10, 9>, 0.02f, i8, -3>, channel_w<7, 1, 3>,
                                    {.padding = {1, 1}, .groups = 7}>,
                             bias_q<7>>,
                    0.04f, i8, 5>;
/// An output scale small enough that most results clamp at one end or the other; i8 input, u8
/// zero point in the middle.
using saturating_conv = q<conv2d<dq<input<"x", i8, 1, 5, 7, 7>, 0.05f, i8, 0>, channel_w<5, 5, 3>>, 0.01f, u8, 128>;

/// The ResNet basic block's shortcut: a per-channel convolution with a ReLU, quantized, then
/// added to the block's input, both dequantized, and quantized again.
using block_x = input<"x", u8, 1, 7, 8, 8>;
using block_conv = q<relu<bias_add<conv2d<dq<block_x, 0.02f, u8, 128>, channel_w<7, 7, 3>, {.padding = {1, 1}}>, bias_q<7>>>,
                     0.08f, u8, 10>;
using residual = q<relu<add<dq<block_conv, 0.08f, u8, 10>, dq<block_x, 0.02f, u8, 128>>>, 0.05f, u8, 0>;

/// Dense with a per-channel bias: 3 rows of 37 into 11 units, u8; and i8 with per-tensor weights.
using dense_u8 =
    q<bias_add<dense<dq<input<"x", u8, 3, 37>, 0.02f, u8, 100>,
                     dequantize<weight<"w", i8, 11, 37>, weight<"w.scale", f32, 11>, weight<"w.zp", i8, 11>, 0>>,
               bias_q<11>, -1>,
      0.1f, u8, 128>;
using dense_i8 = q<relu<bias_add<dense<dq<input<"x", i8, 5, 20>, 0.03f, i8, -128>,
                                       dequantize<weight<"w", i8, 9, 20>, weight<"w.scale", f32>, weight<"w.zp", i8>>>,
                                 bias_q<9>, -1>>,
                   0.05f, i8, -128>;

/// Matmul of two activations: batched u8, and i8, each with one zero point at an end of its range.
using matmul_u8 = q<matmul<dq<input<"a", u8, 2, 5, 19>, 0.02f, u8, 128>, dq<input<"b", u8, 2, 19, 7>, 0.03f, u8, 0>>,
                    0.2f, u8, 128>;
using matmul_i8 = q<matmul<dq<input<"a", i8, 5, 9>, 0.05f, i8, 0>, dq<input<"b", i8, 9, 3>, 0.04f, i8, -128>>,
                    0.5f, i8, 0>;

/// Add of two differently quantized values, with a ReLU (u8) and without (i8, saturating).
using add_u8 = q<relu<add<dq<input<"a", u8, 1, 5, 7, 9>, 0.03f, u8, 100>, dq<input<"b", u8, 1, 5, 7, 9>, 0.011f, u8, 7>>>,
                 0.045f, u8, 128>;
using add_i8 = q<add<dq<input<"a", i8, 3, 13>, 0.05f, i8, -128>, dq<input<"b", i8, 3, 13>, 0.06f, i8, 127>>, 0.03f, i8, 0>;

/// ReLU and ReLU6 between two QDQ pairs of different scales.
using relu_u8 = q<relu<dq<input<"x", u8, 1, 7, 5, 5>, 0.04f, u8, 128>>, 0.02f, u8, 0>;
using relu6_i8 = q<clip<dq<input<"x", i8, 1, 5, 6, 6>, 0.06f, i8, -20>, 0.f, 6.f>, 0.03f, i8, -128>;

/// Pooling: average padded (not counting the padding), global average, max; u8 and i8.
using pool_x = input<"x", u8, 1, 7, 11, 9>;
using avg_pool = q<avg_pool2d<dq<pool_x, 0.03f, u8, 255>, {.size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}}>,
                   0.02f, u8, 250>;
using global_pool = q<global_avg_pool2d<dq<input<"x", i8, 2, 5, 7, 9>, 0.05f, i8, -1>>, 0.001f, i8, 0>;
using max_pool = q<max_pool2d<dq<pool_x, 0.03f, u8, 0>, {.size = {2, 2}}>, 0.05f, u8, 60>;

/// Concatenation of three values of different scales and zero points along the channels.
using concat = q<concatenate<1, dq<input<"a", u8, 1, 3, 5, 7>, 0.02f, u8, 0>, dq<input<"b", u8, 1, 5, 5, 7>, 0.05f, u8, 255>,
                             dq<input<"c", u8, 1, 2, 5, 7>, 0.03f, u8, 128>>,
                 0.04f, u8, 128>;
}  // namespace quantized_net

struct quantized_conv_models
    : model_group<"quantized convolutions: per tensor, per channel, 1x1, depthwise, saturating, a residual block",
                  model<quantized_net::conv_tensor>, model<quantized_net::conv_channel>,
                  model<quantized_net::conv_pointwise_relu6>, model<quantized_net::depthwise>,
                  model<quantized_net::saturating_conv>, model<quantized_net::residual>> {};

struct quantized_layer_models
    : model_group<"quantized dense, matmul, add, ReLU and ReLU6, pooling and concatenation",
                  model<quantized_net::dense_u8>, model<quantized_net::dense_i8>, model<quantized_net::matmul_u8>,
                  model<quantized_net::matmul_i8>, model<quantized_net::add_u8>, model<quantized_net::add_i8>,
                  model<quantized_net::relu_u8>, model<quantized_net::relu6_i8>, model<quantized_net::avg_pool>,
                  model<quantized_net::global_pool>, model<quantized_net::max_pool>, model<quantized_net::concat>> {};
}  // namespace nets

/// The quantized models, not part of `all_models`: a backend that claims quantized regions
/// checks them in a test of its own.
using quantized_models = model_list<nets::quantized_conv_models, nets::quantized_layer_models>;

}  // namespace laws
