#pragma once
/// String concatenation for error messages.
#include <string>

namespace partita::detail {

/// Concatenates strings by appending: `"x" + std::string(...)` trips GCC 12's -Wrestrict at -O2.
template <class... Parts>
std::string concat(const Parts&... parts) {
  std::string r;
  ((r += parts), ...);
  return r;
}

}  // namespace partita::detail
