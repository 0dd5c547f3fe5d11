#pragma once
/// cpu attention: softmax(Q·Kᵀ · scale + mask)·V as one kernel, and softmax of a scaled, masked
/// value as one pass.
// A step of the attention composite never writes its score matrices to memory: each task takes a
// block of query rows of one matrix, computes their scores into its scratch (rows × keys, at most
// 256 KB, so the block stays in L2), applies scale, mask and softmax there row by row while the
// row is in L1, and multiplies the probabilities by V straight into the output. Both products
// run the matmul kernel's loops on the calling thread; the units (matrix, row block) are split
// statically across the pool like every other step.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "partita/backends/cpu/detail/attention/attention_choice.hpp"
#include "partita/backends/cpu/detail/fused.hpp"
#include "partita/backends/cpu/detail/gemm/matmul.hpp"
#include "partita/backends/cpu/detail/norm/norm.hpp"
#include "partita/backends/cpu/detail/state.hpp"
#include "partita/backends/cpu/detail/transform/strided_view.hpp"
#include "partita/ir/module.hpp"

namespace partita::detail::cpu {

/// What a softmax composite computes, read off its body: [Q·op(K) →] x · scale (or x / scale)
/// → [+ mask] → softmax over the last axis [→ ·op(V)]. Input slots are -1 when absent.
struct softmax_step {
  bool ok = true;
  int x = -1;                   // the scores' input slot when there is no Q·K product
  int q = -1, k = -1, v = -1;   // the products' operands
  int scores = -1, out = -1;    // body indices of the two matmuls
  int scale = -1;               // one-element constant
  bool divide = false;
  int mask = -1, mask_node = -1;
  int softmax = -1;             // body index of the softmax
  int q_node = -1, k_node = -1, v_node = -1;  // body indices of the products' operands as read
  int out_transpose = -1;       // body index of a transpose of the result, written in place
};

/// The body node whose value a product's operand `node` reads in place: below the slices,
/// reshapes and transposes that lead to it (views the attention kernel reads with strides).
template <class S>
constexpr int view_base(int node) {
  while (is_strided_view_op(S::body(node).op)) node = S::body_arg(node, 0);
  return node;
}

/// Operand `node` of a product as a strided view of the kernel input it comes from.
template <class S>
constexpr strided_view operand_view(int node) {
  if (!is_strided_view_op(S::body(node).op)) return contiguous_view(S::body(node).out);
  const graph_node& n = S::body(node);
  return view_through(operand_view<S>(S::body_arg(node, 0)), n.op, *n.at, n.out);
}

template <class S>
constexpr softmax_step analyse_softmax() {
  softmax_step a;
  int chain = -1;  // body index of the value computed so far
  int views = 0;   // slices, reshapes and transposes of the products' operands
  const auto other = [](int i, int c) { return S::body_arg(i, 0) == c ? S::body_arg(i, 1) : S::body_arg(i, 0); };
  for (int i = 0; i < S::body_size(); ++i) {
    const graph_node& n = S::body(i);
    switch (n.op) {
      case op_id::param:
      case op_id::weight: break;
      case op_id::slice:
      case op_id::reshape:
        ++views;  // part of an operand's view
        break;
      case op_id::transpose:
        // The result's transpose (the body's last node), or part of an operand's view.
        if (a.out >= 0 && chain == a.out && S::body_arg(i, 0) == chain) {
          a.out_transpose = i;
          chain = i;
        } else {
          ++views;
        }
        break;
      case op_id::matmul:
        if (chain == -1) {
          a.scores = i;
          a.q_node = S::body_arg(i, 0);
          a.k_node = S::body_arg(i, 1);
          a.q = input_slot<S>(view_base<S>(a.q_node));
          a.k = input_slot<S>(view_base<S>(a.k_node));
        } else if (chain == a.softmax && a.softmax >= 0 && S::body_arg(i, 0) == chain) {
          a.out = i;
          a.v_node = S::body_arg(i, 1);
          a.v = input_slot<S>(view_base<S>(a.v_node));
        } else {
          a.ok = false;
        }
        chain = i;
        break;
      case op_id::multiply:
      case op_id::divide: {
        const bool first = chain == -1;
        const int c = first ? (S::body(S::body_arg(i, 1)).op == op_id::weight ? S::body_arg(i, 0) : S::body_arg(i, 1))
                            : chain;
        if (a.scale >= 0 || a.mask >= 0 || a.softmax >= 0 || (S::body_arg(i, 0) != c && S::body_arg(i, 1) != c))
          a.ok = false;
        if (n.op == op_id::divide && S::body_arg(i, 0) != c) a.ok = false;  // scale / x is not a scaling
        if (first) a.x = input_slot<S>(c);
        a.scale = input_slot<S>(other(i, c));
        a.divide = n.op == op_id::divide;
        chain = i;
        break;
      }
      case op_id::add: {
        const bool first = chain == -1;
        const int c = first ? S::body_arg(i, 0) : chain;
        if (a.mask >= 0 || a.softmax >= 0 || (S::body_arg(i, 0) != c && S::body_arg(i, 1) != c)) a.ok = false;
        if (first) a.x = input_slot<S>(c);
        a.mask = input_slot<S>(other(i, c));
        a.mask_node = other(i, c);
        chain = i;
        break;
      }
      case op_id::softmax:
        if (a.softmax >= 0) a.ok = false;
        if (chain == -1) a.x = input_slot<S>(S::body_arg(i, 0));
        else if (S::body_arg(i, 0) != chain) a.ok = false;
        a.softmax = i;
        chain = i;
        break;
      default: a.ok = false; break;
    }
  }
  if (a.softmax < 0 || chain != S::body_size() - 1 || (a.scores >= 0) != (a.out >= 0)) a.ok = false;
  if (a.scores < 0 && views > 0) a.ok = false;
  return a;
}

/// True for a composite step built around a softmax (the attention and scaled-softmax composites).
template <class S>
constexpr bool softmax_composite() {
  return body_has<S>(op_id::softmax);
}

/// The kernel a softmax composite step runs, and why (`choose_attention_kernel`).
template <class S>
constexpr attention_choice softmax_composite_choice() {
  return choose_attention_kernel(analyse_softmax<S>().scores >= 0);
}

/// Where row r of a [rows, len] view of `scores` reads its mask: the mask's offset for that row
/// (numpy broadcasting from the back; a broadcast axis steps by 0) and whether it holds one
/// value per element (step 1) or one for the whole row (step 0).
struct mask_rows {
  int rank = 0;  // leading axes of the scores (all but the last)
  std::array<std::int64_t, max_rank> dims{}, step{};
  int along = 0;

  constexpr mask_rows() = default;
  constexpr mask_rows(const shape& scores, const shape& mask) : rank(scores.rank - 1) {
    std::int64_t stride = mask.rank > 0 ? mask.back(0) : 1;
    along = mask.rank > 0 && mask.back(0) > 1 ? 1 : 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int m = mask.rank - scores.rank + d;  // the mask's axis aligned with d, if any
      const std::int64_t size = m >= 0 ? mask[m] : 1;
      dims[static_cast<std::size_t>(d)] = scores[d];
      step[static_cast<std::size_t>(d)] = size == 1 ? 0 : stride;
      stride *= size;
    }
  }
  constexpr std::int64_t offset(std::int64_t r) const {
    std::int64_t o = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const std::int64_t n = dims[static_cast<std::size_t>(d)];
      o += (r % n) * step[static_cast<std::size_t>(d)];
      r /= n;
    }
    return o;
  }
};

/// Scratch floats of one product of m rows (any m up to `rows`) for the matmul loops.
constexpr std::size_t product_scratch(int rows, int n, int k, bool tb) {
  std::size_t most = 0;
  for (int m : {1, 2, 4, rows}) {
    if (m > rows) continue;
    matmul_geometry g;
    g.m = m;
    g.n = n;
    g.k = k;
    g.tb = tb;
    most = std::max(most, matmul_scratch_floats(g));
  }
  return most;
}

/// The kernel of the scaled-softmax composite: softmax(x · scale + mask) over the last axis.
template <class Step>
struct softmax_scaled_kernel {
  static constexpr softmax_step info = analyse_softmax<Step>();
  static_assert(info.ok && info.scores < 0, "partita: cpu: this composite (Step) is not one the cpu backend fuses");
  static constexpr shape ys = Step::node.out;
  static constexpr std::int64_t len = ys.back(0), rows = ys.elements() / len;
  static constexpr mask_rows masks =
      info.mask >= 0 ? mask_rows(ys, Step::body(info.mask_node).out) : mask_rows();

  static void run(state& st, const float* const* in, float* out, int /*step*/) {
    const float scale = info.scale >= 0 ? in[info.scale][0] : 1.f;
    const float* mask = info.mask >= 0 ? in[info.mask] : nullptr;
    split_units(st, rows, (exp_cost + 2 * moved_cost) * static_cast<double>(len), [&](std::int64_t r0, std::int64_t r1) {
      for (std::int64_t r = r0; r < r1; ++r)
        softmax_scaled_row(in[info.x] + r * len, out + r * len, len, scale, info.divide,
                           mask ? mask + masks.offset(r) : nullptr, masks.along);
    });
  }
};

/// The kernel of the attention composite: softmax(Q·op(K) · scale + mask)·op(V) with Q, K, V
/// (and the output) of the same leading dims.
template <class Step>
struct attention_kernel {
  static constexpr softmax_step info = analyse_softmax<Step>();
  static_assert(info.ok && info.scores >= 0, "partita: cpu: this composite (Step) is not one the cpu backend fuses");
  static constexpr const graph_node& qk = Step::body(info.scores);
  static constexpr const graph_node& pv = Step::body(info.out);
  static constexpr shape scores = qk.out, ys = Step::node.out;
  static constexpr int m = static_cast<int>(scores.back(1)), n = static_cast<int>(scores.back(0));
  static constexpr int depth = static_cast<int>(Step::body(Step::body_arg(info.scores, 0)).out.back(0));
  static constexpr int dv = static_cast<int>(pv.out.back(0));
  static constexpr bool tk = qk.at->transpose_b, tv = pv.at->transpose_b;
  static constexpr int matrices = static_cast<int>(scores.elements() / (static_cast<std::int64_t>(m) * n));
  // Q, K and V as the products read them, and the result as it is written: strided views of
  // the kernel's inputs and output, so that heads split from one projection (slice, reshape,
  // transpose) and merged back (transpose) are read and written where they lie, not copied.
  static constexpr strided_view qv = operand_view<Step>(info.q_node), kv = operand_view<Step>(info.k_node),
                                vv = operand_view<Step>(info.v_node);
  static constexpr strided_view ov = [] {
    if (info.out_transpose < 0) return contiguous_view(ys);
    // Axis d of the written value is axis perm[d] of the product's result.
    const strided_view y = contiguous_view(ys);
    strided_view r = contiguous_view(pv.out);
    for (int d = 0; d < ys.rank; ++d)
      r.stride[static_cast<std::size_t>(Step::body(info.out_transpose).at->perm[static_cast<std::size_t>(d)])] =
          y.stride[static_cast<std::size_t>(d)];
    return r;
  }();
  static_assert(matrix_layout(qv) == matrix_order::rows && matrix_layout(ov) == matrix_order::rows &&
                    matrix_layout(kv) != matrix_order::neither && matrix_layout(vv) != matrix_order::neither,
                "partita: cpu: this attention composite (Step) reads or writes a view whose rows are not contiguous");
  // K or V whose columns are contiguous is read as the transposed matrix.
  static constexpr bool k_flip = matrix_layout(kv) == matrix_order::columns && kv.dims[kv.dims.rank - 1] != 1;
  static constexpr bool v_flip = matrix_layout(vv) == matrix_order::columns && vv.dims[vv.dims.rank - 1] != 1;
  /// Query rows per unit: the block's scores take at most 64 K floats (256 KB: L2), and at
  /// least one micro-tile of rows.
  static constexpr int block_rows = std::min(m, std::max(matmul_main_mr, 65536 / n));
  static constexpr mask_rows masks =
      info.mask >= 0 ? mask_rows(scores, Step::body(info.mask_node).out) : mask_rows();
  static constexpr std::size_t scratch_floats =
      static_cast<std::size_t>(block_rows) * n +
      std::max(product_scratch(block_rows, n, depth, tk != k_flip), product_scratch(block_rows, dv, n, tv != v_flip));

  static void prepare(state& st, const float* const* /*in*/, int /*step*/) { st.need_scratch(0, scratch_floats); }

  static void run(state& st, const float* const* in, float* out, int /*step*/) {
    const float scale = info.scale >= 0 ? in[info.scale][0] : 1.f;
    const float* mask = info.mask >= 0 ? in[info.mask] : nullptr;
    const float *q = in[info.q], *k = in[info.k], *v = in[info.v];
    // Blocks of equal size per matrix, enough of them that every thread gets one.
    const int want = (2 * st.workers() + matrices - 1) / matrices;
    const int blocks = std::min((m + matmul_main_mr - 1) / matmul_main_mr,
                                std::max((m + block_rows - 1) / block_rows, want));
    const int units = matrices * blocks;
    const double flops = 2.0 * matrices * m * static_cast<double>(n) * (depth + dv);
    const int tasks = tasks_for(flops, st.workers(), units);
    st.parallel(tasks, [&](int t) {
      float* probs = st.thread_scratch(t);
      float* gemm_scratch = probs + static_cast<std::ptrdiff_t>(block_rows) * n;
      const int u1 = static_cast<int>(static_cast<std::int64_t>(units) * (t + 1) / tasks);
      for (int u = static_cast<int>(static_cast<std::int64_t>(units) * t / tasks); u < u1; ++u) {
        const int i = u / blocks, b = u % blocks;
        const int r0 = static_cast<int>(static_cast<std::int64_t>(m) * b / blocks);
        const int r1 = static_cast<int>(static_cast<std::int64_t>(m) * (b + 1) / blocks);
        const int rows = r1 - r0;
        matmul_geometry g1;
        g1.m = rows;
        g1.n = n;
        g1.k = depth;
        g1.tb = tk != k_flip;
        g1.lda = matrix_ld(qv);
        g1.ldb = matrix_ld(kv);
        matmul_serial(g1, q + matrix_offset(qv, i) + r0 * g1.lda, k + matrix_offset(kv, i), probs, gemm_scratch);
        for (int r = 0; r < rows; ++r) {
          const std::int64_t row = static_cast<std::int64_t>(i) * m + r0 + r;
          softmax_scaled_row(probs + static_cast<std::ptrdiff_t>(r) * n, probs + static_cast<std::ptrdiff_t>(r) * n,
                             n, scale, info.divide, mask ? mask + masks.offset(row) : nullptr, masks.along);
        }
        matmul_geometry g2;
        g2.m = rows;
        g2.n = dv;
        g2.k = n;
        g2.tb = tv != v_flip;
        g2.ldb = matrix_ld(vv);
        g2.ldc = matrix_ld(ov);
        matmul_serial(g2, probs, v + matrix_offset(vv, i), out + matrix_offset(ov, i) + r0 * g2.ldc, gemm_scratch);
      }
    });
  }
};

}  // namespace partita::detail::cpu
