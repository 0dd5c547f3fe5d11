#pragma once
/// `partita::error`, the exception every run-time check throws.
#include <stdexcept>
#include <string>

namespace partita {

/// Every run-time error Partita reports (bad weight file, wrong buffer size, ...). The message
/// names the tensor or file and says what was expected and what was found.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace partita
