#pragma once
/// `named_input`, `named_output`: `run`'s arguments given by name (`{"x", x}`).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "partita/core/dtype.hpp"
#include "partita/core/shape.hpp"
#include "partita/core/tensor_view.hpp"

namespace partita {
namespace detail {

/// The dtype a `run` buffer of element type `T` holds.
template <class T>
constexpr dtype element_dtype() {
  if constexpr (std::is_same_v<T, float>) {
    return dtype::f32;
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return dtype::i32;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return dtype::i64;
  } else if constexpr (std::is_same_v<T, std::uint8_t>) {
    return dtype::u8;
  } else if constexpr (std::is_same_v<T, bool>) {
    return dtype::boolean;
  } else {
    static_assert(std::is_same_v<T, std::int8_t>,
                  "partita: run: a buffer's element type is float, std::int32_t, std::int64_t, std::int8_t, "
                  "std::uint8_t or bool");
    return dtype::i8;
  }
}

/// A buffer given by name, its element type known only at run time: what `run` checks against
/// the declaration it names (dtype, shape for a view, element count, null and alignment).
template <class Void>
struct named_buffer {
  std::string_view name;
  Void* data = nullptr;
  std::size_t size = 0;
  dtype type = dtype::f32;
  std::size_t align = 1;
  bool has_shape = false;  // a tensor_view: `shp` is the shape it claims
  shape shp{};

 protected:
  template <class T>
  named_buffer(std::string_view n, raw_tensor<T> t)
      : name(n), data(t.data), size(t.size), type(element_dtype<std::remove_const_t<T>>()),
        align(alignof(T)), has_shape(t.shp != nullptr), shp(t.shp ? *t.shp : shape{}) {}
};

}  // namespace detail

/// A model input given to `run` by its name: `exe.run({{"x", x}}, {{"logits", y}})`. The buffer
/// is what `run` takes positionally: a `std::vector`, a `std::span` or a `tensor_view`, of the
/// element type of the input's dtype. It refers to the caller's buffer: keep both to the call.
struct named_input : detail::named_buffer<const void> {
  template <class Buffer>
    requires requires(const Buffer& b) { detail::as_input(b); }
  named_input(std::string_view n, const Buffer& b) : named_buffer(n, detail::as_input(b)) {}
};

/// A model output given to `run` by its name (`model<output<"logits", ...>>`, or `output<k>`
/// for an output the model does not name): a writable `std::vector`, `std::span` or
/// `tensor_view` the caller keeps.
struct named_output : detail::named_buffer<void> {
  // Forwarded: a temporary or const vector meets `run`'s own message (it cannot hand a result back).
  template <class Buffer>
    requires requires(Buffer&& b) { detail::as_output(std::forward<Buffer>(b)); }
  named_output(std::string_view n, Buffer&& b) : named_buffer(n, detail::as_output(std::forward<Buffer>(b))) {}
};

}  // namespace partita
