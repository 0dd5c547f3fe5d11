#pragma once
/// What cpu Winograd F(2×2, 3×3) (conv_winograd.hpp) runs on and packs: which convolutions take
/// it, how an image is cut into tiles and blocks, and the weights transformed at bind with their
/// signs.
#include <algorithm>
#include <cstddef>

#include "partita/backends/cpu/detail/conv/conv.hpp"
#include "partita/backends/cpu/detail/conv/conv_nhwc_direct.hpp"

#ifndef PARTITA_CPU_WINOGRAD
/// 1 (the default): 3×3 convolutions of stride 1 with enough channels run Winograd F(2×2, 3×3)
/// on the cpu backend; 0: the direct kernels only.
#define PARTITA_CPU_WINOGRAD 1
#endif

namespace partita::detail::cpu {

/// True for the convolutions that run Winograd F(2×2, 3×3) (`winograd_conv`): 3×3, stride 1,
/// no dilation, one group, and at least 16 input and 16 output channels, below which the
/// transforms weigh as much as the products they save; but not small images with large
/// weights (over 1 MB of transformed weights on fewer than 64 tiles of 2×2 outputs with
/// AVX-512, 32 with AVX), which run the direct kernel in depth passes (`wide_depth_passes`).
/// Their 16 · c · o transformed weights, 16/9 of the direct kernel's, each serve a few tiles
/// and come from beyond L2, where the direct kernel's passes read each weight once from L3 and
/// then from L1: ResNet-18's 512-channel 3×3s on 7×7 (16 tiles) and 256-channel ones on 14×14
/// (49 tiles) run faster in depth passes.
constexpr bool winograd_f2(const conv_geometry& g) {
  const long tiles = static_cast<long>((g.oh + 1) / 2) * ((g.ow + 1) / 2);
  const long weight_bytes = 16L * g.c * g.o * static_cast<long>(sizeof(float));
  return PARTITA_CPU_WINOGRAD != 0 && g.groups == 1 && g.kh == 3 && g.kw == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 &&
         g.dw == 1 && g.c >= 16 && g.o >= 16 && (tiles >= (W >= 16 ? 64 : 32) || weight_bytes <= (1L << 20));
}

/// The tiling of one image: `th` × `tw` tiles of 2×2 outputs, cut into blocks of `rows` tile
/// rows (`tiles` tiles, about 28: the transformed input and sums of a block, 16 · tiles · (c +
/// o) floats, then stay in L2 at 64 to 512 channels), `blocks` of them.
struct winograd_tiling {
  int th = 0, tw = 0, rows = 0, tiles = 0, blocks = 0;
};
constexpr winograd_tiling winograd_tiles(const conv_geometry& g) {
  winograd_tiling t;
  t.th = (g.oh + 1) / 2;
  t.tw = (g.ow + 1) / 2;
  t.rows = std::max(1, std::min(t.th, (28 + t.tw - 1) / t.tw));
  t.tiles = t.rows * t.tw;
  t.blocks = (t.th + t.rows - 1) / t.rows;
  return t;
}

/// Floats of one of the 16 transformed weight matrices, packed like `pack_nhwc_hwio`'s 1×1
/// weights: panels of two output vectors, each [c][2 · W].
constexpr std::size_t winograd_matrix_floats(const conv_geometry& g) {
  const int panels = (g.o + wide_panel() - 1) / wide_panel();
  return static_cast<std::size_t>(panels) * static_cast<std::size_t>(g.c) * wide_panel();
}
/// Bytes of the weights' signs (`pack_winograd`): two bits per weight, [c][3 · 3][o], a row of
/// output channels padded to whole bytes.
constexpr std::size_t winograd_sign_row(const conv_geometry& g) { return static_cast<std::size_t>(g.o + 3) / 4; }
/// Floats of the packed transformed weights: 16 matrices, then the weights' signs.
constexpr std::size_t winograd_taps_floats(const conv_geometry& g) {
  const std::size_t sign_bytes = static_cast<std::size_t>(g.c) * 9 * winograd_sign_row(g);
  return 16 * winograd_matrix_floats(g) + (sign_bytes + sizeof(float) - 1) / sizeof(float);
}
/// The sign of weight (o, ci, tap) packed by `pack_winograd`: 0 (zero), 1 (positive) or 2
/// (negative).
inline int winograd_sign(const conv_geometry& g, const float* packed, int o, int ci, int tap) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(packed + 16 * winograd_matrix_floats(g));
  const std::size_t row = (static_cast<std::size_t>(ci) * 9 + static_cast<std::size_t>(tap)) * winograd_sign_row(g);
  return bytes[row + static_cast<std::size_t>(o / 4)] >> (2 * (o % 4)) & 3;
}

/// Packs conv weights [o][c][3][3] as U = G g Gᵀ (4×4 per output and input channel, in double,
/// rounded once), matrix ξ = 4 · i + j holding element (i, j) of every U, each matrix packed as
/// `winograd_matrix_floats` says; then the weights' signs (`winograd_sign`).
inline void pack_winograd(const conv_geometry& g, const float* w, float* dst) {
  constexpr int P = wide_panel();
  const std::size_t matrix = winograd_matrix_floats(g);
  std::fill(dst, dst + winograd_taps_floats(g), 0.f);
  auto* signs = reinterpret_cast<unsigned char*>(dst + 16 * matrix);
  for (int o = 0; o < g.o; ++o)
    for (int ci = 0; ci < g.c; ++ci) {
      const float* k = w + (static_cast<std::ptrdiff_t>(o) * g.c + ci) * 9;
      for (int tap = 0; tap < 9; ++tap) {
        const unsigned code = k[tap] > 0 ? 1u : k[tap] < 0 ? 2u : 0u;
        signs[(static_cast<std::size_t>(ci) * 9 + static_cast<std::size_t>(tap)) * winograd_sign_row(g) +
              static_cast<std::size_t>(o / 4)] |= static_cast<unsigned char>(code << (2 * (o % 4)));
      }
      double gk[4][3];  // G g: G's rows are (1, 0, 0), (½, ½, ½), (½, -½, ½), (0, 0, 1)
      for (int j = 0; j < 3; ++j) {
        const double k0 = k[j], k1 = k[3 + j], k2 = k[6 + j];
        gk[0][j] = k0;
        gk[1][j] = 0.5 * (k0 + k1 + k2);
        gk[2][j] = 0.5 * (k0 - k1 + k2);
        gk[3][j] = k2;
      }
      float* at = dst + static_cast<std::ptrdiff_t>(o / P) * g.c * P + static_cast<std::ptrdiff_t>(ci) * P + o % P;
      for (int i = 0; i < 4; ++i) {
        const double u[4] = {gk[i][0], 0.5 * (gk[i][0] + gk[i][1] + gk[i][2]), 0.5 * (gk[i][0] - gk[i][1] + gk[i][2]),
                             gk[i][2]};
        for (int j = 0; j < 4; ++j) at[static_cast<std::size_t>(4 * i + j) * matrix] = static_cast<float>(u[j]);
      }
    }
}

}  // namespace partita::detail::cpu
