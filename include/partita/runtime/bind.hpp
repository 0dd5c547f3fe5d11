#pragma once
/// Argument checks shared by `bind` and `run`: names, shapes, sizes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "partita/core/error.hpp"
#include "partita/core/detail/concat.hpp"
#include "partita/runtime/plan.hpp"
#include "partita/runtime/tensor_data.hpp"

namespace partita::detail {

/// Appends to `problems` one line per mismatch between a declared weight and what the source
/// holds under that name.
inline void check_weight(const tensor_slot& w, const tensor_data* t, std::string_view origin, std::string& problems) {
  const std::string head = concat("\n  weight '", w.name, "' (", name_of(w.type), to_string(w.shp), "): ");
  if (!t) {
    problems += concat(head, "not found in ", origin);
    return;
  }
  if (t->type != w.type) {
    problems += concat(head, "dtype is ", t->dtype_name, " in ", origin, ", expected ", safetensors_name(w.type));
    return;
  }
  bool same = t->dims.size() == static_cast<std::size_t>(w.shp.rank);
  for (int i = 0; same && i < w.shp.rank; ++i) same = t->dims[static_cast<std::size_t>(i)] == w.shp[i];
  if (!same) {
    problems += concat(head, "shape is ", dims_string(t->dims), " in ", origin, ", expected ", to_string(w.shp));
    return;
  }
  if (t->bytes.size() != w.bytes()) {
    problems += concat(head, "holds ", std::to_string(t->bytes.size()), " bytes in ", origin, ", expected ",
                       std::to_string(w.bytes()));
  }
}

/// "input 0 'x' (f32[1, 784])" or "output 1 (f32[1, 10])": a `run` argument in messages.
inline std::string describe_slot(const tensor_slot& s, const char* role, std::size_t index) {
  std::string r = concat(role, " ", std::to_string(index));
  if (!s.name.empty()) r += concat(" '", s.name, "'");
  return concat(r, " (", name_of(s.type), to_string(s.shp), ")");
}

/// Checks one `run` argument against the declared input or output it is bound to: shape (for a
/// view), element count, a non-null and float-aligned pointer.
inline void check_run_argument(const tensor_slot& s, const char* role, std::size_t index, const void* data,
                               std::size_t size, const shape* claimed) {
  const auto expected = static_cast<std::size_t>(s.shp.elements());
  const auto what = [&] { return concat("partita: run: ", describe_slot(s, role, index)); };
  if (claimed && !(*claimed == s.shp))
    throw error(concat(what(), ": the view has shape ", to_string(*claimed), ", expected ", to_string(s.shp)));
  if (size != expected)
    throw error(concat(what(), ": the buffer has ", std::to_string(size), " elements, expected ", std::to_string(expected)));
  if (expected > 0 && data == nullptr) throw error(concat(what(), ": the buffer is null"));
  if (reinterpret_cast<std::uintptr_t>(data) % alignof(float) != 0)
    throw error(concat(what(), ": the buffer is not aligned for float (address % ", std::to_string(alignof(float)),
                       " = ", std::to_string(reinterpret_cast<std::uintptr_t>(data) % alignof(float)), ")"));
}

}  // namespace partita::detail
