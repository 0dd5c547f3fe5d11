#pragma once
/// cpu matmul's geometry (numpy broadcasting of the batch dims) and its operand packing.
// The shapes of one batched matmul C[b] = op(A[b']) · op(B[b'']) reduced to what the GEMM loops
// need, and the copies that put each operand in the form the micro-kernel reads: B in panels of
// NR columns ([k][NR], zero-padded), A either in place (rows) or, when transposed, in blocks of
// MR rows ([k][MR]).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "partita/backends/cpu/detail/gemm/gemm.hpp"
#include "partita/core/shape.hpp"

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace partita::detail::cpu {

inline constexpr int matmul_max_batch_rank = max_rank - 2;

/// One batched matmul: `batch` products of op(A) [m×k] by op(B) [k×n], each A and B matrix
/// contiguous and row-major as stored (transposed: A stored [k×m], B stored [n×k]). Output batch
/// index i, written in the output batch `dims`, reads A matrix Σ idx·a_step and B matrix
/// Σ idx·b_step (a step of 0 broadcasts).
struct matmul_geometry {
  int m = 0, n = 0, k = 0;
  bool ta = false, tb = false;
  int batch = 1;
  int batch_rank = 0;
  std::array<int, matmul_max_batch_rank> dims{};
  std::array<std::int64_t, matmul_max_batch_rank> a_step{}, b_step{};
  int b_matrices = 1;  // matrices B holds (packed at bind when it is a weight)
  bool ok = true;      // the shapes agree (k, broadcastable batch dims)
  // Row strides of A, B and C where a product reads or writes its matrices in place inside a
  // larger tensor (attention's heads are columns of one projection); 0: rows back to back.
  std::int64_t lda = 0, ldb = 0, ldc = 0;

  constexpr void operands(int i, std::int64_t& am, std::int64_t& bm) const {
    am = 0;
    bm = 0;
    for (int d = batch_rank - 1; d >= 0; --d) {
      const int at = i % dims[static_cast<std::size_t>(d)];
      i /= dims[static_cast<std::size_t>(d)];
      am += at * a_step[static_cast<std::size_t>(d)];
      bm += at * b_step[static_cast<std::size_t>(d)];
    }
  }
};

/// The geometry of matmul(a, b) with numpy semantics: the last two dims are the matrix, the
/// others broadcast from the back. When B is the same matrix for every batch and A is read in
/// place, the batch folds into A's rows (one GEMM of batch·m rows).
constexpr matmul_geometry make_matmul_geometry(const shape& a, const shape& b, bool ta, bool tb) {
  matmul_geometry g;
  g.ta = ta;
  g.tb = tb;
  if (a.rank < 2 || b.rank < 2) {
    g.ok = false;
    return g;
  }
  g.m = static_cast<int>(ta ? a.back(0) : a.back(1));
  g.k = static_cast<int>(ta ? a.back(1) : a.back(0));
  g.n = static_cast<int>(tb ? b.back(1) : b.back(0));
  g.ok = (tb ? b.back(0) : b.back(1)) == g.k;
  const int r = std::max(a.rank, b.rank) - 2;
  g.batch_rank = r;
  std::int64_t am = 1, bm = 1, batch = 1;
  for (int i = r - 1; i >= 0; --i) {
    const int ia = a.rank - 2 - r + i, ib = b.rank - 2 - r + i;
    const std::int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) g.ok = false;
    const std::size_t at = static_cast<std::size_t>(i);
    g.dims[at] = static_cast<int>(std::max(da, db));
    g.a_step[at] = da == 1 ? 0 : am;
    g.b_step[at] = db == 1 ? 0 : bm;
    am *= da;
    bm *= db;
    batch *= g.dims[at];
  }
  g.batch = static_cast<int>(batch);
  g.b_matrices = static_cast<int>(bm);
  if (batch > 1 && bm == 1 && am == batch && !ta) {
    g.m *= g.batch;
    g.batch = 1;
    g.batch_rank = 0;
  }
  return g;
}

/// The micro-tile: MR rows by NV vectors. The conv blocking (6 × 2 vectors with 16 registers,
/// 8 × 2 with 32) for most; a few rows get fewer rows and, with one or two, more vectors so that
/// the FMAs still have independent accumulators.
struct matmul_tile {
  int mr = 1, nv = 1;
};
inline constexpr int matmul_main_mr = W >= 16 ? 8 : 6;

constexpr matmul_tile matmul_tile_for(int m) {
  if (m <= 2) return {m < 1 ? 1 : m, 4};
  if (m <= 4) return {4, 2};
  return {matmul_main_mr, 2};
}

/// Depth of one pass: at most 256 (a B micro-panel of 16 KB with 16 columns stays in L1), the
/// passes of equal depth.
constexpr int matmul_kc(int k) {
  const int passes = (k + 255) / 256;
  return passes < 1 ? 1 : (k + passes - 1) / passes;
}
/// Row blocks whose A stays in L2 across the panels (144 rows of 6, 192 of 8), and panels whose
/// packed B is reused across those row blocks (256 KB at most with AVX2: it stays in L2 too;
/// more panels measured no faster).
inline constexpr int matmul_mc_blocks = 24;
inline constexpr int matmul_nc_panels = 16;

/// The row blocks of m rows: `whole` blocks of MR rows, then `shorter` blocks of MR - 1, so that
/// no row is padded (the rows of a micro-tile cost the same, shorter or not). Where m is too
/// small for that, the last of the whole blocks is partial.
struct matmul_rows {
  int mr = 1, whole = 0, shorter = 0;
  constexpr int blocks() const { return whole + shorter; }
  /// The first row of block i (past the end for i = blocks()).
  constexpr int row(int i) const { return i <= whole ? i * mr : whole * mr + (i - whole) * (mr - 1); }
};

constexpr matmul_rows matmul_rows_for(int m, int mr, bool mixed) {
  matmul_rows r;
  r.mr = mr;
  const int shorter = mixed && mr > 1 ? (mr - m % mr) % mr : 0;
  if (shorter > 0 && shorter * (mr - 1) <= m) {
    r.shorter = shorter;
    r.whole = (m - shorter * (mr - 1)) / mr;
  } else {
    r.whole = (m + mr - 1) / mr;
  }
  return r;
}

/// Floats of B packed for all its matrices (`prepare` of a weight B).
constexpr std::size_t matmul_packed_b_floats(const matmul_geometry& g) {
  const int nr = matmul_tile_for(g.m).nv * W;
  return static_cast<std::size_t>(g.b_matrices) * static_cast<std::size_t>((g.n + nr - 1) / nr) *
         static_cast<std::size_t>(g.k) * static_cast<std::size_t>(nr);
}

/// Floats of scratch one thread needs: a B buffer of kc × nc and an A block of mc × kc.
constexpr std::size_t matmul_scratch_floats(const matmul_geometry& g) {
  const matmul_tile t = matmul_tile_for(g.m);
  const int nr = t.nv * W, kc = matmul_kc(g.k);
  const int panels = std::min((g.n + nr - 1) / nr, matmul_nc_panels);
  const int blocks = std::min(matmul_rows_for(g.m, t.mr, t.mr == matmul_main_mr).blocks(), matmul_mc_blocks);
  return static_cast<std::size_t>(kc) * static_cast<std::size_t>(panels * nr + blocks * t.mr);
}

/// dst[k · ldd + j] = src[j · lds + k] for j, k < 8.
inline void transpose8(const float* src, std::ptrdiff_t lds, float* dst, std::ptrdiff_t ldd) {
#if defined(__AVX__)
  // xsimd 8.1 has no transpose, and its zip_lo/zip_hi stay within 128-bit lanes on AVX only:
  // the classic unpack/shuffle/permute sequence is spelled out here (with any AVX, AVX-512 too).
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * lds);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(dst + i * ldd, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * ldd, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
#else
  for (int k = 0; k < 8; ++k)
    for (int j = 0; j < 8; ++j) dst[k * ldd + j] = src[j * lds + k];
#endif
}

/// Columns [n0, n0 + nr) and depths [k0, k0 + kc) of op(B) into dst [kc][NR], zero past nr.
/// `b` is one B matrix as stored: [k][ldb] (ldb = n), or transposed [n][ldb] (ldb = k).
template <int NR>
inline void pack_b_panel(const float* b, std::ptrdiff_t ldb, bool tb, int k0, int kc, int n0, int nr, float* dst) {
  if (!tb) {
    const float* src = b + k0 * ldb + n0;
    if (nr == NR) {
      for (int k = 0; k < kc; ++k)
#pragma GCC unroll 8
        for (int v = 0; v < NR / W; ++v) simd::store(dst + k * NR + v * W, simd::load(src + k * ldb + v * W));
    } else {
      for (int k = 0; k < kc; ++k) {
        std::copy_n(src + k * ldb, nr, dst + k * NR);
        std::fill(dst + k * NR + nr, dst + (k + 1) * NR, 0.f);
      }
    }
    return;
  }
  // Transposed: row j of the stored matrix is column j of op(B). Blocks of 8 columns by 8
  // depths go through registers; the remaining depths and columns one by one.
  const float* src = b + n0 * ldb + k0;
  const int k8 = kc - kc % 8;
  int j = 0;
  for (; j + 8 <= nr; j += 8) {
    for (int k = 0; k < k8; k += 8) transpose8(src + j * ldb + k, ldb, dst + k * NR + j, NR);
    for (std::ptrdiff_t k = k8; k < kc; ++k)
      for (int jj = 0; jj < 8; ++jj) dst[k * NR + j + jj] = src[(j + jj) * ldb + k];
  }
  for (; j < nr; ++j)
    for (int k = 0; k < kc; ++k) dst[k * NR + j] = src[j * ldb + k];
  if (nr < NR)
    for (int k = 0; k < kc; ++k) std::fill(dst + k * NR + nr, dst + (k + 1) * NR, 0.f);
}

/// Columns [n0, n1) and depths [k0, k0 + kc) of op(B) into panels [panel][kc][NR]. Not
/// transposed, row by row: B is read in sequence, as the prefetchers like it.
template <int NR>
inline void pack_b_panels(const float* b, std::ptrdiff_t ldb, bool tb, int k0, int kc, int n0, int n1, float* dst) {
  const std::ptrdiff_t panel = static_cast<std::ptrdiff_t>(kc) * NR;
  if (tb || n1 - n0 <= NR) {
    for (int j = n0; j < n1; j += NR, dst += panel) pack_b_panel<NR>(b, ldb, tb, k0, kc, j, std::min(NR, n1 - j), dst);
    return;
  }
  const int whole = (n1 - n0) / NR;
  for (int k = 0; k < kc; ++k) {
    const float* src = b + (k0 + k) * ldb + n0;
    float* d = dst + k * NR;
    for (int p = 0; p < whole; ++p, src += NR, d += panel)
#pragma GCC unroll 8
      for (int v = 0; v < NR / W; ++v) simd::store(d + v * W, simd::load(src + v * W));
  }
  const int j = n0 + whole * NR;
  if (j < n1) pack_b_panel<NR>(b, ldb, tb, k0, kc, j, n1 - j, dst + whole * panel);
}

/// Rows [m0, m1) and depths [k0, k0 + kc) of a transposed A (stored [k][lda], lda = m) into
/// blocks of MR rows, [block][kc][MR], zero past m1.
template <int MR>
inline void pack_a_transposed(const float* a, std::ptrdiff_t lda, int k0, int kc, int m0, int m1, float* dst) {
  for (int i0 = m0; i0 < m1; i0 += MR, dst += kc * MR) {
    const int mr = std::min(MR, m1 - i0);
    const float* src = a + k0 * lda + i0;
    if (mr == MR) {
      for (int k = 0; k < kc; ++k) std::memcpy(dst + k * MR, src + k * lda, sizeof(float) * MR);
    } else {
      for (int k = 0; k < kc; ++k) {
        std::copy_n(src + k * lda, mr, dst + k * MR);
        std::fill(dst + k * MR + mr, dst + (k + 1) * MR, 0.f);
      }
    }
  }
}

}  // namespace partita::detail::cpu
