#pragma once
// A model's arithmetic for the GFLOP/s the runtime benchmark reports: 2 × the multiply-adds of its
// convolutions, dense layers and matmuls, counted on the model as written (before any fusion).
// Elementwise ops, pooling and normalizations are left out, as in the usual FLOP counts of
// ResNet-18 (1.8 G multiply-adds) or MobileNetV2 (300 M).
#include <cstdint>

#include <partita/partita.hpp>

namespace bench {

/// 2 × multiply-adds of `Net`'s conv1d, conv2d, conv_transpose2d, dense and matmul nodes.
template <class Net>
constexpr double multiply_add_flops() {
  using partita::op_id;
  const partita::function_view f = partita::inspect<partita::module_of<Net>>().main();
  double total = 0;
  for (int i = 0; i < f.size(); ++i) {
    const partita::op_view v = f.node(i);
    const double out = static_cast<double>(v.shape().elements());
    switch (v.op()) {
      case op_id::conv2d: {  // weight [O, C / groups, KH, KW]: each output sums C / groups · KH · KW products
        const partita::shape& w = v.arg(1).shape();
        total += 2.0 * out * static_cast<double>(w[1] * w[2] * w[3]);
        break;
      }
      case op_id::conv1d: {  // weight [O, C / groups, K]
        const partita::shape& w = v.arg(1).shape();
        total += 2.0 * out * static_cast<double>(w[1] * w[2]);
        break;
      }
      case op_id::conv_transpose2d: {  // weight [C, O / groups, KH, KW]: each input value scatters into that many outputs
        const partita::shape& w = v.arg(1).shape();
        total += 2.0 * static_cast<double>(v.arg(0).shape().elements()) * static_cast<double>(w[1] * w[2] * w[3]);
        break;
      }
      case op_id::dense: total += 2.0 * out * static_cast<double>(v.arg(0).shape().back(0)); break;
      case op_id::matmul: {
        const partita::shape& a = v.arg(0).shape();
        const std::int64_t depth = v.attributes().transpose_a ? a.back(1) : a.back(0);  // operands are ≥ 2-D
        total += 2.0 * out * static_cast<double>(depth);
        break;
      }
      default: break;
    }
  }
  return total;
}

}  // namespace bench
