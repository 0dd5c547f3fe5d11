#pragma once
/// Which kernel a cpu dense or conv2d step runs, and why: one decision per family, shared by the
/// kernel that dispatches on it and the plan printer that shows it.
#include <cstdint>
#include <string_view>

#include "partita/backends/cpu/detail/conv/conv.hpp"
#include "partita/backends/cpu/detail/conv/conv_depthwise.hpp"
#include "partita/backends/cpu/detail/conv/conv_channels_last.hpp"
#include "partita/backends/cpu/detail/conv/conv_nhwc_direct.hpp"
#include "partita/backends/cpu/detail/conv/conv_nhwc_first.hpp"
#include "partita/backends/cpu/detail/conv/conv_planar_direct.hpp"
#include "partita/backends/cpu/detail/conv/conv_pointwise_nhwc.hpp"
#include "partita/backends/cpu/detail/conv/conv_small.hpp"
#include "partita/backends/cpu/detail/conv/conv_winograd_pack.hpp"
#include "partita/backends/cpu/detail/gemm/gemm.hpp"
#include "partita/backends/cpu/detail/kernel_choice.hpp"

namespace partita::detail::cpu {

/// The kernels of `gemm_kernel` (dense, conv2d and conv1d steps, alone or fused).
enum class gemm_kernel_id : std::uint8_t {
  dense_panels,            // dense.hpp: rows of x times packed weight panels
  winograd_f2,             // conv_winograd.hpp: F(2×2, 3×3)
  pointwise_nhwc,          // conv_pointwise_nhwc.hpp: 1×1, NHWC to NHWC, register tiles
  pointwise_nhwc_strided,  // the same on the strided 1×1's positions gathered
  gemm_nhwc,               // conv_channels_last.hpp: 1×1 as a GEMM over positions, writing NHWC
  direct_nhwc,             // conv_nhwc_first.hpp: at most four input channels, writing NHWC
  wide_nhwc,               // conv_nhwc_direct.hpp / conv_wide_passes.hpp: the wide direct kernel, NHWC
  depthwise_nhwc,          // conv_depthwise_nhwc.hpp: vectors of channels along rows
  wide_planar,             // conv_nhwc_direct.hpp: the wide kernel into scratch, transposed to planar
  wide_pooled,             // the same, pooling its NHWC sums an image at a time
  planar_direct,           // conv_planar_direct.hpp: first layers, taps unrolled
  depthwise_planar,        // conv_depthwise.hpp: vectorized along output rows
  pointwise_planar,        // matmul.hpp: 1×1 as matmul's loops on the weights packed at bind
  small_image,             // conv_small.hpp: vectors of output channels
  in_place,                // conv.hpp: grouped 1×1, B read from the input itself
  phase_planes,            // conv.hpp: the image copied into stride-phase planes, then tiles
};

/// The name `print(plan)` shows for kernel `k`.
constexpr std::string_view name_of(gemm_kernel_id k) {
  constexpr std::string_view names[] = {"dense_panels",  "winograd_f2",      "pointwise_nhwc", "pointwise_nhwc_strided",
                                        "gemm_nhwc",     "direct_nhwc",      "wide_nhwc",      "depthwise_nhwc",
                                        "wide_planar",   "wide_pooled",      "planar_direct",  "depthwise_planar",
                                        "pointwise_planar", "small_image",   "in_place",       "phase_planes"};
  return names[static_cast<std::size_t>(k)];
}

/// A dense or conv2d kernel and the reason it was chosen, in a line.
using kernel_choice = choice_of<gemm_kernel_id>;

/// What the conv2d decision reads: the geometry, the layouts the plan chose for the input and
/// the output (`cpu::layouts`), and whether a pooling is fused after it and a residual added.
struct conv_desc {
  conv_geometry geo{};
  bool nhwc_in = false;
  bool nhwc_out = false;
  bool pooled = false;
  bool residual = false;
};

/// The dense kernel: one for every shape.
constexpr kernel_choice choose_dense_kernel() {
  return {gemm_kernel_id::dense_panels, "dense: rows of x times weight panels packed at bind"};
}

/// Whether a planar conv2d is a small image whose output channels fill vectors better than its
/// positions do (conv_small.hpp). Its input copy and transposed stores cost per output, which a
/// deep product amortizes: a 1×1 reading its input in place takes it only from a depth of 512.
constexpr bool small_image_candidate(const conv_geometry& g) {
  const int nv = g.og <= W ? 1 : 2;
  return g.oh * g.ow <= 4096 && !(reads_input_in_place(g) && g.k < 512) &&
         channels_efficiency(g, nv) > positions_efficiency(g) + 0.1;
}

/// The conv2d kernel of a step. Channels-last outputs (the plan's choice): a depthwise conv2d
/// stays NHWC, a 1×1 is a GEMM over positions, a first layer its direct kernel, any other the
/// wide direct kernel, or Winograd where it applies. Planar outputs: the wide kernel through
/// scratch from an NHWC input or a small image, the direct kernel of first layers, matmul's
/// loops for deep 1×1s, output-channel vectors for small images, then the phase-plane GEMM.
constexpr kernel_choice choose_conv_kernel(const conv_desc& d) {
  using k = gemm_kernel_id;
  const conv_geometry& g = d.geo;
  const bool in_place_b = reads_input_in_place(g);
  if (d.nhwc_out) {
    if (is_depthwise(g)) return {k::depthwise_nhwc, "depthwise, NHWC: vectors of channels along rows"};
    if (d.nhwc_in && nhwc_pointwise_strided(g))
      return {k::pointwise_nhwc_strided, "strided 1x1, NHWC: positions gathered, then register tiles"};
    if (nhwc_reads_in_place(g)) {
      if (d.nhwc_in && nhwc_pointwise(g)) return {k::pointwise_nhwc, "1x1 of stride 1 from NHWC: register tiles"};
      return {k::gemm_nhwc, "1x1 of stride 1 writing NHWC: a GEMM over positions"};
    }
    if (nhwc_direct(g)) return {k::direct_nhwc, "at most 4 input channels (a first layer): direct, writing NHWC"};
    if (g.groups > 1) return {k::wide_nhwc, "grouped, whole vectors of channels per group: the wide direct kernel, NHWC"};
    if (winograd_f2(g)) return {k::winograd_f2, "3x3 of stride 1 writing NHWC: Winograd F(2x2,3x3)"};
    return {k::wide_nhwc, "one group, more than 4 input channels: the wide direct kernel, NHWC"};
  }
  if (is_depthwise(g)) return {k::depthwise_planar, "depthwise, planar: vectors along output rows"};
  // A planar result from an NHWC input (a chain's last convolution, or one whose residual is
  // planar), or from a small planar image: the wide kernel into scratch, then transposed. On a
  // planar image it reads each input value in place where the channel-vector kernel copied the
  // image into padded planes and scattered its sums (LeNet's 6 → 16 5×5 on 14×14 gains most).
  const bool small = small_image_candidate(g);
  if (g.groups == 1 && nhwc_direct_wide(g) && (d.nhwc_in || small)) {
    if (d.nhwc_in && winograd_f2(g)) return {k::winograd_f2, "3x3 of stride 1 from NHWC to planar: Winograd F(2x2,3x3)"};
    if (d.pooled && !d.residual)
      return {k::wide_pooled, "pooled, no residual: the wide kernel pools its NHWC sums per image"};
    if (d.nhwc_in) return {k::wide_planar, "NHWC input, planar output: the wide kernel, then transposed"};
    return {k::wide_planar, "small image: the wide kernel reads the input in place, then transposed"};
  }
  // Planar first layers of at most four channels, stride 1; a 1×1 that reads its input in
  // place keeps doing so.
  if (!d.nhwc_in && planar_direct(g) && !in_place_b)
    return {k::planar_direct, "at most 4 input channels, stride 1, planar: taps unrolled"};
  // An unpadded 1×1 of stride 1 (one group) is a GEMM of the weights by the image: matmul's
  // loops (depth passes, B packed into L1-sized micro-panels) beat reading B's rows in place
  // for deep products. A shallow product is all packing overhead (MobileNetV2's 16→96 and
  // 32→192 expansions lose), and few output channels use each packed panel too few times (its
  // 192→32 and 144→24 projections lose): hence both bounds.
  if (in_place_b && g.groups == 1 && g.k >= 96 && g.o >= 64)
    return {k::pointwise_planar, "1x1 of stride 1, depth 96+, 64+ outputs: matmul on packed weights"};
  if (small) return {k::small_image, "a small image whose output channels fill vectors better than its positions"};
  if (in_place_b) return {k::in_place, "unpadded 1x1 of stride 1: B read from the input in place"};
  return {k::phase_planes, "the image copied into stride-phase planes, then GEMM tiles"};
}

}  // namespace partita::detail::cpu
