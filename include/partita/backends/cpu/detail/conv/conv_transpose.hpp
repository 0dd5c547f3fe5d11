#pragma once
/// cpu conv_transpose2d: a GEMM of the transposed weights by the input, scatter-added into the output.
// A transposed convolution multiplies each input pixel's channels by the weights and adds the
// (Cout / groups) × KH × KW products into the output around the pixel's strided position. Per
// group that is the GEMM cols = Wᵀ · X, with rows (co, kh, kw), depth the group's input
// channels and columns the input positions, which X holds as rows of contiguous planes (B is
// read in place); each MR × NR tile the micro-kernel leaves in registers is scatter-added into
// the output (col2im) while it is hot, so no column matrix is ever stored. Threads own disjoint
// sets of output channels (units of whole weight panels), so no two ever add to one output.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "partita/backends/cpu/detail/conv/conv.hpp"
#include "partita/backends/cpu/detail/elementwise/eltwise.hpp"
#include "partita/backends/cpu/detail/conv/conv_choice.hpp"
#include "partita/backends/cpu/detail/fused.hpp"
#include "partita/backends/cpu/detail/gemm/gemm.hpp"
#include "partita/backends/cpu/detail/state.hpp"
#include "partita/ir/attrs.hpp"

namespace partita::detail::cpu {

/// Shapes of one conv_transpose2d (conv2d's fields, read the same way: c and o are the input
/// and output channels, cg and og the group's) and how its GEMM is cut.
struct conv_transpose_geometry : conv_geometry {
  int rows = 0;           // per group: og · kh · kw GEMM rows (co, kh, kw); the depth is cg
  int panels = 0;         // per group: panels of conv_block::mr rows
  int unit_channels = 1;  // output channels per unit: a whole number of panels
  int units = 1;          // per group
};

constexpr conv_transpose_geometry make_conv_transpose_geometry(const shape& x, const shape& wt, const shape& y,
                                                               const attrs& a) {
  conv_transpose_geometry g{make_conv_geometry(x, wt, y, a)};
  const int taps = g.kh * g.kw, mr = conv_block::mr;
  g.rows = g.og * taps;
  g.panels = (g.rows + mr - 1) / mr;
  // A unit starts on a panel boundary: the fewest channels whose rows fill whole panels.
  g.unit_channels = mr / std::gcd(taps, mr);
  g.units = (g.og + g.unit_channels - 1) / g.unit_channels;
  return g;
}

constexpr std::size_t packed_conv_transpose_floats(const conv_transpose_geometry& g) {
  return static_cast<std::size_t>(g.groups) * static_cast<std::size_t>(g.panels) * static_cast<std::size_t>(g.cg) *
         static_cast<std::size_t>(conv_block::mr);
}

/// Packs the (Cin, Cout / groups, KH, KW) weights as Wᵀ per group: [group][panel][ci][MR], row
/// m of a panel being (co, kh, kw) (rows past the group's are zero); with `scale` (a folded
/// batch norm), each output channel's weights times its scale.
inline void pack_conv_transpose_weights(const conv_transpose_geometry& g, const float* w, float* packed,
                                        const double* scale = nullptr) {
  constexpr int MR = conv_block::mr;
  for (int gr = 0; gr < g.groups; ++gr)
    for (int p = 0; p < g.panels; ++p) {
      float* dst = packed + (static_cast<std::ptrdiff_t>(gr) * g.panels + p) * static_cast<std::ptrdiff_t>(g.cg) * MR;
      for (int ci = 0; ci < g.cg; ++ci) {
        const float* src = w + static_cast<std::ptrdiff_t>(gr * g.cg + ci) * g.rows;
        for (int m = 0; m < MR; ++m) {
          const int row = p * MR + m;
          const float v = row < g.rows ? src[row] : 0.f;
          dst[static_cast<std::ptrdiff_t>(ci) * MR + m] =
              scale && row < g.rows ? static_cast<float>(v * scale[gr * g.og + row / (g.kh * g.kw)]) : v;
        }
      }
    }
}

/// Adds GEMM row `row` = (co, i, j) of positions [q0, q0 + n) (`src`) into output plane `y` of
/// channel co: position (ih, iw) lands on (ih · sh - ph + i · dh, iw · sw - pw + j · dw) when
/// that is inside the output.
inline void scatter_row(const conv_transpose_geometry& g, int row, const float* src, int q0, int n, float* y) {
  const int tap = row % (g.kh * g.kw), i = tap / g.kw, j = tap % g.kw;
  const int shift_w = j * g.dw - g.pw;
  // Input columns whose output column is inside: iw · sw + shift_w in [0, ow).
  const int iw_lo = shift_w >= 0 ? 0 : (-shift_w + g.sw - 1) / g.sw;
  const int iw_hi = std::min(g.w, g.ow - 1 - shift_w < 0 ? 0 : (g.ow - 1 - shift_w) / g.sw + 1);
  for (int k = 0; k < n;) {
    const int q = q0 + k, ih = q / g.w, iw0 = q % g.w;
    const int len = std::min(n - k, g.w - iw0);  // the run of input row ih in the tile
    const int oh = ih * g.sh - g.ph + i * g.dh;
    const int a = std::max(iw0, iw_lo), b = std::min(iw0 + len, iw_hi);
    if (oh >= 0 && oh < g.oh && a < b) {
      const float* s = src + k + (a - iw0);
      float* d = y + static_cast<std::ptrdiff_t>(oh) * g.ow + a * g.sw + shift_w;
      if (g.sw == 1) {
        map2(d, s, d, b - a, [](const vec& u, const vec& v) { return u + v; });
      } else {
        for (int t = 0; t < b - a; ++t) d[static_cast<std::ptrdiff_t>(t) * g.sw] += s[t];
      }
    }
    k += len;
  }
}

/// Units [u0, u1) of the whole transposed convolution: unit u is image u / (groups · units),
/// group (u / units) mod groups, output channels [k · unit_channels, ...) of the group with k =
/// u mod units. `scratch` holds cg · NR floats (the last, partial tile of positions). With `e`
/// (a fused composite), once a unit's planes hold all their sums, each is finished while still
/// in cache: `act(y + bias + residual)`, the bias one value per output channel, the residual
/// shaped like the output.
inline void conv_transpose_units(const conv_transpose_geometry& g, const float* packed, const float* x, float* y, int u0,
                                 int u1, float* scratch, const epilogue* e = nullptr) {
  constexpr int MR = conv_block::mr, NV = conv_block::nv, NR = conv_block::nr;
  const int positions = g.h * g.w, taps = g.kh * g.kw;
  const std::ptrdiff_t out_plane = static_cast<std::ptrdiff_t>(g.oh) * g.ow;
  for (int u = u0; u < u1; ++u) {
    const int image = u / (g.groups * g.units), gr = u / g.units % g.groups, k = u % g.units;
    const int co0 = k * g.unit_channels, co1 = std::min(g.og, co0 + g.unit_channels);
    const int row0 = co0 * taps, row1 = co1 * taps;
    float* yg = y + (static_cast<std::ptrdiff_t>(image) * g.o + static_cast<std::ptrdiff_t>(gr) * g.og) * out_plane;
    std::fill(yg + co0 * out_plane, yg + co1 * out_plane, 0.f);
    const float* xg = x + (static_cast<std::ptrdiff_t>(image) * g.c + static_cast<std::ptrdiff_t>(gr) * g.cg) * positions;
    const float* ag = packed + static_cast<std::ptrdiff_t>(gr) * g.panels * g.cg * MR;
    for (int q0 = 0; q0 < positions; q0 += NR) {
      const int n = std::min(NR, positions - q0);
      const float* b = xg + q0;
      std::ptrdiff_t ldb = positions;
      if (n < NR) {  // the micro-kernel reads NR columns: copy the last ones, zero-padded
        for (int ci = 0; ci < g.cg; ++ci) {
          float* row = scratch + static_cast<std::ptrdiff_t>(ci) * NR;
          std::memcpy(row, xg + static_cast<std::ptrdiff_t>(ci) * positions + q0, sizeof(float) * static_cast<std::size_t>(n));
          std::fill(row + n, row + NR, 0.f);
        }
        b = scratch;
        ldb = NR;
      }
      for (int p = row0 / MR; p * MR < row1; ++p) {
        alignas(64) float tile[MR * NR];
        micro_kernel<MR, NV, true, false>(g.cg, ag + static_cast<std::ptrdiff_t>(p) * g.cg * MR, 0, b, ldb, nullptr, tile,
                                          NR, false, nullptr);
        for (int m = 0; m < MR && p * MR + m < row1; ++m) {
          const int row = p * MR + m;
          scatter_row(g, row, tile + m * NR, q0, n, yg + (row / taps) * out_plane);
        }
      }
    }
    if (!e) continue;
    for (int co = co0; co < co1; ++co) {
      const int oc = gr * g.og + co;
      float* plane = yg + co * out_plane;
      const float* res = e->residual ? e->residual + (static_cast<std::ptrdiff_t>(image) * g.o + oc) * out_plane : nullptr;
      finish_segment(plane, plane, static_cast<int>(out_plane), e->bias ? e->bias[oc] : 0.f, res, *e);
    }
  }
}

/// The kernel a conv_transpose2d step runs, and why (`choose_conv_transpose_kernel`): a fused
/// composite's weights and a bound weight are packed at bind.
template <class Step>
constexpr conv_choice conv_transpose_choice() {
  return choose_conv_transpose_kernel(Step::op == op_id::call || Step::arg(1).op == op_id::weight);
}

/// conv_transpose2d steps, alone or fused with what follows (`cpu.conv_transpose2d_*`: a bias, a
/// batch norm folded into the weights and bias at bind, a residual add, an activation): weights
/// packed at bind when they are bound weights, at every run otherwise; the units split
/// statically across threads, each finishing its planes (`conv_transpose_units`).
template <class Step>
struct conv_transpose_kernel {
  static constexpr gemm_step info = analyse<Step>();
  static_assert(info.ok && info.main == op_id::conv_transpose2d,
                "partita: cpu: this composite (Step) is not one the cpu backend fuses");
  static constexpr bool fused = Step::op == op_id::call;
  static constexpr const graph_node& main = fused ? Step::body(info.main_node) : Step::node;
  static constexpr shape x_shape = fused ? Step::body(Step::body_arg(info.main_node, 0)).out : Step::arg(0).out;
  static constexpr shape w_shape = fused ? Step::body(Step::body_arg(info.main_node, 1)).out : Step::arg(1).out;
  static constexpr conv_transpose_geometry geo = make_conv_transpose_geometry(x_shape, w_shape, main.out, *main.at);
  static constexpr conv_choice choice = conv_transpose_choice<Step>();
  static constexpr bool constant_weight = choice.kernel == conv_kernel_id::transpose_packed;
  static constexpr bool has_bias = info.bias >= 0 || info.gamma >= 0;
  static constexpr bool has_epilogue = has_bias || info.residual >= 0 || info.act != activation::none;
  static constexpr bool packs_weights = constant_weight && Step::arg(info.x).op != op_id::weight &&
                                        (info.residual < 0 || Step::arg(info.residual).op != op_id::weight);
  static constexpr std::size_t packed_floats = packed_conv_transpose_floats(geo);
  static constexpr std::size_t bias_floats = has_bias ? static_cast<std::size_t>(geo.o) : 0;

  // The weights (with a batch norm folded: w' = w · s, b' = (b - mean) · s + beta, s = gamma /
  // sqrt(var + eps), as the conv2d kernels fold it) and the bias after them.
  static void pack(float* dst, const float* const* in) {
    if constexpr (info.gamma >= 0) {
      std::vector<double> scale(static_cast<std::size_t>(geo.o));
      float* bias = dst + packed_floats;
      for (int o = 0; o < geo.o; ++o) {
        const double sc = static_cast<double>(in[info.gamma][o]) /
                          std::sqrt(static_cast<double>(in[info.var][o]) + static_cast<double>(info.epsilon));
        scale[static_cast<std::size_t>(o)] = sc;
        const double b = info.bias >= 0 ? in[info.bias][o] : 0.0;
        bias[o] = static_cast<float>((b - in[info.mean][o]) * sc + in[info.beta][o]);
      }
      pack_conv_transpose_weights(geo, in[info.w], dst, scale.data());
    } else {
      pack_conv_transpose_weights(geo, in[info.w], dst);
      if constexpr (info.bias >= 0) std::copy(in[info.bias], in[info.bias] + geo.o, dst + packed_floats);
    }
  }

  static void prepare(state& st, const float* const* in, int step) {
    float* dst = st.reserve(step, packed_floats + bias_floats);
    st.need_scratch(0, static_cast<std::size_t>(geo.cg) * conv_block::nr);
    if constexpr (constant_weight) {
      if (in[info.w]) pack(dst, in);
    }
  }

  static void run(state& st, const float* const* in, float* out, int step) {
    float* packed = st.packed(step);
    if constexpr (!constant_weight) pack(packed, in);
    epilogue e;
    e.bias = has_bias ? packed + packed_floats : nullptr;
    e.residual = info.residual >= 0 ? in[info.residual] : nullptr;
    e.act = info.act;
    e.lo = info.lo;
    e.hi = info.hi;
    constexpr int units = geo.batch * geo.groups * geo.units;
    constexpr double flops = 2.0 * geo.batch * geo.o * geo.cg * geo.kh * geo.kw * geo.h * geo.w;
    const int tasks = tasks_for(flops, st.workers(), units);
    st.parallel(tasks, [&](int t) {
      conv_transpose_units(geo, packed, in[info.x], out, units * t / tasks, units * (t + 1) / tasks, st.thread_scratch(t),
                           has_epilogue ? &e : nullptr);
    });
  }
};

}  // namespace partita::detail::cpu
