#pragma once
/// A cpu kernel and the reason it was chosen: what each family's `choose_*_kernel` returns.
#include <string_view>

#include "partita/runtime/plan_records.hpp"

namespace partita::detail::cpu {

/// Kernel `Id` of one family (an enum with its `name_of`) and the reason it was chosen, in a
/// line: the kernel dispatches on `kernel`, and the plan shows both (`note_of`).
template <class Id>
struct choice_of {
  Id kernel{};
  std::string_view reason{};
};

/// A choice as the plan records it (`plan_step::note`).
template <class Id>
constexpr kernel_note note_of(const choice_of<Id>& c) {
  return {name_of(c.kernel), c.reason};
}

}  // namespace partita::detail::cpu
