#pragma once
/// The int8 kernels' GEMM core: 16-bit operands with their zero points taken out, exact int32 sums.
// C[m, n] = requantize(bias + Σ_k A[m, k] · B[k, n]) with A and B the quantized values minus
// their zero points, stored as int16 (each in [-255, 255]) with consecutive depths paired:
// - A as int32 words, each the pair (A[m, 2p], A[m, 2p + 1]) (low half, high half): either
//   packed in blocks of `qgemm_mr` rows, word (p, m) at `a[p · qgemm_mr + m]` (weights, at bind),
//   or rows of `lda` words, `a[m · lda + p]` (activations, at run time);
// - B in panels of `qgemm_nr` columns, int16 element (p, j, i) at `b[(p · qgemm_nr + j) · 2 + i]`
//   for depth 2p + i, column j (zero past the depth and past the last column).
// With AVX2 a step multiplies a broadcast A pair by two B vectors with `vpmaddwd`, which adds
// the two products of each pair into an int32 lane: exact, since no product pair comes near
// int32's range (unlike `vpmaddubsw` on bytes, which saturates at int16). A sum stays exact for
// depths below 33025 (33025 · 255² < 2^31). Without AVX2 (or with PARTITA_INT8_PORTABLE) the
// same loops in scalar code, which the compiler may vectorize; the packing is the same.
// AVX-512 (VNNI's `vpdpwssd` fusing the multiply and the add) would go beside the AVX2 kernel,
// with panels of 32 or 48 columns; it is not written, there being no machine here to check it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "partita/backends/cpu/detail/int8/requantize.hpp"
#include "partita/backends/cpu/detail/state.hpp"

namespace partita::detail::cpu::int8 {

/// Rows of an A block (the micro-kernel's rows), vectors and columns of a B panel. Every shape
/// runs one vpmaddwd per 16 multiply-adds; 4 × 2 vectors keeps the eight sums, the two B vectors
/// and the broadcasts in AVX2's sixteen registers (4 × 3 made the compiler keep sums on the stack).
inline constexpr int qgemm_mr = 4;
inline constexpr int qgemm_nv = 2;
inline constexpr int qgemm_nr = qgemm_nv * 8;

/// Depth pairs for a depth of `k`.
constexpr int pairs_of(int k) { return (k + 1) / 2; }

/// Rounds `bytes` up to a multiple of 64 (the offsets of a packed blob's parts).
constexpr std::size_t align64(std::size_t bytes) { return (bytes + 63) / 64 * 64; }

/// Floats of scratch (`state::need_scratch` counts floats) for `bytes` bytes.
constexpr std::size_t scratch_floats(std::size_t bytes) { return (bytes + sizeof(float) - 1) / sizeof(float); }

/// f(t, u0, u1) on ranges of [0, units) over the threads, `t` the task (whose scratch is
/// `st.thread_scratch(t)`), when the work (units · unit_cost, in the flops of `tasks_for`) pays
/// for them; else f(0, 0, units) on the calling thread.
template <class F>
inline void split_tasks(state& st, std::int64_t units, double unit_cost, F&& f) {
  const int most = static_cast<int>(std::min<std::int64_t>(units, 1 << 20));
  const int tasks = tasks_for(unit_cost * static_cast<double>(units), st.workers(), most);
  if (tasks <= 1) {
    f(0, std::int64_t{0}, units);
    return;
  }
  st.parallel(tasks, [&](int t) { f(t, units * t / tasks, units * (t + 1) / tasks); });
}

/// Calls `f(T{})` with T the C++ type of an 8-bit quantized type (u8: std::uint8_t, otherwise
/// std::int8_t).
template <class F>
inline decltype(auto) with_byte_type(dtype t, F&& f) {
  if (t == dtype::u8) return f(std::uint8_t{});
  return f(std::int8_t{});
}

/// The scales and zero points of a layer with constant weights (conv2d, dense): `w_count` of
/// each for the weights (1, or one per output channel), its dequantized float bias (one per
/// output, or null) and the float bounds of a fused activation (none: -inf, +inf; relu: 0,
/// +inf; clip(a, b): a, b).
struct qlayer_params {
  float x_scale;
  std::int32_t x_zp;
  const float* w_scale;
  const std::int32_t* w_zp;
  int w_count;
  float y_scale;
  std::int32_t y_zp;
  const float* bias;
  float act_lo, act_hi;
};

/// What a layer's run reads from the head of its packed blob: the requantization's bounds and
/// zero point, and the input's zero point.
struct qlayer_header {
  requant r;
  std::int32_t x_zp;
};

/// At bind: clears a layer's packed blob (`total` bytes) and fills its header (at its start)
/// and its `outputs` integer biases and multipliers (at `bias_at` and `mult_at` bytes).
inline void prepare_outputs(const qlayer_params& p, dtype y_type, int outputs, void* packed, std::size_t total,
                            std::size_t bias_at, std::size_t mult_at) {
  auto* base = static_cast<unsigned char*>(packed);
  std::memset(base, 0, total);
  auto* hd = reinterpret_cast<qlayer_header*>(base);
  auto* bias = reinterpret_cast<std::int32_t*>(base + bias_at);
  auto* mult = reinterpret_cast<float*>(base + mult_at);
  hd->r = make_requant(output_bounds(y_type, p.y_scale, p.y_zp, p.act_lo, p.act_hi), p.y_zp);
  hd->x_zp = p.x_zp;
  for (int j = 0; j < outputs; ++j) {
    const float w_scale = p.w_scale[p.w_count == 1 ? 0 : j];
    mult[j] = multiplier(p.x_scale, w_scale, p.y_scale);
    bias[j] = p.bias ? integer_bias(p.bias[j], p.x_scale, w_scale) : 0;
  }
}

/// Two depths' values as one A word: `lo` in the low half.
inline std::int32_t pair_word(std::int32_t lo, std::int32_t hi) {
  return static_cast<std::int32_t>((static_cast<std::uint32_t>(static_cast<std::uint16_t>(lo))) |
                                   (static_cast<std::uint32_t>(static_cast<std::uint16_t>(hi)) << 16));
}

/// What follows the sums of a tile: an integer bias (null: none) and a multiplier, each per row,
/// per column or one for all, and the requantization's bounds and zero point. Arrays per row
/// or per column are indexed by the tile's row or column in the whole output and must be
/// readable up to a whole block (`qgemm_mr` rows) or panel (`qgemm_nr` columns) past their end.
struct qepilogue {
  enum class along : std::uint8_t { row, column, all };
  const std::int32_t* bias = nullptr;
  along bias_along = along::row;
  const float* mult = nullptr;
  along mult_along = along::all;
  requant r{};
};

/// The epilogue of a layer's packed blob (`prepare_outputs`): its integer biases and
/// multipliers, one per row or per column of the output.
inline qepilogue layer_epilogue(const void* packed, std::size_t bias_at, std::size_t mult_at, qepilogue::along along) {
  const auto* base = static_cast<const unsigned char*>(packed);
  qepilogue e;
  e.bias = reinterpret_cast<const std::int32_t*>(base + bias_at);
  e.bias_along = along;
  e.mult = reinterpret_cast<const float*>(base + mult_at);
  e.mult_along = along;
  e.r = reinterpret_cast<const qlayer_header*>(base)->r;
  return e;
}

/// Packs rows of a weight matrix `src` (`rows` × `k`, row stride `ld`, minus zero point
/// `zp[row · zp_step]`) into blocks of `qgemm_mr` rows of A words (zero past the last row).
template <class T>
inline void pack_a_blocks(const T* src, std::ptrdiff_t ld, int rows, int k, const std::int32_t* zp, int zp_step,
                          std::int32_t* dst) {
  const int kp = pairs_of(k);
  for (int r0 = 0; r0 < rows; r0 += qgemm_mr, dst += static_cast<std::ptrdiff_t>(kp) * qgemm_mr)
    for (int m = 0; m < qgemm_mr; ++m) {
      const int r = r0 + m;
      for (int p = 0; p < kp; ++p) {
        std::int32_t lo = 0, hi = 0;
        if (r < rows) {
          const T* row = src + static_cast<std::ptrdiff_t>(r) * ld;
          const std::int32_t z = zp[r * zp_step];
          lo = row[2 * p] - z;
          if (2 * p + 1 < k) hi = row[2 * p + 1] - z;
        }
        dst[p * qgemm_mr + m] = pair_word(lo, hi);
      }
    }
}

/// Packs `rows` activation rows (`k` values each, row stride `ld`, minus zero point `zp`) as rows
/// of `pairs_of(k)` A words.
template <class T>
inline void pack_a_rows(const T* src, std::ptrdiff_t ld, int rows, int k, std::int32_t zp, std::int32_t* dst) {
  const int kp = pairs_of(k), even = k / 2;
  for (int r = 0; r < rows; ++r) {
    const T* row = src + static_cast<std::ptrdiff_t>(r) * ld;
    std::int32_t* d = dst + static_cast<std::ptrdiff_t>(r) * kp;
    for (int p = 0; p < even; ++p) d[p] = pair_word(row[2 * p] - zp, row[2 * p + 1] - zp);
    if (kp > even) d[even] = pair_word(row[k - 1] - zp, 0);
  }
}

/// Bytes of one B panel of depth `k`.
constexpr std::size_t panel_bytes(int k) {
  return static_cast<std::size_t>(pairs_of(k)) * qgemm_nr * 2 * sizeof(std::int16_t);
}

/// Packs columns [n0, n0 + nr) (nr ≤ `qgemm_nr`) of B[k, n] = src[k · sk + n · sn] minus zero
/// point `zp[n · zp_step]` into one panel.
template <class T>
inline void pack_b_panel(const T* src, std::ptrdiff_t sk, std::ptrdiff_t sn, int k, int n0, int nr,
                         const std::int32_t* zp, int zp_step, std::int16_t* dst) {
  std::memset(dst, 0, panel_bytes(k));
  for (int j = 0; j < nr; ++j) {
    const int n = n0 + j;
    const T* col = src + static_cast<std::ptrdiff_t>(n) * sn;
    const std::int32_t z = zp[n * zp_step];
    for (int kk = 0; kk < k; ++kk)
      dst[((kk / 2) * qgemm_nr + j) * 2 + (kk & 1)] = static_cast<std::int16_t>(col[kk * sk] - z);
  }
}

/// Packs columns [n0, n0 + nr) of a row-major B (row stride `ld`, one zero point): the rows are
/// read in order, two at a time (matmul's B and a 1×1 convolution's input planes).
template <class T>
inline void pack_b_panel_rows(const T* src, std::ptrdiff_t ld, int k, int n0, int nr, std::int32_t zp,
                              std::int16_t* dst) {
  const int kp = pairs_of(k);
  for (int p = 0; p < kp; ++p) {
    std::int16_t* d = dst + static_cast<std::ptrdiff_t>(p) * qgemm_nr * 2;
    const T* r0 = src + static_cast<std::ptrdiff_t>(2 * p) * ld + n0;
    const bool two = 2 * p + 1 < k;
    const T* r1 = two ? r0 + ld : r0;
    int j = 0;
    for (; j < nr; ++j) {
      d[2 * j] = static_cast<std::int16_t>(r0[j] - zp);
      d[2 * j + 1] = two ? static_cast<std::int16_t>(r1[j] - zp) : std::int16_t{0};
    }
    for (; j < qgemm_nr; ++j) d[2 * j] = d[2 * j + 1] = 0;
  }
}

/// Stores a tile's requantized values: rows below `mr`, columns below `nr`.
template <class T, int MR>
inline void store_tile(const std::int32_t (&q)[std::size_t{MR}][std::size_t{qgemm_nr}], T* c, std::ptrdiff_t ldc, int mr,
                       int nr) {
  for (int m = 0; m < mr; ++m)
    for (int j = 0; j < nr; ++j) c[m * ldc + j] = static_cast<T>(q[m][j]);
}

/// The tile at row `m0`, column `n0` of C (`mr` ≤ MR rows, `nr` ≤ `qgemm_nr` columns) over `kp`
/// depth pairs, requantized as `e` says and stored as T (u8 or i8). A packed in blocks
/// (APacked: `a` is the block) is read for all MR rows; A in rows only for the first `mr`, so
/// callers pass MR = mr there.
template <class T, int MR, bool APacked>
inline void qgemm_tile(int kp, const std::int32_t* __restrict a, std::ptrdiff_t lda, const std::int16_t* __restrict b,
                       T* __restrict c, std::ptrdiff_t ldc, int mr, int nr, const qepilogue& e, int m0, int n0) {
  using along = qepilogue::along;
#if PARTITA_INT8_AVX2
  __m256i acc[std::size_t{MR}][std::size_t{qgemm_nv}];
  for (int m = 0; m < MR; ++m)
    for (int v = 0; v < qgemm_nv; ++v) acc[m][v] = _mm256_setzero_si256();
  for (int p = 0; p < kp; ++p) {
    const std::int16_t* bp = b + static_cast<std::ptrdiff_t>(p) * qgemm_nr * 2;
    __m256i bv[std::size_t{qgemm_nv}];
    for (int v = 0; v < qgemm_nv; ++v) bv[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + v * 16));
    for (int m = 0; m < MR; ++m) {
      const __m256i av = _mm256_set1_epi32(APacked ? a[p * MR + m] : a[m * lda + p]);
      for (int v = 0; v < qgemm_nv; ++v) acc[m][v] = _mm256_add_epi32(acc[m][v], _mm256_madd_epi16(av, bv[v]));
    }
  }
  const __m256 lo = _mm256_set1_ps(e.r.lo), hi = _mm256_set1_ps(e.r.hi);
  const __m256i zp = _mm256_set1_epi32(e.r.zp);
  const bool whole = nr == qgemm_nr;
  alignas(32) std::int32_t q[std::size_t{MR}][std::size_t{qgemm_nr}];
  for (int m = 0; m < MR; ++m) {
    if (m >= mr) break;
    for (int v = 0; v < qgemm_nv; ++v) {
      __m256i s = acc[m][v];
      if (e.bias)
        s = _mm256_add_epi32(s, e.bias_along == along::row
                                    ? _mm256_set1_epi32(e.bias[m0 + m])
                                    : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(e.bias + n0 + v * 8)));
      const __m256 mv = e.mult_along == along::row    ? _mm256_set1_ps(e.mult[m0 + m])
                        : e.mult_along == along::all ? _mm256_set1_ps(e.mult[0])
                                                     : _mm256_loadu_ps(e.mult + n0 + v * 8);
      const __m256i r = requantize8(s, mv, lo, hi, zp);
      if (whole) _mm_storel_epi64(reinterpret_cast<__m128i*>(c + m * ldc + v * 8), narrow8<T>(r));
      else _mm256_store_si256(reinterpret_cast<__m256i*>(&q[m][v * 8]), r);
    }
  }
  if (!whole) store_tile<T, MR>(q, c, ldc, mr, nr);
#else
  std::int32_t acc[std::size_t{MR}][std::size_t{qgemm_nr}] = {};
  for (int p = 0; p < kp; ++p) {
    const std::int16_t* bp = b + static_cast<std::ptrdiff_t>(p) * qgemm_nr * 2;
    for (int m = 0; m < MR; ++m) {
      const std::int32_t w = APacked ? a[p * MR + m] : a[m * lda + p];
      const std::int32_t a0 = static_cast<std::int16_t>(static_cast<std::uint16_t>(w & 0xffff));
      const std::int32_t a1 = static_cast<std::int16_t>(static_cast<std::uint16_t>((w >> 16) & 0xffff));
      for (int j = 0; j < qgemm_nr; ++j) acc[m][j] += a0 * bp[2 * j] + a1 * bp[2 * j + 1];
    }
  }
  std::int32_t q[std::size_t{MR}][std::size_t{qgemm_nr}];
  for (int m = 0; m < MR && m < mr; ++m)
    for (int j = 0; j < nr; ++j) {
      std::int32_t s = acc[m][j];
      if (e.bias) s += e.bias_along == along::row ? e.bias[m0 + m] : e.bias[n0 + j];
      const float mv = e.mult_along == along::row ? e.mult[m0 + m] : e.mult_along == along::all ? e.mult[0] : e.mult[n0 + j];
      q[m][j] = requantize(s, mv, e.r);
    }
  store_tile<T, MR>(q, c, ldc, mr, nr);
#endif
}

/// C rows [m0, m0 + rows) by the `panels` panels of `b` from column `n0` on (`n` columns in
/// all), A in rows (`a` is row m0, `kp` words a row): tiles of up to `qgemm_mr` rows, each panel
/// read by every tile of rows while it is in cache.
template <class T>
inline void qgemm_rows(int kp, const std::int32_t* a, int rows, const std::int16_t* b, int panels, int n0, int n,
                       T* c, std::ptrdiff_t ldc, const qepilogue& e, int m0) {
  const std::ptrdiff_t panel_words = static_cast<std::ptrdiff_t>(kp) * qgemm_nr * 2;
  for (int pn = 0; pn < panels; ++pn) {
    const int col = n0 + pn * qgemm_nr;
    if (col >= n) break;
    const int nr = std::min(qgemm_nr, n - col);
    const std::int16_t* bp = b + pn * panel_words;
    for (int r = 0; r < rows; r += qgemm_mr) {
      const int mr = std::min(qgemm_mr, rows - r);
      const std::int32_t* ar = a + static_cast<std::ptrdiff_t>(r) * kp;
      T* cr = c + static_cast<std::ptrdiff_t>(r) * ldc + (col - n0);
      switch (mr) {
        case 4: qgemm_tile<T, 4, false>(kp, ar, kp, bp, cr, ldc, 4, nr, e, m0 + r, col); break;
        case 3: qgemm_tile<T, 3, false>(kp, ar, kp, bp, cr, ldc, 3, nr, e, m0 + r, col); break;
        case 2: qgemm_tile<T, 2, false>(kp, ar, kp, bp, cr, ldc, 2, nr, e, m0 + r, col); break;
        default: qgemm_tile<T, 1, false>(kp, ar, kp, bp, cr, ldc, 1, nr, e, m0 + r, col); break;
      }
    }
  }
}

/// C rows [m0, m0 + rows) by the `panels` panels of `b` from column `n0` on,
/// A packed in blocks (`a` is the block holding row m0, which starts a block).
template <class T>
inline void qgemm_blocks(int kp, const std::int32_t* a, int rows, const std::int16_t* b, int panels, int n0, int n,
                         T* c, std::ptrdiff_t ldc, const qepilogue& e, int m0) {
  const std::ptrdiff_t panel_words = static_cast<std::ptrdiff_t>(kp) * qgemm_nr * 2;
  const std::ptrdiff_t block_words = static_cast<std::ptrdiff_t>(kp) * qgemm_mr;
  for (int r = 0; r < rows; r += qgemm_mr) {
    const int mr = std::min(qgemm_mr, rows - r);
    const std::int32_t* ab = a + (r / qgemm_mr) * block_words;
    for (int pn = 0; pn < panels; ++pn) {
      const int col = n0 + pn * qgemm_nr;
      if (col >= n) break;
      qgemm_tile<T, qgemm_mr, true>(kp, ab, 0, b + pn * panel_words, c + static_cast<std::ptrdiff_t>(r) * ldc + (col - n0),
                                    ldc, mr, std::min(qgemm_nr, n - col), e, m0 + r, col);
    }
  }
}

}  // namespace partita::detail::cpu::int8
