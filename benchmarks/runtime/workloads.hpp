#pragma once
// The runtime benchmark's workloads as Partita models (f32; images NCHW; W6 reads i64 token ids).
// The oneDNN and Eigen peers (peers/) build the same networks from the same weight names.
//
//   w1  MLP 784-512-512-10, batch 1          w5  ResNet-18 on 1×3×224×224
//   w2  the same MLP, batch 64               w6  BERT-style encoder on 128 token ids (i64)
//   w3  ResNet basic block on 1×64×56×56     w7  MobileNetV2 on 1×3×224×224
//   w4  LeNet-5 on 1×1×28×28
#include <cstdint>

#include <partita/partita.hpp>

#include <examples/transformer/model.hpp>
#include <models/biased_block.hpp>
#include <models/mlp.hpp>
#include <models/mobilenet_v2.hpp>
#include <models/resnet18.hpp>

namespace workloads {
using namespace partita;

/// `x · wᵀ + b` with weight `W` [Out, In] and bias `B` [Out].
template <class X, fixed_string W, fixed_string B, std::int64_t In, std::int64_t Out>
using linear = bias_add<dense<X, weight<W, f32, Out, In>>, weight<B, f32, Out>>;

using w1 = models::mlp;
using w2 = model<models::mlp_batch<64>::logits>;

using w3 = model<models::biased_block<64, 56, 56>::out>;

/// LeNet-5: two 5×5 conv + relu + 2×2 max pool stages, then three dense layers.
namespace lenet {
using x = input<"x", f32, 1, 1, 28, 28>;
using conv1 = relu<bias_add<conv2d<x, weight<"conv1.weight", f32, 6, 1, 5, 5>, {.padding = {2, 2}}>,
                            weight<"conv1.bias", f32, 6>>>;
using pool1 = max_pool2d<conv1, {.size = {2, 2}}>;
using conv2 = relu<bias_add<conv2d<pool1, weight<"conv2.weight", f32, 16, 6, 5, 5>>, weight<"conv2.bias", f32, 16>>>;
using pool2 = max_pool2d<conv2, {.size = {2, 2}}>;
using fc1 = relu<linear<flatten<pool2>, "fc1.weight", "fc1.bias", 400, 120>>;
using fc2 = relu<linear<fc1, "fc2.weight", "fc2.bias", 120, 84>>;
using logits = linear<fc2, "fc3.weight", "fc3.bias", 84, 10>;
}  // namespace lenet

using w4 = model<lenet::logits>;

using w5 = models::resnet18::net;

/// The example's encoder (examples/transformer/model.hpp): token ids i64[1, 128], d_model 256,
/// 4 heads, 2 post-norm layers, a tanh pooler and 10 logits. Its ids are drawn below `w6_vocab`.
using w6 = transformer::net;
inline constexpr std::int64_t w6_vocab = transformer::vocab;

using w7 = models::mobilenet_v2::net;

}  // namespace workloads
