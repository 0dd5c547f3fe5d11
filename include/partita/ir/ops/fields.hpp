#pragma once
/// The fields of every tuple-valued op (`is_tuple_op`): what `get`, the plan and the kernels read.
#include "partita/ir/ops/indexing.hpp"
#include "partita/ir/ops/recurrent.hpp"

namespace partita::rules {

/// The fields of a node of tuple-valued op `op` with attributes `at` and arguments `a` (`n` of
/// them); none for any other op.
constexpr op_fields fields_of(op_id op, const attrs& at, const arg_info* a, int n) {
  switch (op) {
    case op_id::topk: return topk_fields(at, a, n);
    case op_id::non_max_suppression: return nms_fields(at, a, n);
    case op_id::lstm: case op_id::gru: case op_id::rnn: return recurrent_fields(op, at, a, n);
    default: return {};
  }
}

}  // namespace partita::rules
