#pragma once
/// String concatenation for error messages.
#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

namespace partita::detail {

/// The parts one after the other, in a string allocated once.
inline std::string concat_views(std::initializer_list<std::string_view> parts) {
  std::size_t size = 0;
  for (const std::string_view p : parts) size += p.size();
  std::string r;
  r.reserve(size);
  for (const std::string_view p : parts) r.append(p);
  return r;
}

/// Concatenates strings by appending: `"x" + std::string(...)` trips GCC 12's -Wrestrict at -O2.
/// Each call's argument types (a literal's length among them) instantiate this template anew, in
/// every file that includes the runtime, so it only gathers views; the work is done once.
template <class... Parts>
std::string concat(const Parts&... parts) {
  return concat_views({std::string_view(parts)...});
}

}  // namespace partita::detail
