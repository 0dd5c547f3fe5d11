#pragma once
#include <concepts>
#include <string_view>

#include "partita/ir/op_id.hpp"

namespace partita {

/// A backend: a type with a unique `name`, a per-executable `state` (created when the
/// executable is constructed, alive as long as it is), and `kernel<Step>::run(state&, in, out)`
/// for the steps it owns, in destination-passing style (the caller owns every buffer). The plan
/// may give an elementwise step (unary ops, bias_add, add/subtract/multiply) the same buffer for
/// its output and its first argument, so those kernels must read each element before writing it.
/// `reference` is the simplest complete example.
template <class B>
concept backend = requires {
  { std::string_view(B::name) } -> std::convertible_to<std::string_view>;
  typename B::state;
  requires std::default_initializable<typename B::state>;
};

/// True for host backends (`static constexpr bool host = true;`): they run every op, and the
/// nodes they get are the ones no other backend claimed.
template <class B>
inline constexpr bool is_host_backend = [] {
  if constexpr (requires { B::host; }) {
    return static_cast<bool>(B::host);
  } else {
    return false;
  }
}();

}  // namespace partita
