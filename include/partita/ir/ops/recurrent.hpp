#pragma once
/// Recurrent layers: `lstm`, `gru` and `rnn`, tuple-valued ops with ONNX's semantics.
#include "partita/ir/ops/indexing.hpp"
#include "partita/ir/ops/rules.hpp"

namespace partita {
namespace rules {

/// Gates per hidden unit: lstm 4 (i, o, f, c), gru 3 (z, r, h), rnn 1.
constexpr int recurrent_gates(op_id op) { return op == op_id::lstm ? 4 : op == op_id::gru ? 3 : 1; }

/// The sizes of a recurrent layer, read from its arguments (zeros where they do not fit).
struct recurrent_sizes {
  std::int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 0;
  int misfit = -1;  // the first argument that does not fit; -1 when all do
};

/// Checks a recurrent layer's arguments: X, W, R, B, then the initial states (none, or lstm's
/// two and gru's or rnn's one).
constexpr recurrent_sizes recurrent_shapes(op_id op, const attrs& at, const arg_info* a, int n) {
  recurrent_sizes s;
  const std::int64_t g = recurrent_gates(op);
  const int states = op == op_id::lstm ? 2 : 1;
  if (n != 4 && n != 4 + states) {
    s.misfit = n;
    return s;
  }
  for (int k = 0; k < n; ++k)
    if (a[k].type != dtype::f32 || a[k].is_tuple) {
      s.misfit = k;
      return s;
    }
  const shape& x = a[0].shp;
  if (x.rank != 3) {
    s.misfit = 0;
    return s;
  }
  s.seq = at.batch_first ? x[1] : x[0];
  s.batch = at.batch_first ? x[0] : x[1];
  s.input = x[2];
  s.dirs = at.direction == rnn_direction::bidirectional ? 2 : 1;
  const shape& w = a[1].shp;
  s.hidden = w.rank == 3 && w[1] % g == 0 ? w[1] / g : 0;
  const std::int64_t h = s.hidden;
  const auto is = [](const shape& t, shape want) { return t == want; };
  if (h <= 0 || !is(w, shape{3, {s.dirs, g * h, s.input}})) s.misfit = 1;
  else if (!is(a[2].shp, shape{3, {s.dirs, g * h, h}})) s.misfit = 2;
  else if (!is(a[3].shp, shape{2, {s.dirs, 2 * g * h}})) s.misfit = 3;
  for (int k = 4; k < n && s.misfit < 0; ++k)
    if (!is(a[k].shp, at.batch_first ? shape{3, {s.batch, s.dirs, h}} : shape{3, {s.dirs, s.batch, h}})) s.misfit = k;
  return s;
}

/// The fields: Y, every step's hidden state ([seq, dirs, batch, hidden], or [batch, seq, dirs,
/// hidden] with batch_first), then the last hidden state Y_h ([dirs, batch, hidden], or [batch,
/// dirs, hidden]), and for lstm the last cell state Y_c, shaped as Y_h.
constexpr op_fields recurrent_fields(op_id op, const attrs& at, const arg_info* a, int n) {
  const recurrent_sizes s = recurrent_shapes(op, at, a, n);
  if (s.misfit >= 0) return {};
  const shape y = at.batch_first ? shape{4, {s.batch, s.seq, s.dirs, s.hidden}} : shape{4, {s.seq, s.dirs, s.batch, s.hidden}};
  const shape last = at.batch_first ? shape{3, {s.batch, s.dirs, s.hidden}} : shape{3, {s.dirs, s.batch, s.hidden}};
  op_fields f{{op_field{y, dtype::f32}, op_field{last, dtype::f32}, op_field{last, dtype::f32}}, op == op_id::lstm ? 3 : 2};
  return f;
}

constexpr inference recurrent(op_id op, const attrs& at, const arg_info* a, int n) {
  const recurrent_sizes s = recurrent_shapes(op, at, a, n);
  if (s.misfit >= 0) {
    const shape culprit = s.misfit < n ? a[s.misfit].shp : shape{};
    shape rhs = culprit;
    if (rhs.rank < max_rank) rhs.dims[static_cast<std::size_t>(rhs.rank++)] = s.misfit;  // its position last
    return fail(problem::recurrent_shapes, a[0].shp, rhs);
  }
  return inference{{}, dtype::f32, true, {}};
}
template <op_id Op>
constexpr inference recurrent_rule(const attrs& at, const arg_info* a, int n) {
  return recurrent(Op, at, a, n);
}

}  // namespace rules

namespace detail {
constexpr attrs recurrent_attrs_of(recurrent_attrs r) {
  attrs a{};
  a.direction = r.direction;
  a.batch_first = r.batch_first;
  a.linear_before_reset = r.linear_before_reset;
  a.activation = r.activation;
  a.rnn_clip = r.clip;
  return a;
}
/// The recurrent attributes a node's `attrs` hold (the inverse of `recurrent_attrs_of`).
constexpr recurrent_attrs recurrent_attrs_in(const attrs& a) {
  return {a.direction, a.batch_first, a.linear_before_reset, a.activation, a.rnn_clip};
}
}  // namespace detail

/// An LSTM layer over sequence `X` (ONNX's LSTM: gates i, o, f, c stacked in W [dirs, 4·hidden,
/// input] and R [dirs, 4·hidden, hidden], B [dirs, 8·hidden] the input biases then the recurrent
/// ones; σ, tanh, tanh; no peepholes). A tuple: `get<.., 0>` Y, every step's hidden state,
/// `get<.., 1>` Y_h, the last, `get<.., 2>` Y_c, the last cell state. The initial states
/// `State...` are none (zeros) or H0 and C0, [dirs, batch, hidden]:
/// `lstm<x, w, r, b, {.direction = rnn_direction::bidirectional}, h0, c0>`.
template <class X, class W, class R, class B, recurrent_attrs A = {}, class... State>
struct lstm : detail::op_node<op_id::lstm, detail::recurrent_attrs_of(A), &rules::recurrent_rule<op_id::lstm>, X, W, R, B,
                              State...> {
  static_assert(well_formed<lstm, X, W, R, B, State...>);
};

/// A GRU layer (ONNX's GRU: gates z, r, h stacked in W [dirs, 3·hidden, input] and R [dirs,
/// 3·hidden, hidden], B [dirs, 6·hidden]; σ, tanh). With `linear_before_reset` the reset gate
/// multiplies the recurrent product and its bias (PyTorch's `nn.GRU`); without, the previous
/// state before the product. A tuple: Y, then Y_h; the initial state, none or H0.
template <class X, class W, class R, class B, recurrent_attrs A = {}, class... State>
struct gru : detail::op_node<op_id::gru, detail::recurrent_attrs_of(A), &rules::recurrent_rule<op_id::gru>, X, W, R, B,
                             State...> {
  static_assert(well_formed<gru, X, W, R, B, State...>);
};

/// A plain recurrent layer, `h = act(x · Wᵀ + h · Rᵀ + Wb + Rb)` with tanh or relu (ONNX's RNN,
/// PyTorch's `nn.RNN`): W [dirs, hidden, input], R [dirs, hidden, hidden], B [dirs, 2·hidden]. A
/// tuple: Y, then Y_h; the initial state, none or H0.
template <class X, class W, class R, class B, recurrent_attrs A = {}, class... State>
struct rnn : detail::op_node<op_id::rnn, detail::recurrent_attrs_of(A), &rules::recurrent_rule<op_id::rnn>, X, W, R, B,
                             State...> {
  static_assert(well_formed<rnn, X, W, R, B, State...>);
};

}  // namespace partita
