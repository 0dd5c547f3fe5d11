#pragma once
/// The int8 conv2d as a GEMM: per image and group, the weights packed at bind in blocks of rows
/// times panels of the im2col matrix packed at run time (a 1×1 convolution of stride 1 without
/// padding reads its input planes as they are). Padding holds the input's zero point, so it is
/// 0 once that is taken out.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "partita/backends/cpu/detail/int8/qconv_layout.hpp"
#include "partita/backends/cpu/detail/state.hpp"

namespace partita::detail::cpu::int8::qconv_detail {

/// The values one im2col row takes along a run of output columns: x[ix0 + t · sw] of input row
/// `src` for t in [t0, t1), zero outside (t0 = t1 = 0: a padding row).
template <class X>
struct im2col_run {
  const X* src;
  int ix0, t0, t1;
};

#if PARTITA_INT8_AVX2
/// Eight values of a run from t on, as int16 minus the zero point `zp`: stride 1 reads eight
/// bytes, stride 2 sixteen and keeps the even ones.
template <class X>
inline __m128i im2col_eight(const im2col_run<X>& r, int sw, int t, __m128i zp) {
  __m128i v;
  if (sw == 1) {
    v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(r.src + r.ix0 + t));
  } else {
    const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    v = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r.src + r.ix0 + 2 * t)), even);
  }
  return _mm_sub_epi16(std::is_unsigned_v<X> ? _mm_cvtepu8_epi16(v) : _mm_cvtepi8_epi16(v), zp);
}
#endif

/// Packs columns [col0, col0 + nr) of the im2col matrix of one image's group (`xg`: its first
/// input plane) into a panel.
template <class X>
inline void pack_im2col_panel(const qconv_geometry& g, const X* xg, std::int32_t zp, int col0, int nr,
                              std::int16_t* __restrict dst) {
  const int k = depth(g), kp = pairs_of(k), kh = g.kh, kw = g.kw, h = g.h, w = g.w, ow = g.ow, sw = g.stride_w;
  std::memset(dst, 0, panel_bytes(k));
  const std::ptrdiff_t plane = static_cast<std::ptrdiff_t>(h) * w;
#if PARTITA_INT8_AVX2
  const __m128i zv = _mm_set1_epi16(static_cast<std::int16_t>(zp));
#endif
  // The panel's columns by runs along one output row: a run reads one input row at stride sw.
  for (int j0 = 0; j0 < nr;) {
    const int col = col0 + j0, oy = col / ow, ox0 = col % ow;
    const int run = std::min(nr - j0, ow - ox0);
    int ci = 0, ky = 0, kx = 0;  // of depth 2p, then 2p + 1
    const auto next = [&]() -> im2col_run<X> {
      im2col_run<X> r{xg, 0, 0, 0};
      const int iy = oy * g.stride_h - g.pad_top + ky * g.dil_h;
      if (iy >= 0 && iy < h) {
        // Input column of the run's element t: ix0 + t · sw; the ones inside are t in [t0, t1).
        r.src = xg + ci * plane + static_cast<std::ptrdiff_t>(iy) * w;
        r.ix0 = ox0 * sw - g.pad_left + kx * g.dil_w;
        r.t0 = r.ix0 >= 0 ? 0 : std::min(run, (-r.ix0 + sw - 1) / sw);
        r.t1 = std::max(r.t0, std::min(run, r.ix0 < w ? (w - 1 - r.ix0) / sw + 1 : 0));
      }
      if (++kx == kw) {
        kx = 0;
        if (++ky == kh) ky = 0, ++ci;
      }
      return r;
    };
    for (int p = 0; p < kp; ++p) {
      const im2col_run<X> r0 = next();
      const im2col_run<X> r1 = 2 * p + 1 < k ? next() : im2col_run<X>{xg, 0, 0, 0};
      std::int16_t* __restrict d = dst + static_cast<std::ptrdiff_t>(p) * qgemm_nr * 2 + 2 * j0;
      // Where both rows have values, eight columns a step as interleaved pairs; the rest one by one.
      int v0 = std::max(r0.t0, r1.t0), v1 = v0;
#if PARTITA_INT8_AVX2
      if (sw <= 2) {
        const int end = std::min(r0.t1, r1.t1);
        // Stride 2 reads one byte past the eighth value: it must still be in the row.
        const auto fits = [&](const im2col_run<X>& r, int t) { return sw == 1 || r.ix0 + 2 * t + 16 <= w; };
        const auto eight = [&](int t) {
          const __m128i a = im2col_eight(r0, sw, t, zv), b = im2col_eight(r1, sw, t, zv);
          _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * t), _mm_unpacklo_epi16(a, b));
          _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * t + 8), _mm_unpackhi_epi16(a, b));
        };
        if (end - v0 >= 8 && fits(r0, end - 8) && fits(r1, end - 8)) {
          // The last eight end at `end`, over some that the others wrote (with the same values).
          for (; v1 < end - 8; v1 += 8) eight(v1);
          eight(end - 8);
          v1 = end;
        } else {
          for (; v1 + 8 <= end && fits(r0, v1) && fits(r1, v1); v1 += 8) eight(v1);
        }
      }
#endif
      int i = 0;
      for (const im2col_run<X>* r : {&r0, &r1}) {
        for (int t = r->t0; t < std::min(r->t1, v0); ++t) d[2 * t + i] = static_cast<std::int16_t>(r->src[r->ix0 + t * sw] - zp);
        for (int t = std::max(r->t0, v1); t < r->t1; ++t) d[2 * t + i] = static_cast<std::int16_t>(r->src[r->ix0 + t * sw] - zp);
        ++i;
      }
    }
    j0 += run;
  }
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

}  // namespace partita::detail::cpu::int8::qconv_detail
