#pragma once
/// Argument checks shared by `bind` and `run`: names, shapes, sizes.
#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "partita/core/error.hpp"
#include "partita/core/detail/concat.hpp"
#include "partita/runtime/plan.hpp"
#include "partita/runtime/tensor_data.hpp"

namespace partita::detail {

// The `template <class = void>` functions below are templates of nothing: `bind` and `run`,
// templates themselves, call them, so they are compiled where an executable binds or runs.
/// Appends to `problems` one line per mismatch between a declared weight and what the source
/// holds under that name.
template <class = void>
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

/// True for weight sources that list their tensors (`tensors()`, as `safetensors_file` and
/// `weight_set` do): `bind` can then tell which of them the model does not use.
template <class Source>
concept listing_source = requires(const Source& s) {
  { s.tensors() } -> std::convertible_to<std::span<const tensor_data>>;
};

/// The names of the tensors of `source` that no declared weight reads, in the source's order (a
/// `literal`'s values come from the program, so a tensor of its name is not read either). Empty
/// for a source that does not list its tensors.
template <std::size_t N, class Source>
std::vector<std::string> unused_tensors(const std::array<tensor_slot, N>& slots, const Source& source) {
  std::vector<std::string> unused;
  if constexpr (listing_source<Source>) {
    std::vector<std::string_view> read;
    for (const tensor_slot& w : slots)
      if (!w.literal) read.push_back(w.name);
    std::sort(read.begin(), read.end());
    for (const tensor_data& t : std::span<const tensor_data>(source.tensors()))
      if (!std::binary_search(read.begin(), read.end(), std::string_view(t.name))) unused.push_back(t.name);
  }
  return unused;
}

/// What `bind` says of the tensors in `unused`: one line each, the first `shown` of them, for
/// a bind that rejects them.
template <class = void>
inline std::string unused_problems(const std::vector<std::string>& unused, std::string_view origin, std::size_t shown = 8) {
  std::string r;
  for (std::size_t i = 0; i < unused.size() && i < shown; ++i)
    r += concat("\n  tensor '", unused[i], "' of ", origin, ": the model has no weight of that name");
  if (unused.size() > shown) r += concat("\n  ... and ", std::to_string(unused.size() - shown), " more unused tensors");
  return r;
}

/// Every declared weight, checked and copied out of `source` (literals out of the program):
/// those in `kept` to `kept_to`, the others to `staged_to`, each at its `offset`. Throws one
/// `partita::error` listing every mismatch, then `more` (lines of other problems found), before
/// anything is copied.
template <std::size_t N, std::size_t M, class Source>
void gather_weights(const std::array<tensor_slot, N>& slots, const Source& source, const std::array<bool, M>& kept,
                    const std::array<std::size_t, M>& offset, std::byte* kept_to, std::byte* staged_to,
                    std::string_view more = {}) {
  static_assert(M >= N);
  std::array<const tensor_data*, N> found{};
  std::string problems;
  for (std::size_t i = 0; i < N; ++i) {
    if (slots[i].literal) continue;  // its values are in the program
    found[i] = source.find(slots[i].name);
    check_weight(slots[i], found[i], source.origin(), problems);
  }
  problems += more;
  if (!problems.empty()) detail::raise(error(concat("partita: bind failed:", problems)));
  for (std::size_t i = 0; i < N; ++i) {
    const void* from = slots[i].literal ? static_cast<const void*>(slots[i].literal)
                                        : static_cast<const void*>(found[i]->bytes.data());
    std::memcpy((kept[i] ? kept_to : staged_to) + offset[i], from, slots[i].bytes());
  }
}

/// "input 0 'x' (f32[1, 784])" or "output 1 (f32[1, 10])": a `run` argument in messages. A
/// name is left out where it says no more than the position (`output1`, the name of an unnamed
/// output), unless `named` (the caller gave it by that name).
template <class = void>
inline std::string describe_slot(const tensor_slot& s, const char* role, std::size_t index, bool named = false) {
  std::string r = concat(role, " ", std::to_string(index));
  if (!s.name.empty() && (named || s.name != concat(role, std::to_string(index)))) r += concat(" '", s.name, "'");
  return concat(r, " (", name_of(s.type), to_string(s.shp), ")");
}

/// The weight source of an executable whose weights are all literals: it holds nothing.
struct no_weight_source {
  static constexpr const tensor_data* find(std::string_view) { return nullptr; }
  static constexpr std::string_view origin() { return "the program"; }
};

/// Whether the C++ element type `T` holds dtype `D` in a `run` buffer (f16 has none).
template <class T, dtype D>
inline constexpr bool element_matches = D != dtype::f16 && std::is_same_v<T, element_of<D>>;

/// Checks one `run` argument against the declared input or output it is bound to: shape (for a
/// view), element count, a non-null pointer aligned for its element type (`align`).
template <class = void>
inline void check_run_argument(const tensor_slot& s, const char* role, std::size_t index, const void* data,
                               std::size_t size, const shape* claimed, std::size_t align = alignof(float)) {
  const auto expected = static_cast<std::size_t>(s.shp.elements());
  const auto what = [&] { return concat("partita: run: ", describe_slot(s, role, index)); };
  if (claimed && !(*claimed == s.shp))
    detail::raise(error(concat(what(), ": the view has shape ", to_string(*claimed), ", expected ", to_string(s.shp))));
  if (size != expected)
    detail::raise(error(concat(what(), ": the buffer has ", std::to_string(size), " elements, expected ", std::to_string(expected))));
  if (expected > 0 && data == nullptr) detail::raise(error(concat(what(), ": the buffer is null")));
  if (reinterpret_cast<std::uintptr_t>(data) % align != 0)
    detail::raise(error(concat(what(), ": the buffer is not aligned for ", s.type == dtype::f32 ? std::string_view("float") : name_of(s.type), " (address % ", std::to_string(align),
                       " = ", std::to_string(reinterpret_cast<std::uintptr_t>(data) % align), ")")));
}

}  // namespace partita::detail
