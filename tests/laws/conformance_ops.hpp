#pragma once
// The conformance law's models of the tensor ops (laws/conformance.hpp): matmul, transpose,
// squeeze and unsqueeze, slice, split, pad, resize and ceil_mode pooling, convolutions padded
// differently at each end, conv1d, conv_transpose2d, depth_to_space and space_to_depth, gather,
// the reductions, layer and RMS norms, softmax on other axes, the math and activation functions,
// literals and scalars, over extents that are not multiples of 8 or 16, each group with the
// bound its ops allow (`bound::...`); what the law feeds index inputs; and the whole list, with
// the layers of conformance_models.hpp.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

#include <partita/partita.hpp>

#include "conformance_models.hpp"

namespace laws {

/// What the law feeds one input: its element count and dtype; for an index input (i32, i64)
/// also `extent`, the smallest extent of an axis that a gather reads it along, its values being
/// drawn from [-extent, extent). A quantized input (u8, i8) is drawn over its dtype's range.
struct input_spec {
  std::size_t elements = 0;
  partita::dtype type = partita::dtype::f32;
  std::int64_t extent = 0;
};

/// What the law reads of one output: its element count and dtype, which decides how it is
/// compared (floats by relative error, integers by their difference in units of the last place).
struct output_spec {
  std::size_t elements = 0;
  partita::dtype type = partita::dtype::f32;
};

/// The inputs of executable `Exe` as the law feeds them, read from its plan's gather steps.
template <class Exe>
constexpr std::array<input_spec, Exe::num_inputs> input_specs() {
  const auto& p = Exe::plan;
  std::array<input_spec, Exe::num_inputs> s{};
  for (std::size_t i = 0; i < s.size(); ++i)
    s[i] = {static_cast<std::size_t>(p.inputs[i].shp.elements()), p.inputs[i].type, 0};
  for (const partita::plan_step& step : p.steps) {
    const partita::graph_node& n = p.nodes[static_cast<std::size_t>(step.node)];
    if (n.op != partita::op_id::gather) continue;
    const partita::buffer_ref& indices = p.ins[static_cast<std::size_t>(step.first_in + 1)];
    if (indices.kind != partita::storage::input) continue;
    const partita::shape& table = p.nodes[static_cast<std::size_t>(p.args[static_cast<std::size_t>(n.first_arg)])].out;
    const std::int64_t e = table[partita::normalize_axis(n.at->axis, table.rank)];
    std::int64_t& x = s[static_cast<std::size_t>(indices.index)].extent;
    x = x == 0 ? e : std::min(x, e);
  }
  return s;
}

namespace nets {
using namespace partita;

inline constexpr std::int64_t from_the_end =
    std::numeric_limits<std::int64_t>::min();  // slice's End walking back past 0

// -- matmul
namespace matmul_net {
using a = input<"a", f32, 2, 1, 5, 7>;
using b = input<"b", f32, 3, 7, 4>;
using q = input<"q", f32, 2, 3, 17, 33>;
using k = input<"k", f32, 2, 3, 9, 33>;
}  // namespace matmul_net

struct matmul_models
    : model_group<
          "matmul: the four transposes, broadcast batches, weight operands, row and column tails",
          model<matmul<input<"a", f32, 17, 33>, input<"b", f32, 33, 20>>>,
          model<matmul<matmul_net::a, matmul_net::b>>,  // [2, 1] by [3]: [2, 3, 5, 4]
          model<matmul<matmul_net::q, matmul_net::k, {.transpose_b = true}>>,  // Q·Kᵀ
          model<matmul<input<"a", f32, 3, 33, 17>, input<"b", f32, 3, 33, 9>, {.transpose_a = true}>>,
          model<matmul<input<"a", f32, 2, 1, 33, 5>, input<"b", f32, 3, 7, 33>,
                       {.transpose_a = true, .transpose_b = true}>>,
          model<matmul<input<"x", f32, 2, 9, 65>, weight<"w", f32, 65, 17>>>,
          model<matmul<weight<"w", f32, 6, 33>, input<"x", f32, 2, 33, 17>>>,  // a weight broadcast over x's batch
          model<matmul<input<"x", f32, 4, 65>, weight<"w", f32, 33, 65>, {.transpose_b = true}>>,
          model<matmul<input<"x", f32, 1, 65>, weight<"w", f32, 65, 129>>>,  // one row
          model<relu<matmul<input<"x", f32, 5, 7>, input<"y", f32, 7, 1>>>>,  // one column
                  // large enough for two threads
          model<matmul<input<"x", f32, 4, 65, 129>, weight<"w", f32, 129, 257>>>,
          model<matmul<input<"q", f32, 2, 4, 65, 33>, input<"k", f32, 2, 4, 129, 33>, {.transpose_b = true}>>> {
  static constexpr double tolerance = bound::accumulated;
};

// -- data movement
using x2_17_3_5 = input<"x", f32, 2, 17, 3, 5>;
using x3_33_5 = input<"x", f32, 3, 33, 5>;
using x17_9 = input<"x", f32, 17, 9>;

struct movement_models
    : model_group<"transpose, squeeze and unsqueeze: permutations of rank 2 to 5, views returned and read",
                  model<transpose<x2_17_3_5, 0, 2, 1, 3>>, model<transpose<input<"x", f32, 17, 33>, 1, 0>>,
                  model<transpose<x2_17_3_5, 3, 2, 1, 0>>,
                  model<transpose<input<"x", f32, 2, 3, 4, 5, 6>, 4, 0, 3, 1, 2>>,
                  model<squeeze<input<"x", f32, 1, 17, 1, 3>, 0, -2>, unsqueeze<input<"y", f32, 17, 3>, -1>,
                        neg<input<"y", f32, 17, 3>>>,  // views of inputs returned (copied), and a step
                  model<add<unsqueeze<input<"x", f32, 17, 3>, 0>, input<"y", f32, 5, 1, 3>>>,
                  model<transpose<relu<unsqueeze<input<"x", f32, 17, 3>, 1>>, 2, 1, 0>>,
                  model<transpose<input<"x", f32, 8, 129, 129>, 2, 0, 1>>> {  // large enough for two threads
  static constexpr double tolerance = bound::exact;
};

struct slicing_models
    : model_group<"slice (steps of both signs, clamped bounds), split read through get, pad",
                  model<slice<x3_33_5, 1, 2, 31, 3>>, model<slice<x3_33_5, 1, -1, from_the_end, -1>>,  // reversed
                  model<slice<x3_33_5, -1, 4, 0, -2>>, model<slice<x17_9, 0, -100, 100>>,
                  model<slice<x17_9, 1, 8, -100, -3>>, model<slice<x17_9, 0, 20, -18, -2>>,
                  model<slice<relu<x17_9>, -1, 3, 4>>,
                  model<get<split<input<"x", f32, 2, 65, 3>, 1, 16, 33, 16>, 0>,
                        get<split<input<"x", f32, 2, 65, 3>, 1, 16, 33, 16>, 1>,
                        get<split<input<"x", f32, 2, 65, 3>, 1, 16, 33, 16>, 2>>,
                  model<concatenate<-1, get<split<x17_9, -1, 4, 5>, 1>, get<split<x17_9, -1, 4, 5>, 0>>>,
                  model<pad<x2_17_3_5, dims<0, 1, 2, 0>, dims<1, 0, 3, 2>>>,
                  model<pad<input<"x", f32, 33>, dims<5>, dims<0>, -1.5f>>,
                  model<relu<pad<input<"x", f32, 3, 17>, dims<0, 0>, dims<2, 7>, 0.25f>>>,
                  // large enough for two threads
                  model<slice<input<"x", f32, 384, 513>, 1, 1, 512, 2>,
                        pad<input<"y", f32, 160, 513>, dims<1, 0>, dims<2, 3>>>> {
  static constexpr double tolerance = bound::exact;
};

struct resampling_models
    : model_group<"resize (nearest, bilinear, aligned corners) and ceil_mode pooling",
                  model<resize<input<"x", f32, 1, 3, 5, 7>, 10, 14>>,  // 2x nearest, YOLO's upsampling
                  model<resize<input<"x", f32, 2, 3, 5, 7>, 9, 4>>,    // nearest, shrinking
                  model<resize<input<"x", f32, 1, 3, 5, 7>, 11, 17, {.mode = resize_mode::bilinear}>>,
                  model<resize<input<"x", f32, 1, 2, 9, 6>, 4, 13, {.mode = resize_mode::bilinear, .align_corners = true}>>,
                  // Rows of whole vectors and a tail, shrinking, one output pixel, two threads.
                  model<resize<input<"x", f32, 1, 4, 6, 37>, 13, 80, {.mode = resize_mode::bilinear}>>,
                  model<resize<input<"x", f32, 2, 2, 16, 21>, 7, 10, {.mode = resize_mode::bilinear}>>,
                  model<resize<input<"x", f32, 1, 3, 5, 9>, 1, 1, {.mode = resize_mode::bilinear, .align_corners = true}>>,
                  model<resize<input<"x", f32, 1, 64, 28, 28>, 56, 56>>,
                  model<resize<input<"x", f32, 1, 32, 20, 24>, 33, 41, {.mode = resize_mode::bilinear}>>,
                  model<max_pool2d<input<"x", f32, 1, 3, 17, 17>, {.size = {3, 3}, .stride = {2, 2}, .ceil_mode = true}>>,
                  model<avg_pool2d<input<"x", f32, 1, 3, 17, 18>,
                                   {.size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}, .count_include_pad = true,
                                    .ceil_mode = true}>>,
                  model<avg_pool2d<input<"x", f32, 1, 3, 16, 16>, {.size = {3, 2}, .stride = {2, 3}, .ceil_mode = true}>>,
                  model<max_pool2d<input<"x", f32, 2, 5, 20, 23>,
                                   {.size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}, .padding_end = {0, 2},
                                    .ceil_mode = true}>>,
                  model<avg_pool2d<input<"x", f32, 1, 4, 11, 37>,
                                   {.size = {2, 4}, .stride = {2, 3}, .padding = {1, 2}, .ceil_mode = true}>>,
                  model<avg_pool2d<input<"x", f32, 1, 4, 11, 37>,
                                   {.size = {2, 4}, .stride = {2, 3}, .padding = {1, 2}, .padding_end = {0, 1},
                                    .count_include_pad = true, .ceil_mode = true}>>> {
  static constexpr double tolerance = bound::normalized;
};

// -- convolutions and pooling padded differently after each axis (ONNX pads, TF "SAME")
struct asymmetric_padding_models
    : model_group<"conv2d and pooling with end padding unlike the begin padding: strides, dilation, groups, small "
                  "images, fused, two threads",
                  model<conv2d<input<"x", f32, 1, 3, 11, 13>, weight<"w", f32, 5, 3, 3, 3>,
                               {.padding = {0, 0}, .padding_end = {2, 1}}>>,
                  model<conv2d<input<"x", f32, 2, 4, 15, 17>, weight<"w", f32, 9, 4, 3, 3>,
                               {.stride = {2, 2}, .padding = {0, 1}, .padding_end = {1, 0}}>>,  // TF "SAME", stride 2
                  model<conv2d<input<"x", f32, 1, 6, 9, 10>, weight<"w", f32, 6, 3, 3, 2>,
                               {.stride = {1, 2}, .padding = {2, 0}, .padding_end = {0, 3}, .dilation = {2, 1}, .groups = 2}>>,
                  model<conv2d<input<"x", f32, 1, 8, 10, 7>, weight<"w", f32, 8, 1, 3, 3>,
                               {.stride = {2, 2}, .padding = {1, 1}, .padding_end = {0, 2}, .groups = 8}>>,  // depthwise
                  model<relu<bias_add<conv2d<input<"x", f32, 1, 64, 5, 5>, weight<"w", f32, 40, 64, 3, 3>,
                                             {.padding = {1, 0}, .padding_end = {0, 2}}>,
                                      weight<"b", f32, 40>>>>,  // a small image, fused
                  model<conv2d<input<"x", f32, 1, 32, 30, 29>, weight<"w", f32, 48, 32, 3, 3>,
                               {.padding = {0, 1}, .padding_end = {2, 1}}>>,  // large enough for two threads
                  model<max_pool2d<input<"x", f32, 1, 3, 13, 14>, {.size = {3, 3}, .stride = {2, 2}, .padding = {0, 1},
                                                                   .padding_end = {1, 2}}>>,
                  model<avg_pool2d<input<"x", f32, 1, 3, 13, 14>, {.size = {3, 2}, .stride = {2, 1}, .padding = {1, 0},
                                                                   .padding_end = {2, 1}}>,
                        avg_pool2d<input<"x", f32, 1, 3, 13, 14>, {.size = {3, 3}, .stride = {2, 2}, .padding = {0, 1},
                                                                   .padding_end = {2, 2}, .count_include_pad = true}>>> {};

// -- conv1d, conv_transpose2d, depth_to_space and space_to_depth
struct convolution_models
    : model_group<"conv1d and conv_transpose2d: strides, padding at either end, dilation, groups, output_padding, "
                  "batches, tails, fused with a bias, batch norm, residual and activations, two threads",
                  model<conv1d<input<"x", f32, 2, 5, 37>, weight<"w", f32, 7, 5, 3>, {.padding = 1}>>,
                  model<conv1d<input<"x", f32, 1, 6, 40>, weight<"w", f32, 10, 3, 5>,
                               {.stride = 3, .padding = 2, .padding_end = 0, .dilation = 2, .groups = 2}>>,
                  model<relu<bias_add<conv1d<input<"x", f32, 1, 64, 9>, weight<"w", f32, 40, 64, 3>, {.padding = 1}>,
                                      weight<"b", f32, 40>>>>,  // few positions: vectors of channels on cpu
                  model<conv1d<input<"x", f32, 1, 8, 33>, weight<"w", f32, 8, 1, 3>, {.padding = 1, .groups = 8}>>,
                  model<conv_transpose2d<input<"x", f32, 1, 3, 5, 7>, weight<"w", f32, 3, 4, 3, 3>,
                                         {.stride = {2, 2}, .padding = {1, 1}, .output_padding = {1, 1}}>>,
                  model<conv_transpose2d<input<"x", f32, 2, 6, 4, 5>, weight<"w", f32, 6, 3, 4, 4>,
                                         {.stride = {2, 2}, .padding = {1, 1}, .groups = 2}>>,
                  model<conv_transpose2d<input<"x", f32, 1, 4, 7, 6>, weight<"w", f32, 4, 5, 3, 2>,
                                         {.stride = {1, 3}, .padding = {2, 0}, .padding_end = {0, 1},
                                          .output_padding = {0, 2}, .dilation = {2, 1}}>>,
                  model<conv_transpose2d<input<"x", f32, 1, 5, 3, 3>, weight<"w", f32, 5, 7, 1, 1>>>,
                  model<relu<bias_add<conv_transpose2d<input<"x", f32, 1, 16, 9, 11>, weight<"w", f32, 16, 8, 2, 2>,
                                                       {.stride = {2, 2}}>,
                                      weight<"b", f32, 8>>>>,
                  model<conv_transpose2d<input<"x", f32, 1, 8, 3, 3>, weight<"w", f32, 8, 1, 3, 3>,
                                         {.stride = {2, 2}, .groups = 8}>>,
                  model<conv_transpose2d<input<"x", f32, 1, 3, 4, 4>, input<"w", f32, 3, 2, 3, 3>>>,  // weights as an input
                  // large enough for two threads
                  model<conv1d<input<"x", f32, 1, 64, 1000>, weight<"w", f32, 64, 64, 3>, {.padding = 1}>>,
                  // conv1d fused with what follows (cpu.conv1d_*): bias, batch norm, residual, activations
                  model<relu<batch_norm<bias_add<conv1d<input<"x", f32, 2, 6, 29>, weight<"w", f32, 10, 6, 3>,
                                                        {.stride = 2, .padding = 1}>,
                                                 weight<"b", f32, 10>>,
                                        weight<"bn.g", f32, 10>, weight<"bn.b", f32, 10>, weight<"bn.m", f32, 10>,
                                        weight<"bn.v", f32, 10>>>>,
                  model<gelu<add<bias_add<conv1d<input<"x", f32, 1, 12, 50>, weight<"w", f32, 12, 12, 5>,
                                                 {.padding = 2, .dilation = 1}>,
                                          weight<"b", f32, 12>>,
                                 input<"r", f32, 1, 12, 50>>>>,
                  model<silu<conv1d<input<"x", f32, 1, 4, 21>, weight<"w", f32, 9, 4, 1>>>>,
                  model<clip<bias_add<conv1d<input<"x", f32, 1, 16, 45>, weight<"w", f32, 16, 1, 3>,
                                             {.padding = 1, .groups = 16}>,
                                      weight<"b", f32, 16>>,
                             0.f, 6.f>>,  // depthwise
                  model<add<bias_add<conv1d<input<"x", f32, 1, 64, 900>, weight<"w", f32, 64, 64, 3>, {.padding = 1}>,
                                     weight<"b", f32, 64>>,
                            input<"r", f32, 1, 64, 900>>>,
                  model<conv_transpose2d<input<"x", f32, 1, 64, 32, 31>, weight<"w", f32, 64, 32, 2, 2>,
                                         {.stride = {2, 2}}>>,
                  // conv_transpose2d fused with what follows (cpu.conv_transpose2d_*): bias, batch norm,
                  // residual, activations, groups, a batch, two threads
                  model<relu<batch_norm<bias_add<conv_transpose2d<input<"x", f32, 2, 6, 4, 5>, weight<"w", f32, 6, 5, 3, 3>,
                                                                  {.stride = {2, 2}, .padding = {1, 1},
                                                                   .output_padding = {1, 1}}>,
                                                 weight<"b", f32, 5>>,
                                        weight<"bn.g", f32, 5>, weight<"bn.b", f32, 5>, weight<"bn.m", f32, 5>,
                                        weight<"bn.v", f32, 5>>>>,
                  model<gelu<add<bias_add<conv_transpose2d<input<"x", f32, 1, 8, 5, 3>, weight<"w", f32, 8, 3, 2, 2>,
                                                           {.stride = {2, 2}, .groups = 2}>,
                                          weight<"b", f32, 6>>,
                                 input<"r", f32, 1, 6, 10, 6>>>>,
                  model<silu<conv_transpose2d<input<"x", f32, 1, 4, 7, 6>, weight<"w", f32, 4, 9, 3, 2>,
                                              {.stride = {1, 3}, .padding = {2, 0}, .padding_end = {0, 1},
                                               .output_padding = {0, 2}, .dilation = {2, 1}}>>>,
                  model<add<bias_add<conv_transpose2d<input<"x", f32, 1, 64, 32, 31>, weight<"w", f32, 64, 24, 2, 2>,
                                                      {.stride = {2, 2}}>,
                                     weight<"b", f32, 24>>,
                            input<"r", f32, 1, 24, 64, 62>>>,
                  model<clip<batch_norm<conv_transpose2d<input<"x", f32, 1, 8, 3, 3>, weight<"w", f32, 8, 1, 3, 3>,
                                                         {.stride = {2, 2}, .groups = 8}>,
                                        weight<"bn.g", f32, 8>, weight<"bn.b", f32, 8>, weight<"bn.m", f32, 8>,
                                        weight<"bn.v", f32, 8>>,
                             0.f, 6.f>>> {};

struct depth_space_models
    : model_group<"depth_to_space (DCR, CRD) and space_to_depth: blocks of 2 and 3, batches, odd extents, a round "
                  "trip, two threads",
                  model<depth_to_space<input<"x", f32, 2, 12, 3, 5>, 2>>,
                  model<depth_to_space<input<"x", f32, 1, 18, 5, 3>, 3, depth_to_space_mode::crd>>,
                  model<space_to_depth<input<"x", f32, 2, 3, 6, 9>, 3>>,
                  model<depth_to_space<space_to_depth<input<"x", f32, 1, 5, 4, 10>, 2>, 2>>,
                  // large enough for two threads
                  model<relu<depth_to_space<input<"x", f32, 1, 64, 64, 63>, 2, depth_to_space_mode::crd>>,
                        space_to_depth<input<"y", f32, 1, 16, 128, 126>, 2>>> {
  static constexpr double tolerance = bound::exact;
};

struct gather_models
    : model_group<
          "gather and embedding: i64 and i32 indices, negative ones, every axis, rank-0 indices",
          model<embedding<weight<"emb", f32, 33, 17>, input<"ids", i64, 2, 9>>>,
          model<gather<relu<input<"t", f32, 5, 33, 7>>, input<"ids", i32, 4, 3>, 1>>,
          model<gather<input<"t", f32, 5, 3, 17>, input<"ids", i64, 6>, -1>>,
          model<gather<input<"t", f32, 17, 4>, input<"ids", i32, 2, 3>>>,
          model<gather<input<"t", f32, 5, 7>, input<"i", i64>, 0>,
                gather<input<"t", f32, 5, 7>, input<"j", i32, 3>, 1>>,
          model<embedding<weight<"emb", f32, 1000, 257>, input<"ids", i32, 8, 65>>>> {  // large enough for two threads
  static constexpr double tolerance = bound::exact;
};

// -- reductions and normalizations
using x3_17_33 = input<"x", f32, 3, 17, 33>;
using x2_9_5_7 = input<"x", f32, 2, 9, 5, 7>;
using x4_5_13 = input<"x", f32, 4, 5, 13>;

struct sum_models
    : model_group<"reduce_sum: one axis or several, kept or dropped, strided", model<reduce_sum<x3_17_33, axes<-1>>>,
                  model<reduce_sum<x2_9_5_7, axes<1, 3>, true>>, model<reduce_sum<input<"x", f32, 65, 3>, axes<0>>>,
                  model<reduce_sum<x4_5_13, axes<2, 0>>>,
                  model<reduce_sum<input<"x", f32, 2053, 65>, axes<1>>,
                        reduce_sum<input<"y", f32, 65, 2053>, axes<0>, true>>> {  // two threads
  static constexpr double tolerance = bound::accumulated;
};

struct normalized_models
    : model_group<
          "reduce_mean, layer_norm, rms_norm, softmax on a leading or middle axis",
          model<reduce_mean<x3_17_33, axes<1>, true>, reduce_mean<x3_17_33, axes<-1>>>,
          model<reduce_mean<x4_5_13, axes<0, 1, 2>>>,  // to rank 0
          model<reduce_mean<x2_9_5_7, axes<0, 2, 3>, true>>,
          model<layer_norm<input<"x", f32, 2, 9, 65>, weight<"g", f32, 65>, weight<"b", f32, 65>>>,
          model<layer_norm<input<"x", f32, 3, 5, 17>, weight<"g", f32, 5, 17>, weight<"b", f32, 5, 17>, -2, 1e-3f>>,
          model<rms_norm<input<"x", f32, 4, 33>, weight<"g", f32, 33>>>,
          model<rms_norm<x2_9_5_7, weight<"g", f32, 5, 7>, 2, 1e-5f>>, model<softmax<input<"x", f32, 2, 17, 5>, 1>>,
          model<softmax<input<"x", f32, 33, 3>, 0>>, model<softmax<input<"x", f32, 2, 3, 17, 4>, -3>>,
          // large enough for two threads
          model<layer_norm<input<"x", f32, 128, 257>, weight<"g", f32, 257>, weight<"b", f32, 257>>,
                rms_norm<input<"y", f32, 128, 257>, weight<"g", f32, 257>>>,
          model<softmax<input<"x", f32, 2, 129, 513>, 1>>> {
  static constexpr double tolerance = bound::normalized;
  // Rows near the float limit: a variance, a mean of squares or a mean stays finite.
  static constexpr bool large_values = true;
};

// -- elementwise
using x3_5_17 = input<"x", f32, 3, 5, 17>;
using x16_1031 = input<"x", f32, 16, 1031>;
using y3_5_17 = input<"y", f32, 3, 5, 17>;

struct exact_elementwise_models
    : model_group<
          "elementwise ops IEEE rounds exactly: divide, maximum, minimum (broadcast too), prelu, leaky_relu, abs, "
          "neg, sqrt; reduce_max",
          model<divide<x3_5_17, y3_5_17>, maximum<x3_5_17, y3_5_17>, minimum<x3_5_17, y3_5_17>>,
          model<divide<x3_5_17, input<"s", f32, 5, 1>>, maximum<input<"r", f32, 17>, x3_5_17>,
                minimum<input<"c", f32, 3, 1, 17>, x3_5_17>>,
          model<prelu<input<"v", f32, 2, 5, 3, 7>, weight<"slope", f32, 5, 1, 1>>, prelu<x3_5_17, input<"s", f32, 17>>>,
          model<leaky_relu<x3_5_17>, leaky_relu<x3_5_17, 0.2f>, abs_<x3_5_17>, neg<x3_5_17>,
                sqrt_<x3_5_17>, sqrt_<abs_<x3_5_17>>>,
          model<reduce_max<x3_17_33, axes<-1>>, reduce_max<input<"y", f32, 2, 9, 5, 7>, axes<0, 2>, true>,
                reduce_max<input<"z", f32, 4, 5, 13>, axes<0, 1, 2>>>,
          // large enough for two threads
          model<divide<input<"x", f32, 257, 513>, input<"r", f32, 513>>,
                maximum<input<"c", f32, 257, 1>, input<"x", f32, 257, 513>>,
                prelu<input<"x", f32, 257, 513>, scalar<0.25f>>, reduce_max<input<"x", f32, 257, 513>, axes<0>>>> {
  static constexpr double tolerance = bound::exact;
};

struct math_models
    : model_group<
          "math and activation functions: exp, log, erf, rsqrt, power, gelu, gelu_tanh, silu, hardswish, "
          "hardsigmoid; a large tensor",
          model<exp_<x3_5_17>, log_<x3_5_17>, log_<abs_<x3_5_17>>,
                erf_<x3_5_17>>,
          model<rsqrt<x3_5_17>, rsqrt<abs_<x3_5_17>>, power<x3_5_17, 2.f>, power<x3_5_17, 3.f>>,
          model<power<x3_5_17, 0.5f>, power<abs_<x3_5_17>, -1.5f>>,
          model<gelu<x3_5_17>, gelu_tanh<x3_5_17>, silu<x3_5_17>>,
          model<hardswish<x3_5_17>, hardsigmoid<x3_5_17>, hardsigmoid<x3_5_17, 0.2f, 0.5f>>,
          // large enough for two threads; each function of x itself, so that errors do not compound
          model<exp_<x16_1031>, silu<x16_1031>, gelu<x16_1031>, erf_<x16_1031>>> {
  static constexpr double tolerance = bound::ulps(4);
};

// -- literals and scalars
using lit3 = literal<dims<3>, 1.f, -2.f, 0.5f>;
using lit2x3 = literal<dims<2, 3>, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f>;

struct literal_models
    : model_group<
          "literals and scalars: as either operand, shared, with weights, with no input at all",
          model<multiply<input<"x", f32, 3, 17>, scalar<0.125f>>>,  // literals only: no bind
          model<add<input<"x", f32, 2, 3>, lit3>, subtract<scalar<1.f>, input<"x", f32, 2, 3>>>,
          model<add<multiply<input<"x", f32, 5, 3>, scalar<2.f>>, scalar<2.f>>, divide<lit3, input<"x", f32, 5, 3>>>,
          model<maximum<add<input<"x", f32, 2, 3>, weight<"w", f32, 3>>, lit3>>,  // bound: the literal is not looked up
          model<add<lit2x3, scalar<0.5f>>>,  // no input
          model<lit2x3, multiply<input<"x", f32, 2, 3>, lit2x3>>> {
  static constexpr double tolerance = bound::exact;
};

// -- booleans: comparisons, logical ops, where, cast, tril and triu
namespace boolean_net {
using m3_5_17 = input<"m", boolean, 3, 5, 17>;
using n5_1 = input<"n", boolean, 5, 1>;
using p4_9 = input<"p", i8, 4, 9>;
using q4_9 = input<"q", i8, 4, 9>;
using scores = input<"s", f32, 2, 3, 9, 9>;
// Attention scores masked by a causal mask of one head, broadcast over the batch and heads.
using causal = weight<"causal", boolean, 1, 1, 9, 9>;
using masked = softmax<where<tril<causal>, scores, scalar<-1e9f>>>;
}  // namespace boolean_net

struct boolean_models
    : model_group<
          "booleans and indices: comparisons (f32 with NaN, i8, broadcast), logical ops, where (masks broadcast, fill "
          "values, both operands), cast between dtypes, tril and triu, topk (values and indices, ties among i8), argmax, "
          "argmin, cumsum, gather_elements by computed indices, non_max_suppression",
          model<less<x3_5_17, y3_5_17>, greater_equal<x3_5_17, scalar<0.25f>>, equal<x3_5_17, x3_5_17>>,
          model<less_equal<input<"r", f32, 17>, x3_5_17>, greater<input<"c", f32, 3, 1, 17>, x3_5_17>>,
          model<equal<boolean_net::p4_9, boolean_net::q4_9>, less<boolean_net::p4_9, boolean_net::q4_9>,
                greater<boolean_net::p4_9, int_scalar<i8, 0>>>,
          model<logical_or<logical_not<boolean_net::m3_5_17>, logical_and<boolean_net::m3_5_17, input<"k", boolean, 17>>>,
                logical_xor<boolean_net::m3_5_17, boolean_net::n5_1>>,
          model<where<boolean_net::m3_5_17, scalar<-3.f>, x3_5_17>, where<boolean_net::n5_1, x3_5_17, y3_5_17>,
                where<less<x3_5_17, scalar<0.f>>, y3_5_17, x3_5_17>>,
          // operands that broadcast on different axes: the reference's odometer on every backend
          model<where<input<"c", boolean, 3, 1, 17>, input<"a", f32, 5, 1>, input<"b", f32, 1, 5, 17>>>,
          model<cast<x3_5_17, i32>, cast<multiply<x3_5_17, scalar<100.f>>, i8>, cast<x3_5_17, boolean>>,
          model<cast<boolean_net::p4_9, f32>, cast<boolean_net::m3_5_17, f32>, cast<cast<boolean_net::p4_9, i32>, u8>>,
          model<tril<x3_5_17>, triu<x3_5_17, 2>, tril<boolean_net::m3_5_17, -1>, triu<boolean_net::p4_9, -3>>,
          model<boolean_net::masked>,
          model<get<topk<x3_5_17, 4>, 0>, get<topk<x3_5_17, 4>, 1>, get<topk<x3_5_17, 2, 1, false>, 1>>,
          model<get<topk<boolean_net::p4_9, 9>, 1>, get<topk<boolean_net::p4_9, 3, 0, false>, 0>>,
          model<argmax<x3_5_17, 2>, argmin<x3_5_17, 1, false>, argmax<boolean_net::p4_9, 0, true, true>,
                argmin<boolean_net::p4_9, 1, false, true>>,
          model<cumsum<x3_5_17, 2>, cumsum<x3_5_17, 0, true, true>, cumsum<boolean_net::p4_9, 1>>,
          model<gather_elements<x3_5_17, get<topk<y3_5_17, 6>, 1>, 2>>,
          model<get<non_max_suppression<input<"b", f32, 2, 9, 4>, input<"s", f32, 2, 3, 9>, 4, 0.3f, 0.f>, 0>,
                get<non_max_suppression<input<"b", f32, 2, 9, 4>, input<"s", f32, 2, 3, 9>, 4, 0.3f, 0.f>, 1>>,
          // large enough for two threads
          model<where<input<"m", boolean, 1, 513>, input<"x", f32, 257, 513>, scalar<0.f>>,
                greater<input<"x", f32, 257, 513>, input<"y", f32, 257, 513>>>> {
  static constexpr double tolerance = bound::normalized;
};

// -- recurrent layers
namespace recurrent_net {
template <int D, int G, int H, int I>
struct weights {
  using w = weight<"w", f32, D, G * H, I>;
  using r = weight<"r", f32, D, G * H, H>;
  using b = weight<"b", f32, D, 2 * G * H>;
};
using x = input<"x", f32, 5, 2, 7>;     // [seq, batch, input]
using xb = input<"x", f32, 3, 6, 7>;    // batch first: [batch, seq, input]
using l1 = weights<1, 4, 19, 7>;
using l2 = weights<2, 4, 16, 7>;
using g1 = weights<1, 3, 19, 7>;
using r2 = weights<2, 1, 32, 7>;
constexpr recurrent_attrs both_first{.direction = rnn_direction::bidirectional, .batch_first = true, .clip = 1.5f};
using lstm_fwd = lstm<x, l1::w, l1::r, l1::b>;
using lstm_both = lstm<xb, l2::w, l2::r, l2::b, both_first, input<"h0", f32, 3, 2, 16>, input<"c0", f32, 3, 2, 16>>;
using gru_torch = gru<x, g1::w, g1::r, g1::b, {.direction = rnn_direction::reverse, .linear_before_reset = true}>;
using gru_onnx = gru<x, g1::w, g1::r, g1::b, {}, input<"h0", f32, 1, 2, 19>>;
using rnn_relu = rnn<x, r2::w, r2::r, r2::b, {.direction = rnn_direction::bidirectional, .activation = rnn_activation::relu}>;
}  // namespace recurrent_net

struct recurrent_models
    : model_group<
          "recurrent layers: lstm, gru (linear_before_reset or not), rnn (relu); forward, reverse and both ways; batch "
          "first; initial states; clip; hidden sizes that are whole vectors and not",
          model<get<recurrent_net::lstm_fwd, 0>, get<recurrent_net::lstm_fwd, 1>, get<recurrent_net::lstm_fwd, 2>>,
          model<get<recurrent_net::lstm_both, 0>, get<recurrent_net::lstm_both, 2>>,
          model<get<recurrent_net::gru_torch, 0>, get<recurrent_net::gru_torch, 1>>,
          model<get<recurrent_net::gru_onnx, 0>, get<recurrent_net::gru_onnx, 1>>,
          model<get<recurrent_net::rnn_relu, 0>, get<recurrent_net::rnn_relu, 1>>> {
  static constexpr double tolerance = bound::accumulated;
};

// -- blocks of a transformer
namespace attention_net {
using x = input<"x", f32, 2, 17, 24>;
using qkv = split<bias_add<matmul<x, weight<"qkv.w", f32, 24, 72>>, weight<"qkv.b", f32, 72>, -1>, -1, 24, 24, 24>;
template <int I>
using head = transpose<reshape<get<qkv, I>, 2, 17, 3, 8>, 0, 2, 1, 3>;  // [2, 3, 17, 8]
using scores = multiply<matmul<head<0>, head<1>, {.transpose_b = true}>, scalar<0.35355339f>>;
using context = reshape<transpose<matmul<softmax<scores>, head<2>>, 0, 2, 1, 3>, 2, 17, 24>;
using attended =
    layer_norm<add<matmul<context, weight<"o.w", f32, 24, 24>>, x>, weight<"ln.g", f32, 24>, weight<"ln.b", f32, 24>>;
using ffn = add<matmul<gelu<matmul<attended, weight<"f1.w", f32, 24, 33>>>, weight<"f2.w", f32, 33, 24>>, attended>;
}  // namespace attention_net

namespace embedding_net {
using ids = input<"ids", i64, 2, 9>;
using summed = add<embedding<weight<"tok", f32, 33, 16>, ids>, weight<"pos", f32, 9, 16>>;
}  // namespace embedding_net

struct transformer_models
    : model_group<
          "transformer blocks: embeddings, attention through split, transposes and matmuls, norms, mean pooling",
          model<rms_norm<attention_net::ffn, weight<"rms.g", f32, 24>>>,
          model<reduce_mean<layer_norm<embedding_net::summed, weight<"g", f32, 16>, weight<"b", f32, 16>>, axes<1>>>> {
  static constexpr double tolerance = bound::accumulated;
};
}  // namespace nets

/// The tensor ops, each group with its bound.
using tensor_op_models =
    model_list<nets::matmul_models, nets::movement_models, nets::slicing_models, nets::resampling_models,
               nets::asymmetric_padding_models, nets::convolution_models, nets::depth_space_models, nets::gather_models, nets::sum_models,
               nets::normalized_models, nets::exact_elementwise_models, nets::math_models, nets::literal_models,
               nets::boolean_models, nets::recurrent_models, nets::transformer_models>;
/// Every op alone and fused: the layers', then the tensor ops'.
using op_models = decltype(layer_op_models{} + tensor_op_models{});
/// The whole list.
using all_models = decltype(op_models{} + conv_models{} + network_models{});

}  // namespace laws
