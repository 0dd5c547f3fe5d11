#pragma once
/// `run`'s arguments: each checked against its declared input or output and reduced to a pointer.
#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "partita/core/error.hpp"
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
                    "(f32: float, i32: std::int32_t, i64: std::int64_t, i8: std::int8_t, u8: std::uint8_t)");
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

/// Matches the buffers of `given` to the declared `slots` (inputs or outputs, as `role` says) by
/// name and checks each as a positional argument is checked, into `to` in declaration order.
/// Every slot takes exactly one buffer: a name the model does not declare, one given twice, a
/// slot left without a buffer or a buffer of another dtype is a `partita::error` naming it.
template <class Named, std::size_t N, class Ptr, std::size_t K>
void collect_named(const std::array<tensor_slot, N>& slots, const char* role, std::span<const Named> given,
                   std::array<Ptr, K>& to) {
  static_assert(K >= N);
  std::array<const Named*, N ? N : 1> at{};
  for (const Named& g : given) {
    std::size_t i = 0;
    while (i < N && (slots[i].name.empty() || slots[i].name != g.name)) ++i;
    if (i == N) {
      std::string declared;
      for (const tensor_slot& s : slots) declared += concat(declared.empty() ? "" : ", ", "'", s.name, "'");
      detail::raise(error(concat("partita: run: the model has no ", role, " named '", g.name, "' (its ", role, "s: ",
                         declared.empty() ? std::string("none") : declared, ")")));
    }
    if (at[i])
      detail::raise(error(concat("partita: run: ", describe_slot(slots[i], role, i, true), " is given twice")));
    at[i] = &g;
  }
  for (std::size_t i = 0; i < N; ++i) {
    const Named* g = at[i];
    if (!g)
      detail::raise(error(concat("partita: run: ", describe_slot(slots[i], role, i, true), " is given no buffer")));
    if (g->type != slots[i].type)
      detail::raise(error(concat("partita: run: ", describe_slot(slots[i], role, i, true), ": the buffer holds ",
                         name_of(g->type), " elements, expected ", name_of(slots[i].type))));
    check_run_argument(slots[i], role, i, g->data, g->size, g->has_shape ? &g->shp : nullptr, g->align);
    to[i] = static_cast<Ptr>(g->data);
  }
}

}  // namespace partita::detail
