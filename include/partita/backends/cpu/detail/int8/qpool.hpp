#pragma once
/// cpu int8 pooling over NCHW planes: average, global average and max, in the integer domain.
// Average pooling (and global average, whose window is the plane), per output:
//   acc = Σ over the window's taps inside the input of (x - zx)    exact: sum - taps · zx
//   q   = clamp(round_half_even(float(acc) · (sx / (sy · float(count)))) + zy, type's range)
// `count` is what the float op divides by (`pool_window_taps`: the taps inside the input, or
// with count_include_pad those inside the declared padding too); the multiplier is computed
// in float in that order (sy · count first). A padded tap is a real 0, so it adds nothing to
// acc. Global pooling sums in int64 (a plane of more than 2^23 bytes overflows int32).
// Max pooling compares the integers: it is the float op's only when the input and output
// quantization are equal (max commutes with a monotonic map); padded taps never win.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "partita/backends/cpu/detail/int8/qeltwise.hpp"
#include "partita/backends/cpu/detail/int8/requantize.hpp"
#include "partita/backends/cpu/detail/pool/pool.hpp"
#include "partita/core/dtype.hpp"

namespace partita::detail::cpu::int8 {

/// Average pooling of u8 or i8 (`type`) planes `x` into `y`, geometry `g` (`make_pool_geometry`:
/// window, stride, pads, count_include_pad, every plane of the batch in `g.planes`).
inline void qavg_pool2d(const void* x, qparams qx, void* y, qparams qy, dtype type, const pool_geometry& g);

/// Global average pooling: the mean of each of `planes` planes of `area` u8 or i8 values.
inline void qglobal_avg_pool2d(const void* x, qparams qx, void* y, qparams qy, dtype type, std::int64_t planes,
                               std::int64_t area);

/// Max pooling of u8 or i8 planes (input and output quantized alike), geometry `g`.
inline void qmax_pool2d(const void* x, void* y, dtype type, const pool_geometry& g);

namespace detail {

/// round_half_even(float(acc) · m) + zy clamped to the range of `r`, for a wide accumulator.
inline std::int32_t requantize_wide(std::int64_t acc, float m, const requant& r) {
  const float v = static_cast<float>(acc) * m;
  return static_cast<std::int32_t>(std::nearbyint(std::min(std::max(r.lo, v), r.hi))) + r.zp;
}

template <class T>
void qavg_pool_bytes(const T* x, std::int32_t zx, float sx, T* y, qparams qy, const pool_geometry& g) {
  const requant r = make_requant({std::numeric_limits<T>::min(), std::numeric_limits<T>::max()}, qy.zp);
  std::vector<std::int32_t> cols(static_cast<std::size_t>(g.w));
  for (int p = 0; p < g.planes; ++p) {
    const T* plane = x + static_cast<std::ptrdiff_t>(p) * g.h * g.w;
    T* out = y + static_cast<std::ptrdiff_t>(p) * g.oh * g.ow;
    for (int oh = 0; oh < g.oh; ++oh) {
      const int ih0 = oh * g.sh - g.ph, r0 = std::max(ih0, 0), r1 = std::min(ih0 + g.kh, g.h);
      const int row_count = pool_window_taps(g.count_include_pad, ih0, g.kh, g.h, g.ph_end);
      // Column sums of the window's rows, eight columns at a time.
      int c = 0;
#if PARTITA_INT8_AVX2
      for (; c + 8 <= g.w; c += 8) {
        __m256i s = _mm256_setzero_si256();
        for (int ih = r0; ih < r1; ++ih) s = _mm256_add_epi32(s, widen8(plane + static_cast<std::ptrdiff_t>(ih) * g.w + c));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(cols.data() + c), s);
      }
#endif
      for (; c < g.w; ++c) {
        std::int32_t s = 0;
        for (int ih = r0; ih < r1; ++ih) s += plane[static_cast<std::ptrdiff_t>(ih) * g.w + c];
        cols[static_cast<std::size_t>(c)] = s;
      }
      for (int ow = 0; ow < g.ow; ++ow) {
        const int iw0 = ow * g.sw - g.pw, c0 = std::max(iw0, 0), c1 = std::min(iw0 + g.kw, g.w);
        std::int32_t sum = 0;
        for (int k = c0; k < c1; ++k) sum += cols[static_cast<std::size_t>(k)];
        const int count = row_count * pool_window_taps(g.count_include_pad, iw0, g.kw, g.w, g.pw_end);
        const std::int64_t taps = static_cast<std::int64_t>(std::max(r1 - r0, 0)) * std::max(c1 - c0, 0);
        const float m = sx / (qy.scale * static_cast<float>(count));
        out[oh * g.ow + ow] = static_cast<T>(requantize_wide(sum - taps * zx, m, r));
      }
    }
  }
}

/// Σ p[0, n) exactly.
template <class T>
std::int64_t byte_sum(const T* p, std::int64_t n) {
  std::int64_t s = 0, i = 0;
#if PARTITA_INT8_AVX2
  // SAD against zero sums each 8 bytes into a 64-bit lane; i8 is first offset to u8 (x + 128).
  const __m256i zero = _mm256_setzero_si256(), flip = _mm256_set1_epi8(static_cast<char>(0x80));
  __m256i acc = zero;
  for (; i + 32 <= n; i += 32) {
    __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    if constexpr (std::is_signed_v<T>) v = _mm256_xor_si256(v, flip);
    acc = _mm256_add_epi64(acc, _mm256_sad_epu8(v, zero));
  }
  alignas(32) std::int64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
  s = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  if constexpr (std::is_signed_v<T>) s -= 128 * i;
#endif
  for (; i < n; ++i) s += p[i];
  return s;
}

template <class T>
void qglobal_avg_pool_bytes(const T* x, std::int32_t zx, float sx, T* y, qparams qy, std::int64_t planes, std::int64_t area) {
  const requant r = make_requant({std::numeric_limits<T>::min(), std::numeric_limits<T>::max()}, qy.zp);
  const float m = sx / (qy.scale * static_cast<float>(area));
  for (std::int64_t p = 0; p < planes; ++p)
    y[p] = static_cast<T>(requantize_wide(byte_sum(x + p * area, area) - area * zx, m, r));
}

#if PARTITA_INT8_AVX2
template <class T>
inline __m256i max32(__m256i a, __m256i b) {
  if constexpr (std::is_unsigned_v<T>) return _mm256_max_epu8(a, b);
  else return _mm256_max_epi8(a, b);
}
inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline void store32(void* p, __m256i v) { _mm256_storeu_si256(static_cast<__m256i*>(p), v); }
#endif

/// out[o] = max over t < k of row[o + t], o < n (row readable up to n + k - 1 + 32).
template <class T>
void window_max(const T* row, int k, T* out, int n) {
  int o = 0;
#if PARTITA_INT8_AVX2
  for (; o + 32 <= n; o += 32) {
    __m256i m = load32(row + o);
    for (int t = 1; t < k; ++t) m = max32<T>(m, load32(row + o + t));
    store32(out + o, m);
  }
#endif
  for (; o < n; ++o) {
    T m = row[o];
    for (int t = 1; t < k; ++t) m = std::max(m, row[o + t]);
    out[o] = m;
  }
}

template <class T>
void qmax_pool_bytes(const T* x, T* y, const pool_geometry& g) {
  constexpr T lowest = std::numeric_limits<T>::min();  // max's identity: a padded tap never wins
  // The window rows' maximum, with the padding around it: column c of the input at pw + c.
  const int span = (g.ow - 1) * g.sw + g.kw;  // the columns the windows cover
  const int width = std::max(span, g.pw + g.w) + 32;
  std::vector<T> row(static_cast<std::size_t>(width), lowest);
  // With a stride, the row split into its `sw` phases (phase p holds columns p, p + sw, ...),
  // each then a stride-1 row: tap t of output o is phase t % sw at o + t / sw.
  const int phase_len = span / g.sw + 1 + 32;
  std::vector<T> phases(g.sw > 1 ? static_cast<std::size_t>(g.sw) * static_cast<std::size_t>(phase_len) : 0, lowest);
  std::vector<T> part(g.sw > 1 ? static_cast<std::size_t>(g.ow) : 0);
  T* const mid = row.data() + g.pw;
  for (int p = 0; p < g.planes; ++p) {
    const T* plane = x + static_cast<std::ptrdiff_t>(p) * g.h * g.w;
    T* out = y + static_cast<std::ptrdiff_t>(p) * g.oh * g.ow;
    for (int oh = 0; oh < g.oh; ++oh) {
      const int ih0 = oh * g.sh - g.ph, r0 = std::max(ih0, 0), r1 = std::min(ih0 + g.kh, g.h);
      if (r0 >= r1) {  // a window entirely in the padding: nothing to take
        std::fill(out + oh * g.ow, out + (oh + 1) * g.ow, lowest);
        continue;
      }
      std::copy(plane + static_cast<std::ptrdiff_t>(r0) * g.w, plane + static_cast<std::ptrdiff_t>(r0 + 1) * g.w, mid);
      for (int ih = r0 + 1; ih < r1; ++ih) {
        const T* src = plane + static_cast<std::ptrdiff_t>(ih) * g.w;
        int c = 0;
#if PARTITA_INT8_AVX2
        for (; c + 32 <= g.w; c += 32) store32(mid + c, max32<T>(load32(mid + c), load32(src + c)));
#endif
        for (; c < g.w; ++c) mid[c] = std::max(mid[c], src[c]);
      }
      T* o_row = out + oh * g.ow;
      if (g.sw == 1) {
        window_max(row.data(), g.kw, o_row, g.ow);
        continue;
      }
      for (int c = 0; c < span; ++c)
        phases[static_cast<std::size_t>(c % g.sw) * static_cast<std::size_t>(phase_len) + static_cast<std::size_t>(c / g.sw)] =
            row[static_cast<std::size_t>(c)];
      for (int t0 = 0; t0 < std::min(g.sw, g.kw); ++t0) {
        // Taps t0, t0 + sw, ...: consecutive columns of phase t0.
        const T* ph = phases.data() + static_cast<std::size_t>(t0) * static_cast<std::size_t>(phase_len);
        const int taps = (g.kw - t0 + g.sw - 1) / g.sw;
        if (t0 == 0) {
          window_max(ph, taps, o_row, g.ow);
        } else {
          window_max(ph, taps, part.data(), g.ow);
          for (int o = 0; o < g.ow; ++o) o_row[o] = std::max(o_row[o], part[static_cast<std::size_t>(o)]);
        }
      }
    }
  }
}

}  // namespace detail

inline void qavg_pool2d(const void* x, qparams qx, void* y, qparams qy, dtype type, const pool_geometry& g) {
  if (type == dtype::u8)
    detail::qavg_pool_bytes(static_cast<const std::uint8_t*>(x), qx.zp, qx.scale, static_cast<std::uint8_t*>(y), qy, g);
  else if (type == dtype::i8)
    detail::qavg_pool_bytes(static_cast<const std::int8_t*>(x), qx.zp, qx.scale, static_cast<std::int8_t*>(y), qy, g);
}

inline void qglobal_avg_pool2d(const void* x, qparams qx, void* y, qparams qy, dtype type, std::int64_t planes,
                               std::int64_t area) {
  if (type == dtype::u8)
    detail::qglobal_avg_pool_bytes(static_cast<const std::uint8_t*>(x), qx.zp, qx.scale, static_cast<std::uint8_t*>(y), qy,
                                   planes, area);
  else if (type == dtype::i8)
    detail::qglobal_avg_pool_bytes(static_cast<const std::int8_t*>(x), qx.zp, qx.scale, static_cast<std::int8_t*>(y), qy,
                                   planes, area);
}

inline void qmax_pool2d(const void* x, void* y, dtype type, const pool_geometry& g) {
  if (type == dtype::u8)
    detail::qmax_pool_bytes(static_cast<const std::uint8_t*>(x), static_cast<std::uint8_t*>(y), g);
  else if (type == dtype::i8)
    detail::qmax_pool_bytes(static_cast<const std::int8_t*>(x), static_cast<std::int8_t*>(y), g);
}

}  // namespace partita::detail::cpu::int8
