#pragma once
/// Which kernel a cpu conv_transpose2d step or fused pair of convolutions (expansion then
/// depthwise, depthwise then projection) runs, and why: the decisions their kernels dispatch on
/// and the plan printer shows.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "partita/backends/cpu/detail/kernel_choice.hpp"

namespace partita::detail::cpu {

/// The kernels of `conv_transpose_kernel`, `expand_depthwise_kernel` and
/// `depthwise_project_kernel`.
enum class conv_kernel_id : std::uint8_t {
  transpose_packed,          // conv_transpose.hpp: Wᵀ packed at bind, GEMM tiles scatter-added
  transpose_packing,         // the same, the weights computed at run and packed every run
  expand_depthwise_rows,     // conv_expand_depthwise.hpp: NHWC, expanded rows in a ring of one window
  expand_depthwise_panels,   // planar: panels of expanded channels, each convolved depthwise
  depthwise_project_bands,   // conv_depthwise_project.hpp: NHWC, bands of depthwise rows projected
  depthwise_project_ring,    // planar: input rows turned NHWC into a ring, bands projected back to planes
};

/// The name `print(plan)` shows for kernel `k`.
constexpr std::string_view name_of(conv_kernel_id k) {
  constexpr std::string_view names[] = {"transpose_packed",        "transpose_packing",
                                        "expand_depthwise_rows",   "expand_depthwise_panels",
                                        "depthwise_project_bands", "depthwise_project_ring"};
  return names[static_cast<std::size_t>(k)];
}

/// One of these kernels and the reason it was chosen, in a line.
using conv_choice = choice_of<conv_kernel_id>;

/// The conv_transpose2d kernel: one GEMM of the transposed weights by the input, its tiles
/// scatter-added into the output; the weights packed at bind where they are bound
/// (`bound_weights`: a bound weight, or a fused composite's), at every run otherwise.
constexpr conv_choice choose_conv_transpose_kernel(bool bound_weights) {
  if (bound_weights) return {conv_kernel_id::transpose_packed, "weights packed at bind: GEMM tiles scatter-added"};
  return {conv_kernel_id::transpose_packing, "weights computed at run: packed every run, then GEMM tiles scatter-added"};
}

/// The kernel of a 1×1 expansion fused with the depthwise convolution that reads it, in the
/// layout the plan chose for the step (`nhwc`: its input and output channels-last).
constexpr conv_choice choose_expand_depthwise_kernel(bool nhwc) {
  if (nhwc) return {conv_kernel_id::expand_depthwise_rows, "NHWC: expanded rows kept in a ring of one window"};
  return {conv_kernel_id::expand_depthwise_panels, "planar: panels of expanded channels, each convolved depthwise"};
}

/// The kernel of a depthwise convolution fused with the 1×1 projection that reads it, in the
/// layout the plan chose for the step.
constexpr conv_choice choose_depthwise_project_kernel(bool nhwc) {
  if (nhwc) return {conv_kernel_id::depthwise_project_bands, "NHWC: bands of depthwise rows, projected in cache"};
  return {conv_kernel_id::depthwise_project_ring,
          "planar: input rows turned NHWC into a ring, bands projected back to planes"};
}

}  // namespace partita::detail::cpu
