#pragma once
/// Which ops and composites the oneDNN backend translates.
#include "partita/ir/view.hpp"
#include "partita/pattern/match_view.hpp"

namespace partita::detail::onednn {

/// True for the ops the oneDNN backend translates (f32 only): conv2d and dense (2-D input) of a
/// bound weight, bias_add, batch_norm (rank 2 to 5), add / subtract / multiply whose second
/// operand broadcasts into the first (add and multiply also the other way round), relu, clip,
/// sigmoid, tanh, max / avg / global average pooling, softmax, flatten and reshape, each of an
/// activation (not of a weight). Pooling windows that could lie entirely in the padding are left
/// to the host (oneDNN refuses them for averages; the host's maximum of nothing is -inf).
constexpr bool translatable(const op_view& v) {
  if (v.dtype() != dtype::f32) return false;
  if (!is_binary_elementwise(v.op()) && v.num_args() > 0 && v.arg(0).is(op_id::weight)) return false;
  const attrs& a = v.attributes();
  // oneDNN memory descriptors need at least one dimension: rank-0 values (scalar literals) stay on the host.
  for (int k = 0; k < v.num_args(); ++k)
    if (v.arg(k).shape().rank == 0) return false;
  switch (v.op()) {
    case op_id::conv2d: return v.arg(1).is(op_id::weight);
    case op_id::dense: return v.arg(1).is(op_id::weight) && v.arg(0).shape().rank == 2;
    case op_id::bias_add: return v.arg(1).is(op_id::weight);
    case op_id::batch_norm: {
      for (int k = 1; k < 5; ++k)
        if (!v.arg(k).is(op_id::weight)) return false;
      return v.shape().rank >= 2 && v.shape().rank <= 5;
    }
    case op_id::add:
    case op_id::multiply:
      if (v.arg(1).shape() == v.shape() && !v.arg(1).is(op_id::weight)) return true;
      [[fallthrough]];
    case op_id::subtract: return v.arg(0).shape() == v.shape() && !v.arg(0).is(op_id::weight);
    case op_id::relu:
    case op_id::clip:
    case op_id::sigmoid:
    case op_id::tanh:
    case op_id::global_avg_pool2d:
    case op_id::softmax:
    case op_id::flatten:
    case op_id::reshape: return true;
    case op_id::max_pool2d:
    case op_id::avg_pool2d:
      if (a.ceil_mode) return false;
      return (v.is(op_id::avg_pool2d) && a.count_include_pad) ||
             (a.padding[0] < a.window[0] && a.padding[1] < a.window[1] && end_padding(a, 0) < a.window[0] &&
              end_padding(a, 1) < a.window[1]);
    default: return false;
  }
}

/// Composite predicate: the matched conv2d or dense is one oneDNN translates.
struct claimable {
  static constexpr bool check(const match_view& m) { return translatable(m.root()); }
};

}  // namespace partita::detail::onednn
