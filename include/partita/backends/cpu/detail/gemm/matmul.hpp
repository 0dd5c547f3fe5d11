#pragma once
/// cpu matmul: batched op(A) · op(B) with numpy broadcasting, on the GEMM micro-kernel.
// The loops of one product are BLIS's: depth passes of kc, B packed kc × (up to 16 panels) per
// pass (or read from its form packed at bind), A in blocks of up to 144 rows that stay in L2
// while every panel's micro-tiles run over them. Work is split statically into (matrix, piece)
// units, a piece being a range of column panels (each task packs only its own B) or of row
// blocks, whichever divides more evenly.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>

#include "partita/backends/cpu/detail/fused.hpp"
#include "partita/backends/cpu/detail/gemm/matmul_choice.hpp"
#include "partita/backends/cpu/detail/gemm/matmul_pack.hpp"
#include "partita/backends/cpu/detail/state.hpp"
#include "partita/ir/op_id.hpp"

namespace partita::detail::cpu {

/// The kernel of matmul steps: the shapes and transpose flags read from the step at compile
/// time, B packed at bind when it is a weight (then `run` reads only A).
template <class Step>
struct matmul_kernel;

// The three entry points below are templates of nothing, so that their GEMM tiles are
// instantiated in the files that run a matmul step only, not in every file including the backend.

/// C = op(A) · op(B) for every output batch index of `g` (see `matmul_geometry`): `a`, `b`, `c`
/// hold all their matrices, contiguous. `st` must hold `matmul_scratch_floats(g)` floats of
/// scratch per thread (`st.need_scratch(0, matmul_scratch_floats(g))`). With `packed_b` (B as
/// `pack_matmul_b` left it) `b` is not read. With `e`, every C is finished with its column bias,
/// residual (all of C's matrices, like C) and activation as its last depth pass is stored (so
/// `e` needs a depth of at least 1, which every model has: zero dimensions do not compile).
template <class = void>
inline void matmul(state& st, const matmul_geometry& g, const float* a, const float* b, float* c,
                   const float* packed_b = nullptr, const epilogue* e = nullptr);

/// C = A · B for every batch index, A not transposed and packed at bind as [block][k][MR] with
/// MR = `matmul_main_mr` (`pack_conv_weights`' layout), B not transposed, all with `g`'s steps.
/// Scratch and epilogue as for `matmul` (a row bias when `e->bias_per_row`).
template <class = void>
inline void matmul_packed_a(state& st, const matmul_geometry& g, const float* packed_a, const float* b, float* c,
                            const epilogue* e);

/// Packs every matrix of B (`matmul_packed_b_floats(g)` floats at `dst`), for `matmul`'s `packed_b`.
inline void pack_matmul_b(const matmul_geometry& g, const float* b, float* dst);

/// One product C = op(A) · op(B) (`g.batch` 1, A not transposed) on the calling thread, with
/// `matmul_scratch_floats(g)` floats of `scratch`: for kernels that split their own work.
template <class = void>
inline void matmul_serial(const matmul_geometry& g, const float* a, const float* b, float* c, float* scratch);

/// f.template operator()<MR, NV>() with the micro-tile `matmul_tile_for(m)` as template arguments.
template <class F>
inline void with_matmul_tile(int m, F&& f) {
  const matmul_tile t = matmul_tile_for(m);
  if (t.mr == matmul_main_mr) {
    f.template operator()<matmul_main_mr, 2>();
  } else if (t.mr == 4) {
    f.template operator()<4, 2>();
  } else if (t.mr == 2) {
    f.template operator()<2, 4>();
  } else {
    f.template operator()<1, 4>();
  }
}

/// One micro-tile of C from a B micro-panel packed NV · W wide, of which the first `nr` columns
/// are C's. A panel of at most one vector's columns (the last of n = 49, a 7×7 image) runs a
/// one-vector tile: half the FMAs, and with six or more rows still enough accumulators to
/// cover most of an FMA's latency (MobileNetV2's 1×1 convolutions on 7×7 gain from it).
template <int MR, int NV, bool APacked>
inline void matmul_micro_tile(int kc, const float* a, std::ptrdiff_t lda, const float* b, float* c, std::ptrdiff_t ldc,
                              int mr, int nr, bool load_c, const epilogue* e) {
  if constexpr (NV > 1 && MR >= 6) {
    if (nr <= W) {
      gemm_tile<MR, 1, APacked, false>(kc, a, lda, b, NV * W, nullptr, c, ldc, mr, nr, load_c, e);
      return;
    }
  }
  gemm_tile<MR, NV, APacked, false>(kc, a, lda, b, NV * W, nullptr, c, ldc, mr, nr, load_c, e);
}

/// Row blocks [i0, i1) of `rows` and column panels [p0, p1) of one product; `e` (or null) is
/// this product's epilogue, its residual this product's.
/// With `packed_a`, A is read from there instead of `a`: packed at bind as [block][k][MR] (the
/// conv weights' packing), every block whole (rows past m zero).
template <int MR, int NV>
inline void matmul_block(const matmul_geometry& g, const matmul_rows& rows, const float* a, const float* b,
                         const float* packed_b, float* c, int i0, int i1, int p0, int p1, float* scratch,
                         const epilogue* e, const float* packed_a = nullptr) {
  constexpr int NR = NV * W;
  const int kc_max = matmul_kc(g.k);
  const std::ptrdiff_t lda = g.lda ? g.lda : g.ta ? g.m : g.k, ldb = g.ldb ? g.ldb : g.tb ? g.k : g.n,
                       ldc = g.ldc ? g.ldc : g.n;
  float* bbuf = scratch;
  float* abuf = scratch + static_cast<std::ptrdiff_t>(kc_max) * std::min((g.n + NR - 1) / NR, matmul_nc_panels) * NR;
  // A partial last block (when the rows do not split into blocks of MR and MR - 1): padded to MR.
  const int padded = rows.row(rows.blocks()) > g.m ? rows.blocks() - 1 : rows.blocks();
  for (int k0 = 0; k0 < g.k; k0 += kc_max) {
    const int kc = std::min(kc_max, g.k - k0);
    const bool load_c = k0 > 0;
    const bool last = k0 + kc == g.k;  // the pass that stores C finished
    for (int q0 = p0; q0 < p1; q0 += matmul_nc_panels) {
      const int q1 = std::min(p1, q0 + matmul_nc_panels);
      const float* bq0 = bbuf;
      std::ptrdiff_t panel_floats = static_cast<std::ptrdiff_t>(kc) * NR;
      if (packed_b) {
        bq0 = packed_b + (static_cast<std::ptrdiff_t>(q0) * g.k + k0) * NR;
        panel_floats = static_cast<std::ptrdiff_t>(g.k) * NR;
      } else {
        pack_b_panels<NR>(b, ldb, g.tb, k0, kc, q0 * NR, std::min(g.n, q1 * NR), bbuf);
      }
      for (int j0 = i0; j0 < i1; j0 += matmul_mc_blocks) {
        const int j1 = std::min(i1, j0 + matmul_mc_blocks);
        if (packed_a) {
          // A is read where bind packed it.
        } else if (g.ta) {
          for (int i = j0; i < j1; ++i) {
            float* dst = abuf + (i - j0) * kc * MR;
            const int r = rows.row(i), r1 = std::min(g.m, rows.row(i + 1));
            if (i < rows.whole) {
              pack_a_transposed<MR>(a, lda, k0, kc, r, r1, dst);
            } else if constexpr (MR == matmul_main_mr) {
              pack_a_transposed<MR - 1>(a, lda, k0, kc, r, r1, dst);
            }
          }
        } else if (j1 > padded) {
          const int r = rows.row(padded);
          std::fill(abuf, abuf + MR * kc, 0.f);
          for (int i = r; i < g.m; ++i) std::copy(a + i * lda + k0, a + i * lda + k0 + kc, abuf + (i - r) * kc);
        }
        for (int q = q0; q < q1; ++q) {
          const int n0 = q * NR, nr = std::min(NR, g.n - n0);
          const float* bq = bq0 + (q - q0) * panel_floats;
          for (int i = j0; i < j1; ++i) {
            const int r = rows.row(i), mr = std::min(g.m, rows.row(i + 1)) - r;
            float* ct = c + r * ldc + n0;
            const float* at = packed_a ? packed_a + (static_cast<std::ptrdiff_t>(i) * g.k + k0) * MR
                              : g.ta       ? abuf + (i - j0) * kc * MR
                              : i < padded ? a + r * lda + k0
                                           : abuf;
            const std::ptrdiff_t ld = packed_a || g.ta ? 0 : i < padded ? lda : kc;
            epilogue te;
            const epilogue* tp = nullptr;
            if (e && last) {
              te = tile_epilogue(*e, r, n0, ldc);
              tp = &te;
            }
            if (i < rows.whole) {
              if (packed_a || g.ta) {
                matmul_micro_tile<MR, NV, true>(kc, at, ld, bq, ct, ldc, mr, nr, load_c, tp);
              } else {
                matmul_micro_tile<MR, NV, false>(kc, at, ld, bq, ct, ldc, mr, nr, load_c, tp);
              }
            } else if constexpr (MR == matmul_main_mr) {
              if (g.ta) {
                matmul_micro_tile<MR - 1, NV, true>(kc, at, ld, bq, ct, ldc, mr, nr, load_c, tp);
              } else {
                matmul_micro_tile<MR - 1, NV, false>(kc, at, ld, bq, ct, ldc, mr, nr, load_c, tp);
              }
            }
          }
        }
      }
    }
  }
}

/// How unevenly `x` units spread over `p` parts: the largest part over the mean.
constexpr double matmul_imbalance(int x, int p) { return x < 1 ? 1e9 : static_cast<double>((x + p - 1) / p) * p / x; }

template <int MR, int NV>
inline void matmul_tiled(state& st, const matmul_geometry& g, const float* a, const float* b, const float* packed_b,
                         float* c, const epilogue* e, const float* packed_a = nullptr) {
  constexpr int NR = NV * W;
  const matmul_rows rows = matmul_rows_for(g.m, MR, !packed_a && MR == matmul_main_mr);
  const int panels = (g.n + NR - 1) / NR, blocks = rows.blocks();
  const double flops = 2.0 * g.batch * g.m * static_cast<double>(g.n) * g.k;
  const int tasks = tasks_for(flops, st.workers(), g.batch * std::max(panels, blocks));
  // Pieces per matrix such that the batch · pieces units divide evenly among the tasks.
  const int pieces = tasks / std::gcd(g.batch, tasks);
  const bool by_rows = matmul_imbalance(blocks, pieces) < matmul_imbalance(panels, pieces);
  const int units = g.batch * pieces;
  const std::ptrdiff_t a_floats = static_cast<std::ptrdiff_t>(g.m) * g.k,
                       b_floats = static_cast<std::ptrdiff_t>(g.k) * g.n,
                       c_floats = static_cast<std::ptrdiff_t>(g.m) * g.n,
                       packed_floats = static_cast<std::ptrdiff_t>(panels) * g.k * NR;
  st.parallel(tasks, [&](int t) {
    float* scratch = st.thread_scratch(t);
    const int u1 = static_cast<int>(static_cast<std::int64_t>(units) * (t + 1) / tasks);
    for (int u = static_cast<int>(static_cast<std::int64_t>(units) * t / tasks); u < u1;) {
      // This task's consecutive pieces of one matrix, as one range.
      const int i = u / pieces, q0 = u % pieces, q1 = std::min(pieces, q0 + u1 - u);
      u += q1 - q0;
      std::int64_t am = 0, bm = 0;
      g.operands(i, am, bm);
      const int i0 = by_rows ? blocks * q0 / pieces : 0, i1 = by_rows ? blocks * q1 / pieces : blocks;
      const int p0 = by_rows ? 0 : panels * q0 / pieces, p1 = by_rows ? panels : panels * q1 / pieces;
      if (i0 >= i1 || p0 >= p1) continue;
      epilogue ei;
      if (e) {
        ei = *e;
        if (e->residual) ei.residual = e->residual + i * c_floats;
      }
      matmul_block<MR, NV>(g, rows, a + am * a_floats, packed_b ? nullptr : b + bm * b_floats,
                           packed_b ? packed_b + bm * packed_floats : nullptr, c + i * c_floats, i0, i1, p0, p1,
                           scratch, e ? &ei : nullptr, packed_a);
    }
  });
}

template <class>
inline void matmul(state& st, const matmul_geometry& g, const float* a, const float* b, float* c,
                   const float* packed_b, const epilogue* e) {
  if (g.k == 0) {
    std::fill(c, c + static_cast<std::ptrdiff_t>(g.batch) * g.m * g.n, 0.f);
    return;
  }
  with_matmul_tile(g.m, [&]<int MR, int NV>() { matmul_tiled<MR, NV>(st, g, a, b, packed_b, c, e); });
}

template <class>
inline void matmul_packed_a(state& st, const matmul_geometry& g, const float* packed_a, const float* b, float* c,
                            const epilogue* e) {
  matmul_tiled<matmul_main_mr, 2>(st, g, nullptr, b, nullptr, c, e, packed_a);
}

template <int MR, int NV>
inline void matmul_serial_tiled(const matmul_geometry& g, const float* a, const float* b, float* c, float* scratch) {
  const matmul_rows rows = matmul_rows_for(g.m, MR, MR == matmul_main_mr);
  matmul_block<MR, NV>(g, rows, a, b, nullptr, c, 0, rows.blocks(), 0, (g.n + NV * W - 1) / (NV * W), scratch,
                       nullptr);
}

template <class>
inline void matmul_serial(const matmul_geometry& g, const float* a, const float* b, float* c, float* scratch) {
  with_matmul_tile(g.m, [&]<int MR, int NV>() { matmul_serial_tiled<MR, NV>(g, a, b, c, scratch); });
}

template <int NR>
inline void pack_matmul_b_nr(const matmul_geometry& g, const float* b, float* dst) {
  const int panels = (g.n + NR - 1) / NR;
  const std::ptrdiff_t ldb = g.tb ? g.k : g.n, panel_floats = static_cast<std::ptrdiff_t>(g.k) * NR;
  for (int i = 0; i < g.b_matrices; ++i, b += static_cast<std::ptrdiff_t>(g.k) * g.n)
    for (int p = 0; p < panels; ++p, dst += panel_floats)
      pack_b_panel<NR>(b, ldb, g.tb, 0, g.k, p * NR, std::min(NR, g.n - p * NR), dst);
}

inline void pack_matmul_b(const matmul_geometry& g, const float* b, float* dst) {
  if (matmul_tile_for(g.m).nv == 4) {
    pack_matmul_b_nr<4 * W>(g, b, dst);
  } else {
    pack_matmul_b_nr<2 * W>(g, b, dst);
  }
}

template <class Step>
struct matmul_kernel {
  static constexpr gemm_step info = analyse<Step>();
  static_assert(info.ok && info.main == op_id::matmul && info.gamma < 0,
                "partita: cpu: this composite (Step) is not one the cpu backend fuses");
  static constexpr bool fused = Step::op == op_id::call;
  static constexpr const graph_node& main = fused ? Step::body(info.main_node) : Step::node;
  static constexpr shape a_shape = fused ? Step::body(Step::body_arg(info.main_node, 0)).out : Step::arg(0).out;
  static constexpr shape b_shape = fused ? Step::body(Step::body_arg(info.main_node, 1)).out : Step::arg(1).out;
  static constexpr matmul_geometry geo = make_matmul_geometry(a_shape, b_shape, main.at->transpose_a, main.at->transpose_b);
  static_assert(geo.ok, "partita: cpu: this matmul step (Step) has operands whose shapes do not agree");
  /// The kernel that runs the step, and why (`choose_matmul_kernel`): B packed at bind or per pass.
  static constexpr matmul_choice choice =
      choose_matmul_kernel(geo, Step::arg(info.w).op == op_id::weight, a_shape.rank > 2 || b_shape.rank > 2);
  static constexpr matmul_kernel_id chosen = choice.kernel;
  static constexpr bool constant_b = packs_b_at_bind(chosen);
  static constexpr std::size_t packed_floats = constant_b ? matmul_packed_b_floats(geo) : 0;
  static constexpr std::size_t bias_floats = info.bias >= 0 ? static_cast<std::size_t>(geo.n) : 0;
  /// After `prepare`, `run` reads no weight but A or a residual that are weights: B is packed,
  /// the bias copied, so the executable need not keep them.
  static constexpr bool packs_weights = (constant_b || info.bias >= 0) && Step::arg(info.x).op != op_id::weight &&
                                        (info.residual < 0 || Step::arg(info.residual).op != op_id::weight);

  static void prepare(state& st, const float* const* in, int step) {
    constexpr matmul_geometry g = geo;
    st.need_scratch(0, matmul_scratch_floats(g));
    if constexpr (packed_floats + bias_floats > 0) {
      float* dst = st.reserve(step, packed_floats + bias_floats);
      if constexpr (constant_b) {
        if (in[info.w]) pack_matmul_b(g, in[info.w], dst);
      }
      if constexpr (info.bias >= 0) {
        if (in[info.bias]) std::copy(in[info.bias], in[info.bias] + g.n, dst + packed_floats);
      }
    }
  }

  static void run(state& st, const float* const* in, float* out, int step) {
    constexpr matmul_geometry g = geo;  // a copy: nothing of the plan is referenced at run time
    float* kept = packed_floats + bias_floats > 0 ? st.packed(step) : nullptr;
    if constexpr (fused) {
      epilogue e;
      e.bias = info.bias >= 0 ? kept + packed_floats : nullptr;
      e.residual = info.residual >= 0 ? in[info.residual] : nullptr;
      e.ld_residual = g.n;
      e.act = info.act;
      e.lo = info.lo;
      e.hi = info.hi;
      matmul(st, g, in[info.x], constant_b ? nullptr : in[info.w], out, constant_b ? kept : nullptr, &e);
    } else {
      matmul(st, g, in[0], in[1], out, constant_b ? kept : nullptr);
    }
  }
};

}  // namespace partita::detail::cpu
