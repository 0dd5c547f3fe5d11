#pragma once
/// The int8 depthwise conv2d kernel (groups = channels = outputs): each input plane is copied
/// as int16 with the zero point taken out, the padding made zeros and the rows and columns split
/// by the strides' phases; the taps then go two a multiply-add over a flat run of outputs.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "partita/backends/cpu/detail/int8/qconv_layout.hpp"
#include "partita/backends/cpu/detail/state.hpp"

namespace partita::detail::cpu::int8::qconv_detail {

#if PARTITA_INT8_AVX2
/// Sixteen quantized values of type X as int16 minus the zero point `zp`.
template <class X>
inline __m256i widen16(__m128i v, __m256i zp) {
  const __m256i w = std::is_unsigned_v<X> ? _mm256_cvtepu8_epi16(v) : _mm256_cvtepi8_epi16(v);
  return _mm256_sub_epi16(w, zp);
}
#endif

/// Zeros d[from, to); with AVX2 whole vectors, up to 15 values past `to` (rows written in memory
/// order overwrite them: short runs, where a call of memset would cost more than the stores).
inline void zero_run(std::int16_t* d, int from, int to) {
#if PARTITA_INT8_AVX2
  __m256i z = _mm256_setzero_si256();
#if defined(__GNUC__)
  asm("" : "+x"(z));  // a value the compiler cannot see is zero: it would call memset for the loop
#endif
  for (; from < to; from += 16) _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + from), z);
#else
  if (from < to) std::fill(d + from, d + to, std::int16_t{0});
#endif
}

/// The columns [j0, j1) of a phase row that lie in the input row (w values), column j being
/// the row's value j · sw + first.
struct phase_columns {
  int first, j0, j1;
};
constexpr phase_columns columns_of(int w, int sw, int first, int ld) {
  const int j0 = first >= 0 ? 0 : std::min(ld, (-first + sw - 1) / sw);
  return {first, j0, std::max(j0, std::min(ld, w - first > 0 ? (w - first + sw - 1) / sw : 0))};
}

/// One row of one phase of the plane copy: d[j] = row[j · sw + first] - zp for j in [j0, j1)
/// (`columns_of`), 0 elsewhere in [0, ld). The vectors may read up to `avail` values from `row`
/// (the rest of its plane) and write up to 15 values past `d + ld`, which the next row written
/// overwrites.
template <class X>
inline void fill_phase_row(const X* row, std::ptrdiff_t avail, int sw, phase_columns pc, int ld, std::int32_t zp,
                           std::int16_t* d) {
  const int first = pc.first, j0 = pc.j0, j1 = pc.j1;
  zero_run(d, 0, j0);
  int j = j0;
#if PARTITA_INT8_AVX2
  const __m256i z = _mm256_set1_epi16(static_cast<std::int16_t>(zp));
  if (sw == 1) {
    for (; j < j1 && first + j + 16 <= avail; j += 16)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + j),
                          widen16<X>(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + j + first)), z));
  } else if (sw == 2) {
    // 32 columns a step, the even ones kept: gathered in each lane, then the lanes' halves joined.
    const __m256i even = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0, 2, 4, 6, 8, 10, 12,
                                          14, 1, 3, 5, 7, 9, 11, 13, 15);
    for (; j < j1 && 2 * j + first + 32 <= avail; j += 16) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * j + first));
      const __m256i e = _mm256_permute4x64_epi64(_mm256_shuffle_epi8(v, even), 0xd8);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + j), widen16<X>(_mm256_castsi256_si128(e), z));
    }
  }
  j = std::min(j, j1);  // the columns past j1 the vectors wrote are made zeros below
#else
  (void)avail;
#endif
  for (; j < j1; ++j) d[j] = static_cast<std::int16_t>(row[j * sw + first] - zp);
  zero_run(d, j1, ld);
}

/// Copies plane `src` (h × w, minus zero point `zp`) into the phases of `dst`, zeros around,
/// row after row in memory order (see `fill_phase_row`). What lies past the phases is only read
/// for outputs that are dropped; the caller zeros it once.
template <class X>
inline void fill_plane(const qconv_geometry& g, const X* src, std::int32_t zp, std::int16_t* dst) {
  const plane_shape p = plane_of(g);
  const int sh = g.stride_h, sw = g.stride_w;
  const std::ptrdiff_t plane = static_cast<std::ptrdiff_t>(g.h) * g.w;
  for (int a = 0; a < sh; ++a)
    for (int b = 0; b < sw; ++b) {
      const phase_columns pc = columns_of(g.w, sw, b - g.pad_left, p.ld);
      for (int i = 0; i < p.rows; ++i) {
        const int iy = i * sh + a - g.pad_top;
        std::int16_t* d = dst + (static_cast<std::ptrdiff_t>(a * sw + b) * p.rows + i) * p.ld;
        const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(iy) * g.w;
        if (iy < 0 || iy >= g.h) zero_run(d, 0, p.ld);
        else fill_phase_row(src + at, plane - at, sw, pc, p.ld, zp, d);
      }
    }
}

/// One output plane of the depthwise kernel: the `taps` weights (`wp`: pairs, as A words) at
/// offsets `off` over the plane copy, from the integer `bias` on, requantized with multiplier
/// `m`; `flat` (`flat_outputs` bytes) holds the outputs along the flat index.
template <int Taps, class Y>
inline void depthwise_plane(const qconv_geometry& g, const std::int16_t* plane, const std::int32_t* wp,
                            const std::int32_t* off, int any_taps, std::int32_t bias, float m, const requant& r,
                            Y* __restrict flat, Y* __restrict y) {
  // Taps: the count when it is one the compiler unrolls for (3×3, 5×5), else 0 and `any_taps`.
  const int ld = plane_of(g).ld, ow = g.ow, oh = g.oh, taps = Taps ? Taps : any_taps;
#if PARTITA_INT8_AVX2
  // Two taps a vpmaddwd: their inputs for 16 outputs interleaved (outputs 0-3 and 8-11 in the
  // low unpack, 4-7 and 12-15 in the high one, which packing the two sums puts back in order).
  const int n = g.oh * ld, kp = pairs_of(taps);
  const __m256 mv = _mm256_set1_ps(m), lo = _mm256_set1_ps(r.lo), hi = _mm256_set1_ps(r.hi);
  const __m256i zp = _mm256_set1_epi32(r.zp), b0 = _mm256_set1_epi32(bias);
  for (int i = 0; i < n; i += 16) {
    __m256i s0 = b0, s1 = b0;
    for (int p = 0; p < kp; ++p) {
      const __m256i w = _mm256_set1_epi32(wp[p]);
      const __m256i xa = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(plane + off[2 * p] + i));
      const __m256i xb = 2 * p + 1 < taps
                             ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(plane + off[2 * p + 1] + i))
                             : _mm256_setzero_si256();
      s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(_mm256_unpacklo_epi16(xa, xb), w));
      s1 = _mm256_add_epi32(s1, _mm256_madd_epi16(_mm256_unpackhi_epi16(xa, xb), w));
    }
    const __m256i q = _mm256_packs_epi32(requantize8(s0, mv, lo, hi, zp), requantize8(s1, mv, lo, hi, zp));
    const __m256i b8 = std::is_unsigned_v<Y> ? _mm256_packus_epi16(q, q) : _mm256_packs_epi16(q, q);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(flat + i), _mm256_castsi256_si128(_mm256_permute4x64_epi64(b8, 0x08)));
  }
  // Each row by whole vectors while they end inside the plane, the last one's spilling into the
  // next row, which is written after it; the rest of the row copied as it is.
  const std::ptrdiff_t total = static_cast<std::ptrdiff_t>(oh) * ow;
  for (int oy = 0; oy < oh; ++oy) {
    Y* yr = y + static_cast<std::ptrdiff_t>(oy) * ow;
    const Y* fr = flat + static_cast<std::ptrdiff_t>(oy) * ld;
    int ox = 0;
    for (; ox < ow && static_cast<std::ptrdiff_t>(oy) * ow + ox + 16 <= total; ox += 16)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(yr + ox), _mm_loadu_si128(reinterpret_cast<const __m128i*>(fr + ox)));
    if (ox < ow) std::memcpy(yr + ox, fr + ox, static_cast<std::size_t>(ow - ox) * sizeof(Y));
  }
#else
  (void)flat;
  for (int oy = 0; oy < oh; ++oy)
    for (int ox = 0; ox < ow; ++ox) {
      const std::int16_t* s = plane + static_cast<std::ptrdiff_t>(oy) * ld + ox;
      std::int32_t acc = bias;
      for (int t = 0; t < taps; ++t) {
        const std::uint32_t word = static_cast<std::uint32_t>(wp[t / 2]);
        const std::int32_t wt = static_cast<std::int16_t>(static_cast<std::uint16_t>(t % 2 ? word >> 16 : word & 0xffffu));
        acc += wt * s[off[t]];
      }
      y[static_cast<std::ptrdiff_t>(oy) * ow + ox] = static_cast<Y>(requantize(acc, m, r));
    }
#endif
}


template <class X, class Y>
inline void run_depthwise(state& st, const qconv_geometry& g, const unsigned char* packed, const X* x, Y* y) {
  const layout l = layout_of(g);
  const auto& hd = *reinterpret_cast<const qlayer_header*>(packed);
  const auto* wp = reinterpret_cast<const std::int32_t*>(packed + l.weights);
  const auto* off = reinterpret_cast<const std::int32_t*>(packed + l.offsets);
  const auto* bias = reinterpret_cast<const std::int32_t*>(packed + l.bias);
  const auto* mult = reinterpret_cast<const float*>(packed + l.mult);
  const std::ptrdiff_t in_plane = static_cast<std::ptrdiff_t>(g.h) * g.w, out_plane = static_cast<std::ptrdiff_t>(g.oh) * g.ow;
  const int taps = g.kh * g.kw, kp = pairs_of(taps);
  split_tasks(st, static_cast<std::int64_t>(g.n) * g.c, 2.0 * static_cast<double>(out_plane) * taps,
              [&](int t, std::int64_t u0, std::int64_t u1) {
                auto* scratch = reinterpret_cast<unsigned char*>(st.thread_scratch(t));
                auto* plane = reinterpret_cast<std::int16_t*>(scratch);
                auto* flat = reinterpret_cast<Y*>(scratch + plane_bytes(g));
                std::fill(plane, plane + plane_of(g).elements, std::int16_t{0});
                for (std::int64_t u = u0; u < u1; ++u) {
                  const int ch = static_cast<int>(u % g.c);
                  fill_plane(g, x + u * in_plane, hd.x_zp, plane);
                  const std::int32_t* wc = wp + static_cast<std::ptrdiff_t>(ch) * kp;
                  Y* yc = y + u * out_plane;
                  if (taps == 9) depthwise_plane<9>(g, plane, wc, off, taps, bias[ch], mult[ch], hd.r, flat, yc);
                  else if (taps == 25) depthwise_plane<25>(g, plane, wc, off, taps, bias[ch], mult[ch], hd.r, flat, yc);
                  else depthwise_plane<0>(g, plane, wc, off, taps, bias[ch], mult[ch], hd.r, flat, yc);
                }
              });
}

}  // namespace partita::detail::cpu::int8::qconv_detail
