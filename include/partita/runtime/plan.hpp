#pragma once
/// The executable plan of a module (`plan_of`): its steps, buffers and declared tensors as one
/// exactly sized constexpr value.
#include <array>
#include <cstddef>
#include <vector>

#include "partita/ir/module.hpp"
#include "partita/runtime/lowering.hpp"

namespace partita {
namespace detail {

/// The sizes of a plan's tables (a `plan_value` is exactly as large as its module needs).
struct plan_sizes {
  std::size_t nodes, args, steps, ins, inputs, outputs, weights, copies, buffers;
};

}  // namespace detail

/// The executable plan of a module: steps in schedule order, the static memory plan and the
/// declared inputs, outputs and weights. Computed entirely at compile time.
template <detail::plan_sizes S>
struct plan_value {
  std::array<graph_node, S.nodes> nodes{};  // main with calls inlined; steps index it
  std::array<int, S.args> args{};
  std::array<plan_step, S.steps> steps{};
  std::array<buffer_ref, S.ins> ins{};
  std::array<tensor_slot, S.inputs> inputs{};
  std::array<tensor_slot, S.outputs> outputs{};
  std::array<tensor_slot, S.weights> weights{};
  std::array<output_copy, S.copies> copies{};
  std::array<buffer_lifetime, S.buffers> buffers{};
  std::size_t arena_bytes = 0;
  std::size_t weight_bytes = 0;
};

namespace detail {

template <class M, class Fuses>
constexpr plan_sizes sizes_of_plan(const M& m, Fuses fuses) {
  const plan_builder p = lower(m, fuses);
  return {p.flat.nodes.size(), p.flat.args.size(), p.steps.size(), p.ins.size(), p.inputs.size(),
          p.outputs.size(), p.weights.size(), p.copies.size(), p.buffers.size()};
}

template <class T, std::size_t N>
constexpr std::array<T, N> to_array(const std::vector<T>& v) {
  std::array<T, N> a{};
  for (std::size_t i = 0; i < N; ++i) a[i] = v[i];
  return a;
}

template <plan_sizes S, class M, class Fuses>
constexpr plan_value<S> make_plan(const M& m, Fuses fuses) {
  const plan_builder p = lower(m, fuses);
  plan_value<S> r{};
  r.nodes = to_array<graph_node, S.nodes>(p.flat.nodes);
  r.args = to_array<int, S.args>(p.flat.args);
  r.steps = to_array<plan_step, S.steps>(p.steps);
  r.ins = to_array<buffer_ref, S.ins>(p.ins);
  r.inputs = to_array<tensor_slot, S.inputs>(p.inputs);
  r.outputs = to_array<tensor_slot, S.outputs>(p.outputs);
  r.weights = to_array<tensor_slot, S.weights>(p.weights);
  r.copies = to_array<output_copy, S.copies>(p.copies);
  r.buffers = to_array<buffer_lifetime, S.buffers>(p.buffers);
  r.arena_bytes = p.arena_bytes;
  r.weight_bytes = p.weight_bytes;
  return r;
}

}  // namespace detail

/// The plan of module type `M` for `Backends...` (host last), as a static constexpr object
/// (kernels refer to it by reference).
template <module_type M, class... Backends>
struct plan_of {
  static constexpr detail::plan_sizes sizes = detail::sizes_of_plan(M::value, detail::fuses_in<Backends...>{});
  static constexpr plan_value<sizes> value = detail::make_plan<sizes>(M::value, detail::fuses_in<Backends...>{});
  static_assert(detail::arena_is_valid(value.buffers, value.arena_bytes),
                "partita: internal error: the memory plan places two live buffers at overlapping offsets");
};

}  // namespace partita
