#pragma once
/// The fields of every tuple-valued op (`is_tuple_op`): what `get`, the plan and the kernels read.
#include <array>

#include "partita/ir/ops/indexing.hpp"
#include "partita/ir/ops/recurrent.hpp"

namespace partita::rules {

/// A tuple-valued op's arguments as its rules read them: `arg_of(k)` (an `arg_info`) for each of
/// its `n`, whatever holds them (a node type's descriptor, a module, a step).
template <class ArgOf>
constexpr std::array<arg_info, max_op_args> arg_infos(int n, ArgOf arg_of) {
  std::array<arg_info, max_op_args> infos{};
  for (int k = 0; k < n && k < max_op_args; ++k) infos[static_cast<std::size_t>(k)] = arg_of(k);
  return infos;
}

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
