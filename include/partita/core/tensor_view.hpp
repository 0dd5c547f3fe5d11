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

// A read-only output gets Partita's message alone: the const branch returns an empty tensor of
// the mutable type, so no second error (a const float* assigned to a float*) follows it.
template <class T>
raw_tensor<std::remove_const_t<T>> as_output(const tensor_view<T>& v) {
  if constexpr (std::is_const_v<T>) {
    static_assert(!std::is_const_v<T>, "partita: run: an output view must be writable (tensor_view<float>)");
    return {};
  } else {
    return {v.data, v.size(), &v.shp};
  }
}
template <class T>
raw_tensor<std::remove_const_t<T>> as_output(std::span<T> s) {
  if constexpr (std::is_const_v<T>) {
    static_assert(!std::is_const_v<T>, "partita: run: an output span must be writable (std::span<float>)");
    return {};
  } else {
    return {s.data(), s.size(), nullptr};
  }
}
template <class T>
raw_tensor<T> as_output(std::vector<T>& v) {
  return {v.data(), v.size(), nullptr};
}
// Chosen only for a const vector or a temporary one: neither can hand a result back.
template <class T>
raw_tensor<T> as_output(const std::vector<T>&) {
  static_assert(sizeof(T) == 0,
                "partita: run: an output vector must be writable and outlive the call (a std::vector<float> "
                "the caller keeps, not a const one or a temporary)");
  return {};
}

}  // namespace detail
}  // namespace partita
