#pragma once
/// int8 dense (activations by constant weights) and matmul (of two activations), requantized.
// Both are the GEMM of qgemm.hpp with the activations' rows as A (packed per task at run time)
// and the output's columns along the vectors: dense's weights are B panels packed at bind, with
// a multiplier and bias per column; matmul packs the panels of its B at run time, per task.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "partita/backends/cpu/detail/int8/qgemm.hpp"
#include "partita/backends/cpu/detail/int8/requantize.hpp"
#include "partita/backends/cpu/detail/state.hpp"
#include "partita/core/dtype.hpp"

namespace partita::detail::cpu::int8 {

/// A quantized dense layer's sizes and types: x is m × k, the weights n × k (one row per
/// output), y is m × n.
struct qdense_geometry {
  int m, k, n;
  dtype x_type, w_type, y_type;
};

/// A quantized dense layer's scales and zero points (per output or per tensor), float bias and
/// fused activation (`qlayer_params`).
using qdense_params = qlayer_params;

/// A quantized matmul's sizes and types: a is batch × m × k, b batch × k × n (`b_batched`) or
/// k × n (one for every batch), y batch × m × n.
struct qmatmul_geometry {
  int batch, m, k, n;
  bool b_batched;
  dtype a_type, b_type, y_type;
};

/// A quantized matmul's per-tensor scales and zero points and the float bounds of a fused
/// activation (none: -inf, +inf).
struct qmatmul_params {
  float a_scale;
  std::int32_t a_zp;
  float b_scale;
  std::int32_t b_zp;
  float y_scale;
  std::int32_t y_zp;
  float act_lo, act_hi;
};

namespace qdense_detail {

/// Output rows and panels one task takes: rows whose A words fill about 64 KB (at most 64, a
/// multiple of the micro-kernel's rows), by up to four panels.
constexpr int rows_per_task(int m, int k) {
  const int fit = static_cast<int>(65536 / (static_cast<std::size_t>(pairs_of(k)) * sizeof(std::int32_t)));
  const int rows = std::max(qgemm_mr, std::min(64, fit) / qgemm_mr * qgemm_mr);
  return std::min(rows, m);
}
inline constexpr int panels_per_task = 4;

constexpr int panels_of(int n) { return (n + qgemm_nr - 1) / qgemm_nr; }
constexpr std::size_t a_bytes(int m, int k) {
  return align64(static_cast<std::size_t>(rows_per_task(m, k)) * static_cast<std::size_t>(pairs_of(k)) *
                 sizeof(std::int32_t));
}

/// For each of `batches` output matrices of m × n (batch i at y + i · m · n): calls
/// pack_a(words, i, r0, rows) for each task's rows, then `qgemm_rows` on them by each of its
/// groups of panels, those of `panel_at(t, i, first panel, count)`.
template <class Y, class PackA, class PanelAt>
inline void rows_by_panels(state& st, int batches, int m, int k, int n, Y* y, const qepilogue& e, PackA&& pack_a,
                           PanelAt&& panel_at) {
  const int kp = pairs_of(k), mc = rows_per_task(m, k);
  const int row_tasks = (m + mc - 1) / mc, col_tasks = (panels_of(n) + panels_per_task - 1) / panels_per_task;
  const std::int64_t per_batch = static_cast<std::int64_t>(row_tasks) * col_tasks;
  split_tasks(st, per_batch * batches, 2.0 * mc * k * panels_per_task * qgemm_nr,
              [&](int t, std::int64_t u0, std::int64_t u1) {
                auto* words = reinterpret_cast<std::int32_t*>(st.thread_scratch(t));
                std::int64_t packed = -1;  // the row task whose A words `words` holds
                for (std::int64_t u = u0; u < u1; ++u) {
                  const int i = static_cast<int>(u / per_batch);
                  const std::int64_t row_task = u / col_tasks;
                  const int r0 = static_cast<int>(row_task % row_tasks) * mc, rows = std::min(mc, m - r0);
                  if (packed != row_task) pack_a(words, i, r0, rows);
                  packed = row_task;
                  const int p0 = static_cast<int>(u % col_tasks) * panels_per_task;
                  const int count = std::min(panels_per_task, panels_of(n) - p0), col0 = p0 * qgemm_nr;
                  qgemm_rows(kp, words, rows, panel_at(t, i, p0, count), count, col0, n,
                             y + (static_cast<std::ptrdiff_t>(i) * m + r0) * n + col0, n, e, r0);
                }
              });
}

/// Where the parts of dense's packed blob start: the header, the weight panels, the integer
/// bias and the multipliers (one per output, padded to whole panels).
struct layout {
  std::size_t panels, bias, mult, total;
};
constexpr layout layout_of(const qdense_geometry& g) {
  const std::size_t per_column = align64((static_cast<std::size_t>(panels_of(g.n)) * qgemm_nr + 64) * 4);
  layout l{};
  l.panels = align64(sizeof(qlayer_header));
  l.bias = l.panels + align64(static_cast<std::size_t>(panels_of(g.n)) * panel_bytes(g.k));
  l.mult = l.bias + per_column;
  l.total = l.mult + per_column;
  return l;
}

}  // namespace qdense_detail

/// Bytes of the blob `qdense_prepare` writes (kept from bind on).
constexpr std::size_t qdense_packed_bytes(const qdense_geometry& g) { return qdense_detail::layout_of(g).total; }

/// Bytes of scratch `qdense_run` uses per thread.
constexpr std::size_t qdense_scratch_bytes(const qdense_geometry& g) { return qdense_detail::a_bytes(g.m, g.k); }

/// At bind: packs the weights `w` (n × k of `g.w_type`, minus their zero points) in panels, the
/// integer bias, the multipliers and the output bounds into `packed` (`qdense_packed_bytes(g)`
/// bytes, 64-byte aligned).
inline void qdense_prepare(const qdense_geometry& g, const void* w, const qdense_params& p, void* packed) {
  using namespace qdense_detail;
  const layout l = layout_of(g);
  prepare_outputs(p, g.y_type, g.n, packed, l.total, l.bias, l.mult);
  auto* panels = reinterpret_cast<std::int16_t*>(static_cast<unsigned char*>(packed) + l.panels);
  const std::ptrdiff_t panel_words = static_cast<std::ptrdiff_t>(panel_bytes(g.k) / sizeof(std::int16_t));
  with_byte_type(g.w_type, [&](auto wt) {
    using T = decltype(wt);
    for (int pn = 0; pn < panels_of(g.n); ++pn) {
      const int n0 = pn * qgemm_nr;
      pack_b_panel(static_cast<const T*>(w), 1, g.k, g.k, n0, std::min(qgemm_nr, g.n - n0), p.w_zp,
                   p.w_count == 1 ? 0 : 1, panels + pn * panel_words);
    }
  });
}

/// Runs the dense layer on `x` (m × k of `g.x_type`) into `y` (m × n of `g.y_type`) with the
/// blob of `qdense_prepare`, over the state's threads.
inline void qdense_run(state& st, const qdense_geometry& g, const void* packed, const void* x, void* y) {
  using namespace qdense_detail;
  const layout l = layout_of(g);
  const auto* base = static_cast<const unsigned char*>(packed);
  const auto& hd = *reinterpret_cast<const qlayer_header*>(base);
  const qepilogue e = layer_epilogue(packed, l.bias, l.mult, qepilogue::along::column);
  const auto* panels = reinterpret_cast<const std::int16_t*>(base + l.panels);
  const std::ptrdiff_t panel_words = static_cast<std::ptrdiff_t>(panel_bytes(g.k) / sizeof(std::int16_t));
  with_byte_type(g.x_type, [&](auto xt) {
    using X = decltype(xt);
    with_byte_type(g.y_type, [&](auto yt) {
      using Y = decltype(yt);
      const X* xv = static_cast<const X*>(x);
      rows_by_panels(
          st, 1, g.m, g.k, g.n, static_cast<Y*>(y), e,
          [&](std::int32_t* words, int, int r0, int rows) {
            pack_a_rows(xv + static_cast<std::ptrdiff_t>(r0) * g.k, g.k, rows, g.k, hd.x_zp, words);
          },
          [&](int, int, int p0, int) { return panels + p0 * panel_words; });
    });
  });
}

/// Bytes of scratch `qmatmul_run` uses per thread: a task's A words and B panels.
constexpr std::size_t qmatmul_scratch_bytes(const qmatmul_geometry& g) {
  return qdense_detail::a_bytes(g.m, g.k) + qdense_detail::panels_per_task * panel_bytes(g.k);
}

/// Runs the matmul of `a` (batch × m × k of `g.a_type`) by `b` (batch × k × n, or k × n, of
/// `g.b_type`) into `y` (batch × m × n of `g.y_type`), requantized as `p` says, over the
/// state's threads (`qmatmul_scratch_bytes(g)` of scratch each).
inline void qmatmul_run(state& st, const qmatmul_geometry& g, const qmatmul_params& p, const void* a, const void* b,
                        void* y) {
  using namespace qdense_detail;
  const float mult = multiplier(p.a_scale, p.b_scale, p.y_scale);
  qepilogue e;
  e.mult = &mult;
  e.mult_along = qepilogue::along::all;
  e.r = make_requant(output_bounds(g.y_type, p.y_scale, p.y_zp, p.act_lo, p.act_hi), p.y_zp);
  const std::size_t b_offset = a_bytes(g.m, g.k);
  const std::ptrdiff_t panel_words = static_cast<std::ptrdiff_t>(panel_bytes(g.k) / sizeof(std::int16_t));
  with_byte_type(g.a_type, [&](auto at) {
    using A = decltype(at);
    with_byte_type(g.b_type, [&](auto bt) {
      using B = decltype(bt);
      with_byte_type(g.y_type, [&](auto yt) {
        using Y = decltype(yt);
        const A* av = static_cast<const A*>(a);
        const B* bv = static_cast<const B*>(b);
        const std::ptrdiff_t a_step = static_cast<std::ptrdiff_t>(g.m) * g.k;
        const std::ptrdiff_t b_step = g.b_batched ? static_cast<std::ptrdiff_t>(g.k) * g.n : 0;
        rows_by_panels(
            st, g.batch, g.m, g.k, g.n, static_cast<Y*>(y), e,
            [&](std::int32_t* words, int i, int r0, int rows) {
              pack_a_rows(av + i * a_step + static_cast<std::ptrdiff_t>(r0) * g.k, g.k, rows, g.k, p.a_zp, words);
            },
            [&](int t, int i, int p0, int count) {
              auto* panels =
                  reinterpret_cast<std::int16_t*>(reinterpret_cast<unsigned char*>(st.thread_scratch(t)) + b_offset);
              for (int j = 0; j < count; ++j) {
                const int n0 = (p0 + j) * qgemm_nr;
                pack_b_panel_rows(bv + i * b_step, g.n, g.k, n0, std::min(qgemm_nr, g.n - n0), p.b_zp,
                                  panels + j * panel_words);
              }
              return static_cast<const std::int16_t*>(panels);
            });
      });
    });
  });
}

}  // namespace partita::detail::cpu::int8
