// cpu dense (alone and fused) and every other op against the reference.
#include <doctest/doctest.h>

#include "models/conformance.hpp"

using namespace partita;

namespace {
template <std::int64_t M, std::int64_t K, std::int64_t N>
using dense_x = dense<input<"x", f32, M, K>, weight<"w", f32, N, K>>;
template <std::int64_t N>
using bias = weight<"b", f32, N>;
}  // namespace

TEST_CASE("dense: one row, a few rows, many rows; odd depths and unit counts") {
  CHECK_CONFORMS(model<dense_x<1, 37, 13>>);
  CHECK_CONFORMS(model<dense_x<2, 300, 70>>);
  CHECK_CONFORMS(model<dense_x<5, 17, 33>>);    // fewer rows than the block
  CHECK_CONFORMS(model<dense_x<64, 784, 129>>);  // a column tail
  CHECK_CONFORMS(model<dense_x<13, 600, 40>>);   // depth over one pass, row tail
  CHECK_CONFORMS(model<dense<input<"x", f32, 2, 3, 20>, weight<"w", f32, 7, 20>>>);  // rank 3
}

TEST_CASE("fused dense composites") {
  using d = dense_x<3, 50, 21>;
  using n1 = model<relu<bias_add<d, bias<21>>>>;
  static_assert(count_functions<compiled<n1, cpu>::module, "cpu.dense_bias_act"> == 1);
  CHECK_CONFORMS(n1);
  using n2 = model<bias_add<dense_x<1, 784, 512>, bias<512>>>;
  static_assert(count_functions<compiled<n2, cpu>::module, "cpu.dense_bias"> == 1);
  CHECK_CONFORMS(n2);
  CHECK_CONFORMS(model<sigmoid<d>>);
  using n3 = model<partita::tanh<add<bias_add<d, bias<21>>, input<"r", f32, 3, 21>>>>;
  static_assert(count_functions<compiled<n3, cpu>::module, "cpu.dense_bias_add_act"> == 1);
  CHECK_CONFORMS(n3);
  CHECK_CONFORMS(model<clip<bias_add<dense_x<64, 33, 50>, bias<50>>, -0.25f, 0.25f>>);
}

TEST_CASE("the MLP: three fused steps") {
  using x = input<"x", f32, 1, 784>;
  using fc1 = relu<bias_add<dense<x, weight<"fc1.weight", f32, 512, 784>>, weight<"fc1.bias", f32, 512>>>;
  using fc2 = relu<bias_add<dense<fc1, weight<"fc2.weight", f32, 512, 512>>, weight<"fc2.bias", f32, 512>>>;
  using net = model<bias_add<dense<fc2, weight<"fc3.weight", f32, 10, 512>>, weight<"fc3.bias", f32, 10>>>;
  static_assert(compiled<net, cpu>::num_steps == 3);
  CHECK_CONFORMS(net);
}

TEST_CASE("elementwise ops over odd sizes, in place and broadcast") {
  using x = input<"x", f32, 3, 5, 7>;
  using y = input<"y", f32, 3, 5, 7>;
  CHECK_CONFORMS(model<relu<x>>);
  CHECK_CONFORMS(model<clip<x, -0.5f, 1.5f>>);
  CHECK_CONFORMS(model<sigmoid<x>>);
  CHECK_CONFORMS(model<partita::tanh<x>>);
  CHECK_CONFORMS(model<add<x, y>, subtract<x, y>, multiply<x, y>>);
  CHECK_CONFORMS(model<relu<add<x, y>>>);  // relu in place over the add's buffer
  CHECK_CONFORMS(model<multiply<x, input<"s", f32, 5, 1>>>);
  CHECK_CONFORMS(model<subtract<input<"s", f32, 7>, x>>);
}

TEST_CASE("bias_add and batch_norm along the channels") {
  using x = input<"x", f32, 2, 5, 3, 7>;
  CHECK_CONFORMS(model<bias_add<x, weight<"b", f32, 5>>>);
  CHECK_CONFORMS(model<bias_add<input<"v", f32, 4, 19>, weight<"b", f32, 19>, -1>>);
  CHECK_CONFORMS(model<batch_norm<x, weight<"g", f32, 5>, weight<"be", f32, 5>, weight<"m", f32, 5>, weight<"var", f32, 5>>>);
}

TEST_CASE("pooling: windows, strides, padding, ceil-free edges") {
  using x = input<"x", f32, 1, 3, 13, 38>;
  CHECK_CONFORMS(model<max_pool2d<x, {.size = {2, 2}}>>);
  CHECK_CONFORMS(model<max_pool2d<x, {.size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}}>>);
  CHECK_CONFORMS(model<max_pool2d<x, {.size = {3, 3}, .stride = {1, 1}, .padding = {1, 1}}>>);
  CHECK_CONFORMS(model<avg_pool2d<x, {.size = {3, 3}, .stride = {1, 1}, .padding = {1, 1}}>>);
  CHECK_CONFORMS(model<avg_pool2d<x, {.size = {3, 2}, .stride = {2, 3}, .padding = {1, 1}, .count_include_pad = true}>>);
  CHECK_CONFORMS(model<global_avg_pool2d<x>>);
  CHECK_CONFORMS(model<max_pool2d<input<"t", f32, 1, 2, 3, 3>, {.size = {5, 5}, .stride = {1, 1}, .padding = {2, 2}}>>);
  // Large enough to be split across threads by planes (ResNet's stem pooling, fewer channels).
  CHECK_CONFORMS(model<max_pool2d<input<"big", f32, 1, 32, 112, 112>, {.size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}}>>);
  // Rows too wide for the row buffers take the reference kernels.
  CHECK_CONFORMS(model<max_pool2d<input<"wide", f32, 1, 1, 2, 5000>, {.size = {2, 3}, .stride = {1, 2}, .padding = {0, 1}}>>);
  CHECK_CONFORMS(model<avg_pool2d<input<"wide", f32, 1, 1, 2, 5000>, {.size = {2, 3}, .stride = {1, 2}, .padding = {0, 1}}>>);
}

TEST_CASE("softmax, concatenate and views") {
  CHECK_CONFORMS(model<softmax<input<"x", f32, 3, 37>>>);
  CHECK_CONFORMS(model<softmax<input<"x", f32, 2, 5, 3>, 1>>);
  using a = input<"a", f32, 1, 3, 4, 4>;
  using b = input<"b", f32, 1, 5, 4, 4>;
  CHECK_CONFORMS(model<concatenate<1, relu<a>, b>>);
  CHECK_CONFORMS(model<reshape<flatten<sigmoid<a>>, 6, 8>>);
}
