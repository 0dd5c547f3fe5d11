#pragma once
/// cpu conv2d as a GEMM read straight from stride-phase-split input planes.
// conv2d as GEMM straight from the input, with no im2col: the input is copied once per call into
// zero-padded, stride-phase-split planes, after which row k = (channel, kh, kw) of the B matrix
// is a contiguous run of that copy at a fixed offset (`boff[k]`, computed at compile time). Any
// stride, padding, dilation and group count takes the same path; output positions are computed
// in the padded planes' row pitch, and the few columns past each output row are dropped at the
// store.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "partita/backends/cpu/detail/elementwise/eltwise.hpp"
#include "partita/backends/cpu/detail/gemm/gemm.hpp"
#include "partita/ir/attrs.hpp"
#include "partita/ir/module.hpp"

namespace partita::detail::cpu {

/// Shapes of one conv2d, per image.
struct conv_geometry {
  int batch = 1, c = 0, h = 0, w = 0;       // input
  int o = 0, oh = 0, ow = 0;                // output
  int kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1;
  int cg = 0, og = 0, k = 0;                // per group: input channels, output channels, GEMM depth
  int hq = 0, wq = 0;                       // a phase plane's height and width (its row pitch)
  int phases = 1;                           // sh · sw
  std::uint32_t used_phases = ~0u;          // bit a · sw + b: some kernel tap reads phase (a, b) (all, past 32)
  std::size_t plane_set = 0;                // floats per channel: phases · hq · wq
  int npos = 0;                             // positions computed: oh · wq
  std::size_t buffer_floats = 0;            // the copy, with slack for the last tile's reads
};

template <int MR, int NV>
struct conv_blocking {
  static constexpr int mr = MR, nv = NV, nr = NV * W;
};

/// The blocking conv2d uses on this instruction set: 8 output channels × 3 vectors of positions
/// with AVX-512 (24 of 32 registers accumulate), 6 × 2 with 16 registers. Each step of the depth
/// loads NV vectors of input and broadcasts MR weights for MR · NV FMAs; with 32 registers the
/// third vector spreads the loop's loads and offsets over half as many FMAs again, which pays
/// on a core with two 512-bit FMA ports (Sapphire Rapids, ResNet's 3×3 layers). On a
/// core that splits each 512-bit FMA in two (Zen 4), FMAs rather than loads bound either tile,
/// and the larger one does less loop work per FMA.
using conv_block = conv_blocking<(W >= 16 ? 8 : 6), (W >= 16 ? 3 : 2)>;

constexpr conv_geometry make_conv_geometry(const shape& x, const shape& wt, const shape& y, const attrs& a) {
  conv_geometry g;
  g.batch = static_cast<int>(x[0]);
  g.c = static_cast<int>(x[1]);
  g.h = static_cast<int>(x[2]);
  g.w = static_cast<int>(x[3]);
  g.o = static_cast<int>(y[1]);
  g.oh = static_cast<int>(y[2]);
  g.ow = static_cast<int>(y[3]);
  g.kh = static_cast<int>(wt[2]);
  g.kw = static_cast<int>(wt[3]);
  g.sh = a.stride[0];
  g.sw = a.stride[1];
  g.ph = a.padding[0];
  g.pw = a.padding[1];
  g.dh = a.dilation[0];
  g.dw = a.dilation[1];
  g.groups = a.groups;
  g.cg = g.c / g.groups;
  g.og = g.o / g.groups;
  g.k = g.cg * g.kh * g.kw;
  // The padding after each axis may differ from the padding before it (ONNX pads, TF "SAME").
  const int hp = g.h + g.ph + end_padding(a, 0), wp = g.w + g.pw + end_padding(a, 1);
  g.hq = (hp + g.sh - 1) / g.sh;
  g.wq = (wp + g.sw - 1) / g.sw;
  g.phases = g.sh * g.sw;
  if (g.phases <= 32) {
    g.used_phases = 0;
    for (int i = 0; i < g.kh; ++i)
      for (int j = 0; j < g.kw; ++j) g.used_phases |= 1u << (((i * g.dh) % g.sh) * g.sw + (j * g.dw) % g.sw);
  }
  g.plane_set = static_cast<std::size_t>(g.phases) * static_cast<std::size_t>(g.hq) * static_cast<std::size_t>(g.wq);
  g.npos = g.oh * g.wq;
  const int nr = conv_block::nr;
  const std::size_t tiles = static_cast<std::size_t>((g.npos + nr - 1) / nr);
  const std::size_t max_off = static_cast<std::size_t>(g.cg - 1) * g.plane_set +
                              static_cast<std::size_t>(g.phases - 1) * static_cast<std::size_t>(g.hq * g.wq) +
                              static_cast<std::size_t>((g.kh - 1) * g.dh / g.sh) * static_cast<std::size_t>(g.wq) +
                              static_cast<std::size_t>((g.kw - 1) * g.dw / g.sw);
  // Every group reads its channels' planes; the last group's last tile reads furthest.
  g.buffer_floats = static_cast<std::size_t>(g.c - g.cg) * g.plane_set + max_off + tiles * static_cast<std::size_t>(nr) + 64;
  return g;
}

/// Offsets of B's rows in the phase-split copy, row k = (channel, kh, kw) in OIHW order.
template <std::size_t K>
constexpr std::array<std::int32_t, K> conv_offsets(const conv_geometry& g) {
  std::array<std::int32_t, K> off{};
  std::size_t k = 0;
  for (int ci = 0; ci < g.cg; ++ci)
    for (int i = 0; i < g.kh; ++i)
      for (int j = 0; j < g.kw; ++j) {
        const int rh = i * g.dh, rw = j * g.dw;
        const int phase = (rh % g.sh) * g.sw + (rw % g.sw);
        off[k++] = static_cast<std::int32_t>(static_cast<std::size_t>(ci) * g.plane_set +
                                             static_cast<std::size_t>(phase * g.hq * g.wq + (rh / g.sh) * g.wq + rw / g.sw));
      }
  return off;
}

/// Packs OIHW weights as [group][panel][k][MR] (rows past a group's output channels are zero).
inline void pack_conv_weights(const conv_geometry& g, const float* w, float* packed) {
  constexpr int MR = conv_block::mr;
  const int panels = (g.og + MR - 1) / MR;
  for (int gr = 0; gr < g.groups; ++gr)
    for (int p = 0; p < panels; ++p) {
      float* dst = packed + (static_cast<std::ptrdiff_t>(gr) * panels + p) * static_cast<std::ptrdiff_t>(g.k) * MR;
      for (int k = 0; k < g.k; ++k)
        for (int m = 0; m < MR; ++m) {
          const int o = p * MR + m;
          dst[static_cast<std::ptrdiff_t>(k) * MR + m] =
              o < g.og ? w[(static_cast<std::ptrdiff_t>(gr) * g.og + o) * static_cast<std::ptrdiff_t>(g.k) + k] : 0.f;
        }
    }
}

constexpr std::size_t packed_conv_floats(const conv_geometry& g) {
  const int panels = (g.og + conv_block::mr - 1) / conv_block::mr;
  return static_cast<std::size_t>(g.groups) * static_cast<std::size_t>(panels) * static_cast<std::size_t>(g.k) * conv_block::mr;
}

/// `dst[j] = src[j · stride]` for j < n; nothing past src[(n - 1) · stride] is read. Stride 2,
/// the common strided convolution, deinterleaves vectors (scalar, this copy cost a stride-2
/// depthwise convolution several times its arithmetic).
inline void copy_strided(float* __restrict dst, const float* __restrict src, int n, int stride) {
  int j = 0;
  if (stride == 1) {
    copy_floats(dst, src, n);  // rows of small images: inline moves, not a library call per row
    return;
  }
  if (stride == 2)
    for (; j + W < n; j += W) simd::store(dst + j, simd::evens(simd::load(src + 2 * j), simd::load(src + 2 * j + W)));
  for (; j < n; ++j) dst[j] = src[static_cast<std::ptrdiff_t>(j) * stride];
}

/// conv_copy_plane for a column stride of 2 (any row stride). Each input row is read once, in
/// order, and split in registers into its even and odd columns, which go to the two column
/// phases of its row phase. Reading each row once per column phase, rows of one row phase at a
/// time, skipped every other row: a pattern the prefetcher followed poorly, and the row ends
/// of small images went element by element (most of a 14 × 14 depthwise layer's time).
inline void conv_copy_plane_sw2(const conv_geometry& g, const float* src, float* dst, bool pads_zeroed, int ih0, int ih1) {
  const std::ptrdiff_t plane = static_cast<std::ptrdiff_t>(g.hq) * g.wq;
  const std::uint32_t phases_read = g.used_phases;
  const auto used = [phases_read](int a, int b) { return a * 2 + b >= 32 || (phases_read >> (a * 2 + b) & 1u); };
  // Input column x lands in column phase (x + pw) % 2, at column (x + pw) / 2.
  const int pe = g.pw % 2, ce = g.pw / 2, ne = (g.w + 1) / 2;  // even columns: phase, first column, count
  const int po = 1 - pe, co = (g.pw + 1) / 2, no = g.w / 2;    // odd columns
  if (!pads_zeroed)
    for (int a = 0; a < g.sh; ++a)
      for (int b = 0; b < 2; ++b) {
        if (!used(a, b)) continue;
        float* p = dst + static_cast<std::ptrdiff_t>(a * 2 + b) * plane;
        const int c0 = b == pe ? ce : co, c1 = c0 + (b == pe ? ne : no);
        for (int i = 0; i < g.hq; ++i) {
          float* row = p + static_cast<std::ptrdiff_t>(i) * g.wq;
          const int ih = i * g.sh + a - g.ph;
          if (ih < 0 || ih >= g.h) {
            std::fill(row, row + g.wq, 0.f);
          } else {
            std::fill(row, row + c0, 0.f);
            std::fill(row + c1, row + g.wq, 0.f);
          }
        }
      }
  // On small images this loop is the whole cost: what does not change from row to row is
  // worked out before it (a 14-wide row is then one split and two stores, at half the time).
  // A row is `full` chunks of 2·W columns, then a tail read with masked loads, whose split
  // has zeros past the row: its vectors are stored whole where they stay inside their plane,
  // landing in padding or in rows written after this one.
  const int full = g.w / (2 * W), tail = g.w - full * 2 * W;
  const int tail_lo = std::min(W, tail), tail_hi = tail - tail_lo, tail_e = (tail + 1) / 2, tail_o = tail / 2;
  const std::ptrdiff_t m_tail = static_cast<std::ptrdiff_t>(full) * W;  // the tail's column in the phase rows
  const std::ptrdiff_t whole_e = plane - ce - m_tail - W, whole_o = plane - co - m_tail - W;  // last row start
  // Row ih is row i of row phase a, where ih + ph = i · sh + a (counted, not divided: a
  // division per row cost as much as copying a short one).
  const int w = g.w, wq = g.wq, sh = g.sh;  // in locals: through `g` they were reloaded after each store
  for (int ih = ih0, a = (ih0 + g.ph) % sh, i = (ih0 + g.ph) / sh; ih < ih1; ++ih, a = a + 1 == sh ? 0 : a + 1, i += a == 0) {
    const bool ue = used(a, pe), uo = used(a, po) && no > 0;
    if (!ue && !uo) continue;  // a row phase no tap reads (1×1 stride 2)
    const float* s = src + static_cast<std::ptrdiff_t>(ih) * w;
    const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(i) * wq;
    float* re = dst + static_cast<std::ptrdiff_t>(a * 2 + pe) * plane + at + ce;
    float* ro = dst + static_cast<std::ptrdiff_t>(a * 2 + po) * plane + at + co;
    vec e, o;
    for (int m = 0; m < full; ++m, s += 2 * W, re += W, ro += W) {
      simd::deinterleave(simd::load(s), simd::load(s + W), e, o);
      if (ue) simd::store(re, e);
      if (uo) simd::store(ro, o);
    }
    if (tail == 0) continue;
    simd::deinterleave(simd::load_first(s, tail_lo), tail_hi > 0 ? simd::load_first(s + W, tail_hi) : simd::splat(0.f),
                       e, o);
    if (ue) {
      if (at <= whole_e) simd::store(re, e);
      else simd::store_first(re, e, tail_e);
    }
    if (uo && tail_o > 0) {
      if (at <= whole_o) simd::store(ro, o);
      else simd::store_first(ro, o, tail_o);
    }
  }
}

/// Copies one input channel `src` (h × w) into its padded phase planes at `dst` (plane_set floats).
/// With `pads_zeroed` the padding already holds zeros (a copy of the same geometry was made
/// there before and nothing else wrote it): only the image's values are written, and of them
/// only input rows [ih0, ih1) where a range is given (a thread that computes some of the output
/// rows copies what they read; the rest of its planes it does not read).
inline void conv_copy_plane(const conv_geometry& g, const float* src, float* dst, bool pads_zeroed = false, int ih0 = 0,
                            int ih1 = -1) {
  const std::ptrdiff_t plane = static_cast<std::ptrdiff_t>(g.hq) * g.wq;
  if (!pads_zeroed || ih1 < 0 || ih1 > g.h) ih1 = g.h;
  if (!pads_zeroed || ih0 < 0) ih0 = 0;
  if (g.sh == 1 && g.sw == 1) {
    // The geometry in locals: read through the reference, it was reloaded after every store.
    const int end = ih1, w = g.w, wq = g.wq, pw = g.pw;
    if (!pads_zeroed) std::fill(dst, dst + static_cast<std::ptrdiff_t>(g.ph) * wq, 0.f);
    const float* s = src + static_cast<std::ptrdiff_t>(ih0) * w;
    float* row = dst + static_cast<std::ptrdiff_t>(g.ph + ih0) * wq + pw;
    // Rows [0, spilling) store their last vector whole: its extra lanes read the next input
    // rows and land in the padding after the row and in the next row's values, which that
    // row's copy writes next; a vector of zeros after the row restores the padding (and also
    // lands in the next row's values). Masked stores and fills cost more than the row here.
    // The last rows do not, so as to read nothing past the input and write nothing past the
    // planes.
    const int spill = W - w % W;
    const int spilling = spill < W && pads_zeroed && W <= wq ? std::max(0, end - (spill + w - 1) / w) : 0;
    int i = ih0;
    for (; i < spilling; ++i, s += w, row += wq) {
      for (int j = 0; j < w; j += W) simd::store(row + j, simd::load(s + j));
      simd::store(row + w, simd::splat(0.f));
    }
    for (; i < end; ++i, s += w, row += wq) {
      if (!pads_zeroed) {
        std::fill(row - pw, row, 0.f);
        std::fill(row + w, row - pw + wq, 0.f);
      }
      copy_floats(row, s, w);
    }
    if (!pads_zeroed) std::fill(dst + static_cast<std::ptrdiff_t>(end + g.ph) * wq, dst + plane, 0.f);
    return;
  }
  if (g.sw == 2) {
    conv_copy_plane_sw2(g, src, dst, pads_zeroed, ih0, ih1);
    return;
  }
  for (int a = 0; a < g.sh; ++a)
    for (int b = 0; b < g.sw; ++b) {
      if (a * g.sw + b < 32 && !(g.used_phases >> (a * g.sw + b) & 1u)) continue;  // no tap reads it (1×1 stride 2)
      float* p = dst + static_cast<std::ptrdiff_t>(a * g.sw + b) * plane;
      for (int i = 0; i < g.hq; ++i) {
        const int ih = i * g.sh + a - g.ph;
        float* row = p + static_cast<std::ptrdiff_t>(i) * g.wq;
        if (ih < ih0 || ih >= ih1) {
          if (!pads_zeroed) std::fill(row, row + g.wq, 0.f);
          continue;
        }
        // Columns j with 0 ≤ j·sw + b - pw < w are copied, the rest are padding: the copy loop
        // has no test in it (a strided read the compiler can vectorize).
        const float* s = src + static_cast<std::ptrdiff_t>(ih) * g.w;
        const int j0 = std::min(g.wq, std::max(0, (g.pw - b + g.sw - 1) / g.sw));
        const int j1 = std::max(j0, std::min(g.wq, (g.w + g.pw - b + g.sw - 1) / g.sw));
        if (!pads_zeroed) {
          std::fill(row, row + j0, 0.f);
          std::fill(row + j1, row + g.wq, 0.f);
        }
        copy_strided(row + j0, s + (j0 * g.sw + b - g.pw), j1 - j0, g.sw);
      }
    }
}

/// Copies channels [c0, c1) of one image into the padded phase planes.
inline void conv_copy_input(const conv_geometry& g, const float* x, float* buf, int c0, int c1) {
  for (int ci = c0; ci < c1; ++ci)
    conv_copy_plane(g, x + static_cast<std::ptrdiff_t>(ci) * g.h * g.w, buf + static_cast<std::size_t>(ci) * g.plane_set);
}

/// `dst[i] = act(src[i] + bias + res[i])` for one output row segment.
inline void finish_segment(const float* src, float* dst, int len, float bias, const float* res, const epilogue& e) {
  int i = 0;
  const vec b = simd::splat(bias);
  // An expensive activation runs over the stored whole vectors in one call (epilogue.hpp).
  const activation inline_act = is_transcendental(e.act) ? activation::none : e.act;
  for (; i + W <= len; i += W) {
    vec v = simd::load(src + i) + b;
    if (res) v = v + simd::load(res + i);
    simd::store(dst + i, activate(v, inline_act, e.lo, e.hi));
  }
  if (inline_act != e.act) transcendental_rows(dst, 0, 1, i / W, e.act);
  if (i < len) {
    vec v = simd::load_first(src + i, len - i) + b;
    if (res) v = v + simd::load_first(res + i, len - i);
    simd::store_first(dst + i, activate(v, e.act, e.lo, e.hi), len - i);
  }
}

/// An unpadded 1×1 convolution of stride 1: its phase planes would be the input as it is, so
/// B's rows are read from the input with no copy (`conv_tiles` with the image as `buf`), all but
/// the last tile's, which would read past the input's end (`staged` below).
constexpr bool reads_input_in_place(const conv_geometry& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.hq == g.h && g.wq == g.w;
}

/// Output tiles [t0, t1) × panels [p0, p1) of group `gr` of one image. `buf` is the image's
/// phase-split copy (or the image itself, see `reads_input_in_place`); `y`, and the epilogue's
/// bias and residual, are the image's (NCHW). Tiles from `staged_from` on read B from `staged`
/// instead: the tile's rows packed as [group][k][NR], zero past the input.
inline void conv_tiles(const conv_geometry& g, const std::int32_t* boff, const float* packed, const float* buf,
                       float* y, const epilogue& e, int gr, int p0, int p1, int t0, int t1,
                       int staged_from = 1 << 30, const float* staged = nullptr) {
  constexpr int MR = conv_block::mr, NV = conv_block::nv, NR = conv_block::nr;
  const std::ptrdiff_t out_plane = static_cast<std::ptrdiff_t>(g.oh) * g.ow;
  const int panels = (g.og + MR - 1) / MR;
  const float* bgroup = buf + static_cast<std::size_t>(gr) * static_cast<std::size_t>(g.cg) * g.plane_set;
  constexpr int tile_block = 8;  // tiles sharing one pass over the panels (their inputs stay in L2)
  // Where the planes are as wide as the output (no padding, stride 1) a run of NR positions is
  // NR consecutive outputs even across rows: every tile wholly inside the image is stored
  // directly, not only those within one row.
  const bool linear = g.wq == g.ow;
  const int direct_end = linear ? g.oh * g.ow : 0;  // positions [0, direct_end) tile linearly
  for (int tb = t0; tb < t1; tb += tile_block) {
    const int tb_end = std::min(t1, tb + tile_block);
    for (int p = p0; p < p1; ++p) {
      const int o0 = gr * g.og + p * MR;
      const int mr = std::min(MR, g.og - p * MR);
      const float* a = packed + (static_cast<std::ptrdiff_t>(gr) * panels + p) * static_cast<std::ptrdiff_t>(g.k) * MR;
      for (int t = tb; t < tb_end; ++t) {
        const int q0 = t * NR;
        const int oh0 = q0 / g.wq, ow0 = q0 % g.wq;
        const bool from_stage = t >= staged_from;
        if (!from_stage && (q0 + NR <= direct_end || (oh0 < g.oh && ow0 + NR <= g.ow))) {
          const int at = oh0 * g.ow + ow0;  // q0 itself where the tiling is linear
          float* c = y + static_cast<std::ptrdiff_t>(o0) * out_plane + at;
          const epilogue te = tile_epilogue(e, o0, at, static_cast<std::ptrdiff_t>(out_plane));
          gemm_tile<MR, NV, true, true>(g.k, a, 0, bgroup + q0, 0, boff, c, static_cast<std::ptrdiff_t>(out_plane), mr, NR,
                                        false, &te);
          continue;
        }
        alignas(64) float tile[MR * NR];
        if (from_stage) {
          micro_kernel<MR, NV, true, false>(g.k, a, 0, staged + static_cast<std::ptrdiff_t>(gr) * g.k * NR, NR, nullptr,
                                            tile, NR, false, nullptr);
        } else {
          micro_kernel<MR, NV, true, true>(g.k, a, 0, bgroup + q0, 0, boff, tile, NR, false, nullptr);
        }
        // Scatter the valid row segments of the tile, applying the epilogue.
        for (int j = 0; j < NR;) {
          const int q = q0 + j;
          const int oh = q / g.wq, ow = q % g.wq;
          if (oh >= g.oh) break;
          if (ow >= g.ow) {
            j += g.wq - ow;
            continue;
          }
          const int len = std::min(NR - j, g.ow - ow);
          const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(oh) * g.ow + ow;
          for (int m = 0; m < mr; ++m) {
            const std::ptrdiff_t row = static_cast<std::ptrdiff_t>(o0 + m) * out_plane + at;
            finish_segment(tile + m * NR + j, y + row, len, e.bias ? e.bias[o0 + m] : 0.f,
                           e.residual ? e.residual + row : nullptr, e);
          }
          j += len;
        }
      }
    }
  }
}

/// Packs tile `t`'s B rows of an in-place 1×1 convolution of image `x` as `conv_tiles` reads
/// them from `staged`: [channel][NR], zero past the image's positions.
inline void stage_last_tile(const conv_geometry& g, const float* x, int t, float* staged) {
  constexpr int NR = conv_block::nr;
  const std::ptrdiff_t hw = static_cast<std::ptrdiff_t>(g.h) * g.w, q0 = static_cast<std::ptrdiff_t>(t) * NR;
  const int n = static_cast<int>(std::min<std::ptrdiff_t>(NR, hw - q0));
  for (int ci = 0; ci < g.c; ++ci) {
    float* row = staged + static_cast<std::ptrdiff_t>(ci) * NR;
    std::copy(x + ci * hw + q0, x + ci * hw + q0 + n, row);
    std::fill(row + n, row + NR, 0.f);
  }
}

}  // namespace partita::detail::cpu
