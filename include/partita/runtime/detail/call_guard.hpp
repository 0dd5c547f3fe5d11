#pragma once
/// Around an executable's calls: the busy flag that refuses a second thread, the fork of a
/// backend state that a transactional `bind` prepares into, and a state's resident bytes.
#include <atomic>
#include <concepts>
#include <cstddef>
#include <type_traits>

#include "partita/core/detail/concat.hpp"
#include "partita/core/error.hpp"

namespace partita::detail {

/// The state a transactional `bind` prepares into: `s.fork()` where the backend provides it (a
/// state with the same settings and nothing prepared), else a copy, else a new one.
template <class S>
S fork_state(const S& s) {
  if constexpr (requires { { s.fork() } -> std::same_as<S>; }) {
    return s.fork();
  } else if constexpr (std::is_copy_constructible_v<S>) {
    return S(s);
  } else {
    return S{};
  }
}

/// Bytes a backend state holds, where it reports them (`resident_bytes()`), else 0.
template <class S>
std::size_t state_bytes(const S& s) {
  if constexpr (requires { { s.resident_bytes() } -> std::convertible_to<std::size_t>; }) {
    return s.resident_bytes();
  } else {
    return 0;
  }
}

/// Marks an executable busy for one `run` or `bind`; a second thread arriving meanwhile gets an
/// error at once instead of sharing the arena and the backends' state.
class busy_guard {
 public:
  busy_guard(std::atomic<bool>& flag, const char* what) : flag_(flag) {
    // Acquire/release: a call made after another one ended, from any thread, sees its effects.
    if (flag_.exchange(true, std::memory_order_acquire))
      detail::raise(error(concat("partita: ", what,
                         ": the executable is busy: another thread is in its run or bind. An executable runs one "
                         "call at a time; give each thread an executable of its own")));
  }
  busy_guard(const busy_guard&) = delete;
  busy_guard& operator=(const busy_guard&) = delete;
  ~busy_guard() { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool>& flag_;
};

}  // namespace partita::detail
