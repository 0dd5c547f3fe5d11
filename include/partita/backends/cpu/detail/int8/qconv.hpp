#pragma once
/// int8 conv2d: NCHW u8/i8 input, OIHW u8/i8 weights, requantized NCHW u8/i8 output.
// Two kernels: a depthwise convolution (groups = channels = outputs) runs directly on an int16
// copy of each input plane with the zero point taken out, the padding made zeros and the rows and
// columns split by the strides' phases, two taps a multiply-add over a flat run of outputs; any other
// runs per image and group as a GEMM (qgemm.hpp) of the weights, packed at bind in blocks of
// rows, by panels of the im2col matrix packed at run time (a 1×1 convolution of stride 1 without
// padding reads its input planes as they are, with no index arithmetic). Padding holds the
// input's zero point, so it is 0 once that is taken out.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

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

/// Where the parts of the packed blob start: the header, the weights (for the depthwise kernel,
/// each channel's taps in pairs as A words, then the taps' offsets in the plane copy; A blocks of
/// each group otherwise), the integer bias and the multipliers (one per output channel, padded for
/// whole blocks).
struct layout {
  std::size_t weights, offsets, bias, mult, total;
};

constexpr int group_in(const qconv_geometry& g) { return g.c / g.groups; }
constexpr int group_out(const qconv_geometry& g) { return g.o / g.groups; }
constexpr int depth(const qconv_geometry& g) { return group_in(g) * g.kh * g.kw; }
constexpr int blocks(const qconv_geometry& g) { return (group_out(g) + qgemm_mr - 1) / qgemm_mr; }

constexpr layout layout_of(const qconv_geometry& g) {
  const std::size_t per_channel = align64((static_cast<std::size_t>(g.o) + 64) * 4);
  const std::size_t taps = static_cast<std::size_t>(g.kh * g.kw);
  const std::size_t weights =
      qconv_is_depthwise(g)
          ? align64(static_cast<std::size_t>(g.o) * static_cast<std::size_t>(pairs_of(g.kh * g.kw)) * sizeof(std::int32_t))
          : static_cast<std::size_t>(g.groups) * static_cast<std::size_t>(blocks(g)) *
                static_cast<std::size_t>(pairs_of(depth(g))) * qgemm_mr * sizeof(std::int32_t);
  layout l{};
  l.weights = align64(sizeof(qlayer_header));
  l.offsets = l.weights + align64(weights);
  l.bias = l.offsets + (qconv_is_depthwise(g) ? align64(taps * sizeof(std::int32_t)) : 0);
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

/// The depthwise kernel's copy of a plane, split into `stride_h` × `stride_w` phases: phase
/// (a, b) holds the padded rows a, a + stride_h, ... and columns b, b + stride_w, ..., as a grid
/// of `rows` × `ld`. Output (oy, ox) then reads tap (ky, kx) at a fixed offset from position
/// oy · ld + ox, so that the outputs run along one flat index (the ld - ow columns past each
/// row's end computed and dropped), whatever the stride, dilation or width.
struct plane_shape {
  int rows, ld;
  std::size_t elements;  // the phases and, zero, what a vector past the last one reads
};
constexpr plane_shape plane_of(const qconv_geometry& g) {
  const int rows = g.oh + (g.kh - 1) * g.dil_h / g.stride_h, ld = g.ow + (g.kw - 1) * g.dil_w / g.stride_w;
  const std::size_t phases = static_cast<std::size_t>(g.stride_h) * static_cast<std::size_t>(g.stride_w);
  return {rows, ld, phases * static_cast<std::size_t>(rows) * static_cast<std::size_t>(ld) + static_cast<std::size_t>(ld) + 16};
}
constexpr std::size_t plane_bytes(const qconv_geometry& g) { return align64(plane_of(g).elements * sizeof(std::int16_t)); }

/// Outputs along the flat index, rounded up to whole vectors, and one vector more that the copy
/// of the rows may read (the bytes the kernel stores before it copies each row's first `ow` into
/// place).
constexpr std::size_t flat_outputs(const qconv_geometry& g) {
  return (static_cast<std::size_t>(g.oh) * static_cast<std::size_t>(plane_of(g).ld) + 15) / 16 * 16 + 16;
}

/// Tap (ky, kx)'s offset in the plane copy (`plane_of`).
constexpr std::int32_t tap_offset(const qconv_geometry& g, int ky, int kx) {
  const plane_shape p = plane_of(g);
  const int dy = ky * g.dil_h, dx = kx * g.dil_w;
  const int phase = (dy % g.stride_h) * g.stride_w + dx % g.stride_w;
  return (phase * p.rows + dy / g.stride_h) * p.ld + dx / g.stride_w;
}

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
  if (qconv_is_depthwise(g)) return qconv_detail::plane_bytes(g) + align64(qconv_detail::flat_outputs(g));
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
      auto* d = reinterpret_cast<std::int32_t*>(base + l.weights);
      const int kp = pairs_of(k);
      for (int oc = 0; oc < g.o; ++oc)
        for (int q = 0; q < kp; ++q) {
          const std::int32_t z = p.w_zp[oc * zp_step];
          const T* row = wv + static_cast<std::ptrdiff_t>(oc) * k;
          d[oc * kp + q] = pair_word(row[2 * q] - z, 2 * q + 1 < k ? row[2 * q + 1] - z : 0);
        }
      auto* off = reinterpret_cast<std::int32_t*>(base + l.offsets);
      for (int ky = 0; ky < g.kh; ++ky)
        for (int kx = 0; kx < g.kw; ++kx) off[ky * g.kw + kx] = tap_offset(g, ky, kx);
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
