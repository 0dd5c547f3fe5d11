#pragma once
// How the peers find their weights: by the Partita models' names, so that every implementation
// runs on the same numbers.
#include <cstddef>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace peers {

/// The f32 data of the weight called `name`; throws when there is none.
using weight_lookup = std::function<std::span<const float>(std::string_view name)>;

/// A lookup over a `partita::weight_set` or `partita::safetensors_file` (anything whose
/// `find(name)` returns a `tensor_data*`). The source must outlive the lookup.
template <class Source>
weight_lookup lookup_in(const Source& source) {
  return [&source](std::string_view name) -> std::span<const float> {
    const auto* t = source.find(name);
    if (!t) throw std::runtime_error("peers: weight '" + std::string(name) + "' not found");
    if (t->dtype_name != "F32") throw std::runtime_error("peers: weight '" + std::string(name) + "' is not f32");
    return {reinterpret_cast<const float*>(t->bytes.data()), t->bytes.size() / sizeof(float)};
  };
}

/// `lookup(name)`, checked to hold `elements` values.
inline std::span<const float> fetch(const weight_lookup& lookup, std::string_view name, std::size_t elements) {
  const std::span<const float> w = lookup(name);
  if (w.size() != elements)
    throw std::runtime_error("peers: weight '" + std::string(name) + "' has " + std::to_string(w.size()) +
                             " values, expected " + std::to_string(elements));
  return w;
}

}  // namespace peers
