#pragma once
/// cpu resize (nearest, bilinear): source indices and weights tabulated at compile time.
// The reference computes each output pixel's source coordinates in double, twice per pixel. Here
// they are a function of the shapes alone, so each axis's table (first source index, second, and
// the second's weight) is built at compile time with the reference's own arithmetic. Bilinear
// then blends the two source rows of an output row into one row (vectorized), and each output
// pixel blends two entries of it; nearest copies from its source row.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "partita/backends/cpu/detail/simd/simd.hpp"
#include "partita/ir/attrs.hpp"

namespace partita::detail::cpu {

/// One axis of a resize from `In` to `Out` pixels: output index d reads source indices lo[d]
/// and hi[d] with weights 1 - w[d] and w[d] (nearest: lo only).
template <std::int64_t In, std::int64_t Out>
struct resize_axis {
  std::array<std::int32_t, static_cast<std::size_t>(Out)> lo{}, hi{};
  std::array<float, static_cast<std::size_t>(Out)> w{};
};

/// The reference's source coordinates (tensor_kernels.hpp `resize`), tabulated.
template <std::int64_t In, std::int64_t Out>
constexpr resize_axis<In, Out> make_resize_axis(resize_mode mode, bool align_corners) {
  resize_axis<In, Out> a;
  for (std::int64_t d = 0; d < Out; ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (mode == resize_mode::nearest) {
      const auto s = std::min(static_cast<std::int64_t>(static_cast<double>(d) * static_cast<double>(In) / static_cast<double>(Out)), In - 1);
      a.lo[i] = a.hi[i] = static_cast<std::int32_t>(s);
      continue;
    }
    double f = 0.0;
    if (align_corners) {
      f = Out > 1 ? static_cast<double>(d) * static_cast<double>(In - 1) / static_cast<double>(Out - 1) : 0.0;
    } else {
      f = (static_cast<double>(d) + 0.5) * (static_cast<double>(In) / static_cast<double>(Out)) - 0.5;
      f = f < 0.0 ? 0.0 : f;
    }
    const std::int64_t s0 = std::min(static_cast<std::int64_t>(f), In - 1);
    a.lo[i] = static_cast<std::int32_t>(s0);
    a.hi[i] = static_cast<std::int32_t>(std::min(s0 + 1, In - 1));
    a.w[i] = static_cast<float>(f - static_cast<double>(s0));
  }
  return a;
}

/// Planes [p0, p1) of NCHW `x` (IH × IW each) resized into `y` (OH × OW each) by the tables
/// `rows` and `cols`; `blend` holds IW floats of scratch (bilinear only).
template <bool Bilinear, class Rows, class Cols>
inline void resize_planes(const Rows& rows, const Cols& cols, std::int64_t ih, std::int64_t iw, std::int64_t oh,
                          std::int64_t ow, const float* x, float* y, std::int64_t p0, std::int64_t p1, float* blend) {
  for (std::int64_t p = p0; p < p1; ++p) {
    const float* plane = x + p * ih * iw;
    for (std::int64_t r = 0; r < oh; ++r) {
      const auto ri = static_cast<std::size_t>(r);
      float* out = y + (p * oh + r) * ow;
      const float* src = plane + static_cast<std::ptrdiff_t>(rows.lo[ri]) * iw;
      if constexpr (!Bilinear) {
        for (std::int64_t c = 0; c < ow; ++c) out[c] = src[cols.lo[static_cast<std::size_t>(c)]];
      } else {
        // Rows first: (1 - w)·row0 + w·row1 for every source column, whole vectors.
        const float* below = plane + static_cast<std::ptrdiff_t>(rows.hi[ri]) * iw;
        const simd::vec wb = simd::splat(rows.w[ri]), wa = simd::splat(1.f - rows.w[ri]);
        std::int64_t j = 0;
        for (; j + simd::width <= iw; j += simd::width)
          simd::store(blend + j, wa * simd::load(src + j) + wb * simd::load(below + j));
        for (; j < iw; ++j) blend[j] = (1.f - rows.w[ri]) * src[j] + rows.w[ri] * below[j];
        for (std::int64_t c = 0; c < ow; ++c) {
          const auto ci = static_cast<std::size_t>(c);
          out[c] = (1.f - cols.w[ci]) * blend[cols.lo[ci]] + cols.w[ci] * blend[cols.hi[ci]];
        }
      }
    }
  }
}

}  // namespace partita::detail::cpu
