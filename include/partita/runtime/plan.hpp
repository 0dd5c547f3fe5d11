#pragma once
/// The executable plan of a module (`plan_of`): its steps, buffers and declared tensors as one
/// exactly sized constexpr value.
#include <array>
#include <cstddef>
#include <utility>
#include <vector>

#include "partita/ir/module.hpp"
#include "partita/runtime/lowering.hpp"
#include "partita/runtime/step_ref.hpp"

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

constexpr plan_sizes sizes_of(const plan_builder& p) {
  return {p.flat.nodes.size(), p.flat.args.size(), p.steps.size(), p.ins.size(), p.inputs.size(),
          p.outputs.size(), p.weights.size(), p.copies.size(), p.buffers.size()};
}

template <class T, std::size_t N>
constexpr std::array<T, N> to_array(const std::vector<T>& v) {
  std::array<T, N> a{};
  for (std::size_t i = 0; i < N && i < v.size(); ++i) a[i] = v[i];
  return a;
}

template <plan_sizes S>
constexpr plan_value<S> plan_from(const plan_builder& p) {
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

template <plan_sizes S, class M, class Fuses>
constexpr plan_value<S> make_plan(const M& m, Fuses fuses) {
  return plan_from<S>(lower(m, fuses));
}

/// Room for the plan of `m`: inlining keeps every node at most once and each step reads its
/// node's arguments, so the module's own sizes bound every table.
template <class M>
constexpr plan_sizes plan_capacity(const M& m) {
  const std::size_t n = m.nodes.size() + 16, a = m.args.size() + 16;
  return {n, a, n, a, n, n, n, n, n};
}

/// A plan built once into tables of capacity `C`, with its true sizes (see `module_from`).
template <plan_sizes C>
struct packed_plan {
  plan_sizes sizes{};
  bool fits = false;
  plan_value<C> p{};
};

template <plan_sizes C, class M, class Fuses>
constexpr packed_plan<C> pack_plan(const M& m, Fuses fuses) {
  const plan_builder b = lower(m, fuses);
  packed_plan<C> r;
  r.sizes = sizes_of(b);
  r.fits = r.sizes.nodes <= C.nodes && r.sizes.args <= C.args && r.sizes.steps <= C.steps && r.sizes.ins <= C.ins &&
           r.sizes.inputs <= C.inputs && r.sizes.outputs <= C.outputs && r.sizes.weights <= C.weights &&
           r.sizes.copies <= C.copies && r.sizes.buffers <= C.buffers;
  if (r.fits) r.p = plan_from<C>(b);
  return r;
}

template <plan_sizes S, plan_sizes C>
constexpr plan_value<S> unpack_plan(const plan_value<C>& c) {
  plan_value<S> r{};
  for (std::size_t i = 0; i < S.nodes; ++i) r.nodes[i] = c.nodes[i];
  for (std::size_t i = 0; i < S.args; ++i) r.args[i] = c.args[i];
  for (std::size_t i = 0; i < S.steps; ++i) r.steps[i] = c.steps[i];
  for (std::size_t i = 0; i < S.ins; ++i) r.ins[i] = c.ins[i];
  for (std::size_t i = 0; i < S.inputs; ++i) r.inputs[i] = c.inputs[i];
  for (std::size_t i = 0; i < S.outputs; ++i) r.outputs[i] = c.outputs[i];
  for (std::size_t i = 0; i < S.weights; ++i) r.weights[i] = c.weights[i];
  for (std::size_t i = 0; i < S.copies; ++i) r.copies[i] = c.copies[i];
  for (std::size_t i = 0; i < S.buffers; ++i) r.buffers[i] = c.buffers[i];
  r.arena_bytes = c.arena_bytes;
  r.weight_bytes = c.weight_bytes;
  return r;
}

/// What each step of `plan` (of module `m`) runs, as `compiled::step_name` reports it: the op's
/// name, or the composite's or partition function's, copied out of the module.
template <std::size_t N, class M, class P>
constexpr std::array<function_info, N> step_names(const M& m, const P& plan) {
  std::array<function_info, N> names{};
  for (std::size_t s = 0; s < N; ++s) {
    const graph_node& n = plan.nodes[static_cast<std::size_t>(plan.steps[s].node)];
    if (n.op != op_id::call) {
      names[s].set_name(name_of(n.op));
    } else {
      const function_info& f = m.functions[static_cast<std::size_t>(n.index)];
      names[s].set_name(f.composite.empty() ? f.name() : f.composite);
    }
  }
  return names;
}

/// What step `S` of `Plan` runs, as its backend notes it (`Backend::note<step_ref<...>>()`), or
/// nothing where the backend has no `note`.
template <const auto& Module, const auto& Plan, std::size_t S, class... Backends>
constexpr kernel_note note_of_step() {
  constexpr std::size_t b = backend_index<Backends...>(Plan.steps[S].backend);
  if constexpr (b < sizeof...(Backends)) {
    using B = nth_backend<b, Backends...>;
    using step = step_ref<Module, Plan, static_cast<int>(S)>;
    if constexpr (requires { B::template note<step>(); }) return B::template note<step>();
  }
  return {};
}

/// `Plan` with every step's kernel note filled in.
template <const auto& Module, const auto& Plan, class... Backends>
constexpr auto with_notes() {
  auto p = Plan;
  // An array of the notes, not a fold over the steps: Clang bounds a fold's nesting at 256
  // operands, and models have more steps.
  [&]<std::size_t... S>(std::index_sequence<S...>) {
    const kernel_note notes[] = {kernel_note{}, note_of_step<Module, Plan, S, Backends...>()...};
    for (std::size_t i = 0; i < sizeof...(S); ++i) p.steps[i].note = notes[i + 1];
  }(std::make_index_sequence<Plan.steps.size()>{});
  return p;
}

}  // namespace detail

/// The plan of module type `M` for `Backends...` (host last), as a static constexpr object
/// (kernels refer to it by reference).
template <module_type M, class... Backends>
struct plan_of {
  // Lowering runs once, into tables of ample capacity that the exact plan then copies (a plan
  // that does not fit lowers again).
  static constexpr detail::packed_plan<detail::plan_capacity(M::value)> packed =
      detail::pack_plan<detail::plan_capacity(M::value)>(M::value, detail::fuses_in<Backends...>{});
  static constexpr detail::plan_sizes sizes = packed.sizes;
  static constexpr plan_value<sizes> lowered = [] {
    if constexpr (packed.fits) {
      return detail::unpack_plan<sizes>(packed.p);
    } else {
      return detail::make_plan<sizes>(M::value, detail::fuses_in<Backends...>{});
    }
  }();
  /// The plan, each step with the note its backend gives of the kernel it runs.
  static constexpr plan_value<sizes> value = detail::with_notes<M::value, lowered, Backends...>();
  static_assert(detail::arena_is_valid(value.buffers, value.arena_bytes),
                "partita: internal error: the memory plan places two live buffers at overlapping offsets");
};

}  // namespace partita
