#pragma once
// The models of the conformance law (laws/conformance.hpp): every layer op over the shapes that
// reach every kernel's tails, the composites the backends fuse, and small networks with
// residuals, several results, views and fallbacks (the tensor ops: conformance_ops.hpp, which
// also makes the list). Every backend runs all of them; a backend's own tests name the ones they
// check further (fusion, steps, primitives) as `laws::nets::...`.
#include <cstdint>
#include <string_view>

#include <partita/partita.hpp>

#include <models/biased_block.hpp>
#include <models/mlp.hpp>

namespace laws {

/// Models `Nets...`, described by a sentence: a failure names the group and the model's index. A
/// group may set a bound tighter than backends' tolerances on its ops, as a member
/// `static constexpr double tolerance = bound::...;`, and ask for one more round of special
/// values, every input scaled to reach ±3e38, with `static constexpr bool large_values = true;`:
/// ops whose float intermediates (squares, partial sums) would overflow where the reference's
/// double ones do not.
template <partita::fixed_string About, class... Nets>
struct model_group {
  static constexpr std::string_view about = About;
};

/// Groups of models, run in order.
template <class... Groups>
struct model_list {};

/// The models of several lists, in order.
template <class... Groups, class... More>
constexpr model_list<Groups..., More...> operator+(model_list<Groups...>, model_list<More...>) {
  return {};
}

/// Bounds on the law's error measure (`relative_error`: relative, absolute below 1) that groups set.
namespace bound {
/// Bit for bit, but any NaN for a NaN: data movement, and the ops IEEE rounds exactly.
inline constexpr double exact = 0;
/// `n` units in the last place of the expected value (of 1 below 1), give or take a factor of 2:
/// the math functions.
constexpr double ulps(int n) { return n * 0x1p-23; }
/// Outputs normalized by a reduction of float rows (softmax, layer and RMS norms, means).
inline constexpr double normalized = 1e-6;
/// Sums of up to 65 products or values of size 1 to 4 in float: a correct kernel accumulating in
/// float errs up to about 3.5e-6 in this measure (by cancellation), so 1e-6 would reject it.
inline constexpr double accumulated = 5e-6;
}  // namespace bound

namespace nets {
using namespace partita;

// -- dense, alone and fused
template <std::int64_t M, std::int64_t K, std::int64_t N>
using dense_x = dense<input<"x", f32, M, K>, weight<"w", f32, N, K>>;
template <std::int64_t N>
using bias = weight<"b", f32, N>;
using dense_3x50x21 = dense_x<3, 50, 21>;

using dense_bias_relu = model<relu<bias_add<dense_3x50x21, bias<21>>>>;
using dense_bias = model<bias_add<dense_x<1, 784, 512>, bias<512>>>;
using dense_bias_add_tanh = model<tanh_<add<bias_add<dense_3x50x21, bias<21>>, input<"r", f32, 3, 21>>>>;
/// A transformer's residual, written first: r + (x · wᵀ + b), rows past the block, depth past a
/// pass on every core (the cpu backend takes up to 1024 in one pass off Intel).
using dense_bias_add = model<add<input<"r", f32, 13, 40>, bias_add<dense_x<13, 1100, 40>, bias<40>>>>;
/// Enough rows that two threads split them (the cpu backend's many-row split), a row tail in the
/// second thread's share, a residual and a depth of several passes on every core; units that
/// fill one panel, so that only the rows can be split.
using dense_rows = model<add<input<"r", f32, 131, 30>, bias_add<dense_x<131, 1100, 30>, bias<30>>>>;
using mlp = models::mlp;

// -- conv2d, alone and fused
template <std::int64_t N, std::int64_t C, std::int64_t H, std::int64_t W, std::int64_t O, std::int64_t KH, std::int64_t KW,
          conv2d_attrs A>
using conv_net = model<conv2d<input<"x", f32, N, C, H, W>, weight<"w", f32, O, C / A.groups, KH, KW>, A>>;

namespace fused {
using x = input<"x", f32, 1, 6, 9, 11>;
using w = weight<"w", f32, 10, 6, 3, 3>;
using b = weight<"b", f32, 10>;
using conv = conv2d<x, w, {.padding = {1, 1}}>;
using conv_bias = bias_add<conv, b>;
template <class X>
using bn = batch_norm<X, weight<"bn.gamma", f32, 10>, weight<"bn.beta", f32, 10>, weight<"bn.mean", f32, 10>,
                      weight<"bn.var", f32, 10>>;
using res = input<"res", f32, 1, 10, 9, 11>;
}  // namespace fused

using conv_bias_relu = model<relu<fused::conv_bias>>;
using conv_bias_add_relu = model<relu<add<fused::conv_bias, fused::res>>>;
using residual_first = model<add<fused::res, fused::conv_bias>>;
using conv_bn_relu = model<relu<fused::bn<fused::conv>>>;  // batch norm folded into the weights at bind
using broadcast_add = model<add<fused::conv_bias, input<"r", f32, 1, 10, 1, 1>>>;

// -- networks
/// conv2d + bias + relu, three times: padding, stride 2 with unequal padding, groups with dilation.
namespace chain_net {
using x = input<"x", f32, 2, 6, 13, 11>;
using c1 = relu<bias_add<conv2d<x, weight<"c1.w", f32, 12, 6, 3, 3>, {.padding = {1, 1}}>, weight<"c1.b", f32, 12>>>;
using c2 = relu<bias_add<conv2d<c1, weight<"c2.w", f32, 16, 12, 3, 3>, {.stride = {2, 2}, .padding = {1, 0}}>,
                         weight<"c2.b", f32, 16>>>;
using c3 = relu<bias_add<conv2d<c2, weight<"c3.w", f32, 16, 4, 3, 3>, {.padding = {2, 2}, .dilation = {2, 2}, .groups = 4}>,
                         weight<"c3.b", f32, 16>>>;
}  // namespace chain_net
using chain = model<chain_net::c3>;

/// The ResNet basic block (biased convolutions, no batch norm).
using block = model<models::biased_block<16, 10, 10>::out>;

/// conv2d + batch norm + relu, with and without a bias before the batch norm.
namespace normed_net {
using x = input<"x", f32, 1, 8, 9, 9>;
using plain = relu<batch_norm<conv2d<x, weight<"a.w", f32, 24, 8, 3, 3>, {.padding = {1, 1}}>, weight<"a.gamma", f32, 24>,
                              weight<"a.beta", f32, 24>, weight<"a.mean", f32, 24>, weight<"a.var", f32, 24>>>;
using biased = relu<batch_norm<bias_add<conv2d<x, weight<"b.w", f32, 24, 8, 1, 1>>, weight<"b.bias", f32, 24>>,
                               weight<"b.gamma", f32, 24>, weight<"b.beta", f32, 24>, weight<"b.mean", f32, 24>,
                               weight<"b.var", f32, 24>, 1e-3f>>;
}  // namespace normed_net
using normed = model<add<normed_net::plain, normed_net::biased>>;

/// A small MLP: dense + bias + relu twice, a gain (a broadcast weight), a difference, a
/// standalone batch norm and a softmax.
namespace gain_mlp_net {
using x = input<"x", f32, 3, 20>;
using h1 = relu<bias_add<dense<x, weight<"fc1.w", f32, 16, 20>>, weight<"fc1.b", f32, 16>>>;
using h2 = batch_norm<subtract<multiply<weight<"gain", f32, 16>, h1>, h1>, weight<"n.gamma", f32, 16>,
                      weight<"n.beta", f32, 16>, weight<"n.mean", f32, 16>, weight<"n.var", f32, 16>>;
using h3 = relu<bias_add<dense<h2, weight<"fc2.w", f32, 12, 16>>, weight<"fc2.b", f32, 12>>>;
using logits = bias_add<dense<h3, weight<"fc3.w", f32, 5, 12>>, weight<"fc3.b", f32, 5>>;
}  // namespace gain_mlp_net
using gain_mlp = model<softmax<gain_mlp_net::logits>>;

/// Pooling: max, average with padding (with and without counting it), a standalone batch norm,
/// global average, then dense through flatten.
namespace pools_net {
using x = input<"x", f32, 2, 4, 12, 12>;
using c = relu<bias_add<conv2d<x, weight<"c.w", f32, 8, 4, 3, 3>, {.padding = {1, 1}}>, weight<"c.b", f32, 8>>>;
using mp = max_pool2d<c, {.size = {2, 2}}>;
using ap = avg_pool2d<mp, {.size = {3, 3}, .stride = {1, 1}, .padding = {1, 1}}>;
using ai = avg_pool2d<ap, {.size = {2, 2}, .stride = {2, 2}, .padding = {1, 1}, .count_include_pad = true}>;
using nb = batch_norm<ai, weight<"n.gamma", f32, 8>, weight<"n.beta", f32, 8>, weight<"n.mean", f32, 8>,
                      weight<"n.var", f32, 8>>;
using g = global_avg_pool2d<nb>;
using head = bias_add<dense<flatten<g>, weight<"fc.w", f32, 6, 8>>, weight<"fc.b", f32, 6>>;
}  // namespace pools_net
using pools = model<pools_net::head>;

/// LeNet-like: max pool then dense straight on the flattened 4-D value.
namespace lenet_net {
using x = input<"x", f32, 1, 1, 16, 16>;
using c1 = relu<bias_add<conv2d<x, weight<"c1.w", f32, 6, 1, 5, 5>, {.padding = {2, 2}}>, weight<"c1.b", f32, 6>>>;
using p1 = max_pool2d<c1, {.size = {2, 2}}>;
using c2 = relu<bias_add<conv2d<p1, weight<"c2.w", f32, 16, 6, 3, 3>>, weight<"c2.b", f32, 16>>>;
using p2 = max_pool2d<c2, {.size = {2, 2}}>;
using f1 = relu<bias_add<dense<flatten<p2>, weight<"f1.w", f32, 32, 144>>, weight<"f1.b", f32, 32>>>;
}  // namespace lenet_net
using lenet = model<bias_add<dense<lenet_net::f1, weight<"f2.w", f32, 10, 32>>, weight<"f2.b", f32, 10>>>;

/// Three results from one region: a value that later convs read, a view of it, and the end.
namespace fork_net {
using x = input<"x", f32, 1, 8, 6, 6>;
using a = relu<bias_add<conv2d<x, weight<"a.w", f32, 8, 8, 3, 3>, {.padding = {1, 1}}>, weight<"a.b", f32, 8>>>;
using b = relu<add<bias_add<conv2d<a, weight<"b.w", f32, 8, 8, 3, 3>, {.padding = {1, 1}}>, weight<"b.b", f32, 8>>, a>>;
}  // namespace fork_net
using fork = model<fork_net::b, fork_net::a, flatten<fork_net::a>>;

/// Elementwise only.
using eltwise = model<relu<add<input<"x", f32, 2, 10>, input<"y", f32, 2, 10>>>>;

/// Two dense layers split by a concatenation, then a sigmoid after another concatenation.
namespace mixed_net {
using x = input<"x", f32, 2, 10>;
using h = relu<bias_add<dense<x, weight<"fc1.w", f32, 8, 10>>, weight<"fc1.b", f32, 8>>>;
using g = bias_add<dense<concatenate<1, h, h>, weight<"fc2.w", f32, 6, 16>>, weight<"fc2.b", f32, 6>>;
}  // namespace mixed_net
using mixed = model<sigmoid<concatenate<1, mixed_net::g, mixed_net::x>>>;

/// A small CNN with a residual block, a pooled head and a dense classifier; the block is a
/// second result.
namespace cnn_net {
using img = input<"img", f32, 1, 3, 8, 8>;
using stem = relu<bias_add<conv2d<img, weight<"stem.w", f32, 8, 3, 3, 3>, {.padding = {1, 1}}>, weight<"stem.b", f32, 8>>>;
using branch = relu<bias_add<conv2d<stem, weight<"b1.w", f32, 8, 8, 3, 3>, {.padding = {1, 1}}>, weight<"b1.b", f32, 8>>>;
using block = relu<add<bias_add<conv2d<branch, weight<"b2.w", f32, 8, 8, 1, 1>>, weight<"b2.b", f32, 8>>, stem>>;
using pooled = flatten<max_pool2d<block, {.size = {2, 2}}>>;
using logits = bias_add<dense<pooled, weight<"fc.w", f32, 10, 128>>, weight<"fc.b", f32, 10>>;
}  // namespace cnn_net
using cnn = model<softmax<cnn_net::logits>, cnn_net::block>;

/// Repeated identical blocks, each with weights of its own: backends that share one kernel
/// between such steps (cpu, reference) keep each step's packed weights apart.
namespace twins_net {
using x = input<"x", f32, 1, 8, 6, 6>;
template <class X, fixed_string W, fixed_string B>
using conv_block = relu<bias_add<conv2d<X, weight<W, f32, 8, 8, 3, 3>, {.padding = {1, 1}}>, weight<B, f32, 8>>>;
template <class X, fixed_string W, fixed_string B>
using dense_block = relu<bias_add<dense<X, weight<W, f32, 16, 16>>, weight<B, f32, 16>>>;
using convs = conv_block<conv_block<conv_block<x, "c1.w", "c1.b">, "c2.w", "c2.b">, "c3.w", "c3.b">;
using head = bias_add<dense<flatten<convs>, weight<"fc.w", f32, 16, 288>>, weight<"fc.b", f32, 16>>;
}  // namespace twins_net
using twins = model<twins_net::dense_block<twins_net::dense_block<twins_net::head, "d1.w", "d1.b">, "d2.w", "d2.b">>;

/// Results that alias: one value returned twice and through views, results that other results
/// read, an input returned as is, and one region that is the whole model.
namespace outputs_net {
using p = input<"p", f32, 2, 8>;
using q = input<"q", f32, 2, 8>;
using s = relu<add<p, q>>;
using t = add<s, p>;
}  // namespace outputs_net
using twice_and_views = model<outputs_net::s, outputs_net::s, flatten<outputs_net::s>, reshape<outputs_net::s, 16>>;
using results_read_again = model<outputs_net::t, outputs_net::s, softmax<outputs_net::s>>;
using input_as_result = model<outputs_net::p, outputs_net::s>;
using one_region = model<relu<add<add<outputs_net::p, outputs_net::q>, outputs_net::p>>>;

}  // namespace nets

// ---- The list, in three parts (a backend's test may run each in its own translation unit).

namespace nets {
struct dense_models
    : model_group<"dense: one row, a few rows, many rows; odd depths and unit counts", model<dense_x<1, 37, 13>>,
                  model<dense_x<2, 300, 70>>,
                  model<dense_x<5, 17, 33>>,     // fewer rows than the block
                  model<dense_x<64, 784, 129>>,  // a column tail
                  model<dense_x<13, 1100, 40>>,  // depth over one pass, row tail
                  model<dense<input<"x", f32, 2, 3, 20>, weight<"w", f32, 7, 20>>>> {};  // rank 3
struct fused_dense_models
    : model_group<"dense with bias and activations, and the 784-512-512-10 MLP", dense_bias_relu, dense_bias,
                  model<sigmoid<dense_3x50x21>>, dense_bias_add_tanh, dense_bias_add,
                  model<clip<bias_add<dense_x<64, 33, 50>, bias<50>>, -0.25f, 0.25f>>, mlp,
                  dense_rows,
                  // too few flops for two threads, split by rows for its input's sake (the cpu
                  // backend), a row tail in the second share
                  model<bias_add<dense_x<70, 400, 10>, bias<10>>>,
                  model<relu<bias_add<dense_x<20, 70, 7>, bias<7>>>>> {};  // units in one partial vector

using x357 = input<"x", f32, 3, 5, 7>;
using y357 = input<"y", f32, 3, 5, 7>;
struct elementwise_models
    : model_group<"elementwise ops over odd sizes, in place and broadcast", model<relu<x357>>, model<clip<x357, -0.5f, 1.5f>>,
                  model<sigmoid<x357>>, model<tanh_<x357>>,
                  model<add<x357, y357>, subtract<x357, y357>, multiply<x357, y357>>,
                  model<relu<add<x357, y357>>>,  // relu in place over the add's buffer
                  model<multiply<x357, input<"s", f32, 5, 1>>>, model<subtract<input<"s", f32, 7>, x357>>> {};

using x2537 = input<"x", f32, 2, 5, 3, 7>;
struct channel_models
    : model_group<"bias_add and batch_norm along the channels", model<bias_add<x2537, weight<"b", f32, 5>>>,
                  model<bias_add<input<"v", f32, 4, 19>, weight<"b", f32, 19>, -1>>,
                  model<batch_norm<x2537, weight<"g", f32, 5>, weight<"be", f32, 5>, weight<"m", f32, 5>, weight<"var", f32, 5>>>> {};

using x1_3_13_38 = input<"x", f32, 1, 3, 13, 38>;
using wide = input<"wide", f32, 1, 1, 2, 5000>;
struct pooling_models
    : model_group<"pooling: windows, strides, padding, ceil-free edges, rows split across threads, rows too wide for "
                  "the row buffers, 2×2 of stride 2",
                  model<max_pool2d<x1_3_13_38, {.size = {2, 2}}>>,
                  model<max_pool2d<x1_3_13_38, {.size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}}>>,
                  model<max_pool2d<x1_3_13_38, {.size = {3, 3}, .stride = {1, 1}, .padding = {1, 1}}>>,
                  model<avg_pool2d<x1_3_13_38, {.size = {3, 3}, .stride = {1, 1}, .padding = {1, 1}}>>,
                  model<avg_pool2d<x1_3_13_38, {.size = {3, 2}, .stride = {2, 3}, .padding = {1, 1}, .count_include_pad = true}>>,
                  model<global_avg_pool2d<x1_3_13_38>>,
                  model<max_pool2d<input<"t", f32, 1, 2, 3, 3>, {.size = {5, 5}, .stride = {1, 1}, .padding = {2, 2}}>>,
                  // ResNet's stem pooling (fewer channels): large enough to be split by planes
                  model<max_pool2d<input<"big", f32, 1, 32, 112, 112>, {.size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}}>>,
                  model<max_pool2d<wide, {.size = {2, 3}, .stride = {1, 2}, .padding = {0, 1}}>>,
                  // 2×2 of stride 2 inside the planes: vectors of outputs and a masked tail, an
                  // odd last row and column left out, a batch of two
                  model<max_pool2d<input<"q", f32, 2, 3, 9, 71>, {.size = {2, 2}}>>,
                  model<avg_pool2d<wide, {.size = {2, 3}, .stride = {1, 2}, .padding = {0, 1}}>>> {};

using a1344 = input<"a", f32, 1, 3, 4, 4>;
struct layout_models
    : model_group<"softmax, concatenate and views", model<softmax<input<"x", f32, 3, 37>>>,
                  model<softmax<input<"x", f32, 2, 5, 3>, 1>>, model<concatenate<1, relu<a1344>, input<"b", f32, 1, 5, 4, 4>>>,
                  model<reshape<flatten<sigmoid<a1344>>, 6, 8>>> {};

struct conv_shape_models
    : model_group<"conv2d: odd sizes, strides, padding, dilation, groups, batches, rectangular windows",
                  conv_net<1, 3, 11, 13, 5, 3, 3, conv2d_attrs{.padding = {1, 1}}>,  // channel and column tails
                  conv_net<1, 4, 15, 17, 9, 3, 3, conv2d_attrs{.stride = {2, 2}, .padding = {1, 1}}>,
                  conv_net<1, 1, 28, 28, 6, 5, 5, conv2d_attrs{.padding = {2, 2}}>,  // LeNet's first layer
                  conv_net<2, 5, 9, 10, 7, 3, 3, conv2d_attrs{.padding = {2, 2}, .dilation = {2, 2}}>,
                  conv_net<1, 6, 8, 9, 4, 3, 3, conv2d_attrs{.padding = {1, 1}, .groups = 2}>,
                  conv_net<1, 8, 10, 7, 8, 3, 3, conv2d_attrs{.stride = {2, 2}, .padding = {1, 1}, .groups = 8}>,  // depthwise
                  conv_net<1, 16, 7, 7, 24, 1, 1, conv2d_attrs{}>, conv_net<1, 16, 14, 14, 20, 1, 1, conv2d_attrs{.stride = {2, 2}}>,
                  conv_net<1, 3, 32, 30, 16, 7, 7, conv2d_attrs{.stride = {2, 2}, .padding = {3, 3}}>,  // ResNet's stem
                  conv_net<1, 3, 12, 11, 5, 2, 3, conv2d_attrs{.stride = {2, 1}, .padding = {0, 1}}>,
                  conv_net<1, 2, 9, 16, 3, 4, 1, conv2d_attrs{.stride = {3, 2}, .padding = {1, 0}, .dilation = {2, 1}}>,
                  conv_net<1, 4, 6, 37, 3, 3, 3, conv2d_attrs{}>> {};  // no padding: the last tile's extra columns

struct fused_conv_models
    : model_group<"conv2d with bias, batch norm, residuals and activations; a weight that is an input", conv_bias_relu,
                  conv_bias_add_relu, residual_first, conv_bn_relu, model<clip<fused::bn<fused::conv_bias>, 0.f, 0.5f>>,
                  model<sigmoid<fused::conv_bias>>, model<tanh_<add<fused::conv, fused::res>>>,
                  model<relu<fused::conv>>, model<fused::conv_bias>, broadcast_add,
                  model<relu<conv2d<input<"x", f32, 1, 3, 7, 7>, input<"w", f32, 5, 3, 3, 3>, {.padding = {1, 1}}>>>> {};

struct large_conv_models
    : model_group<"conv2d large enough for two threads; small images (channel-vectorized on cpu)",
                  model<relu<conv2d<input<"x", f32, 1, 32, 30, 30>, weight<"w", f32, 48, 32, 3, 3>, {.padding = {1, 1}}>>>,
                  model<relu<add<conv2d<input<"x", f32, 1, 64, 5, 5>, weight<"w", f32, 72, 64, 3, 3>, {.padding = {1, 1}}>,
                                 input<"r", f32, 1, 72, 5, 5>>>>,
                  model<relu<add<bias_add<conv2d<input<"x", f32, 1, 32, 7, 7>, weight<"w", f32, 64, 32, 3, 3>, {.padding = {1, 1}}>,
                                          weight<"b", f32, 64>>,
                                 input<"r", f32, 1, 64, 7, 7>>>>,
                  conv_net<1, 6, 14, 14, 16, 5, 5, conv2d_attrs{}>,  // LeNet's second layer
                  model<relu<conv2d<input<"x", f32, 1, 64, 10, 10>, weight<"w", f32, 16, 64, 3, 3>, {.padding = {1, 1}}>>>,
                  conv_net<2, 8, 13, 13, 40, 3, 3, conv2d_attrs{.stride = {2, 2}, .padding = {1, 1}, .groups = 2}>,
                  conv_net<1, 16, 9, 9, 37, 3, 3, conv2d_attrs{.padding = {1, 1}}>,  // a channel tail
                  // Unpadded 1×1 of stride 1: B read from the input in place, the last tile staged.
                  conv_net<1, 24, 30, 30, 24, 1, 1, conv2d_attrs{}>, conv_net<2, 8, 16, 16, 36, 1, 1, conv2d_attrs{}>,
                  conv_net<1, 8, 20, 25, 48, 1, 1, conv2d_attrs{.groups = 2}>,
                  model<relu<add<bias_add<conv2d<input<"x", f32, 1, 16, 33, 35>, weight<"w", f32, 24, 16, 1, 1>>,
                                          weight<"b", f32, 24>>,
                                 input<"r", f32, 1, 24, 33, 35>>>>> {};

namespace planar_direct {
using x2 = input<"x", f32, 2, 3, 9, 50>;
using r2 = input<"r", f32, 2, 30, 9, 50>;
}  // namespace planar_direct

/// First layers of at most four channels, stride 1 (the cpu backend's direct kernel): channel
/// blocks with and without a rest, rows of one to four vectors with tails, dilation, batches,
/// residuals and epilogues, rows split across two threads.
struct planar_direct_models
    : model_group<"conv2d of a few input channels, stride 1: channel blocks and their rest, row blocks and tails, "
                  "dilation, batches, residuals, epilogues, two threads",
                  model<clip<add<bias_add<conv2d<planar_direct::x2, weight<"w", f32, 30, 3, 3, 3>, {.padding = {1, 1}}>,
                                          weight<"b", f32, 30>>,
                                 planar_direct::r2>,
                             -0.5f, 0.75f>>,
                  model<tanh_<conv2d<input<"x", f32, 1, 2, 20, 20>, weight<"w", f32, 5, 2, 3, 3>,
                                             {.padding = {2, 2}, .dilation = {2, 2}}>>>,
                  model<relu<bias_add<conv2d<input<"x", f32, 1, 3, 56, 56>, weight<"w", f32, 32, 3, 3, 3>, {.padding = {1, 1}}>,
                                      weight<"b", f32, 32>>>>,
                  conv_net<1, 4, 10, 12, 7, 3, 3, conv2d_attrs{}>,  // one vector, a rest block only
                  conv_net<1, 1, 4, 140, 3, 3, 7, conv2d_attrs{.padding = {1, 3}}>> {};  // nine vectors: blocks of three

namespace pointwise {
using bn = batch_norm<conv2d<input<"x", f32, 1, 128, 14, 14>, weight<"w", f32, 50, 128, 1, 1>>, weight<"bn.gamma", f32, 50>,
                      weight<"bn.beta", f32, 50>, weight<"bn.mean", f32, 50>, weight<"bn.var", f32, 50>>;
}  // namespace pointwise

struct pointwise_conv_models
    : model_group<"1×1 convolutions of depth 96 and more (matmul's loops on weights packed at bind): row and column "
                  "tails, several depth passes, batches, epilogues, two threads",
                  conv_net<1, 100, 7, 7, 37, 1, 1, conv2d_attrs{}>,      // 37 rows (a partial block), 49 positions
                  conv_net<1, 300, 14, 14, 64, 1, 1, conv2d_attrs{}>,    // two depth passes
                  conv_net<3, 96, 5, 3, 13, 1, 1, conv2d_attrs{}>,       // batch 3, fewer positions than a vector
                  conv_net<1, 96, 56, 56, 24, 1, 1, conv2d_attrs{}>,     // MobileNetV2's projection: two threads
                  model<clip<add<bias_add<conv2d<input<"x", f32, 2, 96, 9, 11>, weight<"w", f32, 20, 96, 1, 1>>,
                                          weight<"b", f32, 20>>,
                                 input<"r", f32, 2, 20, 9, 11>>,
                             0.f, 6.f>>,
                  model<relu<pointwise::bn>>, model<hardswish<pointwise::bn>>> {};

namespace depthwise {
using x = input<"x", f32, 1, 12, 17, 21>;
using dw = conv2d<x, weight<"w", f32, 12, 1, 3, 3>, {.padding = {1, 1}, .groups = 12}>;
using b = weight<"b", f32, 12>;
using bn = batch_norm<dw, weight<"bn.gamma", f32, 12>, weight<"bn.beta", f32, 12>, weight<"bn.mean", f32, 12>,
                      weight<"bn.var", f32, 12>>;
}  // namespace depthwise

struct depthwise_conv_models
    : model_group<"depthwise conv2d: row tails, channel multipliers, strides, dilation, 5×5, one pixel, epilogues, "
                  "rows split across threads",
                  conv_net<1, 8, 10, 7, 8, 3, 3, conv2d_attrs{.padding = {1, 1}, .groups = 8}>,  // rows shorter than a vector
                  conv_net<2, 5, 17, 33, 10, 3, 3, conv2d_attrs{.padding = {1, 1}, .groups = 5}>,  // multiplier 2, batch 2
                  conv_net<1, 6, 23, 41, 6, 5, 5, conv2d_attrs{.stride = {2, 2}, .padding = {2, 2}, .groups = 6}>,
                  conv_net<1, 4, 12, 70, 4, 3, 3, conv2d_attrs{.padding = {2, 2}, .dilation = {2, 2}, .groups = 4}>,
                  conv_net<1, 3, 9, 19, 3, 3, 1, conv2d_attrs{.stride = {1, 2}, .padding = {1, 0}, .groups = 3}>,
                  conv_net<1, 4, 1, 1, 4, 3, 3, conv2d_attrs{.padding = {1, 1}, .groups = 4}>,
                  conv_net<1, 5, 6, 9, 5, 2, 2, conv2d_attrs{.stride = {2, 2}, .groups = 5}>,  // no padding, even window
                  conv_net<1, 32, 56, 56, 32, 3, 3, conv2d_attrs{.padding = {1, 1}, .groups = 32}>,  // two threads
                  // Strided on 16 rows or more: two threads split the output rows, odd counts included.
                  conv_net<1, 24, 67, 45, 24, 3, 3, conv2d_attrs{.stride = {2, 2}, .padding = {1, 1}, .groups = 24}>,
                  conv_net<1, 16, 61, 40, 32, 5, 5, conv2d_attrs{.stride = {2, 1}, .padding = {2, 2}, .groups = 16}>,
                  conv_net<1, 32, 50, 50, 32, 3, 3,
                           conv2d_attrs{.stride = {2, 2}, .padding = {2, 2}, .dilation = {2, 2}, .groups = 32}>,
                  model<clip<bias_add<depthwise::dw, depthwise::b>, 0.f, 6.f>>,  // MobileNet's relu6
                  model<clip<depthwise::bn, 0.f, 6.f>>, model<hardswish<bias_add<depthwise::dw, depthwise::b>>>,
                  model<silu<depthwise::bn>>, model<relu<add<depthwise::dw, input<"r", f32, 1, 12, 17, 21>>>>> {};

/// Small images of a stride-1 depthwise conv2d that keeps the width, computed as one run of
/// positions from the unpadded input with masked taps (AVX-512): epilogues, multipliers,
/// batches, a 5×5 window, rows dropped by the padding, and two threads whose last planes end
/// inside a vector.
namespace flat_dw {
template <class X, std::int64_t C, std::int64_t O, int K>
using conv = conv2d<X, weight<"w", f32, O, 1, K, K>, {.padding = {K / 2, K / 2}, .groups = static_cast<int>(C)}>;
using x7 = input<"x", f32, 2, 24, 7, 7>;
using x14 = input<"x", f32, 1, 16, 14, 14>;
using x9 = input<"x", f32, 1, 8, 9, 9>;
using bn = batch_norm<conv<x9, 8, 8, 5>, weight<"bn.gamma", f32, 8>, weight<"bn.beta", f32, 8>,
                      weight<"bn.mean", f32, 8>, weight<"bn.var", f32, 8>>;
}  // namespace flat_dw

struct flat_depthwise_models
    : model_group<"depthwise conv2d on small images as one run of positions: epilogues, multipliers, batches, 5×5, "
                  "rows dropped, two threads",
                  model<clip<bias_add<flat_dw::conv<flat_dw::x7, 24, 48, 3>, weight<"b", f32, 48>>, 0.f, 6.f>>,
                  model<relu<add<flat_dw::conv<flat_dw::x14, 16, 16, 3>, input<"r", f32, 1, 16, 14, 14>>>>,
                  model<silu<flat_dw::bn>>,
                  conv_net<1, 6, 9, 11, 6, 3, 3, conv2d_attrs{.padding = {0, 1}, .groups = 6}>,
                  conv_net<1, 960, 7, 7, 960, 3, 3, conv2d_attrs{.padding = {1, 1}, .groups = 960}>,
                  conv_net<1, 5, 3, 5, 5, 3, 3, conv2d_attrs{.padding = {1, 1}, .groups = 5}>> {};

/// A 1×1 expansion read only by a depthwise convolution, large enough to be fused
/// (`cpu.conv2d_expand_depthwise`): a last panel of fewer channels, a last tile of positions past
/// the image, stride 2 on odd sizes, a 5×5 window, each stage's activation or none, batch 2, two
/// threads, batch norms; the same expansion also returned, and one with both a bias and a batch
/// norm, which are not fused.
namespace expand {
template <class X, std::int64_t C, std::int64_t E>
using relu6_1x1 = clip<bias_add<conv2d<X, weight<"e.w", f32, E, C, 1, 1>, {}>, weight<"e.b", f32, E>>, 0.f, 6.f>;
using x = input<"x", f32, 1, 5, 61, 67>;
using e = relu6_1x1<x, 5, 67>;  // 1.1 MB, 4087 positions
using d = clip<bias_add<conv2d<e, weight<"d.w", f32, 67, 1, 3, 3>, {.padding = {1, 1}, .groups = 67}>,
                        weight<"d.b", f32, 67>>,
               0.f, 6.f>;
using x2 = input<"x", f32, 2, 7, 90, 91>;
using e2 = hardswish<bias_add<conv2d<x2, weight<"e.w", f32, 40, 7, 1, 1>, {}>, weight<"e.b", f32, 40>>>;  // 1.3 MB
using d2 = bias_add<conv2d<e2, weight<"d.w", f32, 40, 1, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}, .groups = 40}>,
                    weight<"d.b", f32, 40>>;
using d3 = relu<bias_add<conv2d<e, weight<"d.w", f32, 67, 1, 5, 5>, {.stride = {2, 2}, .padding = {2, 2}, .groups = 67}>,
                         weight<"d.b", f32, 67>>>;
template <class X, std::int64_t E>
using bn = batch_norm<X, weight<"bn.gamma", f32, E>, weight<"bn.beta", f32, E>, weight<"bn.mean", f32, E>,
                      weight<"bn.var", f32, E>>;
using d4 = relu<bn<conv2d<relu<bn<conv2d<x, weight<"e.w", f32, 67, 5, 1, 1>, {}>, 67>>, weight<"d.w", f32, 67, 1, 3, 3>,
                          {.padding = {1, 1}, .groups = 67}>,
                   67>>;
template <class X>
using bn2 = batch_norm<X, weight<"bn2.gamma", f32, 67>, weight<"bn2.beta", f32, 67>, weight<"bn2.mean", f32, 67>,
                       weight<"bn2.var", f32, 67>>;
using d5 = bn2<conv2d<bn<bias_add<conv2d<x, weight<"e.w", f32, 67, 5, 1, 1>, {}>, weight<"e.b", f32, 67>>, 67>,
                      weight<"d.w", f32, 67, 1, 3, 3>, {.padding = {1, 1}, .groups = 67}>>;
}  // namespace expand

struct expand_depthwise_models
    : model_group<"1×1 expansion fused with the depthwise conv2d reading it: panel and tile tails, strides, "
                  "activations or none, batches, batch norms, a shared expansion",
                  model<expand::d>, model<expand::d2>, model<expand::d3>, model<expand::d, expand::e>,
                  model<expand::d4>, model<expand::d5>> {};

/// A depthwise convolution read only by a 1×1 projection with a bias or batch norm
/// (`cpu.conv2d_depthwise_project`), planar where the model's input and result are its own and
/// channels-last inside a chain: channel counts that are no multiple of a vector, odd sizes,
/// stride 2, dilation, a 5×5 window, a residual (planar and NHWC), batch 2, bands of rows that
/// cross the threads' shares (7 positions a row: bands of 7 rows).
namespace dwp {
template <class X, std::int64_t C, std::int64_t K, conv2d_attrs A>
using dw = conv2d<X, weight<"d.w", f32, C, 1, K, K>, A>;
template <class X, std::int64_t C, std::int64_t O>
using project = bias_add<conv2d<X, weight<"p.w", f32, O, C, 1, 1>>, weight<"p.b", f32, O>>;
template <class X, std::int64_t C>
using bn = batch_norm<X, weight<"bn.gamma", f32, C>, weight<"bn.beta", f32, C>, weight<"bn.mean", f32, C>,
                      weight<"bn.var", f32, C>>;
// Planar: the caller's input and result.
using x = input<"x", f32, 2, 24, 10, 9>;
using plain = project<clip<bn<dw<x, 24, 3, {.padding = {1, 1}, .groups = 24}>, 24>, 0.f, 6.f>, 24, 20>;
using residual = add<project<relu<bias_add<dw<x, 24, 5, {.padding = {2, 2}, .groups = 24}>, weight<"d.b", f32, 24>>>, 24, 24>,
                     x>;
// Channels-last: a first layer writes NHWC, a 3×3 convolution reads the projection and writes the
// planar result.
using xs = input<"x", f32, 2, 3, 21, 19>;
using stem = relu<bias_add<conv2d<xs, weight<"s.w", f32, 40, 3, 3, 3>, {.padding = {1, 1}}>, weight<"s.b", f32, 40>>>;
using dilated = add<bn<conv2d<hardswish<bias_add<dw<stem, 40, 3, {.padding = {2, 2}, .dilation = {2, 2}, .groups = 40}>,
                                                 weight<"d.b", f32, 40>>>,
                              weight<"p.w", f32, 40, 40, 1, 1>>,
                       40>,
                    stem>;
using head = conv2d<dilated, weight<"h.w", f32, 8, 40, 3, 3>, {.padding = {1, 1}}>;
using stem33 = clip<conv2d<xs, weight<"s.w", f32, 33, 3, 3, 3>, {.padding = {1, 1}}>, 0.f, 6.f>;
using strided = project<relu<bias_add<dw<stem33, 33, 3, {.stride = {2, 2}, .padding = {1, 1}, .groups = 33}>,
                                      weight<"d.b", f32, 33>>>,
                        33, 17>;  // [2, 17, 11, 10]
using head2 = conv2d<strided, weight<"h.w", f32, 5, 17, 3, 3>, {.padding = {1, 1}}>;
// Rows of 7 positions, 30 of them: bands of 7 rows, split 15 / 15 on two threads.
using xn = input<"x", f32, 1, 3, 30, 7>;
using narrow = project<clip<bias_add<dw<relu<bias_add<conv2d<xn, weight<"s.w", f32, 48, 3, 3, 3>, {.padding = {1, 1}}>,
                                                      weight<"s.b", f32, 48>>>,
                                       48, 3, {.padding = {1, 1}, .groups = 48}>,
                                    weight<"d.b", f32, 48>>,
                           0.f, 6.f>,
                      48, 24>;
using head3 = conv2d<narrow, weight<"h.w", f32, 4, 24, 3, 3>, {.padding = {1, 1}}>;
}  // namespace dwp

struct depthwise_project_models
    : model_group<"depthwise conv2d fused with the 1×1 projection reading it: planar and channels-last, tails, "
                  "strides, dilation, residuals, batch norms, bands across threads",
                  model<dwp::plain>, model<dwp::residual>, model<dwp::head>, model<dwp::head2>, model<dwp::head3>> {};

// A MobileNet-style chain that the cpu plan keeps channels-last (NHWC) from its first
// convolution to the pooling: channel counts that are no multiple of a vector, odd image sizes,
// a batch, strides, padding, a 5×5 and a dilated depthwise convolution, a residual.
namespace nhwc {
using x = input<"x", f32, 2, 3, 13, 11>;
using s = clip<bias_add<conv2d<x, weight<"s.w", f32, 24, 3, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}}>, weight<"s.b", f32, 24>>,
               0.f, 6.f>;  // [2, 24, 7, 6], written NHWC from the planar input
using d = clip<bias_add<conv2d<s, weight<"d.w", f32, 24, 1, 3, 3>, {.padding = {1, 1}, .groups = 24}>, weight<"d.b", f32, 24>>,
               0.f, 6.f>;
using p = bias_add<conv2d<d, weight<"p.w", f32, 20, 24, 1, 1>>, weight<"p.b", f32, 20>>;
using e = relu<bias_add<conv2d<p, weight<"e.w", f32, 40, 20, 1, 1>>, weight<"e.b", f32, 40>>>;
using d2 = relu<bias_add<conv2d<e, weight<"d2.w", f32, 40, 1, 5, 5>, {.stride = {2, 2}, .padding = {2, 2}, .groups = 40}>,
                         weight<"d2.b", f32, 40>>>;  // [2, 40, 4, 3]
using r = add<bias_add<conv2d<d2, weight<"r.w", f32, 40, 40, 1, 1>>, weight<"r.b", f32, 40>>, d2>;
using dd = conv2d<r, weight<"dd.w", f32, 40, 1, 3, 3>, {.padding = {2, 2}, .dilation = {2, 2}, .groups = 40}>;
using head = dense<flatten<global_avg_pool2d<dd>>, weight<"f.w", f32, 10, 40>>;
// The same 1×1 convolution as `e` on a planar input, its result planar: a kernel of its own.
using twin = relu<bias_add<conv2d<input<"x2", f32, 2, 20, 7, 6>, weight<"t.w", f32, 40, 20, 1, 1>>, weight<"t.b", f32, 40>>>;
// A view reads the chain's last convolution: every value stays planar.
using viewed = dense<flatten<conv2d<d, weight<"v.w", f32, 4, 24, 1, 1>>>, weight<"v.f", f32, 3, 168>>;
// Fused expansions (1.07 MB per image) inside a chain, read and written NHWC: a 3×3 window of
// stride 1 with ReLU6 on both stages; a strided 5×5 one with batch norms and hard swish on odd
// rows; 104 channels, no multiple of a vector or a panel.
using xe = input<"x", f32, 2, 8, 57, 45>;
using pe = relu<bias_add<conv2d<xe, weight<"pe.w", f32, 16, 8, 1, 1>>, weight<"pe.b", f32, 16>>>;  // NHWC from planar
using ee = expand::relu6_1x1<pe, 16, 104>;
using de = clip<bias_add<conv2d<ee, weight<"de.w", f32, 104, 1, 3, 3>, {.padding = {1, 1}, .groups = 104}>,
                         weight<"de.b", f32, 104>>,
                0.f, 6.f>;
using qe = bias_add<conv2d<de, weight<"qe.w", f32, 20, 104, 1, 1>>, weight<"qe.b", f32, 20>>;
using he = dense<flatten<global_avg_pool2d<qe>>, weight<"fe.w", f32, 10, 20>>;
using ee2 = hardswish<expand::bn<conv2d<pe, weight<"e2.w", f32, 104, 16, 1, 1>, {}>, 104>>;
using de2 = hardswish<batch_norm<conv2d<ee2, weight<"d2.w", f32, 104, 1, 5, 5>,
                                        {.stride = {2, 2}, .padding = {2, 2}, .groups = 104}>,
                                 weight<"g2", f32, 104>, weight<"b2", f32, 104>, weight<"m2", f32, 104>,
                                 weight<"v2", f32, 104>>>;
using q2 = conv2d<de2, weight<"q2.w", f32, 12, 104, 1, 1>>;
using he2 = dense<flatten<global_avg_pool2d<q2>>, weight<"f2.w", f32, 5, 12>>;
// First layers written NHWC directly: 3 → 72 channels (a group of four vectors, then one) by a
// 7×7 window of stride 2 on an odd image; a 1×1 down to 4 channels, read NHWC by a dilated 3×3
// convolution of four input channels with a residual.
using xd = input<"x", f32, 2, 3, 23, 41>;
using sd = relu<bias_add<conv2d<xd, weight<"sd.w", f32, 72, 3, 7, 7>, {.stride = {2, 2}, .padding = {3, 3}}>,
                         weight<"sd.b", f32, 72>>>;  // [2, 72, 12, 21]
using wd = conv2d<sd, weight<"wd.w", f32, 72, 1, 3, 3>, {.padding = {1, 1}, .groups = 72}>;
using pd = conv2d<wd, weight<"pd.w", f32, 4, 72, 1, 1>>;
using rd = add<bias_add<conv2d<pd, weight<"rd.w", f32, 4, 4, 3, 3>, {.padding = {2, 2}, .dilation = {2, 2}}>,
                        weight<"rd.b", f32, 4>>,
               pd>;
using hd = dense<flatten<global_avg_pool2d<rd>>, weight<"fd.w", f32, 6, 4>>;
// MobileNet's first layer: 3 → 24 channels (two vectors with AVX-512, three with AVX) by a 3×3
// window of stride 2, ReLU6 and no bias.
using sd2 = clip<conv2d<xd, weight<"s2.w", f32, 24, 3, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}}>, 0.f, 6.f>;
using hd2 =
    flatten<global_avg_pool2d<conv2d<sd2, weight<"w2.w", f32, 24, 1, 3, 3>, {.padding = {1, 1}, .groups = 24}>>>;
// ResNet-style chains kept channels-last by the wide direct kernel (more than four input
// channels) and NHWC pooling: a 5×5 reading the planar input, a ceil_mode max pooling, a 3×3
// with a residual, a strided 3×3 beside a strided 1×1 projection added to it, a dilated window
// with asymmetric padding, an average pooling counting its padding; 20 → 40 → 72 channels (a
// panel and a half, then two panels and a vector: no multiple of a vector).
using xw = input<"x", f32, 2, 20, 19, 33>;
using aw = relu<bias_add<conv2d<xw, weight<"aw.w", f32, 40, 20, 5, 5>, {.padding = {2, 2}}>, weight<"aw.b", f32, 40>>>;
using mw = max_pool2d<aw, {.size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}, .ceil_mode = true}>;  // [2, 40, 10, 17]
using bw = relu<add<bias_add<conv2d<mw, weight<"bw.w", f32, 40, 40, 3, 3>, {.padding = {1, 1}}>, weight<"bw.b", f32, 40>>,
                    mw>>;
using pw = conv2d<bw, weight<"pw.w", f32, 72, 40, 1, 1>, {.stride = {2, 2}}>;  // [2, 72, 5, 9]
using cw = relu<add<bias_add<conv2d<bw, weight<"cw.w", f32, 72, 40, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}}>,
                             weight<"cw.b", f32, 72>>,
                    pw>>;
using dw = conv2d<cw, weight<"dw.w", f32, 72, 72, 3, 3>, {.padding = {2, 1}, .padding_end = {1, 2}, .dilation = {2, 2}}>;
using vw = avg_pool2d<dw, {.size = {2, 2}, .stride = {1, 1}, .padding = {1, 1}, .count_include_pad = true}>;
using hw = dense<flatten<global_avg_pool2d<vw>>, weight<"fw.w", f32, 7, 72>>;
// Planar results read from the chain: a wide convolution (its sums transposed) and a grouped one
// (copying its NHWC input into padded planes).
using ow = relu<bias_add<conv2d<bw, weight<"ow.w", f32, 24, 40, 3, 3>, {.padding = {1, 1}}>, weight<"ow.b", f32, 24>>>;
using gw = conv2d<bw, weight<"gw.w", f32, 8, 20, 3, 3>, {.stride = {2, 2}, .groups = 2}>;
// ... and a wide convolution whose residual is a planar input: its result planar too.
using rw = relu<add<bias_add<conv2d<bw, weight<"rw.w", f32, 40, 40, 3, 3>, {.padding = {1, 1}}>, weight<"rw.b", f32, 40>>,
                    input<"r", f32, 2, 40, 10, 17>>>;
// A block of 18 rows with planar input, output and residual (ResNet's block alone): the second
// convolution's sums are transposed a row at a time as they are computed.
using xt = input<"x", f32, 1, 20, 18, 7>;
using at = relu<bias_add<conv2d<xt, weight<"at.w", f32, 40, 20, 3, 3>, {.padding = {1, 1}}>, weight<"at.b", f32, 40>>>;
using rt = relu<add<bias_add<conv2d<at, weight<"rt.w", f32, 40, 40, 3, 3>, {.padding = {1, 1}}>, weight<"rt.b", f32, 40>>,
                    input<"r", f32, 1, 40, 18, 7>>>;
// Blocks adding their own input (`relu<add<conv2d<x>, x>>`, the compile-time benchmark's
// chain): the convolution's input and the residual are one value, kept channels-last.
using xs = input<"x", f32, 1, 24, 9, 11>;
using s0 = relu<conv2d<xs, weight<"s0.w", f32, 24, 24, 3, 3>, {.padding = {1, 1}}>>;
using s1 = relu<add<conv2d<s0, weight<"s1.w", f32, 24, 24, 3, 3>, {.padding = {1, 1}}>, s0>>;
using s2 = relu<add<bias_add<conv2d<s1, weight<"s2.w", f32, 24, 24, 1, 1>>, weight<"s2.b", f32, 24>>, s1>>;
using hs = dense<flatten<global_avg_pool2d<s2>>, weight<"fs.w", f32, 3, 24>>;
// Channels-last poolings of 88 channels: more than one group of four vectors with either
// vector width, so a group's last vector is whole in one group and a rest in the last.
using xq = input<"x", f32, 1, 6, 15, 13>;
using aq = relu<bias_add<conv2d<xq, weight<"aq.w", f32, 88, 6, 3, 3>, {.padding = {1, 1}}>, weight<"aq.b", f32, 88>>>;
using mq = max_pool2d<aq, {.size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}}>;  // [1, 88, 8, 7]
using vq = avg_pool2d<mq, {.size = {2, 2}, .stride = {1, 1}}>;
using hq = dense<flatten<global_avg_pool2d<vq>>, weight<"fq.w", f32, 4, 88>>;
// Depthwise rows of several blocks of positions (83 and 42 columns): a residual read
// channels-last, stride 2, and padding wider than a block (10: its first columns read no tap).
using xr = input<"x", f32, 1, 3, 9, 83>;
using sr = relu<bias_add<conv2d<xr, weight<"sr.w", f32, 20, 3, 3, 3>, {.padding = {1, 1}}>, weight<"sr.b", f32, 20>>>;
using dr = relu<add<bias_add<conv2d<sr, weight<"dr.w", f32, 20, 1, 3, 3>, {.padding = {1, 1}, .groups = 20}>,
                             weight<"dr.b", f32, 20>>,
                    sr>>;
using d2r = conv2d<dr, weight<"d2r.w", f32, 20, 1, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}, .groups = 20}>;  // [1, 20, 5, 42]
using d3r = conv2d<d2r, weight<"d3r.w", f32, 20, 1, 3, 3>, {.padding = {10, 10}, .groups = 20}>;  // [1, 20, 23, 60]
using hr = dense<flatten<global_avg_pool2d<d3r>>, weight<"fr.w", f32, 5, 20>>;
// 1×1 convolutions on two threads: an image of 7 rows split by panels of output channels (100
// channels: an odd last vector with either width), one of them adding a residual; one of 17
// rows split by rows, which leaves each thread's last positions to tiles smaller than a full one.
using xp = input<"x", f32, 1, 3, 14, 14>;
using sp = relu<bias_add<conv2d<xp, weight<"sp.w", f32, 160, 3, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}}>,
                         weight<"sp.b", f32, 160>>>;  // [1, 160, 7, 7]
using pp = relu<bias_add<conv2d<sp, weight<"pp.w", f32, 100, 160, 1, 1>>, weight<"pp.b", f32, 100>>>;
using qp = add<bias_add<conv2d<pp, weight<"qp.w", f32, 100, 100, 1, 1>>, weight<"qp.b", f32, 100>>, pp>;
using hp = dense<flatten<global_avg_pool2d<qp>>, weight<"fp.w", f32, 3, 100>>;
using xo = input<"x", f32, 1, 3, 17, 5>;
using so = relu<conv2d<xo, weight<"so.w", f32, 64, 3, 3, 3>, {.padding = {1, 1}}>>;
using po = relu<bias_add<conv2d<so, weight<"po.w", f32, 80, 64, 1, 1>>, weight<"po.b", f32, 80>>>;
using ho = dense<flatten<global_avg_pool2d<po>>, weight<"fo.w", f32, 3, 80>>;
// 1×1s whose weights pass 128 KB, which prefetch each pass's successor during the pass before
// (`pointwise_prefetches`): 160 → 232 channels (an odd count of vectors with either width, so
// the last pass is one of three) on 45 positions, and on 4 (one tile, which asks for more lines
// than it has input channels).
using xf = input<"x", f32, 1, 3, 10, 18>;
using sf = relu<bias_add<conv2d<xf, weight<"sf.w", f32, 160, 3, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}}>,
                         weight<"sf.b", f32, 160>>>;  // [1, 160, 5, 9]
using pf = clip<bias_add<conv2d<sf, weight<"pf.w", f32, 232, 160, 1, 1>>, weight<"pf.b", f32, 232>>, 0.f, 6.f>;
using hf = dense<flatten<global_avg_pool2d<pf>>, weight<"ff.w", f32, 3, 232>>;
using xg = input<"x", f32, 1, 3, 4, 3>;
using sg = relu<conv2d<xg, weight<"sg.w", f32, 160, 3, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}}>>;  // [1, 160, 2, 2]
using pg = add<bias_add<conv2d<sg, weight<"pg.w", f32, 232, 160, 1, 1>>, weight<"pg.b", f32, 232>>,
               conv2d<sg, weight<"qg.w", f32, 232, 160, 1, 1>>>;
using hg = dense<flatten<global_avg_pool2d<pg>>, weight<"fg.w", f32, 2, 232>>;
// A 1×1 deeper than 1024 channels on a channels-last image (`nhwc_pointwise` up to 2048, as
// ResNet-50's 2048 → 512 on 7×7): 1536 → 40 with a bias and a ReLU on 3×3 positions.
using xk = input<"x", f32, 1, 3, 6, 6>;
using sk = relu<conv2d<xk, weight<"sk.w", f32, 1536, 3, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}}>>;  // [1, 1536, 3, 3]
using pk = relu<bias_add<conv2d<sk, weight<"pk.w", f32, 40, 1536, 1, 1>>, weight<"pk.b", f32, 40>>>;
using hk = dense<flatten<global_avg_pool2d<pk>>, weight<"fk.w", f32, 3, 40>>;
// Grouped convolutions of whole vectors per group, written channels-last (`nhwc_grouped_wide`):
// 4 groups of 16 after a first layer (one vector a group with AVX-512), with a bias and a ReLU;
// 2 groups of 48 of stride 2 on a planar batch of two, adding a strided 1×1's result (three
// vectors a group with AVX-512: a pair, then one), split by panels on two threads.
using xgw = input<"x", f32, 1, 3, 10, 10>;
using sgw = relu<conv2d<xgw, weight<"sgw.w", f32, 64, 3, 3, 3>, {.padding = {1, 1}}>>;
using ggw = relu<bias_add<conv2d<sgw, weight<"ggw.w", f32, 64, 16, 3, 3>, {.padding = {1, 1}, .groups = 4}>,
                         weight<"ggw.b", f32, 64>>>;
using pgw = bias_add<conv2d<ggw, weight<"pgw.w", f32, 24, 64, 1, 1>>, weight<"pgw.b", f32, 24>>;
using hgw = dense<flatten<global_avg_pool2d<pgw>>, weight<"fgw.w", f32, 3, 24>>;
using xgx = input<"x", f32, 2, 32, 9, 11>;
using dgx = conv2d<xgx, weight<"dgx.w", f32, 96, 32, 1, 1>, {.stride = {2, 2}}>;  // [2, 96, 5, 6]
using ggx = relu<add<bias_add<conv2d<xgx, weight<"ggx.w", f32, 96, 16, 3, 3>,
                                     {.stride = {2, 2}, .padding = {1, 1}, .groups = 2}>,
                              weight<"ggx.b", f32, 96>>,
                     dgx>>;
using hgx = dense<flatten<global_avg_pool2d<ggx>>, weight<"fgx.w", f32, 3, 96>>;
// A squeeze-and-excite block in a channels-last chain (`channels_last_operands`): the image's
// channel means through two 1×1s and a sigmoid scale it ([1, 32, 1, 1] × [1, 32, 9, 7], the
// scale read as either layout), a 1×1 projects it, and a residual add of two channels-last
// images and a scalar-like [1, 1, 1, 1] weight product follow.
using xse = input<"x", f32, 1, 3, 9, 7>;
using sse = relu<conv2d<xse, weight<"sse.w", f32, 32, 3, 3, 3>, {.padding = {1, 1}}>>;
using dse = relu<conv2d<sse, weight<"dse.w", f32, 32, 1, 3, 3>, {.padding = {1, 1}, .groups = 32}>>;
using q1se = relu<bias_add<conv2d<global_avg_pool2d<dse>, weight<"q1se.w", f32, 8, 32, 1, 1>>, weight<"q1se.b", f32, 8>>>;
using q2se = sigmoid<bias_add<conv2d<q1se, weight<"q2se.w", f32, 32, 8, 1, 1>>, weight<"q2se.b", f32, 32>>>;
using mse = multiply<dse, q2se>;
using pse = conv2d<mse, weight<"pse.w", f32, 32, 32, 1, 1>>;
using ase = multiply<weight<"ase.g", f32, 1, 1, 1, 1>, add<pse, sse>>;
using hse = dense<flatten<global_avg_pool2d<relu<conv2d<ase, weight<"rse.w", f32, 16, 32, 1, 1>>>>>,
                  weight<"fse.w", f32, 3, 16>>;
// Strided 1×1s on their gathered positions (`nhwc_pointwise_strided`), as ResNet's
// downsampling: strides 2 and 3 on 17 rows (split by rows on two threads), with a bias, the
// residual of a strided 3×3 beside it and a ReLU, 44 channels (no whole number of vectors);
// and stride 2 onto 7×7 (split by panels), 96 → 104 channels with a bias and a ReLU6.
using xz = input<"x", f32, 1, 3, 34, 26>;
using sz = relu<bias_add<conv2d<xz, weight<"sz.w", f32, 48, 3, 3, 3>, {.padding = {1, 1}}>, weight<"sz.b", f32, 48>>>;
using cz = relu<bias_add<conv2d<sz, weight<"cz.w", f32, 44, 48, 3, 3>, {.stride = {2, 3}, .padding = {1, 1}}>,
                         weight<"cz.b", f32, 44>>>;  // [1, 44, 17, 9]
using pz = relu<add<bias_add<conv2d<sz, weight<"pz.w", f32, 44, 48, 1, 1>, {.stride = {2, 3}}>, weight<"pz.b", f32, 44>>,
                    cz>>;
using hz = dense<flatten<global_avg_pool2d<pz>>, weight<"fz.w", f32, 5, 44>>;
using xy = input<"x", f32, 1, 3, 28, 28>;
using sy = relu<conv2d<xy, weight<"sy.w", f32, 96, 3, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}}>>;  // [1, 96, 14, 14]
using py = clip<bias_add<conv2d<sy, weight<"py.w", f32, 104, 96, 1, 1>, {.stride = {2, 2}}>, weight<"py.b", f32, 104>>,
                0.f, 6.f>;  // [1, 104, 7, 7]
using hy = dense<flatten<global_avg_pool2d<py>>, weight<"fy.w", f32, 3, 104>>;
// Wide convolutions in depth passes (`wide_depth_passes`: over 256 KB of weights on an image of
// few rows): 300 input channels (two passes of 150 with AVX-512, one with AVX) onto 40 and 36
// output channels (an odd count of vectors with either width: a last panel of one vector); a
// 3×3 dilated along the rows (not Winograd's) with a bias, a residual from a 1×1 and a ReLU; a
// strided one dilated along the columns with asymmetric padding. Split by panels on two
// threads; a batch of two.
using xv = input<"x", f32, 2, 3, 9, 11>;
using sv = relu<bias_add<conv2d<xv, weight<"sv.w", f32, 300, 3, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}}>,
                         weight<"sv.b", f32, 300>>>;  // [2, 300, 5, 6]
using pv = conv2d<sv, weight<"pv.w", f32, 40, 300, 1, 1>>;
using av = relu<add<bias_add<conv2d<sv, weight<"av.w", f32, 40, 300, 3, 3>, {.padding = {2, 1}, .dilation = {2, 1}}>,
                             weight<"av.b", f32, 40>>,
                    pv>>;
using cv = conv2d<sv, weight<"cv.w", f32, 36, 300, 3, 3>,
                  {.stride = {2, 2}, .padding = {1, 2}, .padding_end = {2, 1}, .dilation = {1, 2}}>;  // [2, 36, 3, 3]
using hv = dense<flatten<global_avg_pool2d<av>>, weight<"fv.w", f32, 3, 40>>;
using hv2 = flatten<global_avg_pool2d<cv>>;
// ... and on 14×13, 300 → 72 channels (three panels, the last of one vector with AVX-512): the
// sums of 182 positions leave room for slices of 138 channels, three passes of 100 (Winograd's
// with AVX).
using xu = input<"x", f32, 1, 3, 28, 26>;
using su = relu<conv2d<xu, weight<"su.w", f32, 300, 3, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}}>>;  // [1, 300, 14, 13]
using uu = relu<bias_add<conv2d<su, weight<"uu.w", f32, 72, 300, 3, 3>, {.padding = {1, 1}}>, weight<"uu.b", f32, 72>>>;
using hu = dense<flatten<global_avg_pool2d<uu>>, weight<"fu.w", f32, 3, 72>>;
}  // namespace nhwc

/// Small images' convolutions with their epilogue and the pooling after them, which the cpu
/// backend fuses (`cpu.conv2d_bias_act_pool`): average pooling with padding and ceil_mode after a
/// clip over a batch, max pooling after a batch norm, after a 3×3 of 16 → 32 channels (Winograd's size, kept
/// planar) on two threads.
namespace pooled {
using avg = model<avg_pool2d<clip<bias_add<conv2d<input<"x", f32, 3, 5, 11, 13>, weight<"w", f32, 7, 5, 3, 3>,
                                                  {.padding = {1, 1}}>,
                                           weight<"b", f32, 7>>,
                                  -0.5f, 0.5f>,
                             {.size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}, .ceil_mode = true}>>;
using max_bn = model<max_pool2d<batch_norm<conv2d<input<"x", f32, 1, 2, 20, 20>, weight<"w", f32, 24, 2, 5, 5>>,
                                           weight<"g", f32, 24>, weight<"be", f32, 24>, weight<"m", f32, 24>,
                                           weight<"v.var", f32, 24>>,
                                {.size = {2, 2}}>>;
using wide = model<max_pool2d<relu<bias_add<conv2d<input<"x", f32, 2, 16, 9, 9>, weight<"w", f32, 32, 16, 3, 3>,
                                                   {.padding = {1, 1}}>,
                                            weight<"b", f32, 32>>>,
                              {.size = {2, 2}, .stride = {2, 2}}>>;
}  // namespace pooled

struct pooled_conv_models
    : model_group<"conv2d, bias or batch norm, activation and pooling as one step: padding, ceil_mode, batches",
                  pooled::avg, pooled::max_bn, pooled::wide> {};

/// 3×3 convolutions of stride 1 with 16 or more channels each way, which the cpu backend runs
/// by Winograd F(2×2, 3×3): tiles cut by the image's last row and column (odd sizes), padding
/// 0 to 2, channel counts that fill no vector or panel, a planar input read with gathers, a
/// planar result with a planar residual, blocks whose tiles are no multiple of the register
/// tile's, batches, and a small image split by panels of output channels on two threads.
namespace winograd {
using x = input<"x", f32, 2, 20, 11, 13>;
using a = relu<bias_add<conv2d<x, weight<"a.w", f32, 36, 20, 3, 3>, {.padding = {1, 1}}>, weight<"a.b", f32, 36>>>;
using b = conv2d<a, weight<"b.w", f32, 40, 36, 3, 3>>;  // [2, 40, 9, 11]: no padding
using c = clip<add<bias_add<conv2d<b, weight<"c.w", f32, 40, 40, 3, 3>, {.padding = {2, 2}}>, weight<"c.b", f32, 40>>,
                   input<"r", f32, 2, 40, 11, 13>>,
               -1.f, 2.f>;  // its planar residual makes it the chain's planar result
// 72 → 120 channels on 5×7 (one block of 12 tiles): 15 vectors with AVX (a last lone vector), 7½
// with AVX-512; split by panels on two threads.
using xp = input<"x", f32, 1, 72, 5, 7>;
using p = relu<bias_add<conv2d<xp, weight<"p.w", f32, 120, 72, 3, 3>, {.padding = {1, 1}}>, weight<"p.b", f32, 120>>>;
using q = add<conv2d<p, weight<"q.w", f32, 16, 120, 3, 3>, {.padding = {1, 1}}>, conv2d<p, weight<"s.w", f32, 16, 120, 1, 1>>>;
using hq = dense<flatten<global_avg_pool2d<q>>, weight<"f.w", f32, 3, 16>>;
// A NaN or infinity reaches the 3×3 convolution through the 1×1 and its ReLU at one position:
// outputs whose window misses it stay finite, though their tile's 4×4 input patch holds it.
using xs = input<"x", f32, 2, 16, 6, 9>;
using s = relu<conv2d<xs, weight<"g.w", f32, 24, 16, 1, 1>>>;  // NHWC, written from the planar input
using t = bias_add<conv2d<s, weight<"t.w", f32, 16, 24, 3, 3>, {.padding = {1, 1}}>, weight<"t.b", f32, 16>>;
}  // namespace winograd

struct winograd_models
    : model_group<"3×3 convolutions of stride 1 by Winograd F(2×2, 3×3) on cpu: partial tiles, padding 0 to 2, channel "
                  "tails, planar inputs and results, partial register tiles, batches, panels split across threads, "
                  "NaN and infinities in one output of a tile",
                  model<winograd::c>, model<winograd::hq>, model<winograd::t>,
                  conv_net<1, 16, 56, 9, 16, 3, 3, conv2d_attrs{.padding = {1, 1}}>> {};

struct channels_last_models
    : model_group<"chains kept channels-last: channel and position tails, strides, padding, dilation, residuals, "
                  "a planar twin of a channels-last step, a view that keeps them planar, fused expansions, "
                  "first layers written channels-last, wide direct convolutions, poolings, blocks adding their input, "
                  "poolings of several channel groups, depthwise rows of several blocks, 1×1s split by panels or rows, "
                  "1×1s that prefetch their next pass's weights, a 1×1 of 1536 input channels, grouped convolutions, "
                  "a squeeze-and-excite block, "
                  "strided 1×1s on gathered positions, wide convolutions in depth passes",
                  model<nhwc::head>, model<nhwc::head, nhwc::twin>, model<nhwc::viewed>, model<nhwc::he>,
                  model<nhwc::he2>, model<nhwc::hd>, model<nhwc::hd2>, model<nhwc::hw, nhwc::ow, nhwc::gw, nhwc::rw>, model<nhwc::rt>, model<nhwc::hs>, model<nhwc::hq>,
                  model<nhwc::hr>, model<nhwc::hp>, model<nhwc::ho>, model<nhwc::hf>, model<nhwc::hg>, model<nhwc::hk>, model<nhwc::hgw>, model<nhwc::hgx>, model<nhwc::hse>,
                  model<nhwc::hz>, model<nhwc::hy>, model<nhwc::hv, nhwc::hv2>, model<nhwc::hu>> {};

struct small_networks : model_group<"networks: chains, residual blocks, batch norms, pools, several results, fallbacks, "
                                    "repeated blocks",
                                    chain, block, normed, gain_mlp, pools, lenet, fork, eltwise, mixed, cnn, twins> {};

struct aliasing_outputs : model_group<"results that alias: a value returned twice and through views, results read again, "
                                      "an input returned as is",
                                      twice_and_views, results_read_again, input_as_result, one_region> {};
}  // namespace nets

/// Every layer op alone and fused (dense, elementwise, channels, pooling, layout); with the
/// tensor ops, `op_models` (conformance_ops.hpp).
using layer_op_models = model_list<nets::dense_models, nets::fused_dense_models, nets::elementwise_models,
                                   nets::channel_models, nets::pooling_models, nets::layout_models>;
/// conv2d over every shape class, fused, large, planar direct and pointwise.
using conv_shape_part = model_list<nets::conv_shape_models, nets::fused_conv_models, nets::large_conv_models,
                                   nets::planar_direct_models, nets::pointwise_conv_models>;
/// Depthwise convolutions alone and fused, channels-last chains, Winograd's, pooled ones.
using conv_depthwise_part =
    model_list<nets::depthwise_conv_models, nets::flat_depthwise_models, nets::expand_depthwise_models,
               nets::depthwise_project_models, nets::channels_last_models, nets::winograd_models, nets::pooled_conv_models>;
/// Every conv2d model: a backend whose law is heavy to compile runs the two parts in two
/// translation units.
using conv_models = decltype(conv_shape_part{} + conv_depthwise_part{});
/// Small networks and aliasing results.
using network_models = model_list<nets::small_networks, nets::aliasing_outputs>;

}  // namespace laws
