#pragma once
/// The mcu backend's convolutions over NCHW: register tiles of 4 channels × 4 positions, and depthwise.
#include <cstdint>

#include "partita/backends/mcu/detail/epilogue.hpp"
#include "partita/core/shape.hpp"
#include "partita/ir/attrs.hpp"

namespace partita::detail::mcu {

/// A convolution's geometry, all of it known at compile time: batch, input channels and size,
/// output channels and size, window, strides, padding before each axis, groups, dilation (the
/// float kernels take dilation 1 only; the int8 ones any).
struct conv_shape {
  int n = 1, c = 1, h = 1, w = 1;
  int o = 1, oh = 1, ow = 1;
  int kh = 1, kw = 1, sh = 1, sw = 1, pt = 0, pl = 0;
  int groups = 1;
  int dh = 1, dw = 1;

  /// The output columns whose window lies inside the input: [first_inner(), last_inner()), an
  /// empty range inside [0, ow] when there are none.
  constexpr int first_inner() const {
    const int first = pl <= 0 ? 0 : (pl + sw - 1) / sw;
    return first < ow ? first : ow;
  }
  constexpr int last_inner() const {
    int e = 0;
    while (e < ow && e * sw - pl + kw <= w) ++e;
    return e < first_inner() ? first_inner() : e;
  }
};

/// The geometry of a convolution of input shape `x`, weights `w` and output `y`, with attributes `at`.
constexpr conv_shape conv_geometry(const shape& x, const shape& w, const shape& y, const attrs& at) {
  conv_shape g{};
  g.n = static_cast<int>(x[0]);
  g.c = static_cast<int>(x[1]);
  g.h = static_cast<int>(x[2]);
  g.w = static_cast<int>(x[3]);
  g.o = static_cast<int>(y[1]);
  g.oh = static_cast<int>(y[2]);
  g.ow = static_cast<int>(y[3]);
  g.kh = static_cast<int>(w[2]);
  g.kw = static_cast<int>(w[3]);
  g.sh = at.stride[0];
  g.sw = at.stride[1];
  g.pt = at.padding[0];
  g.pl = at.padding[1];
  g.groups = at.groups;
  g.dh = at.dilation[0];
  g.dw = at.dilation[1];
  return g;
}

/// One group of a grouped convolution, as a convolution of its own (its images' channels apart).
constexpr conv_shape group_shape(conv_shape g) {
  g.c /= g.groups;
  g.o /= g.groups;
  g.groups = 1;
  return g;
}

/// The window rows of output row `oy` that fall inside the input: [lo, hi).
template <conv_shape G>
constexpr void row_range(int oy, int& lo, int& hi) {
  const int iy = oy * G.sh - G.pt;
  lo = iy < 0 ? -iy : 0;
  hi = G.h - iy < G.kh ? G.h - iy : G.kh;
}

/// One output position of channels [co, co + C) (C of 1 to 4), window clipped at the borders.
template <conv_shape G, int C, epilogue E>
inline void conv_edge(const float* x, const float* w, const float* b, const float* res, float* y, int co, int oy, int ox) {
  constexpr int plane = G.oh * G.ow, in_plane = G.h * G.w, per_out = G.c * G.kh * G.kw;
  int lo, hi;
  row_range<G>(oy, lo, hi);
  const int iy = oy * G.sh - G.pt, ix = ox * G.sw - G.pl;
  const int left = ix < 0 ? -ix : 0, right = G.w - ix < G.kw ? G.w - ix : G.kw;
  float s[static_cast<std::size_t>(C)];
  for (int j = 0; j < C; ++j) s[j] = b ? b[co + j] : 0.f;
  for (int ci = 0; ci < G.c; ++ci)
    for (int ky = lo; ky < hi; ++ky) {
      // An offset, not a pointer: at the left border the row's start lies before the input.
      const int row = ci * in_plane + (iy + ky) * G.w + ix;
      const float* wr = w + co * per_out + (ci * G.kh + ky) * G.kw;
      for (int kx = left; kx < right; ++kx)
        for (int j = 0; j < C; ++j) s[j] += x[row + kx] * wr[j * per_out + kx];
    }
  const int at = oy * G.ow + ox;
  for (int j = 0; j < C; ++j) y[(co + j) * plane + at] = E(s[j], res ? res[(co + j) * plane + at] : 0.f);
}

/// Channels [co, co + C) of output row `oy`, columns [x0, x1) inside the input, four at a time:
/// each input value loaded feeds C sums, each weight loaded feeds four.
template <conv_shape G, int C, epilogue E>
inline void conv_inner(const float* x, const float* w, const float* b, const float* res, float* y, int co, int oy) {
  constexpr int x0 = G.first_inner(), x1 = G.last_inner(), tail = x0 + (x1 - x0) / 4 * 4;
  constexpr int plane = G.oh * G.ow, in_plane = G.h * G.w, per_out = G.c * G.kh * G.kw;
  int lo, hi;
  row_range<G>(oy, lo, hi);
  const int iy = oy * G.sh - G.pt;
  for (int ox = x0; ox < tail; ox += 4) {
    float s[static_cast<std::size_t>(C)][4];
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j)
#pragma GCC unroll 4
      for (int p = 0; p < 4; ++p) s[j][p] = b ? b[co + j] : 0.f;
    const int ix = ox * G.sw - G.pl;
    for (int ci = 0; ci < G.c; ++ci)
      for (int ky = lo; ky < hi; ++ky) {
        const float* xr = x + ci * in_plane + (iy + ky) * G.w + ix;
        const float* wr = w + co * per_out + (ci * G.kh + ky) * G.kw;
#pragma GCC unroll 8
        for (int kx = 0; kx < G.kw; ++kx) {
          float v[4], k[static_cast<std::size_t>(C)];
#pragma GCC unroll 4
          for (int p = 0; p < 4; ++p) v[p] = xr[kx + p * G.sw];
#pragma GCC unroll 4
          for (int j = 0; j < C; ++j) k[j] = wr[j * per_out + kx];
#pragma GCC unroll 4
          for (int j = 0; j < C; ++j)
#pragma GCC unroll 4
            for (int p = 0; p < 4; ++p) s[j][p] += v[p] * k[j];
        }
      }
    const int at = oy * G.ow + ox;
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j)
#pragma GCC unroll 4
      for (int p = 0; p < 4; ++p) y[(co + j) * plane + at + p] = E(s[j][p], res ? res[(co + j) * plane + at + p] : 0.f);
  }
  // Loops of no iteration are left out at compile time: GCC's loop analysis warned of them.
  if constexpr (tail < x1)
    for (int ox = tail; ox < x1; ++ox) conv_edge<G, C, E>(x, w, b, res, y, co, oy, ox);
}

/// Channels [co, co + C) of the whole output image: border columns one by one, the inside in
/// tiles of four.
template <conv_shape G, int C, epilogue E>
inline void conv_channels(const float* x, const float* w, const float* b, const float* res, float* y, int co) {
  constexpr int x0 = G.first_inner(), x1 = G.last_inner();
  for (int oy = 0; oy < G.oh; ++oy) {
    if constexpr (x0 > 0)
      for (int ox = 0; ox < x0; ++ox) conv_edge<G, C, E>(x, w, b, res, y, co, oy, ox);
    conv_inner<G, C, E>(x, w, b, res, y, co, oy);
    if constexpr (x1 < G.ow)
      for (int ox = x1; ox < G.ow; ++ox) conv_edge<G, C, E>(x, w, b, res, y, co, oy, ox);
  }
}

/// Calls `f.template operator()<C>(image, residual, output, co)` for each image of the batch
/// and its output channels four at a time (C = 4), then one by one (C = 1).
template <conv_shape G, class F>
inline void by_channel_blocks(const float* x, const float* res, float* y, F&& f) {
  constexpr int in_image = G.c * G.h * G.w, out_image = G.o * G.oh * G.ow;
  for (int n = 0; n < G.n; ++n) {
    const float* xn = x + n * in_image;
    float* yn = y + n * out_image;
    const float* rn = res ? res + n * out_image : nullptr;
    int co = 0;
    for (; co + 4 <= G.o; co += 4) f.template operator()<4>(xn, rn, yn, co);
    for (; co < G.o; ++co) f.template operator()<1>(xn, rn, yn, co);
  }
}

/// A dense convolution (one group) of `G`, fused with its bias, a residual and an activation
/// (`E`); `b` and `res` may be null. Output channels go four at a time, then one by one.
template <conv_shape G, epilogue E>
void conv(const float* x, const float* w, const float* b, const float* res, float* y) {
  by_channel_blocks<G>(x, res, y, [&]<int C>(const float* xn, const float* rn, float* yn, int co) {
    conv_channels<G, C, E>(xn, w, b, rn, yn, co);
  });
}

/// Channels [co, co + C) of a 1×1 convolution of stride 1 without padding: the positions of the
/// whole image in a row (their rows do not matter), four at a time, the rest one by one.
template <conv_shape G, int C, epilogue E>
inline void pointwise_channels(const float* x, const float* w, const float* b, const float* res, float* y, int co) {
  constexpr int plane = G.oh * G.ow, tail = plane / 4 * 4;
  for (int p = 0; p < tail; p += 4) {
    float s[static_cast<std::size_t>(C)][4];
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j)
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) s[j][q] = b ? b[co + j] : 0.f;
    for (int ci = 0; ci < G.c; ++ci) {
      float v[4], k[static_cast<std::size_t>(C)];
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) v[q] = x[ci * plane + p + q];
#pragma GCC unroll 4
      for (int j = 0; j < C; ++j) k[j] = w[(co + j) * G.c + ci];
#pragma GCC unroll 4
      for (int j = 0; j < C; ++j)
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) s[j][q] += v[q] * k[j];
    }
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j)
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) y[(co + j) * plane + p + q] = E(s[j][q], res ? res[(co + j) * plane + p + q] : 0.f);
  }
  if constexpr (tail < plane)
    for (int p = tail; p < plane; ++p) {
      float s[static_cast<std::size_t>(C)];
      for (int j = 0; j < C; ++j) s[j] = b ? b[co + j] : 0.f;
      for (int ci = 0; ci < G.c; ++ci)
        for (int j = 0; j < C; ++j) s[j] += x[ci * plane + p] * w[(co + j) * G.c + ci];
      for (int j = 0; j < C; ++j) y[(co + j) * plane + p] = E(s[j], res ? res[(co + j) * plane + p] : 0.f);
    }
}

/// A 1×1 convolution of stride 1 without padding (one group), fused as `conv`: a product of the
/// weights, [o][c], and the image, [c][h · w]. Tiled over all the image's positions rather than
/// row by row, so that small images (6 × 6, 25 × 5) still fill tiles of four.
template <conv_shape G, epilogue E>
void pointwise(const float* x, const float* w, const float* b, const float* res, float* y) {
  static_assert(G.kh == 1 && G.kw == 1 && G.sh == 1 && G.sw == 1 && G.oh == G.h && G.ow == G.w && G.groups == 1,
                "pointwise: a 1×1 convolution of stride 1 without padding");
  by_channel_blocks<G>(x, res, y, [&]<int C>(const float* xn, const float* rn, float* yn, int co) {
    pointwise_channels<G, C, E>(xn, w, b, rn, yn, co);
  });
}

/// A depthwise convolution (one input channel per group, one output per group) of `G`, fused as
/// `conv`. The channel's weights are loaded once into registers; the inside of each row runs
/// without bounds checks, unrolled over the window.
template <conv_shape G, epilogue E>
void depthwise(const float* x, const float* w, const float* b, const float* res, float* y) {
  static_assert(G.groups == G.c && G.o == G.c, "depthwise: one input and one output channel per group");
  constexpr int plane = G.oh * G.ow, in_plane = G.h * G.w, window = G.kh * G.kw;
  constexpr int x0 = G.first_inner(), x1 = G.last_inner();
  for (int n = 0; n < G.n; ++n)
    for (int c = 0; c < G.c; ++c) {
      const float* xc = x + (n * G.c + c) * in_plane;
      float* yc = y + (n * G.c + c) * plane;
      const float* rc = res ? res + (n * G.c + c) * plane : nullptr;
      float k[static_cast<std::size_t>(window)];
#pragma GCC unroll 16
      for (int i = 0; i < window; ++i) k[i] = w[c * window + i];
      const float bias = b ? b[c] : 0.f;
      for (int oy = 0; oy < G.oh; ++oy) {
        int lo, hi;
        row_range<G>(oy, lo, hi);
        const int iy = oy * G.sh - G.pt;
        const auto edge = [&](int ox) {
          const int ix = ox * G.sw - G.pl;
          const int left = ix < 0 ? -ix : 0, right = G.w - ix < G.kw ? G.w - ix : G.kw;
          float s = bias;
          for (int ky = lo; ky < hi; ++ky)
            for (int kx = left; kx < right; ++kx) s += xc[(iy + ky) * G.w + ix + kx] * k[ky * G.kw + kx];
          yc[oy * G.ow + ox] = E(s, rc ? rc[oy * G.ow + ox] : 0.f);
        };
        if constexpr (x0 > 0)
          for (int ox = 0; ox < x0; ++ox) edge(ox);
        if (lo == 0 && hi == G.kh) {
          for (int ox = x0; ox < x1; ++ox) {
            const float* xw = xc + iy * G.w + ox * G.sw - G.pl;
            float s = bias;
#pragma GCC unroll 8
            for (int ky = 0; ky < G.kh; ++ky)
#pragma GCC unroll 8
              for (int kx = 0; kx < G.kw; ++kx) s += xw[ky * G.w + kx] * k[ky * G.kw + kx];
            yc[oy * G.ow + ox] = E(s, rc ? rc[oy * G.ow + ox] : 0.f);
          }
        } else {
          for (int ox = x0; ox < x1; ++ox) edge(ox);
        }
        if constexpr (x1 < G.ow)
          for (int ox = x1; ox < G.ow; ++ox) edge(ox);
      }
    }
}

}  // namespace partita::detail::mcu
