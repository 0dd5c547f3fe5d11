#pragma once
/// Reference kernels of the recurrent layers: lstm, gru and rnn with ONNX's equations.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "partita/ir/attrs.hpp"
#include "partita/ir/op_id.hpp"

namespace partita::reference_kernels {

/// A recurrent layer's sizes and attributes, as its kernels read them.
struct recurrent_geometry {
  op_id op = op_id::lstm;
  std::int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  recurrent_attrs at{};
  constexpr std::int64_t gates() const { return op == op_id::lstm ? 4 : op == op_id::gru ? 3 : 1; }
};

namespace detail {

/// Element offsets of a recurrent layer's tensors, in ONNX's layouts (`batch_first`: layout 1).
struct recurrent_index {
  const recurrent_geometry& g;
  std::int64_t x(std::int64_t t, std::int64_t n) const {
    return (g.at.batch_first ? n * g.seq + t : t * g.batch + n) * g.input;
  }
  std::int64_t y(std::int64_t t, std::int64_t d, std::int64_t n) const {
    return (g.at.batch_first ? (n * g.seq + t) * g.dirs + d : (t * g.dirs + d) * g.batch + n) * g.hidden;
  }
  std::int64_t state(std::int64_t d, std::int64_t n) const {
    return (g.at.batch_first ? n * g.dirs + d : d * g.batch + n) * g.hidden;
  }
};

inline double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

}  // namespace detail

/// Runs a recurrent layer: X `x`, W `w`, R `r`, B `b`, the initial states `h0` and (lstm) `c0`
/// or null for zeros; writes Y to `y`, Y_h to `yh` and (lstm) Y_c to `yc`. Gate rows of W and R
/// are in ONNX's order (lstm i, o, f, c; gru z, r, h). Sums in double. A step's new hidden state
/// goes to its slot of Y while Y_h still holds the previous one; gru without
/// linear_before_reset keeps r ⊙ h in `scratch` (`hidden` floats) meanwhile.
inline void recurrent(const recurrent_geometry& g, const float* x, const float* w, const float* r, const float* b,
                      const float* h0, const float* c0, float* y, float* yh, float* yc, float* scratch) {
  const detail::recurrent_index at{g};
  const std::int64_t H = g.hidden, I = g.input, G = g.gates();
  const double clip = g.at.clip;
  const auto bound = [clip](double v) { return clip > 0 ? std::clamp(v, -clip, clip) : v; };
  for (std::int64_t d = 0; d < g.dirs; ++d) {
    const float* wd = w + d * G * H * I;
    const float* rd = r + d * G * H * H;
    const float* wb = b + d * 2 * G * H;
    const float* rb = wb + G * H;
    // x · W[row] + Wb[row], and v · R[row] (+ Rb[row]) for the hidden-sized vector v.
    const auto in_dot = [&](const float* xt, std::int64_t row) {
      double s = wb[row];
      for (std::int64_t i = 0; i < I; ++i) s += static_cast<double>(xt[i]) * wd[row * I + i];
      return s;
    };
    const auto rec_dot = [&](const float* v, std::int64_t row) {
      double s = rb[row];
      for (std::int64_t k = 0; k < H; ++k) s += static_cast<double>(v[k]) * rd[row * H + k];
      return s;
    };
    for (std::int64_t n = 0; n < g.batch; ++n)
      for (std::int64_t j = 0; j < H; ++j) {
        yh[at.state(d, n) + j] = h0 ? h0[at.state(d, n) + j] : 0.f;
        if (g.op == op_id::lstm) yc[at.state(d, n) + j] = c0 ? c0[at.state(d, n) + j] : 0.f;
      }
    const bool backwards = g.at.direction == rnn_direction::reverse || (g.at.direction == rnn_direction::bidirectional && d == 1);
    for (std::int64_t s = 0; s < g.seq; ++s) {
      const std::int64_t t = backwards ? g.seq - 1 - s : s;
      for (std::int64_t n = 0; n < g.batch; ++n) {
        const float* xt = x + at.x(t, n);
        float* hp = yh + at.state(d, n);  // the previous hidden state
        float* ht = y + at.y(t, d, n);
        if (g.op == op_id::lstm) {
          float* c = yc + at.state(d, n);
          for (std::int64_t j = 0; j < H; ++j) {
            const double i_ = detail::sigmoid(bound(in_dot(xt, j) + rec_dot(hp, j)));
            const double o_ = detail::sigmoid(bound(in_dot(xt, H + j) + rec_dot(hp, H + j)));
            const double f_ = detail::sigmoid(bound(in_dot(xt, 2 * H + j) + rec_dot(hp, 2 * H + j)));
            const double c_ = std::tanh(bound(in_dot(xt, 3 * H + j) + rec_dot(hp, 3 * H + j)));
            const double cell = f_ * c[j] + i_ * c_;
            c[j] = static_cast<float>(cell);
            ht[j] = static_cast<float>(o_ * std::tanh(cell));
          }
        } else if (g.op == op_id::rnn) {
          for (std::int64_t j = 0; j < H; ++j) {
            const double v = bound(in_dot(xt, j) + rec_dot(hp, j));
            ht[j] = static_cast<float>(g.at.activation == rnn_activation::relu ? std::max(v, 0.0) : std::tanh(v));
          }
        } else if (g.at.linear_before_reset) {
          for (std::int64_t j = 0; j < H; ++j) {
            const double z = detail::sigmoid(bound(in_dot(xt, j) + rec_dot(hp, j)));
            const double rr = detail::sigmoid(bound(in_dot(xt, H + j) + rec_dot(hp, H + j)));
            const double h_ = std::tanh(bound(in_dot(xt, 2 * H + j) + rr * rec_dot(hp, 2 * H + j)));
            ht[j] = static_cast<float>((1 - z) * h_ + z * hp[j]);
          }
        } else {
          // r ⊙ h for every unit first: the candidate state multiplies it by R.
          for (std::int64_t k = 0; k < H; ++k)
            scratch[k] = static_cast<float>(detail::sigmoid(bound(in_dot(xt, H + k) + rec_dot(hp, H + k))) * hp[k]);
          for (std::int64_t j = 0; j < H; ++j) {
            const double z = detail::sigmoid(bound(in_dot(xt, j) + rec_dot(hp, j)));
            const double h_ = std::tanh(bound(in_dot(xt, 2 * H + j) + rec_dot(scratch, 2 * H + j)));
            ht[j] = static_cast<float>((1 - z) * h_ + z * hp[j]);
          }
        }
        std::copy(ht, ht + H, hp);
      }
    }
  }
}

}  // namespace partita::reference_kernels
