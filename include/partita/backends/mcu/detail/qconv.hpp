#pragma once
/// The mcu backend's int8 convolutions over NCHW: two im2col columns against the weights in place, and depthwise.
// A convolution of one group is a product of the weights, [O][R] with R = C · KH · KW as the
// model stores them, and im2col columns of R values. Two output positions at a time, their
// columns are gathered onto the stack as int16 with the input's zero point taken out (padding
// gives 0) and paired in the order SXTB16/UXTB16 widens four weight bytes: values r, r + 2 in
// one word and r + 1, r + 3 in the next. Each word of four weights read from flash then feeds
// four dual multiply-accumulates (two positions by two lanes), for two output channels at a
// time: CMSIS-NN's 2 × 2 kernel, reading the ONNX layout in place. The weights' zero point
// comes out of the sum afterwards, as zw · Σ (x - zx) over the column.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "partita/backends/mcu/detail/conv.hpp"
#include "partita/backends/mcu/detail/dsp.hpp"
#include "partita/backends/mcu/detail/qlayer.hpp"

namespace partita::detail::mcu {

/// The im2col column of one output position, paired for `dual_mac`: the values of depths
/// [0, R & ~3) at index r with bits 0 and 1 swapped, the rest in order; and its sum.
template <int R>
struct qcolumn {
  alignas(4) std::array<std::int16_t, static_cast<std::size_t>(R)> v;
  std::int32_t sum;
};

/// Index of depth `r` in a `qcolumn` of R values.
template <int R>
constexpr int column_index(int r) {
  return r < R / 4 * 4 ? (r & ~3) | ((r & 1) << 1) | ((r >> 1) & 1) : r;
}

/// Gathers output position (oy, ox) of one image `x` (NCHW, one group of G.c channels): inside
/// the input without a check per value, at the borders with one.
template <conv_shape G, class X>
inline void gather(const X* x, std::int32_t zx, int oy, int ox, qcolumn<G.c * G.kh * G.kw>& col) {
  constexpr int R = G.c * G.kh * G.kw;
  const int iy0 = oy * G.sh - G.pt, ix0 = ox * G.sw - G.pl;
  std::int32_t sum = 0;
  if (iy0 >= 0 && ix0 >= 0 && iy0 + (G.kh - 1) * G.dh < G.h && ix0 + (G.kw - 1) * G.dw < G.w) {
    const X* origin = x + iy0 * G.w + ix0;
    int r = 0;
    for (int c = 0; c < G.c; ++c)
#pragma GCC unroll 4
      for (int ky = 0; ky < G.kh; ++ky)
#pragma GCC unroll 8
        for (int kx = 0; kx < G.kw; ++kx, ++r) {
          const std::int32_t v = origin[(c * G.h + ky * G.dh) * G.w + kx * G.dw] - zx;
          col.v[static_cast<std::size_t>(column_index<R>(r))] = static_cast<std::int16_t>(v);
          sum += v;
        }
  } else {
    int r = 0;
    for (int c = 0; c < G.c; ++c)
      for (int ky = 0; ky < G.kh; ++ky) {
        const int iy = iy0 + ky * G.dh;
        for (int kx = 0; kx < G.kw; ++kx, ++r) {
          const int ix = ix0 + kx * G.dw;
          const std::int32_t v = iy >= 0 && iy < G.h && ix >= 0 && ix < G.w ? x[(c * G.h + iy) * G.w + ix] - zx : 0;
          col.v[static_cast<std::size_t>(column_index<R>(r))] = static_cast<std::int16_t>(v);
          sum += v;
        }
      }
  }
  col.sum = sum;
}

/// Output channels [o, o + C) (C of 1 or 2) at the P (1 or 2) positions of `cols`: their sums
/// over the weights `w` (channel o's R bytes first), each position's written to `y[p]` at
/// channel stride `plane`.
template <int R, int C, int P, class W, class Y>
inline void qcolumns_dot(const qcolumn<R>* cols, const W* w, const qout& q, int o, Y* const* y, int plane) {
  constexpr int body = R / 4 * 4;
  std::int32_t acc[static_cast<std::size_t>(C)][static_cast<std::size_t>(P)];
#pragma GCC unroll 2
  for (int j = 0; j < C; ++j)
#pragma GCC unroll 2
    for (int p = 0; p < P; ++p) acc[j][p] = 0;
  for (int r = 0; r < body; r += 4) {
    std::uint32_t xe[static_cast<std::size_t>(P)], xo[static_cast<std::size_t>(P)];
#pragma GCC unroll 2
    for (int p = 0; p < P; ++p) {
      xe[p] = load_word(&cols[p].v[static_cast<std::size_t>(r)]);
      xo[p] = load_word(&cols[p].v[static_cast<std::size_t>(r + 2)]);
    }
#pragma GCC unroll 2
    for (int j = 0; j < C; ++j) {
      const std::uint32_t word = load_word(w + (o + j) * R + r);
      const std::uint32_t we = widen_even<W>(word), wo = widen_odd<W>(word);
#pragma GCC unroll 2
      for (int p = 0; p < P; ++p) acc[j][p] = dual_mac(xo[p], wo, dual_mac(xe[p], we, acc[j][p]));
    }
  }
  if constexpr (body < R)
    for (int r = body; r < R; ++r)
#pragma GCC unroll 2
      for (int j = 0; j < C; ++j)
#pragma GCC unroll 2
        for (int p = 0; p < P; ++p)
          acc[j][p] += cols[p].v[static_cast<std::size_t>(r)] * static_cast<std::int32_t>(w[(o + j) * R + r]);
#pragma GCC unroll 2
  for (int j = 0; j < C; ++j) {
    const std::int32_t zw = q.zw[o + j], b = q.bias[o + j];
    const float m = q.m[o + j];
#pragma GCC unroll 2
    for (int p = 0; p < P; ++p) y[p][(o + j) * plane] = quantized_out<Y>(acc[j][p] - zw * cols[p].sum + b, m, q.r);
  }
}

/// A convolution of one group over each image of the batch: `x` [n][G.c][h][w] (channels
/// `c_stride` apart from one image to the next), `w` [G.o][G.c][kh][kw], `y` [n][G.o][oh][ow]
/// (`o_stride` channels per image); `q` the output channels' values. Two positions at a time,
/// two channels at a time.
template <conv_shape G, class X, class W, class Y>
void qconv_group(const X* x, int c_stride, const W* w, const qout& q, Y* y, int o_stride) {
  static_assert(std::endian::native == std::endian::little, "mcu: the int8 kernels pair int16 values little-endian");
  constexpr int R = G.c * G.kh * G.kw, plane = G.oh * G.ow;
  // Every sum exact in int32: at most 2 · 255² per depth.
  static_assert(R <= max_depth, "mcu: an int8 convolution of more than max_depth values per output");
  qcolumn<R> cols[2];
  for (int n = 0; n < G.n; ++n) {
    const X* xn = x + n * c_stride * G.h * G.w;
    Y* yn = y + n * o_stride * plane;
    int at = 0;
    for (; at + 2 <= plane; at += 2) {
      gather<G>(xn, q.zx, at / G.ow, at % G.ow, cols[0]);
      gather<G>(xn, q.zx, (at + 1) / G.ow, (at + 1) % G.ow, cols[1]);
      Y* const ys[2] = {yn + at, yn + at + 1};
      int o = 0;
      for (; o + 2 <= G.o; o += 2) qcolumns_dot<R, 2, 2>(cols, w, q, o, ys, plane);
      if constexpr (G.o % 2 != 0) qcolumns_dot<R, 1, 2>(cols, w, q, o, ys, plane);
    }
    if constexpr (plane % 2 != 0) {
      gather<G>(xn, q.zx, at / G.ow, at % G.ow, cols[0]);
      Y* const ys[1] = {yn + at};
      int o = 0;
      for (; o + 2 <= G.o; o += 2) qcolumns_dot<R, 2, 1>(cols, w, q, o, ys, plane);
      if constexpr (G.o % 2 != 0) qcolumns_dot<R, 1, 1>(cols, w, q, o, ys, plane);
    }
  }
}

/// A depthwise convolution (one input and one output channel per group). The channel's weights
/// minus their zero point sit in registers; inside the input, a position's sum is Σ x · k minus
/// zx · Σ k, two positions of a row at a time (at stride 1 they share all but one column of
/// loads), and at the borders the window is clipped.
template <conv_shape G, class X, class W, class Y>
void qdepthwise(const X* x, const W* w, const qout& q, Y* y) {
  static_assert(G.groups == G.c && G.o == G.c, "qdepthwise: one input and one output channel per group");
  constexpr int plane = G.oh * G.ow, in_plane = G.h * G.w, window = G.kh * G.kw;
  // The output columns whose window lies inside the input: [x0, x1).
  constexpr int x0 = [] {
    int c = 0;
    while (c < G.ow && c * G.sw - G.pl < 0) ++c;
    return c;
  }();
  constexpr int x1 = [] {
    int c = x0;
    while (c < G.ow && c * G.sw - G.pl + (G.kw - 1) * G.dw < G.w) ++c;
    return c;
  }();
  for (int n = 0; n < G.n; ++n)
    for (int c = 0; c < G.c; ++c) {
      const X* xc = x + (n * G.c + c) * in_plane;
      Y* yc = y + (n * G.c + c) * plane;
      const std::int32_t zw = q.zw[c], zx = q.zx;
      std::int32_t k[static_cast<std::size_t>(window)];
      std::int32_t ksum = 0;
#pragma GCC unroll 16
      for (int i = 0; i < window; ++i) {
        k[i] = static_cast<std::int32_t>(w[c * window + i]) - zw;
        ksum += k[i];
      }
      const std::int32_t bias = q.bias[c], inner_bias = bias - zx * ksum;
      const float m = q.m[c];
      const auto edge = [&](int oy, int ox) {
        const int iy = oy * G.sh - G.pt, ix = ox * G.sw - G.pl;
        std::int32_t s = bias;
        for (int ky = 0; ky < G.kh; ++ky) {
          const int yy = iy + ky * G.dh;
          if (yy < 0 || yy >= G.h) continue;
          for (int kx = 0; kx < G.kw; ++kx) {
            const int xx = ix + kx * G.dw;
            if (xx >= 0 && xx < G.w) s += (static_cast<std::int32_t>(xc[yy * G.w + xx]) - zx) * k[ky * G.kw + kx];
          }
        }
        yc[oy * G.ow + ox] = quantized_out<Y>(s, m, q.r);
      };
      for (int oy = 0; oy < G.oh; ++oy) {
        const int iy = oy * G.sh - G.pt;
        if (iy < 0 || iy + (G.kh - 1) * G.dh >= G.h) {
          for (int ox = 0; ox < G.ow; ++ox) edge(oy, ox);
          continue;
        }
        if constexpr (x0 > 0)
          for (int ox = 0; ox < x0; ++ox) edge(oy, ox);
        int ox = x0;
        for (; ox + 2 <= x1; ox += 2) {
          const X* xw = xc + iy * G.w + ox * G.sw - G.pl;
          std::int32_t s0 = inner_bias, s1 = inner_bias;
#pragma GCC unroll 8
          for (int ky = 0; ky < G.kh; ++ky)
#pragma GCC unroll 8
            for (int kx = 0; kx < G.kw; ++kx) {
              const X* at = xw + ky * G.dh * G.w + kx * G.dw;
              s0 += static_cast<std::int32_t>(at[0]) * k[ky * G.kw + kx];
              s1 += static_cast<std::int32_t>(at[G.sw]) * k[ky * G.kw + kx];
            }
          yc[oy * G.ow + ox] = quantized_out<Y>(s0, m, q.r);
          yc[oy * G.ow + ox + 1] = quantized_out<Y>(s1, m, q.r);
        }
        for (; ox < G.ow; ++ox) edge(oy, ox);
      }
    }
}

}  // namespace partita::detail::mcu
