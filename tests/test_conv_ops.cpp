// conv1d, conv_transpose2d, conv2d and pooling with end padding, depth_to_space and
// space_to_depth: their shape rules and verdicts as static_asserts, the printer's text, and
// golden outputs from PyTorch 1.13 (F.conv_transpose2d, F.conv1d and F.conv2d after F.pad,
// F.pixel_shuffle, ONNX's reshape-transpose definitions of DepthToSpace and SpaceToDepth) that
// the reference and cpu backends must reproduce. The inputs and weights are small multiples of
// 1/8 and 1/16, so every sum is exact in float and the golden values are exact too.
#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <partita/partita.hpp>

using namespace partita;

namespace {

// --- shapes ----------------------------------------------------------------------------------
using x1_4_7 = input<"x", f32, 1, 4, 7>;
static_assert(conv1d<x1_4_7, weight<"w", f32, 6, 4, 3>>::desc.out == shape_of<1, 6, 5>);
// On cpu a conv1d with a bias, a batch norm, a residual and an activation after it is one step.
using conv1d_fused = model<relu<add<batch_norm<bias_add<conv1d<x1_4_7, weight<"w", f32, 4, 4, 3>, {.padding = 1}>,
                                                        weight<"b", f32, 4>>,
                                               weight<"g", f32, 4>, weight<"be", f32, 4>, weight<"m", f32, 4>,
                                               weight<"v", f32, 4>>,
                                    input<"r", f32, 1, 4, 7>>>>;
static_assert(compiled<conv1d_fused, cpu>::num_steps == 1);
static_assert(count_functions<compiled<conv1d_fused, cpu>::module, "cpu.conv1d_bias_add_act"> == 1);
static_assert(count_functions<compiled<model<conv1d<x1_4_7, weight<"w", f32, 6, 4, 3>>>, cpu>::module, "cpu.conv1d_bias"> == 0);
// conv_transpose2d with a bias (and a batch norm, a residual, an activation) is one cpu step
using ct_x = input<"x", f32, 1, 4, 5, 5>;
using ct_fused = model<relu<add<bias_add<conv_transpose2d<ct_x, weight<"w", f32, 4, 3, 2, 2>, {.stride = {2, 2}}>, weight<"b", f32, 3>>,
                               input<"r", f32, 1, 3, 10, 10>>>>;
static_assert(count_functions<compiled<ct_fused, cpu>::module, "cpu.conv_transpose2d_bias_add_act"> == 1);
static_assert(compiled<ct_fused, cpu>::num_steps == 1);
using ct_bn = model<batch_norm<conv_transpose2d<ct_x, weight<"w", f32, 4, 3, 2, 2>>, weight<"g", f32, 3>, weight<"be", f32, 3>,
                               weight<"m", f32, 3>, weight<"v", f32, 3>>>;
static_assert(count_functions<compiled<ct_bn, cpu>::module, "cpu.conv_transpose2d_bias"> == 1);
static_assert(conv1d<x1_4_7, weight<"w", f32, 6, 2, 3>, {.stride = 2, .padding = 1, .padding_end = 2, .groups = 2}>::desc.out ==
              shape_of<1, 6, 4>);
static_assert(conv1d<x1_4_7, weight<"w", f32, 3, 4, 3>, {.padding = 2, .dilation = 3}>::desc.out == shape_of<1, 3, 5>);
// An end padding equal to the begin padding is the default: one node, one set of attributes.
static_assert(conv1d<x1_4_7, weight<"w", f32, 6, 4, 3>, {.padding = 1, .padding_end = 1}>::desc.at ==
              conv1d<x1_4_7, weight<"w", f32, 6, 4, 3>, {.padding = 1}>::desc.at);

using x1_2_4_5 = input<"x", f32, 1, 2, 4, 5>;
using w3_2_3_3 = weight<"w", f32, 3, 2, 3, 3>;
static_assert(conv2d<x1_2_4_5, w3_2_3_3, {.padding = {0, 1}, .padding_end = {2, 0}}>::desc.out == shape_of<1, 3, 4, 4>);
static_assert(conv2d<x1_2_4_5, w3_2_3_3, {.stride = {2, 2}, .padding = {0, 1}, .padding_end = {2, 0}}>::desc.out ==
              shape_of<1, 3, 2, 2>);
static_assert(conv2d<x1_2_4_5, w3_2_3_3, {.padding = {1, 1}, .padding_end = {1, -1}}>::desc.at ==
              conv2d<x1_2_4_5, w3_2_3_3, {.padding = {1, 1}}>::desc.at);
static_assert(end_padding(conv2d<x1_2_4_5, w3_2_3_3, {.padding = {1, 1}, .padding_end = {0, -1}}>::desc.at, 0) == 0 &&
              end_padding(conv2d<x1_2_4_5, w3_2_3_3, {.padding = {1, 1}, .padding_end = {0, -1}}>::desc.at, 1) == 1);
static_assert(max_pool2d<x1_2_4_5, {.size = {2, 2}, .stride = {2, 2}, .padding = {0, 0}, .padding_end = {0, 1}}>::desc.out ==
              shape_of<1, 2, 2, 3>);  // TF "SAME" on a 5-wide row
static_assert(avg_pool2d<x1_2_4_5, {.size = {3, 3}, .stride = {1, 1}, .padding = {1, 0}, .padding_end = {1, 2}}>::desc.out ==
              shape_of<1, 2, 4, 5>);

using x1_2_3_3 = input<"x", f32, 1, 2, 3, 3>;
static_assert(conv_transpose2d<x1_2_3_3, weight<"w", f32, 2, 2, 3, 3>, {.stride = {2, 2}, .padding = {1, 1},
                                                                      .output_padding = {1, 1}}>::desc.out ==
              shape_of<1, 2, 6, 6>);
static_assert(conv_transpose2d<x1_2_3_3, weight<"w", f32, 2, 5, 2, 2>, {.stride = {2, 2}}>::desc.out ==
              shape_of<1, 5, 6, 6>);  // 2x upsampling
static_assert(conv_transpose2d<x1_2_3_3, weight<"w", f32, 2, 3, 4, 4>, {.stride = {2, 2}, .padding = {1, 1}, .groups = 2}>::desc
                  .out == shape_of<1, 6, 6, 6>);
static_assert(conv_transpose2d<input<"x", f32, 1, 4, 3, 2>, weight<"w", f32, 4, 1, 2, 3>,
                               {.stride = {1, 2}, .padding = {1, 0}, .padding_end = {0, 1}, .output_padding = {1, 1},
                                .dilation = {2, 1}, .groups = 2}>::desc.out == shape_of<1, 2, 5, 5>);
static_assert(conv_transpose2d<x1_2_3_3, weight<"w", f32, 2, 2, 1, 1>>::desc.out == shape_of<1, 2, 3, 3>);

using x1_8_2_3 = input<"x", f32, 1, 8, 2, 3>;
static_assert(depth_to_space<x1_8_2_3, 2>::desc.out == shape_of<1, 2, 4, 6>);
static_assert(depth_to_space<x1_8_2_3, 2, depth_to_space_mode::crd>::desc.at.depth_order == depth_to_space_mode::crd);
static_assert(depth_to_space<x1_8_2_3, 1>::desc.out == x1_8_2_3::desc.out);
static_assert(space_to_depth<input<"x", f32, 1, 2, 4, 6>, 2>::desc.out == shape_of<1, 8, 2, 3>);
static_assert(space_to_depth<depth_to_space<x1_8_2_3, 2>, 2>::desc.out == x1_8_2_3::desc.out);

// --- verdicts of rejected nodes (each: a compile-fail test) -----------------------------------
template <class... S>
constexpr auto args(S... s) {
  return std::array{arg_info{s}...};
}
static_assert(rules::conv1d(detail::to_attrs(conv1d_attrs{}), args(shape_of<1, 4, 7>, shape_of<6, 3, 3>).data(), 2).v.what ==
              problem::conv1d_channels);
static_assert(rules::conv1d(detail::to_attrs(conv1d_attrs{.groups = 3}), args(shape_of<1, 4, 7>, shape_of<6, 2, 3>).data(), 2)
                  .v.what == problem::conv1d_channels);
static_assert(rules::conv1d(detail::to_attrs(conv1d_attrs{}), args(shape_of<1, 4, 7>, shape_of<6, 4, 9>).data(), 2).v.what ==
              problem::conv1d_window);
static_assert(rules::conv1d(detail::to_attrs(conv1d_attrs{.stride = 0}), args(shape_of<1, 4, 7>, shape_of<6, 4, 3>).data(), 2)
                  .v.what == problem::conv1d_window);
static_assert(rules::conv1d(detail::to_attrs(conv1d_attrs{}), args(shape_of<4, 7>, shape_of<6, 4, 3>).data(), 2).v.what ==
              problem::rank_mismatch);
static_assert(rules::conv2d(detail::to_attrs(conv2d_attrs{.padding_end = {-2, 0}}),
                            args(shape_of<1, 2, 4, 5>, shape_of<3, 2, 3, 3>).data(), 2)
                  .v.what == problem::conv2d_window);
static_assert(rules::conv_transpose2d(attrs{}, args(shape_of<1, 2, 3, 3>, shape_of<3, 2, 3, 3>).data(), 2).v.what ==
              problem::conv_transpose2d_channels);
static_assert(rules::conv_transpose2d(detail::to_attrs(conv_transpose2d_attrs{.groups = 4}),
                                      args(shape_of<1, 2, 3, 3>, shape_of<2, 2, 3, 3>).data(), 2)
                  .v.what == problem::conv_transpose2d_channels);
static_assert(rules::conv_transpose2d(detail::to_attrs(conv_transpose2d_attrs{.output_padding = {1, 0}}),
                                      args(shape_of<1, 2, 3, 3>, shape_of<2, 2, 3, 3>).data(), 2)
                  .v.what == problem::conv_transpose2d_output);  // not smaller than a stride of 1
static_assert(rules::conv_transpose2d(detail::to_attrs(conv_transpose2d_attrs{.padding = {2, 2}}),
                                      args(shape_of<1, 2, 1, 1>, shape_of<2, 2, 3, 3>).data(), 2)
                  .v.what == problem::conv_transpose2d_output);  // the padding removes every row
static_assert(rules::depth_to_space(detail::block_attrs(3, depth_to_space_mode::dcr), args(shape_of<1, 8, 2, 3>).data(), 1)
                  .v.what == problem::depth_to_space_block);
static_assert(rules::space_to_depth(detail::block_attrs(2, depth_to_space_mode::dcr), args(shape_of<1, 2, 5, 6>).data(), 1)
                  .v.what == problem::space_to_depth_block);
static_assert(rules::space_to_depth(detail::block_attrs(0, depth_to_space_mode::dcr), args(shape_of<1, 2, 4, 6>).data(), 1)
                  .v.what == problem::space_to_depth_block);

// --- golden outputs ------------------------------------------------------------------------------
namespace golden {
// transpose_stride2: [1, 2, 6, 6]
constexpr float transpose_stride2[] = {
    0.515625f, -0.9609375f, 0.0f, 0.8046875f, 0.203125f, -0.65625f, 0.5703125f, -0.640625f, -1.078125f,
    1.09375f, -0.390625f, 0.0703125f, -0.3125f, 0.921875f, -0.109375f, -0.3671875f, 0.453125f, -0.75f,
    0.65625f, 0.25f, -0.2734375f, -0.53125f, 0.59375f, 0.2421875f, -0.0625f, 0.828125f, 0.140625f, -0.8203125f,
    -0.375f, 0.7734375f, -0.28125f, 0.0703125f, 0.1953125f, 0.3046875f, -0.046875f, -0.234375f, 0.34375f,
    0.40625f, -0.09375f, 0.25f, 0.1875f, 0.21875f, 0.4609375f, 0.6328125f, -1.03125f, 0.2421875f, -0.546875f,
    -0.0859375f, -0.25f, -0.0625f, 0.03125f, -0.21875f, 0.3125f, 0.59375f, 0.65625f, -1.078125f, -0.1171875f,
    -0.5703125f, 0.546875f, 0.1953125f, -0.125f, 0.1875f, 0.15625f, 0.03125f, -0.28125f, -0.46875f, -0.34375f,
    -0.8671875f, 0.2109375f, 0.859375f, 0.046875f, -0.140625f
};
// transpose_grouped: [1, 2, 5, 5]
constexpr float transpose_grouped[] = {
    0.7734375f, -0.2109375f, -0.8671875f, 0.375f, 0.125f, -0.328125f, 0.6484375f, 0.671875f, -0.8828125f,
    -0.21875f, -0.3984375f, 0.84375f, -0.265625f, -0.375f, 0.5625f, 0.5078125f, -0.515625f, -0.46875f,
    0.78125f, -0.546875f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.2734375f, 0.4609375f, -0.6640625f, -0.2421875f,
    0.828125f, 0.03125f, -0.3125f, 0.0546875f, 1.0703125f, -0.5f, -0.0546875f, 0.1328125f, -0.0078125f,
    -0.296875f, -0.265625f, 0.296875f, 0.171875f, -0.2890625f, 0.1015625f, 0.5390625f, 0.0f, 0.0f, 0.0f, 0.0f,
    0.0f
};
// transpose_upsample: [2, 5, 4, 6]
constexpr float transpose_upsample[] = {
    0.8984375f, -0.390625f, -0.2890625f, -0.09375f, 0.859375f, -0.15625f, -0.046875f, -0.296875f, -0.34375f,
    0.890625f, -0.28125f, -0.2578125f, -0.6875f, 0.5f, -0.2578125f, -0.28125f, 0.890625f, -0.34375f, 0.5f,
    -0.6875f, -0.15625f, 0.859375f, -0.09375f, -0.2890625f, 0.640625f, -0.6484375f, -0.1015625f, 0.09375f,
    0.953125f, -0.0625f, -0.3046875f, 0.0390625f, -0.15625f, -0.40625f, -0.1875f, -0.3125f, -0.6875f, 0.5f,
    -0.3515625f, -0.375f, 0.703125f, -0.53125f, 0.5f, 0.5f, -0.25f, -0.125f, -0.28125f, -0.03125f, -0.2109375f,
    0.7265625f, 0.828125f, -0.1640625f, -0.2890625f, 0.921875f, -0.5625f, -0.21875f, 0.03125f, -0.21875f,
    -0.09375f, -0.21875f, -0.6875f, -0.6875f, 0.890625f, -0.3203125f, -0.2265625f, 0.765625f, 0.5f, 0.5f,
    -0.34375f, -0.21875f, -0.46875f, -0.21875f, 0.125f, -0.125f, -0.46875f, 0.765625f, -0.34375f, -0.3203125f,
    0.8125f, -0.4765625f, -0.2265625f, -0.03125f, 0.890625f, -0.125f, 0.5f, -0.6875f, -0.09375f, 0.921875f,
    0.03125f, -0.1640625f, -0.6875f, 0.5f, -0.2890625f, -0.3125f, 0.828125f, -0.40625f, -0.1328125f,
    0.2109375f, -0.28125f, -0.53125f, -0.25f, -0.375f, -0.0390625f, 0.8984375f, 0.703125f, -0.2890625f,
    -0.3515625f, 0.859375f, 0.5f, 0.5f, -0.1875f, -0.0625f, -0.15625f, 0.09375f, -0.6875f, -0.6875f, 0.953125f,
    -0.2578125f, -0.1015625f, 0.890625f, -0.7109375f, 0.640625f, -0.28125f, -0.140625f, 0.8671875f, -0.203125f,
    0.359375f, -0.6640625f, -0.296875f, 0.8828125f, -0.234375f, -0.265625f, -0.6796875f, 0.453125f, -0.25f,
    -0.328125f, 0.8984375f, -0.390625f, 0.546875f, -0.6953125f, -0.109375f, 0.8515625f, -0.046875f, -0.296875f,
    -0.5f, 0.8515625f, -0.1640625f, -0.0234375f, 0.890625f, -0.1796875f, 0.5703125f, 0.2890625f, -0.1796875f,
    -0.3359375f, -0.2109375f, -0.2421875f, -0.75f, 0.3828125f, -0.4140625f, -0.4921875f, 0.640625f,
    -0.6484375f, 0.4765625f, 0.5703125f, -0.2734375f, -0.0546875f, -0.3046875f, 0.0390625f, -0.734375f,
    -0.5703125f, 0.84375f, -0.203125f, -0.2734375f, 0.8828125f, 0.78125f, 0.5f, -0.0625f, -0.21875f, -0.1875f,
    -0.21875f, -0.671875f, -0.7265625f, 0.90625f, -0.359375f, -0.2109375f, 0.7265625f, 0.40625f, 0.5f,
    -0.4375f, -0.21875f, -0.5625f, -0.21875f, 0.21875f, -0.8046875f, -0.375f, 0.8046875f, -0.25f, -0.28125f,
    -0.640625f, 0.7109375f, -0.2421875f, -0.1015625f, 0.875f, -0.1953125f, 0.59375f, -0.6484375f, 0.0f,
    0.9609375f, 0.125f, -0.125f, -0.703125f, 0.4296875f, -0.3046875f, -0.3828125f, 0.8125f, -0.4765625f,
    0.4296875f, 0.1484375f, -0.2578125f, -0.4140625f, -0.2265625f, -0.2578125f, -0.875f, -0.7109375f,
    0.765625f, -0.28125f, -0.2890625f, 0.8671875f, 0.5234375f, 0.6171875f, -0.1640625f, 0.0546875f,
    -0.1328125f, 0.2109375f, -0.625f, -0.6796875f, 1.015625f, -0.25f, -0.0390625f, 0.8984375f
};
// conv1d_grouped: [1, 6, 4]
constexpr float conv1d_grouped[] = {
    0.3984375f, -1.140625f, -1.140625f, 0.484375f, -0.1875f, -0.890625f, 1.21875f, 0.484375f, -0.03125f, 0.25f,
    0.3125f, -0.109375f, -0.4609375f, -0.25f, -0.796875f, 0.5546875f, -0.53125f, 0.484375f, 0.9921875f,
    -0.265625f, 0.5859375f, -0.5625f, -0.484375f, -0.4921875f
};
// conv2d_asymmetric: [1, 3, 2, 2]
constexpr float conv2d_asymmetric[] = {
    -0.625f, 0.734375f, -0.078125f, 0.1328125f, 1.078125f, -0.28125f, 1.234375f, -0.03125f, -0.0390625f,
    -0.109375f, -0.71875f, 0.6953125f
};
// pixel_shuffle: [1, 2, 4, 6]
constexpr float pixel_shuffle[] = {
    -1.375f, 0.5f, 0.375f, -0.625f, -0.75f, 1.125f, -0.5f, 1.375f, 1.25f, 0.25f, 0.125f, -0.875f, 1.0f, 0.0f,
    -0.125f, -1.125f, -1.25f, 0.625f, -1.0f, 0.875f, 0.75f, -0.25f, -0.375f, -1.375f, 0.375f, -0.625f, -0.75f,
    1.125f, 1.0f, 0.0f, 1.25f, 0.25f, 0.125f, -0.875f, -1.0f, 0.875f, -0.125f, -1.125f, -1.25f, 0.625f, 0.5f,
    -0.5f, 0.75f, -0.25f, -0.375f, -1.375f, 1.375f, 0.375f
};
// depth_to_space_dcr: [1, 2, 4, 6]
constexpr float depth_to_space_dcr[] = {
    -1.375f, -0.5f, 0.375f, 1.25f, -0.75f, 0.125f, 0.375f, 1.25f, -0.75f, 0.125f, 1.0f, -1.0f, 1.0f, -1.0f,
    -0.125f, 0.75f, -1.25f, -0.375f, -0.125f, 0.75f, -1.25f, -0.375f, 0.5f, 1.375f, 0.5f, 1.375f, -0.625f,
    0.25f, 1.125f, -0.875f, -0.625f, 0.25f, 1.125f, -0.875f, 0.0f, 0.875f, 0.0f, 0.875f, -1.125f, -0.25f,
    0.625f, -1.375f, -1.125f, -0.25f, 0.625f, -1.375f, -0.5f, 0.375f
};
// space_to_depth: [1, 8, 2, 3]
constexpr float space_to_depth[] = {
    -1.375f, -0.75f, -0.125f, -0.5f, 0.125f, 0.75f, 0.375f, 1.0f, -1.25f, 1.25f, -1.0f, -0.375f, 0.375f, 1.0f,
    -1.25f, 1.25f, -1.0f, -0.375f, -0.75f, -0.125f, 0.5f, 0.125f, 0.75f, 1.375f, 0.5f, 1.125f, -1.125f, 1.375f,
    -0.875f, -0.25f, -0.625f, 0.0f, 0.625f, 0.25f, 0.875f, -1.375f, -0.625f, 0.0f, 0.625f, 0.25f, 0.875f,
    -1.375f, 1.125f, -1.125f, -0.5f, -0.875f, -0.25f, 0.375f
};
}  // namespace golden

// The inputs and weights the golden outputs were computed from: x[i] = ((37 i) mod 23 - 11) / 8,
// w[i] = ((53 i) mod 19 - 9) / 16, in row-major order.
std::vector<float> x_values(std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i * 37 % 23) - 11) / 8.f;
  return v;
}
std::vector<float> w_values(std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i * 53 % 19) - 9) / 16.f;
  return v;
}

/// `Net` (one input "x", at most one weight "w") on backend B, with one and two threads on cpu.
template <class Net, class B>
std::vector<float> run_on(int threads) {
  using exe_t = compiled<Net, B>;
  auto exe = std::make_unique<exe_t>();
  const std::vector<float> w = exe_t::plan.weights.size() ? w_values(exe_t::plan.weights[0].shp.elements()) : std::vector<float>{};
  if constexpr (exe_t::weight_bytes > 0) {
    const shape& ws = exe_t::plan.weights[0].shp;
    weight_set set;
    set.add("w", w, std::span(ws.dims.data(), static_cast<std::size_t>(ws.rank)));
    exe->bind(set);
  }
  if constexpr (std::is_same_v<B, cpu>) exe->template state<cpu>().set_threads(threads);
  std::vector<float> y(static_cast<std::size_t>(exe_t::output(0).shp.elements()));
  exe->run(x_values(exe_t::input(0).shp.elements()), y);
  return y;
}

template <class Net, std::size_t N>
void check_golden(const float (&want)[N]) {
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    const std::vector<float> ref = run_on<Net, reference>(threads), got = run_on<Net, cpu>(threads);
    REQUIRE(ref.size() == N);
    REQUIRE(got.size() == N);
    for (std::size_t i = 0; i < N; ++i) {
      CAPTURE(i);
      CHECK(ref[i] == want[i]);  // exact: every partial sum is a small multiple of 2^-7
      CHECK(got[i] == want[i]);
    }
  }
}

}  // namespace

TEST_CASE("conv_transpose2d matches PyTorch: stride, padding, output_padding, groups, dilation, end padding, batches") {
  check_golden<model<conv_transpose2d<x1_2_3_3, weight<"w", f32, 2, 2, 3, 3>,
                                      {.stride = {2, 2}, .padding = {1, 1}, .output_padding = {1, 1}}>>>(
      golden::transpose_stride2);
  // PyTorch has no end padding: the golden output is its unpadded result cropped by (1, 0) and (0, 1).
  check_golden<model<conv_transpose2d<input<"x", f32, 1, 4, 3, 2>, weight<"w", f32, 4, 1, 2, 3>,
                                      {.stride = {1, 2}, .padding = {1, 0}, .padding_end = {0, 1},
                                       .output_padding = {1, 1}, .dilation = {2, 1}, .groups = 2}>>>(
      golden::transpose_grouped);
  check_golden<model<conv_transpose2d<input<"x", f32, 2, 3, 2, 3>, weight<"w", f32, 3, 5, 2, 2>, {.stride = {2, 2}}>>>(
      golden::transpose_upsample);
}

TEST_CASE("conv1d and conv2d with end padding match PyTorch's convolutions of the padded input") {
  check_golden<model<conv1d<x1_4_7, weight<"w", f32, 6, 2, 3>, {.stride = 2, .padding = 1, .padding_end = 2, .groups = 2}>>>(
      golden::conv1d_grouped);
  check_golden<model<conv2d<x1_2_4_5, w3_2_3_3, {.stride = {2, 2}, .padding = {0, 1}, .padding_end = {2, 0}}>>>(
      golden::conv2d_asymmetric);
}

TEST_CASE("depth_to_space (DCR, and CRD as pixel_shuffle) and space_to_depth match PyTorch") {
  check_golden<model<depth_to_space<x1_8_2_3, 2, depth_to_space_mode::crd>>>(golden::pixel_shuffle);
  check_golden<model<depth_to_space<x1_8_2_3, 2>>>(golden::depth_to_space_dcr);
  check_golden<model<space_to_depth<input<"x", f32, 1, 2, 4, 6>, 2>>>(golden::space_to_depth);
}

TEST_CASE("print shows the new ops' attributes, and the end padding where it differs") {
  using net = model<
      conv1d<input<"a", f32, 1, 4, 7>, weight<"w1", f32, 8, 4, 3>, {.padding = 1, .padding_end = 0}>,
      depth_to_space<conv_transpose2d<input<"b", f32, 1, 8, 2, 3>, weight<"w2", f32, 8, 4, 1, 1>,
                                      {.stride = {2, 2}, .output_padding = {1, 0}}>,
                     2, depth_to_space_mode::crd>,
      space_to_depth<max_pool2d<conv2d<input<"c", f32, 1, 2, 4, 5>, weight<"w3", f32, 3, 2, 3, 3>,
                                       {.padding = {1, 1}, .padding_end = {1, 3}}>,
                                {.size = {2, 2}, .padding = {0, 0}, .padding_end = {0, 1}}>,
                     2>>;
  const std::string text = print(module_of<net>{});
  INFO(text);
  for (const char* line :
       {"conv1d(%a, @w1, stride=1, padding=1, padding_end=0, dilation=1, groups=1) : f32[1, 8, 6]",
        "conv_transpose2d(%b, @w2, stride=[2, 2], padding=[0, 0], output_padding=[1, 0], dilation=[1, 1], groups=1) : "
        "f32[1, 4, 4, 5]",
        ", block=2, CRD) : f32[1, 1, 8, 10]",
        "conv2d(%c, @w3, stride=[1, 1], padding=[1, 1], padding_end=[1, 3], dilation=[1, 1], groups=1) : f32[1, 3, 4, 7]",
        ", size=[2, 2], stride=[2, 2], padding=[0, 0], padding_end=[0, 1]) : f32[1, 3, 2, 4]",
        ", block=2) : f32[1, 12, 1, 2]"}) {
    CAPTURE(line);
    CHECK(text.find(line) != std::string::npos);
  }
  // Where the end padding is the begin padding, it is not printed.
  CHECK(print(module_of<model<conv2d<x1_2_4_5, w3_2_3_3, {.padding = {1, 1}, .padding_end = {1, 1}}>>>{}).find(
            "padding_end") == std::string::npos);
}
