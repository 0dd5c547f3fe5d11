#pragma once
// Backends for pass and partitioning tests: the reference kernels under other names, each
// claiming a chosen set of ops, and a call-recording accelerator.
#include <string_view>
#include <vector>

#include <partita/partita.hpp>

namespace test_backends {
using namespace partita;

/// The reference kernels under the name `Name`, claiming the ops `Ops...` (not a host).
template <fixed_string Name, op_id... Ops>
struct renamed : reference {
  static constexpr fixed_string name = Name;
  static constexpr bool host = false;
  static constexpr bool supports(const op_view& v) { return ((v.op() == Ops) || ...); }
};

}  // namespace test_backends
