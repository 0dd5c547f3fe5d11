#pragma once
/// int8 conv2d: NCHW u8/i8 input, OIHW u8/i8 weights, requantized NCHW u8/i8 output.
// Two kernels: a depthwise convolution (groups = channels = outputs) runs directly on an int16
// copy of each input plane with the zero point taken out and the padding made zeros; any other
// runs per image and group as a GEMM (qgemm.hpp) of the weights, packed at bind in blocks of
// rows, by panels of the im2col matrix packed at run time (a 1×1 convolution of stride 1 without
// padding reads its input planes as they are, with no index arithmetic). Padding holds the
// input's zero point, so it is 0 once that is taken out.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "partita/backends/cpu/detail/int8/qgemm.hpp"
#include "partita/backends/cpu/detail/int8/requantize.hpp"
#include "partita/backends/cpu/detail/state.hpp"
#include "partita/core/dtype.hpp"

namespace partita::detail::cpu::int8 {

/// A quantized conv2d's sizes and types: input n × c × h × w, o outputs of kh × kw taps
/// (c / groups input channels each), output n × o × oh × ow; the padding after each axis is
/// what oh and ow imply.
struct qconv_geometry {
  int n, c, h, w, o, kh, kw, oh, ow, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w, groups;
  dtype x_type, w_type, y_type;
};

/// A quantized conv2d's scales and zero points (per output channel or per tensor), float bias
/// and fused activation (`qlayer_params`).
using qconv_params = qlayer_params;

/// Whether the depthwise kernel runs the convolution (groups = c = o).
constexpr bool qconv_is_depthwise(const qconv_geometry& g) { return g.groups == g.c && g.c == g.o; }

/// Whether the im2col matrix is the input itself (1×1, stride 1, no padding).
constexpr bool qconv_is_pointwise(const qconv_geometry& g) {
  return g.kh == 1 && g.kw == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_top == 0 && g.pad_left == 0 &&
         g.oh == g.h && g.ow == g.w;
}

namespace qconv_detail {

/// Where the parts of the packed blob start: the header, the weights (int16 taps of each
/// channel for the depthwise kernel, A blocks of each group otherwise), the integer bias and
/// the multipliers (one per output channel, padded for whole blocks).
struct layout {
  std::size_t weights, bias, mult, total;
};

constexpr int group_in(const qconv_geometry& g) { return g.c / g.groups; }
constexpr int group_out(const qconv_geometry& g) { return g.o / g.groups; }
constexpr int depth(const qconv_geometry& g) { return group_in(g) * g.kh * g.kw; }
constexpr int blocks(const qconv_geometry& g) { return (group_out(g) + qgemm_mr - 1) / qgemm_mr; }

constexpr layout layout_of(const qconv_geometry& g) {
  const std::size_t per_channel = align64((static_cast<std::size_t>(g.o) + 64) * 4);
  const std::size_t weights =
      qconv_is_depthwise(g)
          ? align64(static_cast<std::size_t>(g.o) * static_cast<std::size_t>(g.kh * g.kw) * sizeof(std::int16_t))
          : static_cast<std::size_t>(g.groups) * static_cast<std::size_t>(blocks(g)) *
                static_cast<std::size_t>(pairs_of(depth(g))) * qgemm_mr * sizeof(std::int32_t);
  layout l{};
  l.weights = align64(sizeof(qlayer_header));
  l.bias = l.weights + align64(weights);
  l.mult = l.bias + per_channel;
  l.total = l.mult + per_channel;
  return l;
}

/// im2col panels a GEMM task packs at once: up to about 96 KB of them (in L2 while every block
/// of weight rows goes over them).
constexpr int chunk_panels(const qconv_geometry& g) {
  const int panels = (g.oh * g.ow + qgemm_nr - 1) / qgemm_nr;
  const int fit = static_cast<int>(98304 / panel_bytes(depth(g)));
  return std::max(1, std::min(panels, fit));
}

/// The depthwise kernel's copy of a plane: the rows and columns the taps reach, padding
/// included, the columns split into `stride_w` phases (column x in phase x mod stride_w, at
/// x / stride_w), so that every tap reads a contiguous run of a row.
struct plane_shape {
  int rows, cols, phase_cols;
};
constexpr plane_shape plane_of(const qconv_geometry& g) {
  const int rows = (g.oh - 1) * g.stride_h + (g.kh - 1) * g.dil_h + 1;
  const int cols = (g.ow - 1) * g.stride_w + (g.kw - 1) * g.dil_w + 1;
  return {rows, cols, (cols + g.stride_w - 1) / g.stride_w};
}
constexpr std::size_t plane_bytes(const qconv_geometry& g) {
  const plane_shape p = plane_of(g);
  return align64(static_cast<std::size_t>(g.stride_w) * static_cast<std::size_t>(p.rows) *
                 static_cast<std::size_t>(p.phase_cols) * sizeof(std::int16_t));
}

/// Copies plane `src` (h × w, minus zero point `zp`) into the phases of `dst`, zeros around.
template <class X>
inline void fill_plane(const qconv_geometry& g, const X* src, std::int32_t zp, std::int16_t* dst) {
  const plane_shape p = plane_of(g);
  const int sw = g.stride_w;
  std::memset(dst, 0, static_cast<std::size_t>(sw) * static_cast<std::size_t>(p.rows) *
                          static_cast<std::size_t>(p.phase_cols) * sizeof(std::int16_t));
  for (int r = 0; r < p.rows; ++r) {
    const int iy = r - g.pad_top;
    if (iy < 0 || iy >= g.h) continue;
    const X* row = src + static_cast<std::ptrdiff_t>(iy) * g.w;
    const int ix0 = std::max(0, -g.pad_left), ix1 = std::min(g.w, p.cols - g.pad_left);
    if (sw == 1) {
      std::int16_t* d = dst + static_cast<std::ptrdiff_t>(r) * p.phase_cols + g.pad_left;
      for (int ix = ix0; ix < ix1; ++ix) d[ix] = static_cast<std::int16_t>(row[ix] - zp);
    } else {
      for (int ix = ix0; ix < ix1; ++ix) {
        const int x = ix + g.pad_left;
        dst[(static_cast<std::ptrdiff_t>(x % sw) * p.rows + r) * p.phase_cols + x / sw] =
            static_cast<std::int16_t>(row[ix] - zp);
      }
    }
  }
}

/// One output plane of the depthwise kernel: the taps `wq` over the plane copy, into `acc`
/// (one row) from the integer `bias` on, then requantized with multiplier `m`.
template <class Y>
inline void depthwise_plane(const qconv_geometry& g, const std::int16_t* plane, const std::int16_t* wq,
                            std::int32_t bias, float m, const requant& r, std::int32_t* __restrict acc, Y* y) {
  // The sizes as locals: `acc` is int32 like the geometry's fields, and the compiler would
  // otherwise reload them after every store (and not vectorize the tap loop).
  const plane_shape p = plane_of(g);
  const int ow = g.ow, oh = g.oh, kh = g.kh, kw = g.kw, sh = g.stride_h, sw = g.stride_w, dh = g.dil_h, dw = g.dil_w;
  for (int oy = 0; oy < oh; ++oy) {
    std::fill(acc, acc + ow, bias);
    for (int ky = 0; ky < kh; ++ky) {
      const int row = oy * sh + ky * dh;
      for (int kx = 0; kx < kw; ++kx) {
        const int off = kx * dw;
        const std::int16_t* __restrict s =
            plane + (static_cast<std::ptrdiff_t>(off % sw) * p.rows + row) * p.phase_cols + off / sw;
        const std::int32_t wv = wq[ky * kw + kx];
        int ox = 0;
#if PARTITA_INT8_AVX2
        // Eight products a step (GCC's vectorized loop ran its scalar version on rows this short).
        const __m256i w8 = _mm256_set1_epi32(wv);
        for (; ox + 8 <= ow; ox += 8) {
          auto* a8 = reinterpret_cast<__m256i*>(acc + ox);
          const __m256i x8 = _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + ox)));
          _mm256_storeu_si256(a8, _mm256_add_epi32(_mm256_loadu_si256(a8), _mm256_mullo_epi32(w8, x8)));
        }
#endif
        for (; ox < ow; ++ox) acc[ox] += wv * s[ox];
      }
    }
    Y* yr = y + static_cast<std::ptrdiff_t>(oy) * ow;
    int ox = 0;
#if PARTITA_INT8_AVX2
    const __m256 mv = _mm256_set1_ps(m), lo = _mm256_set1_ps(r.lo), hi = _mm256_set1_ps(r.hi);
    const __m256i zp = _mm256_set1_epi32(r.zp);
    for (; ox + 8 <= ow; ox += 8) {
      const __m256i q = requantize8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + ox)), mv, lo, hi, zp);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(yr + ox), narrow8<Y>(q));
    }
#endif
    for (; ox < ow; ++ox) yr[ox] = static_cast<Y>(requantize(acc[ox], m, r));
  }
}

/// Packs columns [col0, col0 + nr) of the im2col matrix of one image's group (`xg`: its first
/// input plane) into a panel.
template <class X>
inline void pack_im2col_panel(const qconv_geometry& g, const X* xg, std::int32_t zp, int col0, int nr,
                              std::int16_t* __restrict dst) {
  const int k = depth(g), kh = g.kh, kw = g.kw, h = g.h, w = g.w, ow = g.ow, sw = g.stride_w;
  std::memset(dst, 0, panel_bytes(k));
  const std::ptrdiff_t plane = static_cast<std::ptrdiff_t>(h) * w;
  // The panel's columns by runs along one output row: a run reads one input row at stride sw.
  for (int j0 = 0; j0 < nr;) {
    const int col = col0 + j0, oy = col / ow, ox0 = col % ow;
    const int run = std::min(nr - j0, ow - ox0);
    for (int kk = 0; kk < k; ++kk) {
      const int ci = kk / (kh * kw), ky = (kk / kw) % kh, kx = kk % kw;
      const int iy = oy * g.stride_h - g.pad_top + ky * g.dil_h;
      if (iy < 0 || iy >= h) continue;
      // Input column of the run's element t: ix0 + t · sw; the ones inside are t in [t0, t1).
      const int ix0 = ox0 * sw - g.pad_left + kx * g.dil_w;
      const int t0 = ix0 >= 0 ? 0 : (-ix0 + sw - 1) / sw;
      const int t1 = std::min(run, ix0 < w ? (w - 1 - ix0) / sw + 1 : 0);
      const X* __restrict src = xg + ci * plane + static_cast<std::ptrdiff_t>(iy) * w;
      std::int16_t* __restrict d = dst + static_cast<std::ptrdiff_t>(kk / 2) * qgemm_nr * 2 + (kk & 1) + 2 * j0;
      for (int t = t0; t < t1; ++t) d[2 * t] = static_cast<std::int16_t>(src[ix0 + t * sw] - zp);
    }
    j0 += run;
  }
}

template <class X, class Y>
inline void run_depthwise(state& st, const qconv_geometry& g, const unsigned char* packed, const X* x, Y* y) {
  const layout l = layout_of(g);
  const auto& hd = *reinterpret_cast<const qlayer_header*>(packed);
  const auto* wq = reinterpret_cast<const std::int16_t*>(packed + l.weights);
  const auto* bias = reinterpret_cast<const std::int32_t*>(packed + l.bias);
  const auto* mult = reinterpret_cast<const float*>(packed + l.mult);
  const std::ptrdiff_t in_plane = static_cast<std::ptrdiff_t>(g.h) * g.w, out_plane = static_cast<std::ptrdiff_t>(g.oh) * g.ow;
  const int taps = g.kh * g.kw;
  split_tasks(st, static_cast<std::int64_t>(g.n) * g.c, 2.0 * static_cast<double>(out_plane) * taps,
              [&](int t, std::int64_t u0, std::int64_t u1) {
                auto* scratch = reinterpret_cast<unsigned char*>(st.thread_scratch(t));
                auto* plane = reinterpret_cast<std::int16_t*>(scratch);
                auto* acc = reinterpret_cast<std::int32_t*>(scratch + plane_bytes(g));
                for (std::int64_t u = u0; u < u1; ++u) {
                  const int ch = static_cast<int>(u % g.c);
                  fill_plane(g, x + u * in_plane, hd.x_zp, plane);
                  depthwise_plane(g, plane, wq + static_cast<std::ptrdiff_t>(ch) * taps, bias[ch], mult[ch], hd.r, acc,
                                  y + u * out_plane);
                }
              });
}

template <class X, class Y>
inline void run_gemm(state& st, const qconv_geometry& g, const unsigned char* packed, const X* x, Y* y) {
  const layout l = layout_of(g);
  const auto& hd = *reinterpret_cast<const qlayer_header*>(packed);
  const auto* a = reinterpret_cast<const std::int32_t*>(packed + l.weights);
  const qepilogue e = layer_epilogue(packed, l.bias, l.mult, qepilogue::along::row);
  const int k = depth(g), kp = pairs_of(k), cg = group_in(g), og = group_out(g);
  const int positions = g.oh * g.ow, panels = (positions + qgemm_nr - 1) / qgemm_nr;
  const int chunk = chunk_panels(g), chunks = (panels + chunk - 1) / chunk;
  const std::ptrdiff_t in_plane = static_cast<std::ptrdiff_t>(g.h) * g.w;
  const std::ptrdiff_t group_words = static_cast<std::ptrdiff_t>(blocks(g)) * kp * qgemm_mr;
  const std::ptrdiff_t panel_words = static_cast<std::ptrdiff_t>(kp) * qgemm_nr * 2;
  const bool pointwise = qconv_is_pointwise(g);
  const std::int64_t units = static_cast<std::int64_t>(g.n) * g.groups * chunks;
  split_tasks(st, units, 2.0 * og * k * chunk * qgemm_nr, [&](int t, std::int64_t u0, std::int64_t u1) {
    auto* b = reinterpret_cast<std::int16_t*>(st.thread_scratch(t));
    for (std::int64_t u = u0; u < u1; ++u) {
      const int ch = static_cast<int>(u % chunks), gr = static_cast<int>((u / chunks) % g.groups);
      const std::int64_t img = u / (static_cast<std::int64_t>(chunks) * g.groups);
      const X* xg = x + (img * g.c + static_cast<std::int64_t>(gr) * cg) * in_plane;
      const int col0 = ch * chunk * qgemm_nr;
      const int count = std::min(chunk, panels - ch * chunk);
      for (int pn = 0; pn < count; ++pn) {
        const int c0 = col0 + pn * qgemm_nr, nr = std::min(qgemm_nr, positions - c0);
        if (pointwise) pack_b_panel_rows(xg, in_plane, k, c0, nr, hd.x_zp, b + pn * panel_words);
        else pack_im2col_panel(g, xg, hd.x_zp, c0, nr, b + pn * panel_words);
      }
      Y* yc = y + (img * g.o + static_cast<std::int64_t>(gr) * og) * positions + col0;
      qgemm_blocks(kp, a + gr * group_words, og, b, count, col0, positions, yc, positions, e, gr * og);
    }
  });
}

}  // namespace qconv_detail

/// Bytes of the blob `qconv_prepare` writes (kept from bind on).
constexpr std::size_t qconv_packed_bytes(const qconv_geometry& g) { return qconv_detail::layout_of(g).total; }

/// Bytes of scratch `qconv_run` uses per thread (`st.need_scratch(0, scratch_floats(...))` at
/// prepare).
constexpr std::size_t qconv_scratch_bytes(const qconv_geometry& g) {
  if (qconv_is_depthwise(g))
    return qconv_detail::plane_bytes(g) + align64(static_cast<std::size_t>(g.ow) * sizeof(std::int32_t));
  return static_cast<std::size_t>(qconv_detail::chunk_panels(g)) * panel_bytes(qconv_detail::depth(g));
}

/// At bind: packs the weights `w` (o × c / groups × kh × kw of `g.w_type`, minus their zero
/// points), the integer bias, the multipliers and the output bounds into `packed`
/// (`qconv_packed_bytes(g)` bytes, 64-byte aligned).
inline void qconv_prepare(const qconv_geometry& g, const void* w, const qconv_params& p, void* packed) {
  using namespace qconv_detail;
  const layout l = layout_of(g);
  prepare_outputs(p, g.y_type, g.o, packed, l.total, l.bias, l.mult);
  auto* base = static_cast<unsigned char*>(packed);
  const int k = depth(g), og = group_out(g), zp_step = p.w_count == 1 ? 0 : 1;
  with_byte_type(g.w_type, [&](auto wt) {
    using T = decltype(wt);
    const T* wv = static_cast<const T*>(w);
    if (qconv_is_depthwise(g)) {
      auto* d = reinterpret_cast<std::int16_t*>(base + l.weights);
      for (int oc = 0; oc < g.o; ++oc)
        for (int i = 0; i < k; ++i)
          d[oc * k + i] = static_cast<std::int16_t>(wv[oc * k + i] - p.w_zp[oc * zp_step]);
    } else {
      auto* d = reinterpret_cast<std::int32_t*>(base + l.weights);
      const std::ptrdiff_t group_words = static_cast<std::ptrdiff_t>(blocks(g)) * pairs_of(k) * qgemm_mr;
      for (int gr = 0; gr < g.groups; ++gr)
        pack_a_blocks(wv + static_cast<std::ptrdiff_t>(gr) * og * k, k, og, k, p.w_zp + gr * og * zp_step, zp_step,
                      d + gr * group_words);
    }
  });
}

/// Runs the convolution of `x` (n × c × h × w of `g.x_type`) into `y` (n × o × oh × ow of
/// `g.y_type`) with the blob of `qconv_prepare`, over the state's threads.
inline void qconv_run(state& st, const qconv_geometry& g, const void* packed, const void* x, void* y) {
  const auto* blob = static_cast<const unsigned char*>(packed);
  with_byte_type(g.x_type, [&](auto xt) {
    using X = decltype(xt);
    with_byte_type(g.y_type, [&](auto yt) {
      using Y = decltype(yt);
      if (qconv_is_depthwise(g)) qconv_detail::run_depthwise(st, g, blob, static_cast<const X*>(x), static_cast<Y*>(y));
      else qconv_detail::run_gemm(st, g, blob, static_cast<const X*>(x), static_cast<Y*>(y));
    });
  });
}

}  // namespace partita::detail::cpu::int8
