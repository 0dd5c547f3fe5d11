#pragma once
/// int8 conv2d: NCHW u8/i8 input, OIHW u8/i8 weights, requantized NCHW u8/i8 output.
// Binds and runs one of two kernels: the depthwise one (qconv_depthwise.hpp) when groups =
// channels = outputs, the GEMM over im2col panels (qconv_im2col.hpp) otherwise.
#include <cstddef>
#include <cstdint>

#include "partita/backends/cpu/detail/int8/qconv_depthwise.hpp"
#include "partita/backends/cpu/detail/int8/qconv_im2col.hpp"
#include "partita/backends/cpu/detail/int8/qconv_layout.hpp"
#include "partita/backends/cpu/detail/state.hpp"
#include "partita/core/dtype.hpp"

namespace partita::detail::cpu::int8 {

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
