#pragma once
// ResNet-18 (torchvision layout) as Partita types: input "x" f32[1, 3, 224, 224], output the
// 1000 logits. Weight names are those of torchvision's state_dict ("conv1.weight",
// "layer2.0.downsample.1.running_var", "fc.bias", ...), so its weights bind unchanged.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <partita/partita.hpp>

namespace models::resnet18 {
using namespace partita;

/// The four inference parameters of batch norm `Bn` over `C` channels.
template <class X, fixed_string Bn, std::int64_t C>
using bn = batch_norm<X, weight<cat(Bn, ".weight"), f32, C>, weight<cat(Bn, ".bias"), f32, C>,
                      weight<cat(Bn, ".running_mean"), f32, C>, weight<cat(Bn, ".running_var"), f32, C>>;

/// A K×K convolution without bias (weight `Conv.weight`), then batch norm `Bn`.
template <class X, fixed_string Conv, fixed_string Bn, std::int64_t Cin, std::int64_t Cout, int K, int Stride, int Pad>
using conv_bn = bn<conv2d<X, weight<cat(Conv, ".weight"), f32, Cout, Cin, K, K>,
                          conv2d_attrs{.stride = {Stride, Stride}, .padding = {Pad, Pad}}>,
                   Bn, Cout>;

/// The residual branch: X itself, or a strided 1×1 conv + batch norm where the shape changes.
template <class X, fixed_string P, std::int64_t Cin, std::int64_t Cout, int Stride>
using shortcut = std::conditional_t<Stride == 1 && Cin == Cout, X,
                                    conv_bn<X, cat(P, ".downsample.0"), cat(P, ".downsample.1"), Cin, Cout, 1, Stride, 0>>;

/// torchvision's BasicBlock named P ("layer2.0"): two 3×3 conv + batch norm, residual, relu.
template <class X, fixed_string P, std::int64_t Cin, std::int64_t Cout, int Stride>
using basic_block =
    relu<add<conv_bn<relu<conv_bn<X, cat(P, ".conv1"), cat(P, ".bn1"), Cin, Cout, 3, Stride, 1>>, cat(P, ".conv2"),
                     cat(P, ".bn2"), Cout, Cout, 3, 1, 1>,
             shortcut<X, P, Cin, Cout, Stride>>>;

using x = input<"x", f32, 1, 3, 224, 224>;

// Named nodes keep symbols and diagnostics short and check the model block by block.
struct stem : max_pool2d<relu<conv_bn<x, "conv1", "bn1", 3, 64, 7, 2, 3>>,
                         pool2d_attrs{.size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}}> {};
struct layer1_0 : basic_block<stem, "layer1.0", 64, 64, 1> {};
struct layer1 : basic_block<layer1_0, "layer1.1", 64, 64, 1> {};
struct layer2_0 : basic_block<layer1, "layer2.0", 64, 128, 2> {};
struct layer2 : basic_block<layer2_0, "layer2.1", 128, 128, 1> {};
struct layer3_0 : basic_block<layer2, "layer3.0", 128, 256, 2> {};
struct layer3 : basic_block<layer3_0, "layer3.1", 256, 256, 1> {};
struct layer4_0 : basic_block<layer3, "layer4.0", 256, 512, 2> {};
struct layer4 : basic_block<layer4_0, "layer4.1", 512, 512, 1> {};
struct logits : bias_add<dense<flatten<global_avg_pool2d<layer4>>, weight<"fc.weight", f32, 1000, 512>>,
                         weight<"fc.bias", f32, 1000>> {};

using net = model<logits>;

}  // namespace models::resnet18
