#pragma once
/// Typed views of caller tensors (`tensor_view`, `raw_tensor`) passed to `run`.
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

#include "partita/core/shape.hpp"

namespace partita {

/// A tensor the caller owns: a pointer and the shape it claims. `run` checks the shape against
/// the model's declaration and names the tensor on a mismatch.
/// `tensor_view<const float>{x.data(), shape_of<1, 784>}`.
template <class T>
struct tensor_view {
  T* data = nullptr;
  shape shp{};

  constexpr std::size_t size() const { return static_cast<std::size_t>(shp.elements()); }
};

template <class T>
tensor_view(T*, shape) -> tensor_view<T>;

namespace detail {

/// A run-time argument seen as pointer + element count (+ the shape, when the caller gave one).
template <class T>
struct raw_tensor {
  T* data = nullptr;
  std::size_t size = 0;
  const shape* shp = nullptr;
};

template <class T>
raw_tensor<const T> as_input(const tensor_view<T>& v) {
  return {v.data, v.size(), &v.shp};
}
template <class T>
raw_tensor<const T> as_input(std::span<T> s) {
  return {s.data(), s.size(), nullptr};
}
template <class T>
raw_tensor<const T> as_input(const std::vector<T>& v) {
  return {v.data(), v.size(), nullptr};
}

template <class T>
raw_tensor<T> as_output(const tensor_view<T>& v) {
  static_assert(!std::is_const_v<T>, "partita: run: an output view must be writable (tensor_view<float>)");
  return {v.data, v.size(), &v.shp};
}
template <class T>
raw_tensor<T> as_output(std::span<T> s) {
  static_assert(!std::is_const_v<T>, "partita: run: an output span must be writable (std::span<float>)");
  return {s.data(), s.size(), nullptr};
}
template <class T>
raw_tensor<T> as_output(std::vector<T>& v) {
  return {v.data(), v.size(), nullptr};
}

}  // namespace detail
}  // namespace partita
