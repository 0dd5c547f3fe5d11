#pragma once
/// The mcu backend's int8 dense layer: four units at a time, four depths per dual multiply-accumulate pair.
#include <bit>
#include <cstddef>
#include <cstdint>

#include "partita/backends/mcu/detail/dsp.hpp"
#include "partita/backends/mcu/detail/qlayer.hpp"

namespace partita::detail::mcu {

/// Units [u, u + C) of every row: each word of four input bytes, widened once with the input's
/// zero point taken out, feeds the C units' dual multiply-accumulates; the weights' zero points
/// come out afterwards, as zw · Σ (x - zx) over the row (`sums`).
template <std::int64_t Rows, std::int64_t Units, std::int64_t K, int C, class X, class W, class Y>
inline void qdense_units(const X* x, const W* w, const qlayer& q, const std::int32_t* sums, Y* y, std::int64_t u) {
  constexpr std::int64_t body = K / 4 * 4;
  const std::uint32_t zz = lanes(q.x_zp, q.x_zp);
  float m[static_cast<std::size_t>(C)];
  std::int32_t b[static_cast<std::size_t>(C)], zw[static_cast<std::size_t>(C)];
#pragma GCC unroll 4
  for (int j = 0; j < C; ++j) {
    q.channel(static_cast<int>(u) + j, m[j], b[j]);
    zw[j] = q.w_zero(static_cast<int>(u) + j);
  }
  for (std::int64_t r = 0; r < Rows; ++r) {
    const X* xr = x + r * K;
    std::int32_t acc[static_cast<std::size_t>(C)];
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j) acc[j] = 0;
    for (std::int64_t k = 0; k < body; k += 4) {
      const std::uint32_t word = load_word(xr + k);
      const std::uint32_t xe = sub_lanes(widen_even<X>(word), zz), xo = sub_lanes(widen_odd<X>(word), zz);
#pragma GCC unroll 4
      for (int j = 0; j < C; ++j) {
        const std::uint32_t ww = load_word(w + (u + j) * K + k);
        acc[j] = dual_mac(xo, widen_odd<W>(ww), dual_mac(xe, widen_even<W>(ww), acc[j]));
      }
    }
    if constexpr (body < K)
      for (std::int64_t k = body; k < K; ++k) {
        const std::int32_t v = static_cast<std::int32_t>(xr[k]) - q.x_zp;
#pragma GCC unroll 4
        for (int j = 0; j < C; ++j) acc[j] += v * static_cast<std::int32_t>(w[(u + j) * K + k]);
      }
#pragma GCC unroll 4
    for (int j = 0; j < C; ++j) y[r * Units + u + j] = quantized_out<Y>(acc[j] - zw[j] * sums[r] + b[j], m[j], q.r);
  }
}

/// `y[r][u]` = the requantized Σ_k (x[r][k] - zx) · (w[u][k] - zw[u]) plus the bias, for `Rows`
/// rows, `Units` units and `K` depths, `w` as the model stores it ([units][k], in place).
template <std::int64_t Rows, std::int64_t Units, std::int64_t K, class X, class W, class Y>
void qdense(const X* x, const W* w, const qlayer& q, Y* y) {
  static_assert(std::endian::native == std::endian::little, "mcu: the int8 kernels pair int16 values little-endian");
  static_assert(K <= max_depth, "mcu: an int8 dense layer of more than max_depth values per output");
  std::int32_t sums[static_cast<std::size_t>(Rows)];  // Σ (x - zx) of each row
  for (std::int64_t r = 0; r < Rows; ++r) {
    std::int32_t s = 0;
    for (std::int64_t k = 0; k < K; ++k) s += static_cast<std::int32_t>(x[r * K + k]) - q.x_zp;
    sums[r] = s;
  }
  constexpr std::int64_t blocks = Units / 4 * 4;
  for (std::int64_t u = 0; u < blocks; u += 4) qdense_units<Rows, Units, K, 4>(x, w, q, sums, y, u);
  // Loops of no iteration are left out at compile time, as in conv.hpp.
  if constexpr (blocks < Units)
    for (std::int64_t u = blocks; u < Units; ++u) qdense_units<Rows, Units, K, 1>(x, w, q, sums, y, u);
}

}  // namespace partita::detail::mcu
