#pragma once
/// Reference kernels of the index ops: topk, argmax and argmin, cumsum, gather_elements, and
/// non-maximum suppression.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "partita/backends/reference/kernels.hpp"
#include "partita/backends/reference/tensor_kernels.hpp"
#include "partita/core/dtype.hpp"
#include "partita/core/shape.hpp"

namespace partita::reference_kernels {

namespace detail {

/// Element `e` of a tensor of dtype `t` (f32 or an integer dtype), as a double.
inline double value_at(const void* x, dtype t, std::int64_t e) {
  return t == dtype::f32 ? static_cast<double>(static_cast<const float*>(x)[e])
                         : static_cast<double>(partita::detail::load_integer(x, t, e));
}

}  // namespace detail

/// topk of `x` (dtype `t`, shape `xs`) along `axis`: the `k` largest (or smallest) elements of
/// each line in order, written as values (dtype `t`) at `y` and their indices (i64) at
/// `y + indices_at` bytes. An element's place is the number of elements of its line that come
/// before it (the larger, or smaller, then the lower index among equals; NaN above every
/// number): no sort, no memory, as clear as it is slow on long lines.
inline void topk(const void* x, const shape& xs, dtype t, int axis, std::int64_t k, bool largest, void* y,
                 std::size_t indices_at) {
  const std::int64_t n = xs[axis], inner = detail::product(xs, axis + 1, xs.rank);
  const std::int64_t outer = detail::product(xs, 0, axis);
  const std::size_t bytes = size_of(t);
  const auto* px = static_cast<const unsigned char*>(x);
  auto* values = static_cast<unsigned char*>(y);
  auto* indices = reinterpret_cast<std::int64_t*>(static_cast<unsigned char*>(y) + indices_at);
  const auto value = [&](std::int64_t e) { return detail::value_at(x, t, e); };
  // Whether element a (at index ia of its line) comes before element b (at ib).
  const auto before = [&](double a, std::int64_t ia, double b, std::int64_t ib) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) {
      if (na && nb) return ia < ib;
      return largest ? na : nb;  // NaN is the largest value
    }
    if (a != b) return largest ? a > b : a < b;
    return ia < ib;
  };
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t in = 0; in < inner; ++in) {
      const std::int64_t base = o * n * inner + in, out_base = o * k * inner + in;
      for (std::int64_t i = 0; i < n; ++i) {
        const double v = value(base + i * inner);
        std::int64_t place = 0;
        for (std::int64_t j = 0; j < n && place < k; ++j)
          if (j != i && before(value(base + j * inner), j, v, i)) ++place;
        if (place >= k) continue;
        const std::int64_t at = out_base + place * inner;
        std::memcpy(values + at * static_cast<std::int64_t>(bytes), px + (base + i * inner) * static_cast<std::int64_t>(bytes), bytes);
        indices[at] = i;
      }
    }
}

/// argmax (`largest`) or argmin of `x` (dtype `t`, shape `xs`) along `axis`, as i64 indices
/// into `y` (the other axes in order). Of equal extremes the first, or the last with
/// `select_last`; a NaN beats every number (the first NaN, or the last).
inline void arg_reduce(const void* x, const shape& xs, dtype t, int axis, bool largest, bool select_last, std::int64_t* y) {
  const std::int64_t n = xs[axis], inner = detail::product(xs, axis + 1, xs.rank), outer = detail::product(xs, 0, axis);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t in = 0; in < inner; ++in) {
      const std::int64_t base = o * n * inner + in;
      std::int64_t best = 0;
      double b = detail::value_at(x, t, base);
      for (std::int64_t i = 1; i < n; ++i) {
        const double v = detail::value_at(x, t, base + i * inner);
        const bool nan_v = std::isnan(v), nan_b = std::isnan(b);
        bool take;
        if (nan_v || nan_b) take = nan_v && (!nan_b || select_last);
        else take = largest ? (v > b || (select_last && v == b)) : (v < b || (select_last && v == b));
        if (take) {
          best = i;
          b = v;
        }
      }
      y[o * inner + in] = best;
    }
}

/// cumsum of `x` (dtype `t`, shape `xs`) along `axis` into `y`: inclusive or `exclusive`,
/// forwards or in `reverse`. f32 sums in double; integers in 64 bits, wrapped to the dtype.
inline void cumsum(const void* x, const shape& xs, dtype t, int axis, bool exclusive, bool reverse, void* y) {
  const std::int64_t n = xs[axis], inner = detail::product(xs, axis + 1, xs.rank), outer = detail::product(xs, 0, axis);
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t in = 0; in < inner; ++in) {
      double sum = 0;
      std::int64_t isum = 0;
      for (std::int64_t s = 0; s < n; ++s) {
        const std::int64_t i = reverse ? n - 1 - s : s;
        const std::int64_t e = (o * n + i) * inner + in;
        const double v = t == dtype::f32 ? static_cast<double>(static_cast<const float*>(x)[e]) : 0.0;
        const std::int64_t iv = t == dtype::f32 ? 0 : partita::detail::load_integer(x, t, e);
        if (t == dtype::f32) {
          if (!exclusive) sum += v;
          static_cast<float*>(y)[e] = static_cast<float>(sum);
          if (exclusive) sum += v;
        } else {
          if (!exclusive) isum += iv;
          partita::detail::store_integer(y, t, e, isum);
          if (exclusive) isum += iv;
        }
      }
    }
}

/// gather_elements of `x` (`bytes` per element, shape `xs`) by `indices` (dtype `it`, shape
/// `is`, X's rank) along `axis` into `y` (shape `is`): y[..., j, ...] = x[..., indices[..., j,
/// ...], ...]. A negative index counts from the back; one out of range throws.
inline void gather_elements(const void* x, const shape& xs, std::size_t bytes, const void* indices, dtype it,
                            const shape& is, int axis, void* y) {
  const auto xst = detail::strides(xs);
  const auto* px = static_cast<const unsigned char*>(x);
  auto* py = static_cast<unsigned char*>(y);
  const auto sz = static_cast<std::int64_t>(bytes);
  detail::for_each_index(is, [&](const std::array<std::int64_t, max_rank>& idx, std::int64_t e) {
    std::int64_t off = 0;
    for (int d = 0; d < xs.rank; ++d) {
      const auto u = static_cast<std::size_t>(d);
      off += (d == axis ? checked_index(indices, it, e, xs[axis]) : idx[u]) * xst[u];
    }
    std::memcpy(py + e * sz, px + off * sz, bytes);
  });
}

/// The sizes and thresholds of a non-maximum suppression.
struct nms_geometry {
  std::int64_t batch = 0, boxes = 0, classes = 0, max_per_class = 0;
  float iou = 0.5f, score = 0.f;
  bool center = false;
};

namespace detail {

/// IoU of boxes `a` and `b` (4 floats each): corners in either order, or centre and size.
inline double iou(const float* a, const float* b, bool center) {
  const auto corners = [center](const float* p, double& y1, double& x1, double& y2, double& x2) {
    if (center) {
      x1 = static_cast<double>(p[0]) - static_cast<double>(p[2]) / 2;
      x2 = static_cast<double>(p[0]) + static_cast<double>(p[2]) / 2;
      y1 = static_cast<double>(p[1]) - static_cast<double>(p[3]) / 2;
      y2 = static_cast<double>(p[1]) + static_cast<double>(p[3]) / 2;
    } else {
      y1 = std::min(p[0], p[2]);
      y2 = std::max(p[0], p[2]);
      x1 = std::min(p[1], p[3]);
      x2 = std::max(p[1], p[3]);
    }
  };
  double ay1, ax1, ay2, ax2, by1, bx1, by2, bx2;
  corners(a, ay1, ax1, ay2, ax2);
  corners(b, by1, bx1, by2, bx2);
  const double area_a = (ay2 - ay1) * (ax2 - ax1), area_b = (by2 - by1) * (bx2 - bx1);
  if (area_a <= 0 || area_b <= 0) return 0;
  const double h = std::min(ay2, by2) - std::max(ay1, by1), w = std::min(ax2, bx2) - std::max(ax1, bx1);
  if (h <= 0 || w <= 0) return 0;
  const double inter = h * w;
  return inter / (area_a + area_b - inter);
}

}  // namespace detail

/// Greedy non-maximum suppression (ONNX's): `boxes` [batch, boxes, 4], `scores` [batch,
/// classes, boxes]; the selected (batch, class, box) triples into `selected` (batch · classes
/// · max per class rows of 3, -1 after the last), their number into `count`. `order` holds
/// `boxes` indices (the candidates of one class, sorted).
inline void non_max_suppression(const nms_geometry& g, const float* boxes, const float* scores, std::int64_t* selected,
                                std::int64_t* count, std::int32_t* order) {
  std::int64_t rows = 0;
  for (std::int64_t b = 0; b < g.batch; ++b)
    for (std::int64_t c = 0; c < g.classes; ++c) {
      const float* s = scores + (b * g.classes + c) * g.boxes;
      const float* bx = boxes + b * g.boxes * 4;
      std::int64_t n = 0;
      for (std::int64_t i = 0; i < g.boxes; ++i)
        if (s[i] > g.score) order[n++] = static_cast<std::int32_t>(i);  // NaN scores are never above
      std::sort(order, order + n, [s](std::int32_t i, std::int32_t j) { return s[i] > s[j] || (s[i] == s[j] && i < j); });
      const std::int64_t first = rows;
      for (std::int64_t k = 0; k < n && rows - first < g.max_per_class; ++k) {
        const std::int64_t i = order[k];
        bool keep = true;
        for (std::int64_t r = first; r < rows && keep; ++r)
          keep = detail::iou(bx + i * 4, bx + selected[r * 3 + 2] * 4, g.center) <= static_cast<double>(g.iou);
        if (!keep) continue;
        selected[rows * 3] = b;
        selected[rows * 3 + 1] = c;
        selected[rows * 3 + 2] = i;
        ++rows;
      }
    }
  *count = rows;
  std::fill(selected + rows * 3, selected + g.batch * g.classes * g.max_per_class * 3, std::int64_t{-1});
}

}  // namespace partita::reference_kernels
