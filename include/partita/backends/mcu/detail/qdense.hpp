#pragma once
/// The mcu backend's int8 dense layer: four units at a time, four depths per dual multiply-accumulate pair.
#include <bit>
#include <cstdint>

#include "partita/backends/mcu/detail/dsp.hpp"
#include "partita/backends/mcu/detail/qlayer.hpp"

namespace partita::detail::mcu {

/// Units [u, u + C) of every row: each word of four input bytes, widened once with the input's
/// zero point taken out, feeds the C units' dual multiply-accumulates; the weights' zero points
/// come out afterwards, as zw · Σ (x - zx) over the row.
template <std::int64_t Rows, std::int64_t Units, std::int64_t K, int C, class X, class W, class Y>
inline void qdense_units(const X* x, const W* w, const qlayer& q, Y* y, std::int64_t u) {
  constexpr std::int64_t body = K / 4 * 4;
  constexpr std::uint32_t ones = 0x00010001u;
  const std::uint32_t zz = lanes(q.x_zp, q.x_zp);
  float m[C];
  std::int32_t b[C], zw[C];
  for (int j = 0; j < C; ++j) {
    q.channel(static_cast<int>(u) + j, m[j], b[j]);
    zw[j] = q.w_zero(static_cast<int>(u) + j);
  }
  for (std::int64_t r = 0; r < Rows; ++r) {
    const X* xr = x + r * K;
    std::int32_t acc[C], s = 0;
    for (int j = 0; j < C; ++j) acc[j] = 0;
    for (std::int64_t k = 0; k < body; k += 4) {
      const std::uint32_t word = load_word(xr + k);
      const std::uint32_t xe = sub_lanes(widen_even<X>(word), zz), xo = sub_lanes(widen_odd<X>(word), zz);
      s = dual_mac(xo, ones, dual_mac(xe, ones, s));
#pragma GCC unroll 4
      for (int j = 0; j < C; ++j) {
        const std::uint32_t ww = load_word(w + (u + j) * K + k);
        acc[j] = dual_mac(xo, widen_odd<W>(ww), dual_mac(xe, widen_even<W>(ww), acc[j]));
      }
    }
    if constexpr (body < K)
      for (std::int64_t k = body; k < K; ++k) {
        const std::int32_t v = static_cast<std::int32_t>(xr[k]) - q.x_zp;
        s += v;
        for (int j = 0; j < C; ++j) acc[j] += v * static_cast<std::int32_t>(w[(u + j) * K + k]);
      }
    for (int j = 0; j < C; ++j) y[r * Units + u + j] = quantized_out<Y>(acc[j] - zw[j] * s + b[j], m[j], q.r);
  }
}

/// `y[r][u]` = the requantized Σ_k (x[r][k] - zx) · (w[u][k] - zw[u]) plus the bias, for `Rows`
/// rows, `Units` units and `K` depths, `w` as the model stores it ([units][k], in place).
template <std::int64_t Rows, std::int64_t Units, std::int64_t K, class X, class W, class Y>
void qdense(const X* x, const W* w, const qlayer& q, Y* y) {
  static_assert(std::endian::native == std::endian::little, "mcu: the int8 kernels pair int16 values little-endian");
  static_assert(K <= 16384, "mcu: an int8 dense layer of more than 16384 values per output");
  std::int64_t u = 0;
  for (; u + 4 <= Units; u += 4) qdense_units<Rows, Units, K, 4>(x, w, q, y, u);
  for (; u < Units; ++u) qdense_units<Rows, Units, K, 1>(x, w, q, y, u);
}

}  // namespace partita::detail::mcu
