#pragma once
// The layers the tiny models are built from, with their batch norms folded into biases, as the
// models are deployed (TensorFlow Lite's converter folds them the same way).
#include <cstdint>

#include <partita/embedded.hpp>

namespace models::tiny {
using namespace partita;

/// A K×K convolution of `Out` channels with stride S and padding Pad, a bias and a ReLU.
template <class X, fixed_string P, std::int64_t Out, std::int64_t In, int K, int S, int Pad>
using conv_relu = relu<bias_add<conv2d<X, weight<cat(P, ".w"), f32, Out, In, K, K>, {.stride = {S, S}, .padding = {Pad, Pad}}>,
                                weight<cat(P, ".b"), f32, Out>>>;

/// A 3×3 depthwise convolution of C channels with stride S, a bias and a ReLU.
template <class X, fixed_string P, std::int64_t C, int S>
using depthwise_relu = relu<bias_add<conv2d<X, weight<cat(P, ".w"), f32, C, 1, 3, 3>,
                                            {.stride = {S, S}, .padding = {1, 1}, .groups = static_cast<int>(C)}>,
                                     weight<cat(P, ".b"), f32, C>>>;

/// A depthwise-separable block: 3×3 depthwise (stride S), then a 1×1 convolution to `Out` channels.
template <class X, fixed_string P, std::int64_t In, std::int64_t Out, int S>
using separable = conv_relu<depthwise_relu<X, cat(P, ".dw"), In, S>, cat(P, ".pw"), Out, In, 1, 1, 0>;

/// A fully connected layer of `Out` units on `In` features, with a bias.
template <class X, fixed_string P, std::int64_t Out, std::int64_t In>
using fc = bias_add<dense<X, weight<cat(P, ".w"), f32, Out, In>>, weight<cat(P, ".b"), f32, Out>>;

}  // namespace models::tiny
