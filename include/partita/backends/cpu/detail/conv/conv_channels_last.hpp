#pragma once
/// cpu conv2d on channels-last (NHWC) images: the packing and row blocking their kernels share,
/// and a GEMM over positions split by output rows. (The depthwise kernel:
/// conv_depthwise_nhwc.hpp; a first layer's direct kernel: conv_nhwc_direct.hpp; the fused
/// expansion by rows: conv_expand_depthwise.hpp; which steps take NHWC: layout_roles.hpp.)
// Why channels-last. In NCHW a 1×1 convolution reads every channel plane of its positions and a
// depthwise one reads whole planes, so two steps in a row cannot both keep a core on the data
// it wrote: one splits by positions, the other by channels, and half of every input then comes
// from the other core's cache, at a fraction of the bandwidth of the core's own L2. In NHWC a range of output rows is one contiguous block for every step of a
// MobileNet-style chain, so each core reads back what it wrote (a depthwise layer's halo rows
// excepted), and a position's channels are the vector lanes: no plane is padded or copied.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "partita/backends/cpu/detail/conv/conv.hpp"
#include "partita/backends/cpu/detail/conv/conv_depthwise.hpp"
#include "partita/backends/cpu/detail/gemm/epilogue.hpp"
#include "partita/backends/cpu/detail/gemm/matmul.hpp"
#include "partita/backends/cpu/detail/state.hpp"

namespace partita::detail::cpu {

/// Row `t` of `tasks` even shares of `rows` rows: the same split for every step of one height,
/// so that a core reads back the rows it wrote at the step before.
constexpr int row_share(int rows, int t, int tasks) {
  return static_cast<int>(static_cast<std::int64_t>(rows) * t / tasks);
}

/// Channels rounded up to whole vectors: the row pitch of weights packed by `pack_nhwc_taps`.
constexpr int padded_channels(int c) { return (c + W - 1) / W * W; }

/// Floats of a convolution's weights packed by `pack_nhwc_taps`: [k][padded o].
constexpr std::size_t nhwc_taps_floats(const conv_geometry& g) {
  return static_cast<std::size_t>(g.k) * static_cast<std::size_t>(padded_channels(g.o));
}

/// Packs conv weights [o][k] (k = cg · kh · kw taps per output channel) tap-major, [k][padded
/// o], each tap's row padded to whole vectors with zeros: the output channels are the vector
/// lanes of the kernels that read them, `depthwise_nhwc_row` (k = kh · kw) and `direct_nhwc_row`
/// (k = c · kh · kw).
inline void pack_nhwc_taps(const conv_geometry& g, const float* w, float* dst) {
  const int pitch = padded_channels(g.o);
  std::fill(dst, dst + nhwc_taps_floats(g), 0.f);
  for (int o = 0; o < g.o; ++o)
    for (int k = 0; k < g.k; ++k)
      dst[static_cast<std::ptrdiff_t>(k) * pitch + o] = w[static_cast<std::ptrdiff_t>(o) * g.k + k];
}

/// The output columns [lo, hi) of a convolution whose taps all lie inside the image's columns;
/// the columns before and after them reach into the padding.
struct column_range {
  int lo = 0, hi = 0;
};
constexpr column_range interior_columns(const conv_geometry& g) {
  const int lo = std::min(g.ow, (g.pw + g.sw - 1) / g.sw);
  return {lo, std::max(lo, std::min(g.ow, (g.w - 1 - (g.kw - 1) * g.dw + g.pw) / g.sw + 1))};
}

/// Stores act(acc + residual) as the first `n` lanes at `y` (all of them when n = W); the
/// residual lies at the same place in its own image, or is null.
template <activation A>
inline void store_nhwc(vec acc, const float* residual, float* y, int n, float lo, float hi) {
  if (n >= W) {
    if (residual) acc = acc + simd::load(residual);
    simd::store(y, apply<A>(acc, lo, hi));
  } else {
    if (residual) acc = acc + simd::load_first(residual, n);
    simd::store_first(y, apply<A>(acc, lo, hi), n);
  }
}

/// How a row of output columns runs in blocks of `qb` positions (`depthwise_nhwc_row`,
/// `direct_nhwc_row`): [0, left) and [fixed_from, ow) as blocks at compile-time columns, which
/// reach into the padding (all of [0, ow) when no column is interior); [left, fixed_from) as
/// whole blocks at run-time columns, every tap inside the image.
struct row_blocks {
  int left = 0, fixed_from = 0;
};
constexpr row_blocks make_row_blocks(const conv_geometry& g, int qb) {
  const column_range cols = interior_columns(g);
  const int left = cols.lo >= cols.hi ? g.ow : std::min(g.ow, std::max(qb, cols.lo));
  const int clean = cols.hi >= left + qb ? (cols.hi - left) / qb : 0;
  return {left, left + clean * qb};
}

/// True when input column `col` lies inside the image's columns.
constexpr bool column_in_row(const conv_geometry& g, int col) { return col >= 0 && col < g.w; }

/// True when tap column j of output column q lies inside the image's columns.
constexpr bool tap_in_row(const conv_geometry& g, int q, int j) { return column_in_row(g, q * g.sw - g.pw + j * g.dw); }

/// True for the convolutions that run as a GEMM over NHWC positions: 1×1 of stride 1 without
/// padding, which read an NHWC input as A in place.
constexpr bool nhwc_reads_in_place(const conv_geometry& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0;
}

/// Such a 1×1 conv2d (one group) as a GEMM: [positions × c] by the weights [c × o]. `m` is the
/// image's positions (it chooses the micro-tile, as at packing).
constexpr matmul_geometry nhwc_gemm_geometry(const conv_geometry& g) {
  matmul_geometry m;
  m.m = g.oh * g.ow;
  m.n = g.o;
  m.k = g.c;
  return m;
}

/// An unpadded 1×1 conv2d of stride 1 (one group) on planar images as a batched GEMM of the
/// weights [o × c] (the same for every image) by each image [c × h·w].
constexpr matmul_geometry planar_pointwise_geometry(const conv_geometry& g) {
  matmul_geometry m;
  m.m = g.o;
  m.k = g.c;
  m.n = g.h * g.w;
  m.batch = g.batch;
  m.batch_rank = 1;
  m.dims[0] = g.batch;
  m.a_step[0] = 0;  // the weights, for every image
  m.b_step[0] = 1;
  m.b_matrices = g.batch;
  return m;
}

/// Positions of one block transposed out of an NCHW input: about 64 KB, whole micro-tiles.
constexpr int nhwc_block_rows(const conv_geometry& g) {
  const int mr = matmul_main_mr;
  return std::max(mr, 16384 / std::max(1, g.c) / mr * mr);
}

/// Per-thread scratch of `nhwc_conv_rows`: matmul's, and a transposed block unless the input is
/// NHWC (`nhwc_in`).
constexpr std::size_t nhwc_conv_scratch(const conv_geometry& g, bool nhwc_in) {
  const std::size_t block = nhwc_in ? 0 : static_cast<std::size_t>(nhwc_block_rows(g)) * static_cast<std::size_t>(g.c);
  return matmul_scratch_floats(nhwc_gemm_geometry(g)) + block;
}

/// Packs 1×1 conv weights [n][k] (output channels by input channels) as the B, [k × n], of
/// GEMM `m` over NHWC positions (`matmul_packed_b_floats(m)` floats at `dst`).
inline void pack_nhwc_conv(const matmul_geometry& m, const float* w, float* dst) {
  std::vector<float> b(static_cast<std::size_t>(m.k) * static_cast<std::size_t>(m.n), 0.f);
  for (int o = 0; o < m.n; ++o)
    for (int ci = 0; ci < m.k; ++ci)
      b[static_cast<std::size_t>(ci * m.n + o)] = w[static_cast<std::ptrdiff_t>(o) * m.k + ci];
  pack_matmul_b(m, b.data(), dst);
}

/// Positions [p0, p0 + rows) of an NCHW image of `c` channels as the GEMM's rows [rows × c] at
/// `dst`: a transpose, plane by plane (each read contiguously).
inline void nchw_positions(const float* x, int c, std::ptrdiff_t plane, int p0, int rows, float* dst) {
  for (int ci = 0; ci < c; ++ci) {
    const float* s = x + ci * plane + p0;
    for (int p = 0; p < rows; ++p) dst[static_cast<std::ptrdiff_t>(p) * c + ci] = s[p];
  }
}

/// Output rows [r0, r1) of one image of a 1×1 conv2d (stride 1, no padding, one group),
/// written NHWC: `x` is the image, NHWC when `nhwc_in` (read in place), else NCHW (copied a
/// block of positions at a time); `y` and the residual of `e` (NHWC, or null) start at
/// output row r0. `packed_b` is `pack_nhwc_conv`'s for `nhwc_gemm_geometry(g)`; `e` holds a
/// per-column (per output channel) bias and the activation. `scratch` holds
/// `nhwc_conv_scratch(g, nhwc_in)` floats.
template <int MR, int NV>
inline void nhwc_conv_rows(const conv_geometry& g, const float* x, bool nhwc_in, const float* packed_b, float* y,
                           const epilogue& e, int r0, int r1, float* scratch) {
  const matmul_geometry full = nhwc_gemm_geometry(g);
  const int panels = (full.n + NV * W - 1) / (NV * W);
  const int block = nhwc_in ? (r1 - r0) * g.ow : nhwc_block_rows(g);
  float* transposed = scratch + matmul_scratch_floats(full);
  for (int p0 = r0 * g.ow, end = r1 * g.ow; p0 < end; p0 += block) {
    matmul_geometry part = full;
    part.m = std::min(block, end - p0);
    part.ldc = g.o;
    const float* a = transposed;
    if (nhwc_in) {
      a = x + static_cast<std::ptrdiff_t>(p0) * g.c;
      part.lda = g.c;
    } else {
      nchw_positions(x, g.c, static_cast<std::ptrdiff_t>(g.h) * g.w, p0, part.m, transposed);
    }
    const std::ptrdiff_t done = static_cast<std::ptrdiff_t>(p0 - r0 * g.ow) * g.o;
    epilogue ep = e;
    if (e.residual) ep.residual = e.residual + done;
    ep.ld_residual = g.o;
    const matmul_rows rows = matmul_rows_for(part.m, MR, MR == matmul_main_mr);
    matmul_block<MR, NV>(part, rows, a, nullptr, packed_b, y + done, 0, rows.blocks(), 0, panels, scratch, &ep);
  }
}

/// Copies channels [c0, c1) of one NHWC image into the zero-padded phase planes that the planar
/// kernels read (`conv_copy_input` for a planar image), so that a convolution the NHWC kernels
/// do not take reads an NHWC input with the copy it makes anyway: the positions of one input
/// row that land in one phase plane are a strided load per channel, stored as a plane's row.
inline void conv_copy_input_nhwc(const conv_geometry& g, const float* x, float* buf, int c0, int c1) {
  const std::ptrdiff_t plane = static_cast<std::ptrdiff_t>(g.hq) * g.wq;
  const std::uint32_t phases_read = g.used_phases;
  const auto used = [phases_read](int p) { return p >= 32 || (phases_read >> p & 1u); };
  const std::ptrdiff_t c = g.c, stride = static_cast<std::ptrdiff_t>(g.sw) * c;
  std::fill(buf + static_cast<std::size_t>(c0) * g.plane_set, buf + static_cast<std::size_t>(c1) * g.plane_set, 0.f);
  for (int ih = 0; ih < g.h; ++ih) {
    const int a = (ih + g.ph) % g.sh, i = (ih + g.ph) / g.sh;
    for (int b = 0; b < g.sw; ++b) {
      if (!used(a * g.sw + b)) continue;  // no tap reads this phase (1×1 stride 2)
      const int iw0 = ((b - g.pw) % g.sw + g.sw) % g.sw;  // the row's first column in phase b
      if (iw0 >= g.w) continue;
      const int count = (g.w - 1 - iw0) / g.sw + 1, j0 = (iw0 + g.pw) / g.sw;
      float* d = buf + static_cast<std::ptrdiff_t>(a * g.sw + b) * plane + static_cast<std::ptrdiff_t>(i) * g.wq + j0;
      const float* s = x + (static_cast<std::ptrdiff_t>(ih) * g.w + iw0) * c;
      for (int ci = c0; ci < c1; ++ci)
        for (int q = 0; q < count; q += W) {
          const int k = std::min(W, count - q);
          simd::store_first(d + static_cast<std::ptrdiff_t>(ci) * static_cast<std::ptrdiff_t>(g.plane_set) + q,
                            simd::load_strided(s + q * stride + ci, stride, k), k);
        }
    }
  }
}

/// Writes `np` positions of NHWC values `s` ([np][c]) to a planar output `y` (channel ci at
/// y + ci · n) as act(value + residual), the residual planar like `y` or null. Each channel of
/// a block of positions is one strided load (a gather) and one store of whole channel rows.
template <activation A>
inline void nhwc_to_planar(const float* s, int c, std::ptrdiff_t np, std::ptrdiff_t n, const float* residual, float lo,
                           float hi, float* y) {
  for (std::ptrdiff_t p = 0; p < np; p += W) {
    const int k = static_cast<int>(std::min<std::ptrdiff_t>(W, np - p));
    for (int ci = 0; ci < c; ++ci) {
      const std::ptrdiff_t at = ci * n + p;
      store_nhwc<A>(simd::load_strided(s + p * c + ci, c, k), residual ? residual + at : nullptr, y + at, k, lo, hi);
    }
  }
}

/// Means of each channel of NHWC images [batch][area][c] into out [batch][c], channel vectors
/// [v0, v1) of each image.
inline void nhwc_channel_means(const float* x, float* out, std::int64_t batch, std::int64_t area, std::int64_t c,
                               std::int64_t v0, std::int64_t v1) {
  const vec count = simd::splat(static_cast<float>(area));
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t v = v0; v < v1; ++v) {
      const std::int64_t cv = v * W;
      const int n = static_cast<int>(std::min<std::int64_t>(W, c - cv));
      const float* xb = x + b * area * c + cv;
      vec s0 = simd::splat(0.f), s1 = s0;
      std::int64_t p = 0;
      for (; p + 1 < area; p += 2) {
        s0 = s0 + (n == W ? simd::load(xb + p * c) : simd::load_first(xb + p * c, n));
        s1 = s1 + (n == W ? simd::load(xb + (p + 1) * c) : simd::load_first(xb + (p + 1) * c, n));
      }
      if (p < area) s0 = s0 + (n == W ? simd::load(xb + p * c) : simd::load_first(xb + p * c, n));
      const vec m = (s0 + s1) / count;
      if (n == W) simd::store(out + b * c + cv, m);
      else simd::store_first(out + b * c + cv, m, n);
    }
}

}  // namespace partita::detail::cpu
