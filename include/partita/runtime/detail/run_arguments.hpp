#pragma once
/// `run`'s arguments: each checked against its declared input or output and reduced to a pointer.
#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "partita/core/tensor_view.hpp"
#include "partita/runtime/bind.hpp"

namespace partita::detail {

/// Collects `run(inputs..., outputs...)` for an executable whose declared inputs and outputs are
/// `Inputs` and `Outputs` (arrays of `tensor_slot`).
template <const auto& Inputs, const auto& Outputs>
struct run_arguments {
  static constexpr std::size_t num_inputs = Inputs.size();

  template <std::size_t N, std::size_t M, std::size_t... I, class... Args>
  static void collect(std::array<const float*, N>& in, std::array<float*, M>& out, std::index_sequence<I...>,
                      Args&&... args) {
    (collect_one<I>(in, out, std::forward<Args>(args)), ...);
  }

  template <std::size_t I, std::size_t N, std::size_t M, class Arg>
  static void collect_one(std::array<const float*, N>& in, std::array<float*, M>& out, Arg&& arg) {
    if constexpr (I < num_inputs) {
      const auto t = as_input(arg);
      using element = std::remove_const_t<std::remove_pointer_t<decltype(t.data)>>;
      // The dtype is known at compile time, so a buffer of the wrong element type does not compile.
      static_assert(element_matches<element, Inputs[I].type>,
                    "partita: run: the element type of this input's buffer does not match its declared dtype "
                    "(f32: float, i32: std::int32_t, i64: std::int64_t, i8: std::int8_t)");
      check_run_argument(Inputs[I], "input", I, t.data, t.size, t.shp, alignof(element));
      // Every kernel argument travels as a float pointer; integer kernels read it as what it is.
      in[I] = reinterpret_cast<const float*>(t.data);
    } else {
      const auto t = as_output(arg);
      using element = std::remove_pointer_t<decltype(t.data)>;
      static_assert(element_matches<element, Outputs[I - num_inputs].type>,
                    "partita: run: the element type of this output's buffer does not match its declared dtype");
      check_run_argument(Outputs[I - num_inputs], "output", I - num_inputs, t.data, t.size, t.shp, alignof(element));
      out[I - num_inputs] = reinterpret_cast<float*>(t.data);
    }
  }
};

}  // namespace partita::detail
