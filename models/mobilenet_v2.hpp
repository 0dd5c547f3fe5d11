#pragma once
// MobileNetV2 (torchvision layout, width 1.0) as Partita types: input "x" f32[1, 3, 224, 224],
// output the 1000 logits. Weight names are those of torchvision's state_dict ("features.0.0.weight",
// "features.1.conv.0.1.running_mean", "features.2.conv.3.bias", "classifier.1.weight", ...), so
// its weights bind unchanged. Dropout (classifier.0) is the identity at inference and is omitted.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <partita/partita.hpp>

namespace models::mobilenet_v2 {
using namespace partita;

/// The four inference parameters of batch norm `Bn` over `C` channels.
template <class X, fixed_string Bn, std::int64_t C>
using bn = batch_norm<X, weight<cat(Bn, ".weight"), f32, C>, weight<cat(Bn, ".bias"), f32, C>,
                      weight<cat(Bn, ".running_mean"), f32, C>, weight<cat(Bn, ".running_var"), f32, C>>;

/// A K×K convolution without bias (weight `Conv.weight`, `Groups` groups, "same" padding), then
/// batch norm `Bn`. Groups == Cin == Cout is the depthwise convolution.
template <class X, fixed_string Conv, fixed_string Bn, std::int64_t Cin, std::int64_t Cout, int K, int Stride,
          int Groups = 1>
using conv_bn = bn<conv2d<X, weight<cat(Conv, ".weight"), f32, Cout, Cin / Groups, K, K>,
                          conv2d_attrs{.stride = {Stride, Stride}, .padding = {(K - 1) / 2, (K - 1) / 2}, .groups = Groups}>,
                   Bn, Cout>;

/// torchvision's Conv2dNormActivation named P: conv `P.0`, batch norm `P.1`, ReLU6.
template <class X, fixed_string P, std::int64_t Cin, std::int64_t Cout, int K, int Stride, int Groups = 1>
using conv_bn_relu6 = clip<conv_bn<X, cat(P, ".0"), cat(P, ".1"), Cin, Cout, K, Stride, Groups>, 0.0f, 6.0f>;

/// The input added back to `Branch` when the block keeps the shape (stride 1, Cin == Cout).
template <class X, class Branch, std::int64_t Cin, std::int64_t Cout, int Stride>
using with_residual = std::conditional_t<Stride == 1 && Cin == Cout, add<X, Branch>, Branch>;

/// torchvision's InvertedResidual named P ("features.3"): a 1×1 expansion to Cin·Expand channels
/// with ReLU6, a depthwise 3×3 with ReLU6, a linear 1×1 projection (conv + batch norm), and the
/// input added back when the shape is kept. Without expansion (Expand 1) the `conv` list starts
/// at the depthwise stage, so the indices shift by one.
template <class X, fixed_string P, std::int64_t Cin, std::int64_t Cout, int Stride, int Expand>
struct inverted_residual_t {
  static constexpr std::int64_t hidden = Cin * Expand;
  using expanded = conv_bn_relu6<X, cat(P, ".conv.0"), Cin, hidden, 1, 1>;
  using depthwise = conv_bn_relu6<expanded, cat(P, ".conv.1"), hidden, hidden, 3, Stride, static_cast<int>(hidden)>;
  using type = with_residual<X, conv_bn<depthwise, cat(P, ".conv.2"), cat(P, ".conv.3"), hidden, Cout, 1, 1>, Cin, Cout, Stride>;
};
template <class X, fixed_string P, std::int64_t Cin, std::int64_t Cout, int Stride>
struct inverted_residual_t<X, P, Cin, Cout, Stride, 1> {
  using depthwise = conv_bn_relu6<X, cat(P, ".conv.0"), Cin, Cin, 3, Stride, static_cast<int>(Cin)>;
  using type = with_residual<X, conv_bn<depthwise, cat(P, ".conv.1"), cat(P, ".conv.2"), Cin, Cout, 1, 1>, Cin, Cout, Stride>;
};
template <class X, fixed_string P, std::int64_t Cin, std::int64_t Cout, int Stride, int Expand>
using inverted_residual = typename inverted_residual_t<X, P, Cin, Cout, Stride, Expand>::type;

using x = input<"x", f32, 1, 3, 224, 224>;

// Named nodes keep symbols and diagnostics short and check the model block by block. The table
// of torchvision's inverted_residual_setting (t, c, n, s): (1, 16, 1, 1), (6, 24, 2, 2),
// (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1).
struct features0 : conv_bn_relu6<x, "features.0", 3, 32, 3, 2> {};
struct features1 : inverted_residual<features0, "features.1", 32, 16, 1, 1> {};
struct features2 : inverted_residual<features1, "features.2", 16, 24, 2, 6> {};
struct features3 : inverted_residual<features2, "features.3", 24, 24, 1, 6> {};
struct features4 : inverted_residual<features3, "features.4", 24, 32, 2, 6> {};
struct features5 : inverted_residual<features4, "features.5", 32, 32, 1, 6> {};
struct features6 : inverted_residual<features5, "features.6", 32, 32, 1, 6> {};
struct features7 : inverted_residual<features6, "features.7", 32, 64, 2, 6> {};
struct features8 : inverted_residual<features7, "features.8", 64, 64, 1, 6> {};
struct features9 : inverted_residual<features8, "features.9", 64, 64, 1, 6> {};
struct features10 : inverted_residual<features9, "features.10", 64, 64, 1, 6> {};
struct features11 : inverted_residual<features10, "features.11", 64, 96, 1, 6> {};
struct features12 : inverted_residual<features11, "features.12", 96, 96, 1, 6> {};
struct features13 : inverted_residual<features12, "features.13", 96, 96, 1, 6> {};
struct features14 : inverted_residual<features13, "features.14", 96, 160, 2, 6> {};
struct features15 : inverted_residual<features14, "features.15", 160, 160, 1, 6> {};
struct features16 : inverted_residual<features15, "features.16", 160, 160, 1, 6> {};
struct features17 : inverted_residual<features16, "features.17", 160, 320, 1, 6> {};
struct features18 : conv_bn_relu6<features17, "features.18", 320, 1280, 1, 1> {};
struct logits : bias_add<dense<flatten<global_avg_pool2d<features18>>, weight<"classifier.1.weight", f32, 1000, 1280>>,
                         weight<"classifier.1.bias", f32, 1000>> {};

using net = model<logits>;

static_assert(features0::desc.out == shape_of<1, 32, 112, 112>);
static_assert(features3::desc.out == shape_of<1, 24, 56, 56>);
static_assert(features13::desc.out == shape_of<1, 96, 14, 14>);
static_assert(features18::desc.out == shape_of<1, 1280, 7, 7>);
static_assert(logits::desc.out == shape_of<1, 1000>);

}  // namespace models::mobilenet_v2
