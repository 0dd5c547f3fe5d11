#pragma once
/// Plain scalar kernels for matmul, data movement (transpose, slice, pad, gather, resize),
/// reductions and layer / RMS normalization.
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "partita/backends/reference/kernels.hpp"
#include "partita/core/dtype.hpp"
#include "partita/core/error.hpp"
#include "partita/ir/ops/slicing.hpp"

namespace partita::reference_kernels {

namespace detail {

/// Row-major strides of `s` (no broadcasting).
inline std::array<std::int64_t, max_rank> strides(const shape& s) {
  std::array<std::int64_t, max_rank> st{};
  std::int64_t step = 1;
  for (int i = s.rank - 1; i >= 0; --i) {
    st[static_cast<std::size_t>(i)] = step;
    step *= s[i];
  }
  return st;
}

/// Calls f(index, flat) for every index of `s` in row-major order.
template <class F>
void for_each_index(const shape& s, F f) {
  std::array<std::int64_t, max_rank> idx{};
  const std::int64_t total = s.elements();
  for (std::int64_t flat = 0; flat < total; ++flat) {
    f(idx, flat);
    for (int d = s.rank - 1; d >= 0; --d) {
      const auto u = static_cast<std::size_t>(d);
      if (++idx[u] < s[d]) break;
      idx[u] = 0;
    }
  }
}

}  // namespace detail

/// numpy matmul: y[..., i, j] = sum_k a[..., i, k] · b[..., k, j], the batch axes broadcast, an
/// operand read transposed (its last two axes swapped) when its flag is set.
inline void matmul(const float* a, const shape& as, const float* b, const shape& bs, float* y, const shape& ys,
                   bool transpose_a, bool transpose_b) {
  const int batch_rank = ys.rank - 2;
  shape a_batch = as, b_batch = bs, y_batch = ys;
  a_batch.rank -= 2;
  b_batch.rank -= 2;
  y_batch.rank -= 2;
  const auto a_st = detail::broadcast_strides(a_batch, batch_rank);
  const auto b_st = detail::broadcast_strides(b_batch, batch_rank);
  const std::int64_t m = ys.back(1), n = ys.back(0);
  const std::int64_t k_len = transpose_a ? as.back(1) : as.back(0);
  const std::int64_t a_mat = as.back(0) * as.back(1), b_mat = bs.back(0) * bs.back(1);
  detail::for_each_index(y_batch, [&](const std::array<std::int64_t, max_rank>& idx, std::int64_t flat) {
    std::int64_t ao = 0, bo = 0;
    for (int d = 0; d < batch_rank; ++d) {
      const auto u = static_cast<std::size_t>(d);
      ao += idx[u] * a_st[u];
      bo += idx[u] * b_st[u];
    }
    const float* am = a + ao * a_mat;
    const float* bm = b + bo * b_mat;
    float* ym = y + flat * m * n;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (std::int64_t k = 0; k < k_len; ++k) {
          const float av = transpose_a ? am[k * m + i] : am[i * k_len + k];
          const float bv = transpose_b ? bm[j * k_len + k] : bm[k * n + j];
          acc += static_cast<double>(av) * static_cast<double>(bv);
        }
        ym[i * n + j] = static_cast<float>(acc);
      }
  });
}

/// y = x with its axes permuted: output axis i is input axis perm[i].
inline void transpose(const float* x, const shape& xs, const std::array<int, max_rank>& perm, float* y, const shape& ys) {
  const auto xst = detail::strides(xs);
  detail::for_each_index(ys, [&](const std::array<std::int64_t, max_rank>& idx, std::int64_t flat) {
    std::int64_t at = 0;
    for (int d = 0; d < ys.rank; ++d) at += idx[static_cast<std::size_t>(d)] * xst[static_cast<std::size_t>(perm[static_cast<std::size_t>(d)])];
    y[flat] = x[at];
  });
}

/// y = the elements of x along `axis` that `slice_bounds(xs[axis], begin, end, step)` selects.
inline void slice(const float* x, const shape& xs, int axis, std::int64_t begin, std::int64_t end, std::int64_t step,
                  float* y, const shape& ys) {
  const slice_range r = slice_bounds(xs[axis], begin, end, step);
  const auto xst = detail::strides(xs);
  detail::for_each_index(ys, [&](const std::array<std::int64_t, max_rank>& idx, std::int64_t flat) {
    std::int64_t at = 0;
    for (int d = 0; d < ys.rank; ++d) {
      const auto u = static_cast<std::size_t>(d);
      at += (d == axis ? r.start + idx[u] * r.step : idx[u]) * xst[u];
    }
    y[flat] = x[at];
  });
}

/// y = x surrounded by `value`: before[d] and after[d] extra elements along each axis d.
inline void pad(const float* x, const shape& xs, const std::array<int, max_rank>& before, float value, float* y,
                const shape& ys) {
  const auto xst = detail::strides(xs);
  detail::for_each_index(ys, [&](const std::array<std::int64_t, max_rank>& idx, std::int64_t flat) {
    std::int64_t at = 0;
    for (int d = 0; d < ys.rank; ++d) {
      const auto u = static_cast<std::size_t>(d);
      const std::int64_t i = idx[u] - before[u];
      if (i < 0 || i >= xs[d]) {
        y[flat] = value;
        return;
      }
      at += i * xst[u];
    }
    y[flat] = x[at];
  });
}

/// The value at position i of an i32 or i64 tensor (read bytewise: index buffers arrive through
/// the float pointer every kernel argument has).
inline std::int64_t read_index(const void* indices, dtype type, std::int64_t i) {
  if (type == dtype::i64) {
    std::int64_t v = 0;
    std::memcpy(&v, static_cast<const std::byte*>(indices) + i * 8, 8);
    return v;
  }
  std::int32_t w = 0;
  std::memcpy(&w, static_cast<const std::byte*>(indices) + i * 4, 4);
  return w;
}

/// The index at position i of an i32 or i64 tensor, checked against `extent` (negative values
/// count from the back); out of range is a `partita::error` naming the position and the value.
inline std::int64_t checked_index(const void* indices, dtype type, std::int64_t i, std::int64_t extent) {
  const std::int64_t v = read_index(indices, type, i);
  const std::int64_t at = v < 0 ? v + extent : v;
  if (at < 0 || at >= extent)
    partita::detail::raise(error("partita: gather: index " + std::to_string(v) + " at position " + std::to_string(i) +
                " of the indices is out of range for an axis of " + std::to_string(extent) + " entries"));
  return at;
}

/// ONNX Gather: y[pre, idx..., post] = table[pre, indices[idx...], post] along `axis`.
inline void gather(const float* table, const shape& ts, const void* indices, dtype index_type, std::int64_t num_indices,
                   int axis, float* y) {
  const std::int64_t outer = detail::product(ts, 0, axis), extent = ts[axis], inner = detail::product(ts, axis + 1, ts.rank);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < num_indices; ++i) {
      const std::int64_t at = checked_index(indices, index_type, i, extent);
      const float* src = table + (o * extent + at) * inner;
      std::copy(src, src + inner, y + (o * num_indices + i) * inner);
    }
}

/// reduce_mean / reduce_sum / reduce_max of x over the axes whose bits are set in `axes`, into
/// y (the kept axes in order: extents of 1 that keepdims adds do not change the layout). Sums
/// in double; the maximum propagates NaN.
inline void reduce(op_id op, const float* x, const shape& xs, int axes, float* y) {
  const auto xst = detail::strides(xs);
  shape kept{}, gone{};
  std::array<std::int64_t, max_rank> kept_st{}, gone_st{};
  for (int d = 0; d < xs.rank; ++d) {
    const bool reduced = (axes >> d) & 1;
    shape& s = reduced ? gone : kept;
    (reduced ? gone_st : kept_st)[static_cast<std::size_t>(s.rank)] = xst[static_cast<std::size_t>(d)];
    s.dims[static_cast<std::size_t>(s.rank++)] = xs[d];
  }
  const auto offset = [](const std::array<std::int64_t, max_rank>& idx, const std::array<std::int64_t, max_rank>& st, int rank) {
    std::int64_t at = 0;
    for (int d = 0; d < rank; ++d) at += idx[static_cast<std::size_t>(d)] * st[static_cast<std::size_t>(d)];
    return at;
  };
  detail::for_each_index(kept, [&](const std::array<std::int64_t, max_rank>& out_idx, std::int64_t flat) {
    const float* base = x + offset(out_idx, kept_st, kept.rank);
    double sum = 0;
    float top = -std::numeric_limits<float>::infinity();
    detail::for_each_index(gone, [&](const std::array<std::int64_t, max_rank>& idx, std::int64_t) {
      const float v = base[offset(idx, gone_st, gone.rank)];
      sum += v;
      if (v > top || std::isnan(v)) top = std::isnan(top) ? top : v;
    });
    y[flat] = op == op_id::reduce_max ? top
              : op == op_id::reduce_mean ? static_cast<float>(sum / static_cast<double>(gone.elements()))
                                         : static_cast<float>(sum);
  });
}

/// layer_norm (beta non-null) or rms_norm (beta null) of x over its axes from `axis` on:
/// (x - mean) / sqrt(var + eps) · gamma + beta, or x / sqrt(mean(x²) + eps) · gamma.
inline void axis_norm(const float* x, const shape& xs, int axis, const float* gamma, const float* beta, float eps,
                      float* y) {
  const std::int64_t inner = detail::product(xs, axis, xs.rank), outer = xs.elements() / inner;
  for (std::int64_t o = 0; o < outer; ++o) {
    const float* xr = x + o * inner;
    float* yr = y + o * inner;
    double mean = 0, sq = 0;
    if (beta) {
      for (std::int64_t i = 0; i < inner; ++i) mean += xr[i];
      mean /= static_cast<double>(inner);
    }
    for (std::int64_t i = 0; i < inner; ++i) sq += (xr[i] - mean) * (xr[i] - mean);
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(inner) + static_cast<double>(eps));
    for (std::int64_t i = 0; i < inner; ++i)
      yr[i] = static_cast<float>((xr[i] - mean) * inv * gamma[i] + (beta ? static_cast<double>(beta[i]) : 0.0));
  }
}

/// resize of NCHW x to ys: nearest (src = floor(dst · in / out)) or bilinear (half-pixel
/// centres clamped at 0, or aligned corners), as PyTorch's `interpolate` with a size.
inline void resize(const float* x, const shape& xs, float* y, const shape& ys, resize_mode mode, bool align_corners) {
  const std::int64_t planes = xs[0] * xs[1], ih = xs[2], iw = xs[3], oh = ys[2], ow = ys[3];
  // Source coordinate of output index d along an axis of `in` → `out` pixels.
  const auto source = [&](std::int64_t d, std::int64_t in, std::int64_t out) {
    if (align_corners) return out > 1 ? static_cast<double>(d) * static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
    const double scale = static_cast<double>(in) / static_cast<double>(out);
    return std::max((static_cast<double>(d) + 0.5) * scale - 0.5, 0.0);
  };
  for (std::int64_t p = 0; p < planes; ++p) {
    const float* plane = x + p * ih * iw;
    for (std::int64_t r = 0; r < oh; ++r)
      for (std::int64_t c = 0; c < ow; ++c) {
        float& out = y[(p * oh + r) * ow + c];
        if (mode == resize_mode::nearest) {
          const std::int64_t sr = std::min(static_cast<std::int64_t>(static_cast<double>(r) * static_cast<double>(ih) / static_cast<double>(oh)), ih - 1);
          const std::int64_t sc = std::min(static_cast<std::int64_t>(static_cast<double>(c) * static_cast<double>(iw) / static_cast<double>(ow)), iw - 1);
          out = plane[sr * iw + sc];
          continue;
        }
        const double fr = source(r, ih, oh), fc = source(c, iw, ow);
        const std::int64_t r0 = std::min(static_cast<std::int64_t>(fr), ih - 1), c0 = std::min(static_cast<std::int64_t>(fc), iw - 1);
        const std::int64_t r1 = std::min(r0 + 1, ih - 1), c1 = std::min(c0 + 1, iw - 1);
        const double lr = fr - static_cast<double>(r0), lc = fc - static_cast<double>(c0);
        out = static_cast<float>((1 - lr) * ((1 - lc) * plane[r0 * iw + c0] + lc * plane[r0 * iw + c1]) +
                                 lr * ((1 - lc) * plane[r1 * iw + c0] + lc * plane[r1 * iw + c1]));
      }
  }
}

}  // namespace partita::reference_kernels
