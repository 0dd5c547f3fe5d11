#pragma once
/// `partita::error`, what every run-time check reports, and how it is reported without exceptions.
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace partita {

/// Every run-time error Partita reports (bad weight file, wrong buffer size, ...). The message
/// names the tensor or file and says what was expected and what was found.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What a failed check calls in a program built without exceptions (`-fno-exceptions`): it
/// receives the message the error would have carried. The program stops when it returns.
using error_hook = void (*)(const char* message) noexcept;

namespace detail {
/// The hook `set_error_hook` installed; null: none.
inline error_hook installed_error_hook = nullptr;
}  // namespace detail

/// Installs `hook` for programs built without exceptions (a firmware's log or fault handler);
/// returns the one before. With exceptions the hook is never called: errors are thrown.
inline error_hook set_error_hook(error_hook hook) noexcept {
  const error_hook before = detail::installed_error_hook;
  detail::installed_error_hook = hook;
  return before;
}

namespace detail {

/// Reports `e`: throws it, or, without exceptions, hands its message to the error hook and stops
/// the program (`std::abort`). Reached during constant evaluation, the call is not a constant
/// expression, and the compiler stops at the line that raised, which spells the message.
template <class E>
[[noreturn]] void raise(const E& e) {
#if defined(__cpp_exceptions)
  throw e;
#else
  if (installed_error_hook) installed_error_hook(e.what());
  std::abort();
#endif
}

}  // namespace detail
}  // namespace partita
