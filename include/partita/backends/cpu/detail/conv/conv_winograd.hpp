#pragma once
/// cpu conv2d 3×3 of stride 1 by Winograd's minimal filtering F(2×2, 3×3): each 2×2 block of
/// output positions (a tile) from the 4×4 input values around it, with 16 products per input
/// channel and output channel where the direct kernel makes 36. Writes NHWC (or a planar result
/// through a row of scratch), reads NHWC (or a planar input through a band of rows made NHWC).
// Where it pays. ResNet's 3×3 layers of stride 1 already ran close to one core's FMA peak
// in the direct kernel (conv_nhwc_direct.hpp), so less work was the only way left to a
// faster layer. Per tile, the input is transformed (Bᵀ d B: additions only), the 16 transformed
// values of each channel are multiplied by the 16 transformed weights (U = G g Gᵀ, computed once
// at bind) as 16 independent GEMMs [tiles × c] · [c × o], and the 16 sums of each output
// channel transformed back (Aᵀ m A: additions only), with bias, residual and activation. The
// GEMMs run `pointwise_tile`, the 1×1 kernel's register tile, so the products run at that
// kernel's rate; the transforms are about a tenth of the work at 64 channels and less beyond.
//
// Accuracy. F(2×2, 3×3) is the variant whose transforms only add values or halve them
// (exactly); its rounding error is a small multiple of the direct sum's, as opposed to the
// larger tiles (F(4×4, 3×3) and up) whose transforms multiply by 2, 4 and 1/6. The weights are
// transformed in double and rounded once. Building with PARTITA_CPU_WINOGRAD=0 keeps every
// convolution on the direct kernels.
//
// NaN and infinities. The transforms add an input value into several transformed values with
// both signs, and the products then into each output, so one infinite input comes out as NaN
// (+Inf - Inf) in outputs whose direct sum is ±Inf (those whose window holds it; the others
// never see it). A block whose input holds such a value (found by a check that
// costs an addition per loaded vector) is computed again with those values as zeros, and each
// output whose window holds one then adds its products to that finite sum: ±Inf or NaN, by the
// signs of the weights (two bits per weight, kept at bind). The results are the direct sum's.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

#include "partita/backends/cpu/detail/conv/conv.hpp"
#include "partita/backends/cpu/detail/conv/conv_channels_last.hpp"
#include "partita/backends/cpu/detail/conv/conv_nhwc_direct.hpp"
#include "partita/backends/cpu/detail/conv/conv_pointwise_nhwc.hpp"
#include "partita/backends/cpu/detail/conv/conv_winograd_pack.hpp"
#include "partita/backends/cpu/detail/gemm/epilogue.hpp"
#include "partita/backends/cpu/detail/state.hpp"

namespace partita::detail::cpu {

/// The input rows [lo, hi) that the block starting at tile row `tr0` reads.
struct row_range {
  int lo = 0, hi = 0;
};
template <conv_geometry G>
constexpr row_range winograd_input_rows(int tr0) {
  return {std::max(0, 2 * tr0 - G.ph), std::min(G.h, 2 * (tr0 + winograd_tiles(G).rows) - G.ph + 2)};
}

/// Per-thread scratch of `winograd_conv`: the transformed input [16][tiles][c] and sums
/// [16][tiles][o] of a block, the block's output rows, NHWC (for a planar result, or a block
/// with NaN or infinities), and for a planar input the rows the block reads, NHWC.
template <conv_geometry G, bool NhwcIn>
constexpr std::size_t winograd_scratch() {
  constexpr winograd_tiling t = winograd_tiles(G);
  const std::size_t rows = static_cast<std::size_t>(2 * t.rows) * G.ow * G.o;
  const std::size_t band = NhwcIn ? 0 : static_cast<std::size_t>(2 * t.rows + 2) * G.w * G.c;
  return static_cast<std::size_t>(16 * t.tiles) * static_cast<std::size_t>(G.c + G.o) + rows + band;
}

/// Input rows [lo, hi) of a planar image as NHWC rows at `band` ([hi - lo][w][c]), each
/// channel's row read in order. Read with gathers instead, a channel vector at a time, the
/// transform had cost ResNet's 56×56 block (W3) a fifth of its first convolution, against the
/// same layer reading NHWC.
template <conv_geometry G>
inline void winograd_band(const float* x, row_range r, float* band) {
  constexpr std::ptrdiff_t plane = static_cast<std::ptrdiff_t>(G.h) * G.w, row = static_cast<std::ptrdiff_t>(G.w) * G.c;
  for (int ih = r.lo; ih < r.hi; ++ih) {
    float* dst = band + (ih - r.lo) * row;
    for (int ci = 0; ci < G.c; ++ci) {
      const float* src = x + ci * plane + static_cast<std::ptrdiff_t>(ih) * G.w;
      for (int iw = 0; iw < G.w; ++iw) dst[static_cast<std::ptrdiff_t>(iw) * G.c + ci] = src[iw];
    }
  }
}

/// Transforms tiles [0, count) of the block starting at tile row `tr0` (Bᵀ d B for every input
/// channel) into `v` ([16][t.tiles][c]). `x` holds the image's NHWC rows from row `first` on;
/// values outside the image are zeros (the padding), and so are NaN and infinities where
/// Clean. Returns false where some value read is NaN or infinite (and not Clean).
template <conv_geometry G, bool Clean = false>
inline bool winograd_input(const float* x, int first, int tr0, int count, float* v) {
  constexpr winograd_tiling t = winograd_tiles(G);
  constexpr std::ptrdiff_t hs = static_cast<std::ptrdiff_t>(G.w) * G.c, ws = G.c;
  constexpr std::ptrdiff_t xi_step = static_cast<std::ptrdiff_t>(t.tiles) * G.c;  // from one ξ to the next
  // Zero times every row's (d0 - d2) + (d1 - d3), which holds each value read once: an infinite
  // or NaN value makes it NaN, and nothing finite does.
  vec check = simd::splat(0.f);
  for (int u = 0; u < count; ++u) {
    const int ty = tr0 + u / t.tw, tx = u % t.tw;
    const int row0 = 2 * ty - G.ph, col0 = 2 * tx - G.pw;
    const float* rows[4];
    bool cols[4];
    for (int i = 0; i < 4; ++i) {
      rows[i] = row0 + i >= 0 && row0 + i < G.h ? x + (row0 + i - first) * hs : nullptr;
      cols[i] = col0 + i >= 0 && col0 + i < G.w;
    }
    float* vu = v + static_cast<std::ptrdiff_t>(u) * G.c;
    for (int cv = 0; cv < G.c; cv += W) {
      const int n = std::min(W, G.c - cv);
      vec d[4][4];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          if (!rows[i] || !cols[j]) {
            d[i][j] = simd::splat(0.f);
            continue;
          }
          const float* p = rows[i] + (col0 + j) * ws + cv;
          d[i][j] = n == W ? simd::load(p) : simd::load_first(p, n);
          if constexpr (Clean) d[i][j] = xsimd::select(xsimd::isfinite(d[i][j]), d[i][j], simd::splat(0.f));
        }
      // d Bᵀ... along each row (B's columns (1, 0, -1, 0), (0, 1, 1, 0), (0, -1, 1, 0), (0, 1, 0, -1)),
      vec e[4][4];
      for (int i = 0; i < 4; ++i) {
        e[i][0] = d[i][0] - d[i][2];
        e[i][1] = d[i][1] + d[i][2];
        e[i][2] = d[i][2] - d[i][1];
        e[i][3] = d[i][1] - d[i][3];
      }
      if constexpr (!Clean)
        check = simd::fma((e[0][0] + e[0][3]) + (e[1][0] + e[1][3]) + ((e[2][0] + e[2][3]) + (e[3][0] + e[3][3])),
                          simd::splat(0.f), check);
      // ... then along each column.
      for (int j = 0; j < 4; ++j) {
        const vec r[4] = {e[0][j] - e[2][j], e[1][j] + e[2][j], e[2][j] - e[1][j], e[1][j] - e[3][j]};
        for (int i = 0; i < 4; ++i) {
          float* q = vu + (4 * i + j) * xi_step + cv;
          if (n == W) simd::store(q, r[i]);
          else simd::store_first(q, r[i], n);
        }
      }
    }
  }
  return Clean || !xsimd::any(xsimd::isnan(check));
}

/// The 16 GEMMs of a block: m[ξ] = v[ξ] · U[ξ] for tiles [0, count), output channel vectors
/// [v0, v1) (v0 even), with `pointwise_tile` (Q tiles at a time, the rest in one smaller tile).
template <conv_geometry G>
inline void winograd_products(const float* v, const float* u, int count, int v0, int v1, float* m) {
  constexpr winograd_tiling t = winograd_tiles(G);
  constexpr int vectors = padded_channels(G.o) / W;
  constexpr std::ptrdiff_t c = G.c, o = G.o;
  constexpr std::size_t matrix = winograd_matrix_floats(G);
  for (int xi = 0; xi < 16; ++xi) {
    const float* vx = v + static_cast<std::ptrdiff_t>(xi) * t.tiles * c;
    float* mx = m + static_cast<std::ptrdiff_t>(xi) * t.tiles * o;
    for (int pv = v0; pv < v1; pv += 2) {
      const float* ux = u + xi * matrix + static_cast<std::ptrdiff_t>(pv / 2) * c * wide_panel();
      const auto run = [&]<int VB>() {
        constexpr int Q = pointwise_positions(VB);
        const int n_last = std::min(W, G.o - (pv + VB - 1) * W);
        int p = 0;
        for (; p + Q <= count; p += Q)
          pointwise_tile<Q, VB, activation::none>(vx + p * c, G.c, ux, nullptr, nullptr, 0.f, 0.f, mx + p * o + pv * W,
                                                  o, n_last);
        // The rest (fewer than Q tiles) as one tile of that many: its accumulators still hide
        // most of an FMA's latency, where tiles of one position would not. A block holds
        // `t.tiles` tiles, or fewer in the last one, so there are two rests at most, known
        // here: a tile for every size under Q had made ResNet-18 build nine tiles it never ran.
        constexpr int full_rest = t.tiles % Q, last_rest = (t.th - (t.blocks - 1) * t.rows) * t.tw % Q;
        const auto rest = [&]<int R>() {
          if constexpr (R > 0) {
            if (count - p == R)
              pointwise_tile<R, VB, activation::none>(vx + p * c, G.c, ux, nullptr, nullptr, 0.f, 0.f,
                                                      mx + p * o + pv * W, o, n_last);
          }
        };
        rest.template operator()<full_rest>();
        if constexpr (last_rest != full_rest) rest.template operator()<last_rest>();
      };
      if (pv + 2 <= vectors) run.template operator()<2>();
      else if constexpr (vectors % 2 == 1) run.template operator()<1>();
    }
  }
}

/// Transforms the sums `m` of tiles [0, count) back (Aᵀ m A, Aᵀ's rows (1, 1, 1, 0) and
/// (0, 1, -1, -1)), channel vectors [v0, v1), adding the bias (padded, or null) and writing
/// act(· + residual) to the NHWC rows at `y`: output row r of the block (its first being
/// 2 · tr0) at y + (r - 2 · tr0) · ow · o, the residual likewise, or null. A tile's outputs
/// past the image's last row or column are not written.
template <conv_geometry G, activation A>
inline void winograd_output(const float* m, int tr0, int count, int v0, int v1, const float* bias,
                            const float* residual, float lo, float hi, float* y) {
  constexpr winograd_tiling t = winograd_tiles(G);
  constexpr std::ptrdiff_t o = G.o, xi_step = static_cast<std::ptrdiff_t>(t.tiles) * G.o;
  for (int u = 0; u < count; ++u) {
    const int ty = tr0 + u / t.tw, tx = u % t.tw;
    const int rows = std::min(2, G.oh - 2 * ty), cols = std::min(2, G.ow - 2 * tx);
    const float* mu = m + static_cast<std::ptrdiff_t>(u) * o;
    for (int v = v0; v < v1; ++v) {
      const int cv = v * W, n = std::min(W, G.o - cv);
      vec r[2][4];
      for (int j = 0; j < 4; ++j) {
        vec s[4];
        for (int i = 0; i < 4; ++i) {
          const float* p = mu + (4 * i + j) * xi_step + cv;
          s[i] = n == W ? simd::load(p) : simd::load_first(p, n);
        }
        r[0][j] = s[0] + s[1] + s[2];
        r[1][j] = s[1] - s[2] - s[3];
      }
      const vec b = bias ? simd::load(bias + cv) : simd::splat(0.f);
      for (int a = 0; a < rows; ++a) {
        const vec out[2] = {r[a][0] + r[a][1] + r[a][2] + b, r[a][1] - r[a][2] - r[a][3] + b};
        for (int k = 0; k < cols; ++k) {
          const std::ptrdiff_t at = ((2 * (ty - tr0) + a) * static_cast<std::ptrdiff_t>(G.ow) + 2 * tx + k) * o + cv;
          store_nhwc<A>(out[k], residual ? residual + at : nullptr, y + at, n, lo, hi);
        }
      }
    }
  }
}

/// Adds to the block's sums `rows` (NHWC from output row 2 · tr0, bias included; channels
/// [v0 · W, v1 · W) of them) the products of every NaN or infinite input value in the windows
/// of its outputs, which `winograd_input` read as zeros: each is NaN (a NaN, or an infinity times
/// a zero weight) or an infinity of the weight's sign, so each such sum becomes what the direct
/// sum is.
template <conv_geometry G, bool NhwcIn>
inline void winograd_specials(const float* x, const float* packed, int tr0, int v0, int v1, float* rows) {
  constexpr std::ptrdiff_t cs = NhwcIn ? 1 : static_cast<std::ptrdiff_t>(G.h) * G.w;
  constexpr std::ptrdiff_t hs = NhwcIn ? static_cast<std::ptrdiff_t>(G.w) * G.c : G.w, ws = NhwcIn ? G.c : 1;
  constexpr float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const int oy0 = 2 * tr0, oy1 = std::min(G.oh, 2 * (tr0 + winograd_tiles(G).rows));
  const int o0 = v0 * W, o1 = std::min(G.o, v1 * W);
  const row_range read = winograd_input_rows<G>(tr0);  // the rows winograd_input read
  for (int iy = read.lo; iy < read.hi; ++iy)
    for (int ix = 0; ix < G.w; ++ix)
      for (int ci = 0; ci < G.c; ++ci) {
        const float value = x[ci * cs + iy * hs + ix * ws];
        if (std::isfinite(value)) continue;
        for (int i = 0; i < 3; ++i) {
          const int oy = iy + G.ph - i;
          if (oy < oy0 || oy >= oy1) continue;
          for (int j = 0; j < 3; ++j) {
            const int ox = ix + G.pw - j;
            if (ox < 0 || ox >= G.ow) continue;
            float* sums = rows + (static_cast<std::ptrdiff_t>(oy - oy0) * G.ow + ox) * G.o;
            for (int o = o0; o < o1; ++o) {
              const int sign = winograd_sign(G, packed, o, ci, i * 3 + j);
              sums[o] += std::isnan(value) || sign == 0 ? nan : (sign == 1) == (value > 0) ? inf : -inf;
            }
          }
        }
      }
}

/// Writes `np` positions of NHWC sums `rows` (channel vectors [v0, v1)) to the NHWC output `y`
/// as act(sum + residual), the residual NHWC like `y` or null.
template <conv_geometry G, activation A>
inline void winograd_store_rows(const float* rows, std::ptrdiff_t np, int v0, int v1, const float* residual, float lo,
                                float hi, float* y) {
  for (std::ptrdiff_t p = 0; p < np; ++p)
    for (int v = v0; v < v1; ++v) {
      const std::ptrdiff_t at = p * G.o + v * W;
      const int n = std::min(W, G.o - v * W);
      store_nhwc<A>(n == W ? simd::load(rows + at) : simd::load_first(rows + at, n), residual ? residual + at : nullptr,
                    y + at, n, lo, hi);
    }
}

/// The block at tile row `tr0` (`count` tiles) whose input holds NaN or infinities
/// (`winograd_input` returned false), channel vectors [v0, v1): transformed again with those
/// values as zeros, its sums (bias included) into `rows`, each corrected where such a value
/// reaches it (`winograd_specials`), then act(· + residual) into the block's first output
/// position `first` on (`np` positions; `n` per image for a planar result). `in` is what
/// `winograd_input` read, `v` and `m` its scratch. Cold and not inlined: the model's inputs
/// are finite but for the tests of this path, which as hot code in every Winograd layer had
/// lengthened every model's build.
template <conv_geometry G, bool NhwcIn, bool NhwcOut, activation A>
[[gnu::cold, gnu::noinline]] inline void winograd_nonfinite_block(const float* x, const float* in, int first_row,
                                                                  int tr0, int count, const float* packed, int v0,
                                                                  int v1, const epilogue& e, const float* residual,
                                                                  float* y, std::ptrdiff_t first, std::ptrdiff_t np,
                                                                  float* v, float* m, float* rows) {
  constexpr std::ptrdiff_t n = static_cast<std::ptrdiff_t>(G.oh) * G.ow;
  winograd_input<G, true>(in, first_row, tr0, count, v);
  winograd_products<G>(v, packed, count, v0, v1, m);
  winograd_output<G, activation::none>(m, tr0, count, v0, v1, e.bias, nullptr, 0.f, 0.f, rows);
  winograd_specials<G, NhwcIn>(x, packed, tr0, v0, v1, rows);
  if constexpr (NhwcOut)
    winograd_store_rows<G, A>(rows, np, v0, v1, residual ? residual + first * G.o : nullptr, e.lo, e.hi,
                              y + first * G.o);
  else
    nhwc_to_planar<A>(rows, G.o, np, n, residual ? residual + first : nullptr, e.lo, e.hi, y + first);
}

/// One thread's share of a Winograd convolution: blocks [b0, b1), channel vectors [v0, v1).
/// Images of few blocks split their panels of output channels (each core then transforms the
/// whole input, but reads only its panels' weights), others their blocks of tile rows; a
/// planar result always its blocks (its rows are transposed whole).
template <conv_geometry G, bool NhwcOut>
constexpr bool winograd_by_panels(int tasks) {
  return NhwcOut && winograd_tiles(G).blocks < 4 * tasks && wide_panels<G>() >= 2 * tasks;
}

/// conv2d (`winograd_f2`) of every image: `x` NHWC where NhwcIn, else planar; `packed` by
/// `pack_winograd`; the result NHWC where NhwcOut, else planar, act(conv + bias + residual)
/// with the residual in the result's layout or null. Each thread's scratch holds
/// `winograd_scratch<G, NhwcIn>()` floats.
template <conv_geometry G, bool NhwcIn, bool NhwcOut, activation A>
inline void winograd_conv(state& st, const float* x, const float* packed, const float* residual, const epilogue& e,
                          float* out) {
  constexpr winograd_tiling t = winograd_tiles(G);
  constexpr int vectors = padded_channels(G.o) / W;
  constexpr int n = G.oh * G.ow;
  constexpr double flops = 2.0 * 16 * t.th * t.tw * G.c * G.o;
  const std::ptrdiff_t in_image = static_cast<std::ptrdiff_t>(G.c) * G.h * G.w;
  const std::ptrdiff_t out_image = static_cast<std::ptrdiff_t>(G.o) * n;
  const int most = NhwcOut ? std::max(t.blocks, wide_panels<G>()) : t.blocks;
  const int tasks = tasks_for(flops, st.workers(), most);
  const bool by_panels = winograd_by_panels<G, NhwcOut>(tasks);
  for (int b = 0; b < G.batch; ++b) {
    const float* xb = x + b * in_image;
    const float* rb = residual ? residual + b * out_image : nullptr;
    float* yb = out + b * out_image;
    st.parallel(tasks, [&](int task) {
      const int b0 = by_panels ? 0 : t.blocks * task / tasks, b1 = by_panels ? t.blocks : t.blocks * (task + 1) / tasks;
      const int v0 = by_panels ? 2 * (wide_panels<G>() * task / tasks) : 0;
      const int v1 = by_panels ? std::min(vectors, 2 * (wide_panels<G>() * (task + 1) / tasks)) : vectors;
      float* v = st.thread_scratch(task);
      float* m = v + static_cast<std::ptrdiff_t>(16 * t.tiles) * G.c;
      float* rows = m + static_cast<std::ptrdiff_t>(16 * t.tiles) * G.o;
      float* band = rows + static_cast<std::ptrdiff_t>(2 * t.rows) * G.ow * G.o;
      for (int blk = b0; blk < b1; ++blk) {
        const int tr0 = blk * t.rows, count = (std::min(t.th, tr0 + t.rows) - tr0) * t.tw;
        const row_range read = winograd_input_rows<G>(tr0);
        if constexpr (!NhwcIn) winograd_band<G>(xb, read, band);
        const float* in = NhwcIn ? xb + static_cast<std::ptrdiff_t>(read.lo) * G.w * G.c : band;
        const std::ptrdiff_t first = static_cast<std::ptrdiff_t>(2 * tr0) * G.ow;  // the block's first output position
        const std::ptrdiff_t np = std::min<std::ptrdiff_t>(n, first + 2 * t.rows * G.ow) - first;
        if (!winograd_input<G>(in, read.lo, tr0, count, v)) {
          winograd_nonfinite_block<G, NhwcIn, NhwcOut, A>(xb, in, read.lo, tr0, count, packed, v0, v1, e, rb, yb, first,
                                                          np, v, m, rows);
          continue;
        }
        winograd_products<G>(v, packed, count, v0, v1, m);
        if constexpr (NhwcOut) {
          winograd_output<G, A>(m, tr0, count, v0, v1, e.bias, rb ? rb + first * G.o : nullptr, e.lo, e.hi,
                                yb + first * G.o);
        } else {
          winograd_output<G, activation::none>(m, tr0, count, v0, v1, e.bias, nullptr, 0.f, 0.f, rows);
          nhwc_to_planar<A>(rows, G.o, np, n, rb ? rb + first : nullptr, e.lo, e.hi, yb + first);
        }
      }
    });
  }
}

}  // namespace partita::detail::cpu
