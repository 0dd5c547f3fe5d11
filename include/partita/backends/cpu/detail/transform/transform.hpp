#pragma once
/// cpu data movement: transpose, slice, pad and gather as row copies and tiled transposes.
// Each op is planned at compile time from its shapes: axes of extent 1 dropped, neighbouring
// axes that stay neighbours merged, so that the kernels copy the longest contiguous runs there
// are (a [B, S, H, D] -> [B, H, S, D] transpose is a copy of D floats per row). The kernels take
// a range of rows (or tiles) so that the caller splits them across threads.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "partita/backends/cpu/detail/elementwise/eltwise.hpp"
#include "partita/backends/cpu/detail/simd/simd.hpp"
#include "partita/backends/reference/tensor_kernels.hpp"
#include "partita/core/dtype.hpp"
#include "partita/core/shape.hpp"
#include "partita/ir/ops/slicing.hpp"

namespace partita::detail::cpu {

using simd::vec;

/// Rows of `row` contiguous floats moved between strided places: row r's source is `base` plus,
/// for each level, its index times the level's stride `st`, its destination the index times
/// `dst` (levels outermost first, walked row-major). With `row` 1 the last level is copied as a
/// strided run instead (its `dst` is 1).
struct row_copy_plan {
  int levels = 0;
  std::array<std::int64_t, max_rank> ext{}, st{}, dst{};
  std::int64_t row = 1, base = 0;
  constexpr std::int64_t rows() const {
    std::int64_t n = 1;
    for (int l = 0; l < levels; ++l) n *= ext[static_cast<std::size_t>(l)];
    return n;
  }
};

/// Builds a `row_copy_plan` whose destination is contiguous in level order, from the innermost
/// level outwards: `add` merges a level into the row or into the level added before when the
/// source is contiguous there; `finish` puts the levels outermost first.
struct row_copy_builder {
  row_copy_plan p;
  std::int64_t dst = 1;  // the destination stride of the next level
  constexpr void add(std::int64_t ext, std::int64_t st) {
    if (ext == 1) return;
    if (p.levels == 0 && st == p.row) {
      p.row *= ext;
      dst *= ext;
      return;
    }
    if (p.levels > 0) {
      const auto u = static_cast<std::size_t>(p.levels - 1);
      if (st == p.st[u] * p.ext[u]) {
        p.ext[u] *= ext;
        dst *= ext;
        return;
      }
    }
    p.ext[static_cast<std::size_t>(p.levels)] = ext;
    p.st[static_cast<std::size_t>(p.levels)] = st;
    p.dst[static_cast<std::size_t>(p.levels++)] = dst;
    dst *= ext;
  }
  constexpr row_copy_plan finish() {
    std::reverse(p.ext.begin(), p.ext.begin() + p.levels);
    std::reverse(p.st.begin(), p.st.begin() + p.levels);
    std::reverse(p.dst.begin(), p.dst.begin() + p.levels);
    return p;
  }
};

/// The units `copy_rows` splits on: rows, or with `row` 1 runs of the last level.
inline std::int64_t copy_units(const row_copy_plan& p) {
  return p.row == 1 && p.levels > 0 ? p.rows() / p.ext[static_cast<std::size_t>(p.levels - 1)] : p.rows();
}

/// Copies units [u0, u1) of plan `p` from x into their places in y.
inline void copy_rows(const row_copy_plan& p, const float* x, float* y, std::int64_t u0, std::int64_t u1) {
  const bool strided = p.row == 1 && p.levels > 0;
  const int levels = strided ? p.levels - 1 : p.levels;
  const std::int64_t len = strided ? p.ext[static_cast<std::size_t>(levels)] : p.row;
  const std::int64_t step = strided ? p.st[static_cast<std::size_t>(levels)] : 1;
  std::array<std::int64_t, max_rank> idx{};
  std::int64_t src = p.base, dst = 0, q = u0;
  for (int l = levels - 1; l >= 0; --l) {
    const auto u = static_cast<std::size_t>(l);
    idx[u] = q % p.ext[u];
    q /= p.ext[u];
    src += idx[u] * p.st[u];
    dst += idx[u] * p.dst[u];
  }
  // Runs along the last level in a tight loop; the odometer moves once per run.
  const int last = levels - 1;
  const auto lu = static_cast<std::size_t>(last < 0 ? 0 : last);
  const std::int64_t last_ext = last >= 0 ? p.ext[lu] : u1 - u0;
  const std::int64_t last_st = last >= 0 ? p.st[lu] : 0, last_dst = last >= 0 ? p.dst[lu] : 0;
  for (std::int64_t r = u0; r < u1;) {
    const std::int64_t run = std::min(u1 - r, last_ext - (last >= 0 ? idx[lu] : 0));
    const float* in = x + src;
    float* out = y + dst;
    // The rows of attention heads (32, 64, 128 floats) with the moves unrolled: no loop per row.
    const auto rows = [&](auto n) {
      for (std::int64_t k = 0; k < run; ++k, out += last_dst, in += last_st) copy_floats(out, in, n);
    };
    if (strided) {
      for (std::int64_t k = 0; k < run; ++k, out += last_dst, in += last_st)
        for (std::int64_t i = 0; i < len; ++i) out[i] = in[i * step];
    } else if (len == 64) {
      rows(std::integral_constant<std::int64_t, 64>{});
    } else if (len == 32) {
      rows(std::integral_constant<std::int64_t, 32>{});
    } else if (len == 128) {
      rows(std::integral_constant<std::int64_t, 128>{});
    } else {
      rows(len);
    }
    r += run;
    if (last < 0) break;
    src += run * last_st;
    dst += run * last_dst;
    idx[lu] += run;
    for (int l = last; l >= 0 && idx[static_cast<std::size_t>(l)] == p.ext[static_cast<std::size_t>(l)]; --l) {
      const auto u = static_cast<std::size_t>(l);
      src -= p.st[u] * p.ext[u];
      dst -= p.dst[u] * p.ext[u];
      idx[u] = 0;
      if (l > 0) {
        src += p.st[u - 1];
        dst += p.dst[u - 1];
        ++idx[u - 1];
      }
    }
  }
}

/// slice along `axis`: runs of the axes after it, one per selected index, or one run per outer
/// index when the step is 1.
constexpr row_copy_plan plan_slice(const shape& xs, int axis, std::int64_t begin, std::int64_t end, std::int64_t step) {
  const slice_range r = slice_bounds(xs[axis], begin, end, step);
  row_copy_builder b;
  std::int64_t st = 1;
  for (int d = xs.rank - 1; d >= 0; --d) {
    b.add(d == axis ? r.count : xs[d], d == axis ? st * r.step : st);
    st *= xs[d];
  }
  std::int64_t inner = 1;
  for (int d = axis + 1; d < xs.rank; ++d) inner *= xs[d];
  b.p.base = r.start * inner;
  return b.finish();
}

/// A transpose that is no row copy: the output's innermost axis B is strided in the input, the
/// input's innermost axis A lands at output stride `out_a`. Tiles of A × B for every index of the
/// other (batch) axes.
struct tile_plan {
  int levels = 0;
  std::array<std::int64_t, max_rank> ext{}, in_st{}, out_st{};
  std::int64_t a = 1, b = 1, in_b = 1, out_a = 1;
  constexpr std::int64_t batch() const {
    std::int64_t n = 1;
    for (int l = 0; l < levels; ++l) n *= ext[static_cast<std::size_t>(l)];
    return n;
  }
};
inline constexpr std::int64_t transpose_tile = 16;

struct transpose_plan {
  bool rows = true;  // a row copy (`copy`), else tiles (`tiles`)
  row_copy_plan copy{};
  tile_plan tiles{};
};

constexpr transpose_plan plan_transpose(const shape& xs, const std::array<int, max_rank>& perm) {
  std::array<std::int64_t, max_rank> xst{};
  for (std::int64_t st = 1, d = xs.rank - 1; d >= 0; --d) {
    xst[static_cast<std::size_t>(d)] = st;
    st *= xs[static_cast<int>(d)];
  }
  // The output's axes (extent, input stride), extent-1 axes dropped, contiguous neighbours merged.
  std::array<std::int64_t, max_rank> ext{}, st{};
  int r = 0;
  for (int i = 0; i < xs.rank; ++i) {
    const int from = perm[static_cast<std::size_t>(i)];
    const std::int64_t e = xs[from], s = xst[static_cast<std::size_t>(from)];
    if (e == 1) continue;
    if (r > 0 && st[static_cast<std::size_t>(r - 1)] == s * e) {
      ext[static_cast<std::size_t>(r - 1)] *= e;
      st[static_cast<std::size_t>(r - 1)] = s;
    } else {
      ext[static_cast<std::size_t>(r)] = e;
      st[static_cast<std::size_t>(r++)] = s;
    }
  }
  transpose_plan p;
  if (r == 0 || st[static_cast<std::size_t>(r - 1)] == 1) {
    row_copy_builder b;
    for (int i = r - 1; i >= 0; --i) b.add(ext[static_cast<std::size_t>(i)], st[static_cast<std::size_t>(i)]);
    p.copy = b.finish();
    return p;
  }
  p.rows = false;
  std::array<std::int64_t, max_rank> ost{};
  for (std::int64_t s = 1, i = r - 1; i >= 0; --i) {
    ost[static_cast<std::size_t>(i)] = s;
    s *= ext[static_cast<std::size_t>(i)];
  }
  tile_plan& t = p.tiles;
  t.b = ext[static_cast<std::size_t>(r - 1)];
  t.in_b = st[static_cast<std::size_t>(r - 1)];
  for (int i = 0; i < r - 1; ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (st[u] == 1) {
      t.a = ext[u];
      t.out_a = ost[u];
    } else {
      t.ext[static_cast<std::size_t>(t.levels)] = ext[u];
      t.in_st[static_cast<std::size_t>(t.levels)] = st[u];
      t.out_st[static_cast<std::size_t>(t.levels++)] = ost[u];
    }
  }
  return p;
}

/// depth_to_space and space_to_depth as the transposes of rank-6 views of NCHW x they are
/// (ONNX's definitions): DCR [N, B, B, C', H, W] by (0, 3, 4, 1, 5, 2), CRD [N, C', B, B, H, W]
/// by (0, 1, 4, 2, 5, 3), space_to_depth [N, C, H', B, W', B] by (0, 3, 5, 1, 2, 4).
struct block_transpose {
  shape view{};
  std::array<int, max_rank> perm{};
};
constexpr block_transpose plan_block_transpose(op_id op, const shape& xs, const attrs& a) {
  const std::int64_t n = xs[0], c = xs[1], h = xs[2], w = xs[3], b = a.block;
  if (op == op_id::space_to_depth) return {shape{6, {n, c, h / b, b, w / b, b}}, {0, 3, 5, 1, 2, 4}};
  if (a.depth_order == depth_to_space_mode::dcr) return {shape{6, {n, b, b, c / (b * b), h, w}}, {0, 3, 4, 1, 5, 2}};
  return {shape{6, {n, c / (b * b), b, b, h, w}}, {0, 1, 4, 2, 5, 3}};
}

/// Units [u0, u1) of a tiled transpose: unit u is rows [a0, a0 + tile) of A for batch index
/// u / ceil(a / tile).
inline void transpose_tiles(const tile_plan& p, const float* x, float* y, std::int64_t u0, std::int64_t u1) {
  constexpr std::int64_t tile = transpose_tile;
  const std::int64_t per_batch = (p.a + tile - 1) / tile;
  for (std::int64_t u = u0; u < u1; ++u) {
    std::int64_t q = u / per_batch, src = 0, dst = 0;
    for (int l = p.levels - 1; l >= 0; --l) {
      const auto v = static_cast<std::size_t>(l);
      src += (q % p.ext[v]) * p.in_st[v];
      dst += (q % p.ext[v]) * p.out_st[v];
      q /= p.ext[v];
    }
    const std::int64_t a0 = (u % per_batch) * tile, a1 = std::min(p.a, a0 + tile);
    for (std::int64_t b0 = 0; b0 < p.b; b0 += tile) {
      const std::int64_t b1 = std::min(p.b, b0 + tile);
      for (std::int64_t a = a0; a < a1; ++a) {
        const float* in = x + src + a;
        float* out = y + dst + a * p.out_a;
        for (std::int64_t b = b0; b < b1; ++b) out[b] = in[b * p.in_b];
      }
    }
  }
}

/// Constant padding: output rows over the axes up to the innermost padded one (p), each
/// `before`, then the input's row, then `after` fill values, or fill alone where an outer index
/// falls in the padding; the axes after p are unpadded and ride along as `inner`.
struct pad_plan {
  int levels = 0;  // axes before p
  std::array<std::int64_t, max_rank> out_ext{}, in_ext{}, before{}, in_st{};
  std::int64_t before_p = 0, in_p = 1, after_p = 0;  // along p, in floats (times inner)
  constexpr std::int64_t rows() const {
    std::int64_t n = 1;
    for (int l = 0; l < levels; ++l) n *= out_ext[static_cast<std::size_t>(l)];
    return n;
  }
};

constexpr pad_plan plan_pad(const shape& xs, const std::array<int, max_rank>& before,
                            const std::array<int, max_rank>& after) {
  int p = -1;
  for (int d = 0; d < xs.rank; ++d)
    if (before[static_cast<std::size_t>(d)] != 0 || after[static_cast<std::size_t>(d)] != 0) p = d;
  pad_plan r;
  std::int64_t inner = 1;
  for (int d = p + 1; d < xs.rank; ++d) inner *= xs[d];
  if (p < 0) {
    r.in_p = inner;
    return r;
  }
  r.levels = p;
  std::int64_t st = inner * xs[p];
  for (int d = p - 1; d >= 0; --d) {
    const auto u = static_cast<std::size_t>(d);
    r.in_ext[u] = xs[d];
    r.before[u] = before[u];
    r.out_ext[u] = xs[d] + before[u] + after[u];
    r.in_st[u] = st;
    st *= xs[d];
  }
  r.before_p = before[static_cast<std::size_t>(p)] * inner;
  r.in_p = xs[p] * inner;
  r.after_p = after[static_cast<std::size_t>(p)] * inner;
  return r;
}

/// Output rows [r0, r1) of a constant pad. The output index walks as an odometer: no division
/// per row.
inline void pad_rows(const pad_plan& p, const float* x, float* y, float value, std::int64_t r0, std::int64_t r1) {
  const std::int64_t len = p.before_p + p.in_p + p.after_p;
  std::array<std::int64_t, max_rank> idx{};
  for (std::int64_t q = r0, l = p.levels - 1; l >= 0; --l) {
    const auto u = static_cast<std::size_t>(l);
    idx[u] = q % p.out_ext[u];
    q /= p.out_ext[u];
  }
  float* out = y + r0 * len;
  for (std::int64_t r = r0; r < r1; ++r, out += len) {
    std::int64_t src = 0;
    bool inside = true;
    for (int l = 0; l < p.levels; ++l) {
      const auto u = static_cast<std::size_t>(l);
      const std::int64_t i = idx[u] - p.before[u];
      inside = inside && i >= 0 && i < p.in_ext[u];
      src += i * p.in_st[u];
    }
    if (!inside) {
      fill_floats(out, len, value);
    } else if (len >= simd::width && (p.before_p < simd::width || p.after_p < simd::width)) {
      // Narrow borders: the row filled by whole vectors, then the input row over it.
      fill_floats(out, len, value);
      copy_floats(out + p.before_p, x + src, p.in_p);
    } else {
      fill_floats(out, p.before_p, value);
      copy_floats(out + p.before_p, x + src, p.in_p);
      fill_floats(out + p.before_p + p.in_p, p.after_p, value);
    }
    for (int l = p.levels - 1; l >= 0; --l) {
      const auto u = static_cast<std::size_t>(l);
      if (++idx[u] < p.out_ext[u]) break;
      idx[u] = 0;
    }
  }
}

/// Gather rows [r0, r1) of `inner` floats: row r is table row (r / n) · extent + index[r % n].
/// The indices were checked (`reference_kernels::checked_index`) before.
inline void gather_rows(const float* table, const void* indices, dtype type, std::int64_t n, std::int64_t extent,
                        std::int64_t inner, float* y, std::int64_t r0, std::int64_t r1) {
  std::int64_t o = r0 / n, i = r0 % n;
  for (std::int64_t r = r0; r < r1; ++r) {
    std::int64_t v = reference_kernels::read_index(indices, type, i);
    if (v < 0) v += extent;
    const float* src = table + (o * extent + v) * inner;
    if (inner == 1) y[r] = *src;
    else copy_floats(y + r * inner, src, inner);
    if (++i == n) {
      i = 0;
      ++o;
    }
  }
}

}  // namespace partita::detail::cpu
