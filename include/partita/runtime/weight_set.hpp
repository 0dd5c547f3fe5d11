#pragma once
/// `weight_set`: a model's weights by name, as `bind` reads them.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "partita/core/dtype.hpp"
#include "partita/core/static_tensor.hpp"
#include "partita/core/error.hpp"
#include "partita/core/detail/concat.hpp"
#include "partita/runtime/detail/name_order.hpp"
#include "partita/runtime/tensor_data.hpp"

namespace partita {

/// Named tensors held in memory. The set references the caller's buffers without copying them:
/// they must outlive it.
class weight_set {
 public:
  /// A set over the tensors of a weight table compiled into the program (`static_tensor`s, as
  /// `partita_import.py --embed-weights=arrays` writes them), for `compiled<>::bind`: the set
  /// refers to the table's arrays, which live as long as the program.
  template <std::size_t N>
  static weight_set of(const std::array<static_tensor, N>& table) {
    weight_set set;
    for (const static_tensor& t : table) {
      const auto bytes = static_cast<std::size_t>(t.shp.elements()) * size_of(t.type);
      set.add(std::string(t.name), t.type, std::span(static_cast<const std::byte*>(t.data), bytes),
              std::span<const std::int64_t>(t.shp.dims.data(), static_cast<std::size_t>(t.shp.rank)));
    }
    return set;
  }

  /// Adds float32 data `data` of shape `dims`.
  weight_set& add(std::string name, std::span<const float> data, std::initializer_list<std::int64_t> dims) {
    return add(std::move(name), data, std::span<const std::int64_t>(dims.begin(), dims.size()));
  }

  /// Adds float32 data `data` of shape `dims`.
  weight_set& add(std::string name, std::span<const float> data, std::span<const std::int64_t> dims) {
    // Tensors are little-endian on disk and in tensor_data; a float span is only that on a
    // little-endian host.
    static_assert(std::endian::native == std::endian::little, "weight_set needs a little-endian host");
    return add(std::move(name), dtype::f32, std::as_bytes(data), dims);
  }

  /// Adds raw little-endian data of element type `type` and shape `dims`.
  weight_set& add(std::string name, dtype type, std::span<const std::byte> bytes,
                  std::initializer_list<std::int64_t> dims) {
    return add(std::move(name), type, bytes, std::span<const std::int64_t>(dims.begin(), dims.size()));
  }

  /// Adds raw little-endian data of element type `type` and shape `dims`.
  weight_set& add(std::string name, dtype type, std::span<const std::byte> bytes,
                  std::span<const std::int64_t> dims) {
    // Where the name goes in the sorted order: a tensor of that name already there is a duplicate.
    const std::size_t at = detail::name_lower_bound(tensors_, order_, name);
    if (at < order_.size() && tensors_[order_[at]].name == name)
      detail::raise(error(detail::concat("in-memory weight set: duplicate tensor '", name, "'")));
    const auto elements = detail::checked_elements(dims);
    if (!elements)
      detail::raise(error(detail::concat("in-memory weight set: tensor '", name, "': invalid shape ", detail::dims_string(dims))));
    const auto expected = detail::checked_bytes(*elements, size_of(type));
    if (!expected || *expected != bytes.size())
      detail::raise(error(detail::concat("in-memory weight set: tensor '", name, "': ", safetensors_name(type), " shape ",
                                 detail::dims_string(dims), " needs ",
                                 expected ? std::to_string(*expected) : std::string("too many"), " bytes, got ",
                                 std::to_string(bytes.size()))));
    tensors_.push_back(tensor_data{std::move(name), std::string(safetensors_name(type)), type,
                                   std::vector<std::int64_t>(dims.begin(), dims.end()), bytes});
    order_.insert(order_.begin() + static_cast<std::ptrdiff_t>(at), tensors_.size() - 1);
    return *this;
  }

  /// The tensor called `name`, or nullptr.
  const tensor_data* find(std::string_view name) const { return detail::find_by_name(tensors_, order_, name); }

  /// Every tensor, in the order added.
  std::span<const tensor_data> tensors() const { return tensors_; }

  /// Where the tensors come from, for messages.
  std::string_view origin() const { return "in-memory weight set"; }

 private:
  std::vector<tensor_data> tensors_;
  std::vector<std::size_t> order_;  // positions of tensors_, sorted by name
};

}  // namespace partita
