#pragma once
/// The mcu backend's dense layer: four units at a time, each with its own sum.
#include <cstdint>

#include "partita/backends/mcu/detail/epilogue.hpp"

namespace partita::detail::mcu {

/// `y[r][u] = e(b[u] + Σ_k x[r][k] · w[u][k], res[r][u])` for `Rows` rows, `Units` units and `K`
/// features (`w` as torch's Linear stores it, [units][k]). Four units share each load of x and
/// keep four independent sums, which a single-issue FPU pipelines and a dual-issue one pairs;
/// the tail of fewer than four units takes one at a time. `b` and `res` may be null.
template <std::int64_t Rows, std::int64_t Units, std::int64_t K, epilogue E>
void dense(const float* x, const float* w, const float* b, const float* res, float* y) {
  for (std::int64_t r = 0; r < Rows; ++r) {
    const float* xr = x + r * K;
    float* yr = y + r * Units;
    const float* rr = res ? res + r * Units : nullptr;
    std::int64_t u = 0;
    for (; u + 4 <= Units; u += 4) {
      const float* w0 = w + u * K;
      float s0 = b ? b[u] : 0.f, s1 = b ? b[u + 1] : 0.f, s2 = b ? b[u + 2] : 0.f, s3 = b ? b[u + 3] : 0.f;
      for (std::int64_t k = 0; k < K; ++k) {
        const float v = xr[k];
        s0 += v * w0[k];
        s1 += v * w0[K + k];
        s2 += v * w0[2 * K + k];
        s3 += v * w0[3 * K + k];
      }
      yr[u] = E(s0, rr ? rr[u] : 0.f);
      yr[u + 1] = E(s1, rr ? rr[u + 1] : 0.f);
      yr[u + 2] = E(s2, rr ? rr[u + 2] : 0.f);
      yr[u + 3] = E(s3, rr ? rr[u + 3] : 0.f);
    }
    for (; u < Units; ++u) {
      const float* wu = w + u * K;
      float s = b ? b[u] : 0.f;
      for (std::int64_t k = 0; k < K; ++k) s += xr[k] * wu[k];
      yr[u] = E(s, rr ? rr[u] : 0.f);
    }
  }
}

}  // namespace partita::detail::mcu
