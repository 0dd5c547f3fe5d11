#pragma once
/// cpu lstm, gru (linear_before_reset) and rnn: the input projection of every step as one GEMM,
/// then per step one GEMM of the hidden state by R and the gates in vectors.
// The weights are packed at bind into dense panels (`pack_dense_weights`): W for the projection
// of all steps at once (S·N rows), R for the per-step product (N rows: at batch 1 a GEMV that
// streams R, which dense's blocking keeps in cache between steps). The biases fold at bind:
// Wb + Rb go with the projection, except gru's candidate gate, whose Rb stays with the recurrent
// product (the reset gate multiplies both). A gru whose reset gate multiplies the state before
// the product (linear_before_reset = 0) needs R's candidate rows after the gates: it runs on the
// reference kernel.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "partita/backends/cpu/detail/gemm/dense.hpp"
#include "partita/backends/cpu/detail/simd/simd_math.hpp"
#include "partita/backends/cpu/detail/state.hpp"
#include "partita/ir/attrs.hpp"
#include "partita/ir/op_id.hpp"
#include "partita/ir/ops/recurrent.hpp"
#include "partita/runtime/plan_records.hpp"

namespace partita::detail::cpu {

/// A recurrent layer's sizes, as the cpu kernel reads them.
struct recurrent_shape {
  int seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 1;
  recurrent_attrs at{};
  constexpr int units() const { return gates * hidden; }
  /// Floats of one direction's packed W, packed R and two bias vectors.
  constexpr std::size_t packed_w(int nr) const { return packed_dense_floats(units(), input, nr); }
  constexpr std::size_t packed_r(int nr) const { return packed_dense_floats(units(), hidden, nr); }
  constexpr std::size_t per_direction(int nr_w, int nr_r) const {
    return packed_w(nr_w) + packed_r(nr_r) + 2 * static_cast<std::size_t>(units());
  }
  /// Shared scratch: the projections of every step, the recurrent products of one step, the
  /// hidden and cell states of one step.
  constexpr std::size_t scratch() const {
    const auto n = static_cast<std::size_t>(batch), u = static_cast<std::size_t>(units());
    return static_cast<std::size_t>(seq) * n * u + n * u + 2 * n * static_cast<std::size_t>(hidden);
  }
};

/// The gates of one row (a batch element) of one step: `p` the projection (x · Wᵀ + biases), `q`
/// the recurrent product (h · Rᵀ, plus gru's candidate bias), `h` and `c` the states, updated in
/// place, for `hidden` units. ONNX's gate order: lstm i, o, f, c; gru z, r, h.
template <op_id Op>
inline void recurrent_gates(const float* p, const float* q, float* h, float* c, int hidden, const recurrent_attrs& at) {
  using simd::vec;
  const float clip = at.clip;
  // The value second in max and min: x86's take the second operand where either is NaN, so a
  // NaN stays NaN, as the reference's std::clamp and std::max leave it.
  const auto bound = [clip](vec v) {
    return clip > 0 ? simd::min(simd::splat(clip), simd::max(simd::splat(-clip), v)) : v;
  };
  const auto bound1 = [clip](float v) { return clip > 0 ? std::min(std::max(v, -clip), clip) : v; };
  const auto sig1 = [](float v) { return 1.f / (1.f + std::exp(-v)); };
  const int H = hidden;
  int j = 0;
  for (; j + simd::width <= H; j += simd::width) {
    const auto pre = [&](int gate) { return bound(simd::load(p + gate * H + j) + simd::load(q + gate * H + j)); };
    if constexpr (Op == op_id::lstm) {
      const vec i = simd::sigmoid(pre(0)), o = simd::sigmoid(pre(1)), f = simd::sigmoid(pre(2));
      const vec cell = simd::fma(f, simd::load(c + j), i * simd::tanh(pre(3)));
      simd::store(c + j, cell);
      simd::store(h + j, o * simd::tanh(cell));
    } else if constexpr (Op == op_id::gru) {
      const vec z = simd::sigmoid(pre(0)), r = simd::sigmoid(pre(1));
      const vec cand = simd::tanh(bound(simd::fma(r, simd::load(q + 2 * H + j), simd::load(p + 2 * H + j))));
      simd::store(h + j, simd::fma(z, simd::load(h + j) - cand, cand));  // (1 - z) · cand + z · h
    } else if (at.activation == rnn_activation::relu) {
      simd::store(h + j, simd::max(simd::splat(0.f), pre(0)));
    } else {
      simd::store(h + j, simd::tanh(pre(0)));
    }
  }
  for (; j < H; ++j) {
    const auto pre = [&](int gate) { return bound1(p[gate * H + j] + q[gate * H + j]); };
    if constexpr (Op == op_id::lstm) {
      const float cell = sig1(pre(2)) * c[j] + sig1(pre(0)) * std::tanh(pre(3));
      c[j] = cell;
      h[j] = sig1(pre(1)) * std::tanh(cell);
    } else if constexpr (Op == op_id::gru) {
      const float z = sig1(pre(0)), r = sig1(pre(1));
      const float cand = std::tanh(bound1(p[2 * H + j] + r * q[2 * H + j]));
      h[j] = (1 - z) * cand + z * h[j];
    } else {
      h[j] = at.activation == rnn_activation::relu ? std::max(pre(0), 0.f) : std::tanh(pre(0));
    }
  }
}

/// Most weights of R whose per-step product runs on the calling thread alone: every step would
/// otherwise pay for waking and joining the pool, as many times as there are steps, for a
/// product of a few thousand multiply-adds (the keyword spotters' 48 units ran slower on two
/// threads than on one).
inline constexpr int recurrent_serial_weights = 64 * 1024;
/// Most multiply-adds of the input projection (every step at once) that run on the calling
/// thread alone, for the same reason: a projection this small is over before the pool wakes.
inline constexpr double recurrent_serial_projection = 1 << 20;

/// The layer with shape `S` (`recurrent_shape`), `Op` lstm, gru or rnn: `prepare` packs W and R
/// and folds the biases; `run` projects every step's input, then runs the steps.
template <op_id Op, recurrent_shape S>
struct recurrent_layer {
  static constexpr int steps_rows = S.seq * S.batch;
  using w_blk = dense_blocking<steps_rows, S.units()>;
  using r_blk = dense_blocking<S.batch, S.units()>;
  static constexpr std::size_t per_direction = S.per_direction(w_blk::nr, r_blk::nr);

  /// Packs direction d's W and R into `dst` and folds its biases; `w`, `r`, `b` are ONNX's.
  static void prepare(state& st, const float* w, const float* r, const float* b, int step) {
    float* dst = st.reserve(step, per_direction * static_cast<std::size_t>(S.dirs));
    const int G = S.gates, H = S.hidden, U = S.units();
    for (int d = 0; d < S.dirs; ++d) {
      float* pw = dst + per_direction * static_cast<std::size_t>(d);
      float* pr = pw + S.packed_w(w_blk::nr);
      float* in_bias = pr + S.packed_r(r_blk::nr);
      float* rec_bias = in_bias + U;
      pack_dense_weights(w + static_cast<std::ptrdiff_t>(d) * U * S.input, U, S.input, w_blk::nr, pw);
      pack_dense_weights(r + static_cast<std::ptrdiff_t>(d) * U * H, U, H, r_blk::nr, pr);
      const float* wb = b + static_cast<std::ptrdiff_t>(d) * 2 * U;
      const float* rb = wb + U;
      for (int u = 0; u < U; ++u) {
        const bool candidate = Op == op_id::gru && u >= (G - 1) * H;  // r multiplies its Rb too
        in_bias[u] = candidate ? wb[u] : wb[u] + rb[u];
        rec_bias[u] = candidate ? rb[u] : 0.f;
      }
    }
    st.need_scratch(S.scratch(), static_cast<std::size_t>(std::max(w_blk::mr * S.input, r_blk::mr * H)));
    if constexpr (S.batch <= 2) st.need_order_flag(step);
  }

  /// `x` X; `h0`, `c0` the initial states or null; Y, Y_h and Y_c (lstm) at `y`, `yh`, `yc`.
  static void run(state& st, const float* x, const float* h0, const float* c0, float* y, float* yh, float* yc, int step) {
    const int H = S.hidden, U = S.units(), N = S.batch, T = S.seq, D = S.dirs;
    const bool bf = S.at.batch_first;
    float* proj = st.shared_scratch();
    float* rec = proj + static_cast<std::size_t>(T) * N * U;
    float* h = rec + static_cast<std::size_t>(N) * U;
    float* c = h + static_cast<std::size_t>(N) * H;
    const auto state_at = [&](int d, int n) { return static_cast<std::ptrdiff_t>(bf ? n * D + d : d * N + n) * H; };
    const auto y_at = [&](int t, int d, int n) {
      return static_cast<std::ptrdiff_t>(bf ? (n * T + t) * D + d : (t * D + d) * N + n) * H;
    };
    for (int d = 0; d < D; ++d) {
      const float* pw = st.packed(step) + per_direction * static_cast<std::size_t>(d);
      const float* pr = pw + S.packed_w(w_blk::nr);
      const float* in_bias = pr + S.packed_r(r_blk::nr);
      const float* rec_bias = in_bias + U;
      // Every step's input projection at once: rows in X's order, (t, n), or (n, t) batch first.
      epilogue e{};
      e.bias = in_bias;
      if constexpr (static_cast<double>(steps_rows) * S.units() * S.input <= recurrent_serial_projection) {
        constexpr int panels = (S.units() + w_blk::nr - 1) / w_blk::nr;
        dense_panels<steps_rows, S.units()>(x, S.input, pw, U, proj, e, 0, panels, st.thread_scratch(0));
      } else {
        dense_step<steps_rows, S.units()>(st, x, S.input, pw, proj, e, step);
      }
      for (int n = 0; n < N; ++n) {
        for (int j = 0; j < H; ++j) {
          h[n * H + j] = h0 ? h0[state_at(d, n) + j] : 0.f;
          c[n * H + j] = c0 ? c0[state_at(d, n) + j] : 0.f;
        }
      }
      const bool backwards = S.at.direction == rnn_direction::reverse || (S.at.direction == rnn_direction::bidirectional && d == 1);
      epilogue re{};
      re.bias = Op == op_id::gru ? rec_bias : nullptr;
      for (int s = 0; s < T; ++s) {
        const int t = backwards ? T - 1 - s : s;
        if constexpr (S.units() * S.hidden <= recurrent_serial_weights) {
          constexpr int panels = (S.units() + r_blk::nr - 1) / r_blk::nr;
          dense_panels<S.batch, S.units()>(h, H, pr, U, rec, re, 0, panels, st.thread_scratch(0));
        } else {
          dense_step<S.batch, S.units()>(st, h, H, pr, rec, re, step);
        }
        for (int n = 0; n < N; ++n) {
          const float* p = proj + static_cast<std::ptrdiff_t>(bf ? n * T + t : t * N + n) * U;
          recurrent_gates<Op>(p, rec + static_cast<std::ptrdiff_t>(n) * U, h + n * H, c + n * H, H, S.at);
          std::memcpy(y + y_at(t, d, n), h + n * H, sizeof(float) * static_cast<std::size_t>(H));
        }
      }
      for (int n = 0; n < N; ++n) {
        std::memcpy(yh + state_at(d, n), h + n * H, sizeof(float) * static_cast<std::size_t>(H));
        if (yc) std::memcpy(yc + state_at(d, n), c + n * H, sizeof(float) * static_cast<std::size_t>(H));
      }
    }
  }
};

/// Whether the cpu kernel runs recurrent step `Step`: its W, R and B are weights (packed at
/// bind), and a gru applies its reset gate after the recurrent product (linear_before_reset).
template <class Step>
constexpr bool fused_recurrent() {
  if constexpr (is_recurrent(Step::op)) {
    for (int k = 1; k <= 3; ++k)
      if (Step::arg(k).op != op_id::weight) return false;
    return Step::op != op_id::gru || Step::node.at->linear_before_reset;
  } else {
    return false;
  }
}

/// The cpu kernel of a recurrent step (`fused_recurrent`): `recurrent_layer` on the step's shapes.
template <class Step>
struct recurrent_kernel {
  // The layer's sizes as its shape rule read them.
  static constexpr recurrent_shape shape = [] {
    constexpr rules::recurrent_sizes r =
        rules::recurrent_shapes(Step::op, *Step::node.at, arg_infos_of<Step>().data(), Step::num_args);
    recurrent_shape s;
    s.at = recurrent_attrs_in(*Step::node.at);
    s.seq = static_cast<int>(r.seq);
    s.batch = static_cast<int>(r.batch);
    s.input = static_cast<int>(r.input);
    s.dirs = static_cast<int>(r.dirs);
    s.gates = rules::recurrent_gates(Step::op);
    s.hidden = static_cast<int>(r.hidden);
    return s;
  }();
  using layer = recurrent_layer<Step::op, shape>;
  static constexpr bool states = Step::num_args > 4;

  static constexpr kernel_note note() {
    return {"recurrent_gemm", "every step's input projection as one GEMM, then per step h · Rᵀ and the gates in vectors"};
  }
  static void prepare(state& st, const float* const* in, int step) { layer::prepare(st, in[1], in[2], in[3], step); }
  static void run(state& st, const float* const* in, float* out, int step) {
    auto* bytes = reinterpret_cast<unsigned char*>(out);
    constexpr bool lstm = Step::op == op_id::lstm;
    layer::run(st, in[0], states ? in[4] : nullptr, states && lstm ? in[5] : nullptr, out,
               reinterpret_cast<float*>(bytes + Step::output_offset(1)),
               lstm ? reinterpret_cast<float*>(bytes + Step::output_offset(2)) : nullptr, step);
  }
};

}  // namespace partita::detail::cpu
