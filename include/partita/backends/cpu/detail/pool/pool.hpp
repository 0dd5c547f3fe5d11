#pragma once
/// cpu max and average pooling over planes.
// Pooling is memory-bound: the general kernel reduces each output row's window rows into a
// padded row buffer, then that buffer over the window width, all vectorized; 2×2 windows of
// stride 2 inside the planes skip the buffers.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>

#include "partita/backends/cpu/detail/elementwise/eltwise.hpp"
#include "partita/backends/cpu/detail/simd/simd.hpp"
#include "partita/backends/reference/kernels.hpp"
#include "partita/core/shape.hpp"
#include "partita/ir/attrs.hpp"

namespace partita::detail::cpu {

struct pool_geometry {
  int planes = 0, h = 0, w = 0, oh = 0, ow = 0, kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  int ph_end = 0, pw_end = 0;  // the declared padding after each axis (what count_include_pad counts)
  // Columns after each row in the row buffers: pw_end, or more where a ceil_mode window runs
  // past it (rows past the input are clipped, not padded).
  int pw_fill = 0;
  bool count_include_pad = false;
};

/// The geometry of a max or average pooling of `x` ([N, C, H, W]) into `y` with attributes `a`,
/// every plane of the batch counted in `planes`.
constexpr pool_geometry make_pool_geometry(const shape& x, const shape& y, const attrs& a) {
  pool_geometry g;
  g.planes = static_cast<int>(x[0] * x[1]);
  g.h = static_cast<int>(x[2]);
  g.w = static_cast<int>(x[3]);
  g.oh = static_cast<int>(y[2]);
  g.ow = static_cast<int>(y[3]);
  g.kh = a.window[0];
  g.kw = a.window[1];
  g.sh = reference_kernels::detail::pool_stride(a, 0);
  g.sw = reference_kernels::detail::pool_stride(a, 1);
  g.ph = a.padding[0];
  g.pw = a.padding[1];
  g.ph_end = end_padding(a, 0);
  g.pw_end = end_padding(a, 1);
  g.pw_fill = std::max(g.pw_end, (g.ow - 1) * g.sw + g.kw - g.w - g.pw);  // ceil_mode's last window
  g.count_include_pad = a.count_include_pad;
  return g;
}

/// The taps an average pooling window divides by along one axis: a window starting at input
/// index `start` (negative in the padding) of `k` taps over `n` inputs with `pad_end` declared
/// padding after them. count_include_pad counts the declared padding, not a ceil_mode window's
/// overhang; otherwise only the taps inside the input count.
constexpr int pool_window_taps(bool count_include_pad, int start, int k, int n, int pad_end) {
  return count_include_pad ? std::min(start + k, n + pad_end) - start : std::min(n, start + k) - std::max(0, start);
}

/// Whether `max_pool_2x2` computes a max pooling of geometry `g`: 2×2 windows of stride 2, no
/// padding, every window inside the planes.
constexpr bool max_pool_2x2_fits(const pool_geometry& g) {
  return g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0 && g.pw_fill == 0 &&
         2 * g.oh <= g.h && 2 * g.ow <= g.w;
}

/// Floats in each of `pool2d`'s row buffers (on the stack).
inline constexpr int pool_max_row = 4096;

/// Whether a padded row of `g` and its window fit `pool2d`'s row buffers.
constexpr bool pool_rows_fit(const pool_geometry& g) {
  return g.w + g.pw + g.pw_fill + g.kw + 2 * simd::width <= pool_max_row;
}

/// 2×2 max pooling of stride 2 whose windows all lie inside the planes (LeNet's, VGG's): each
/// output row is two input rows, their maximum split into even and odd columns, and the
/// maximum of those, a vector of outputs at a time. The general kernel below spent about 50
/// cycles per output row on row buffers, which on 10×10 planes was most of its time.
inline void max_pool_2x2(const pool_geometry& g, const float* x, float* y) {
  constexpr int w = simd::width;
  for (int p = 0; p < g.planes; ++p) {
    const float* plane = x + static_cast<std::ptrdiff_t>(p) * g.h * g.w;
    float* out = y + static_cast<std::ptrdiff_t>(p) * g.oh * g.ow;
    for (int oh = 0; oh < g.oh; ++oh, out += g.ow) {
      const float* r0 = plane + static_cast<std::ptrdiff_t>(2 * oh) * g.w;
      const float* r1 = r0 + g.w;
      int ow = 0;
      vec e, o;
      for (; ow + w <= g.ow; ow += w) {
        const vec a = simd::max_nan(simd::load(r0 + 2 * ow), simd::load(r1 + 2 * ow));
        const vec b = simd::max_nan(simd::load(r0 + 2 * ow + w), simd::load(r1 + 2 * ow + w));
        simd::deinterleave(a, b, e, o);
        simd::store(out + ow, simd::max_nan(e, o));
      }
      if (ow < g.ow) {
        // The last columns, read with masks: nothing past the two windows' columns is read.
        const int n = g.ow - ow, lo = std::min(w, 2 * n), hi = 2 * n - lo;
        const vec a = simd::max_nan(simd::load_first(r0 + 2 * ow, lo), simd::load_first(r1 + 2 * ow, lo));
        const vec b = hi > 0 ? simd::max_nan(simd::load_first(r0 + 2 * ow + w, hi), simd::load_first(r1 + 2 * ow + w, hi))
                             : simd::splat(0.f);
        simd::deinterleave(a, b, e, o);
        simd::store_first(out + ow, simd::max_nan(e, o), n);
      }
    }
  }
}

/// Max (Max = true) or average pooling, one output row at a time: the window's input rows are
/// reduced vertically into a padded row (vectorized), that row horizontally over the window
/// width (vectorized, at every column), and the output picks every stride-th column. Returns
/// false, doing nothing, when a padded row does not fit its row buffers (over 4000 columns).
template <bool Max>
inline bool pool2d(const pool_geometry& g, const float* x, float* y) {
  constexpr int w = simd::width;
  constexpr int max_row = pool_max_row;
  const int wp = g.w + g.pw + g.pw_fill;
  // 2×2 of stride 2 inside the planes needs no row buffers, so no bound on the row width.
  if (Max && max_pool_2x2_fits(g)) {
    max_pool_2x2(g, x, y);
    return true;
  }
  if (!pool_rows_fit(g)) return false;
  const float fill = Max ? -std::numeric_limits<float>::infinity() : 0.f;
  alignas(64) float v[max_row];
  alignas(64) float h[max_row];
  std::fill(v, v + wp + g.kw + 2 * w, fill);
  // The stride-2 pick below reads whole vectors of h, odd lanes past the last column included.
  std::fill(h + (wp - g.kw + 1) / w * w, h + wp + 2 * w, fill);
  // max_nan: a NaN anywhere in the window makes the output NaN, as in the reference backend.
  const auto reduce = [](const vec& a, const vec& b) { return Max ? simd::max_nan(a, b) : a + b; };
  const int hn = wp - g.kw + 1;  // columns of h
  for (int p = 0; p < g.planes; ++p) {
    const float* plane = x + static_cast<std::ptrdiff_t>(p) * g.h * g.w;
    float* out = y + static_cast<std::ptrdiff_t>(p) * g.oh * g.ow;
    for (int oh = 0; oh < g.oh; ++oh) {
      const int ih0 = oh * g.sh - g.ph;
      const int i_lo = std::max(0, ih0), i_hi = std::min(g.h, ih0 + g.kh);
      float* row = v + g.pw;
      if (i_lo >= i_hi) {
        std::fill(row, row + g.w, fill);
      } else {
        std::memcpy(row, plane + static_cast<std::ptrdiff_t>(i_lo) * g.w, sizeof(float) * static_cast<std::size_t>(g.w));
        for (int i = i_lo + 1; i < i_hi; ++i) map2(row, plane + static_cast<std::ptrdiff_t>(i) * g.w, row, g.w, reduce);
      }
      for (int j = 0; j < hn; j += w) {
        vec acc = simd::load(v + j);
        for (int k = 1; k < g.kw; ++k) acc = reduce(acc, simd::load(v + j + k));
        simd::store(h + j, acc);
      }
      float* o = out + static_cast<std::ptrdiff_t>(oh) * g.ow;
      if constexpr (Max) {
        // Every stride-th column: vectors for strides 1 and 2 (one at a time, the pick had cost
        // a 3×3 stride-2 pooling of 112×112 planes a quarter of its time).
        int ow = 0;
        if (g.sw == 2) {
          for (; ow + w <= g.ow; ow += w) simd::store(o + ow, simd::evens(simd::load(h + 2 * ow), simd::load(h + 2 * ow + w)));
        } else if (g.sw == 1) {
          for (; ow + w <= g.ow; ow += w) simd::store(o + ow, simd::load(h + ow));
        }
        for (; ow < g.ow; ++ow) o[ow] = h[ow * g.sw];
      } else {
        const int rows = pool_window_taps(g.count_include_pad, ih0, g.kh, g.h, g.ph_end);
        for (int ow = 0; ow < g.ow; ++ow) {
          const int cols = pool_window_taps(g.count_include_pad, ow * g.sw - g.pw, g.kw, g.w, g.pw_end);
          o[ow] = h[ow * g.sw] / static_cast<float>(rows * cols);
        }
      }
    }
  }
  return true;
}

/// Max (Max = true) or average pooling of NHWC images, `g.planes` being the channels: output
/// rows [r0, r1) counted over every image (row r is row r % oh of image r / oh). A position's
/// channels are adjacent, so each window tap is a run of whole vectors, reduced in registers
/// with no row buffers; taps in the padding, or past the image in a ceil_mode window, are
/// skipped, and an average divides by the count `pool2d` divides by.
template <bool Max>
inline void pool2d_nhwc(const pool_geometry& g, const float* x, float* y, int r0, int r1) {
  constexpr int w = simd::width, group = 4;  // channel vectors reduced together
  const int c = g.planes;
  const float fill = Max ? -std::numeric_limits<float>::infinity() : 0.f;
  for (int r = r0; r < r1; ++r) {
    const int b = r / g.oh, oh = r % g.oh;
    const float* image = x + static_cast<std::ptrdiff_t>(b) * g.h * g.w * c;
    const int ih0 = oh * g.sh - g.ph, i_lo = std::max(0, ih0), i_hi = std::min(g.h, ih0 + g.kh);
    const int rows = pool_window_taps(g.count_include_pad, ih0, g.kh, g.h, g.ph_end);
    for (int ow = 0; ow < g.ow; ++ow) {
      const int iw0 = ow * g.sw - g.pw, j_lo = std::max(0, iw0), j_hi = std::min(g.w, iw0 + g.kw);
      const int cols = pool_window_taps(g.count_include_pad, iw0, g.kw, g.w, g.pw_end);
      const vec scale = simd::splat(Max ? 1.f : 1.f / static_cast<float>(rows * cols));
      float* out = y + (static_cast<std::ptrdiff_t>(r) * g.ow + ow) * c;
      for (int c0 = 0; c0 < c; c0 += group * w) {
        // The group's last vector is the channels' last only in the last group: elsewhere it is
        // whole (a count past w would read and write a mask from outside its table with AVX, or
        // the wrong lanes with AVX-512).
        const int vectors = std::min(group, (c - c0 + w - 1) / w);
        const int n_last = std::min(w, c - c0 - (vectors - 1) * w);
        vec acc[group];
        for (int v = 0; v < group; ++v) acc[v] = simd::splat(fill);
        for (int i = i_lo; i < i_hi; ++i)
          for (int j = j_lo; j < j_hi; ++j) {
            const float* p = image + (static_cast<std::ptrdiff_t>(i) * g.w + j) * c + c0;
            for (int v = 0; v < vectors; ++v) {
              const vec t = v + 1 < vectors || n_last == w ? simd::load(p + v * w) : simd::load_first(p + v * w, n_last);
              acc[v] = Max ? simd::max_nan(acc[v], t) : acc[v] + t;
            }
          }
        for (int v = 0; v < vectors; ++v) {
          const vec o = Max ? acc[v] : acc[v] * scale;
          if (v + 1 < vectors || n_last == w) simd::store(out + c0 + v * w, o);
          else simd::store_first(out + c0 + v * w, o, n_last);
        }
      }
    }
  }
}

}  // namespace partita::detail::cpu
