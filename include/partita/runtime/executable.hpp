#pragma once
#include <array>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <boost/hana/at.hpp>
#include <boost/hana/tuple.hpp>

#include "partita/backend/backend.hpp"
#include "partita/backend/step.hpp"
#include "partita/core/error.hpp"
#include "partita/core/tensor_view.hpp"
#include "partita/detail/aligned_buffer.hpp"
#include "partita/ir/model.hpp"
#include "partita/pass/pipeline.hpp"
#include "partita/runtime/bind.hpp"
#include "partita/runtime/plan.hpp"

namespace partita {
namespace detail {

static_assert(aligned_buffer::align == alignment, "the arena's buffers are aligned as the plan assumes");

template <class B, class... Bs>
inline constexpr std::size_t index_of_backend = [] {
  constexpr bool same[] = {std::is_same_v<B, Bs>...};
  for (std::size_t i = 0; i < sizeof...(Bs); ++i)
    if (same[i]) return i;
  return sizeof...(Bs);
}();

template <std::size_t I, class... Bs>
using nth_backend = std::tuple_element_t<I, std::tuple<Bs...>>;

template <class M>
inline constexpr bool is_model = false;
template <class... Outs>
inline constexpr bool is_model<model<Outs...>> = true;

/// True for backends that change a model before it runs: their patterns, phases, or claims.
template <class B>
inline constexpr bool takes_part = !is_host_backend<B> || requires { typename B::patterns; } ||
                                   requires { typename B::pre_partition; } || requires { typename B::post_partition; };

/// What `compiled<Model, Backends...>` runs: a module as given; a `model<...>` through the eager
/// flow (`partition<Model, Backends...>`) when a backend takes part in it, as is.
template <class Model, class... Backends>
using compiled_module = typename std::conditional_t<is_model<Model> && (takes_part<Backends> || ...),
                                                    std::type_identity<partition<Model, Backends...>>,
                                                    std::type_identity<module_type_t<Model>>>::type;

}  // namespace detail

/// A model compiled for the given backends (host last): `compiled<net, cpu> exe;`.
/// `Model` is a module type produced by passes, run as it is, or a `model<...>`, which first
/// goes through the eager flow `partition<Model, Backends...>` when a backend has patterns,
/// phases or claims ops (so `compiled<net, cpu>` runs cpu's fused composites). Everything about the model's
/// structure is fixed at compile time; the executable holds the weights (after `bind`), the
/// arena (`arena_bytes`) and each backend's state. `run` allocates nothing.
template <class Model, class... Backends>
class compiled {
  static_assert(sizeof...(Backends) >= 1, "partita: compiled<Model, Backends...> needs at least the host backend");
  static_assert(backends_ok<Backends...>, "partita: compiled<Model, Backends...>: a backend failed the checks reported above");

 public:
  using module = detail::compiled_module<Model, Backends...>;
  static constexpr const auto& plan = plan_of<module, Backends...>::value;

  /// Bytes of activation memory, planned at compile time.
  static constexpr std::size_t arena_bytes = plan.arena_bytes;
  /// Bytes of weight storage (each weight aligned).
  static constexpr std::size_t weight_bytes = plan.weight_bytes;
  /// Alignment of every buffer in the arena and the weight storage.
  static constexpr std::size_t alignment = partita::alignment;
  static constexpr std::size_t num_inputs = plan.inputs.size();
  static constexpr std::size_t num_outputs = plan.outputs.size();
  static constexpr std::size_t num_steps = plan.steps.size();

  compiled() : arena_(arena_bytes), weights_(weight_bytes) {
    // With no weights there is no bind: backends prepare their kernels now.
    if constexpr (plan.weights.empty()) prepare_steps(std::make_index_sequence<num_steps>{});
  }
  compiled(const compiled&) = delete;
  compiled& operator=(const compiled&) = delete;
  compiled(compiled&&) noexcept = default;
  compiled& operator=(compiled&&) noexcept = default;

  /// Declared input `i`: name, dtype and shape.
  static constexpr const tensor_slot& input(std::size_t i) { return plan.inputs[i]; }
  /// Declared output `i` (dtype and shape).
  static constexpr const tensor_slot& output(std::size_t i) { return plan.outputs[i]; }
  /// The backend that runs step `s` (by name: the host's too).
  static constexpr std::string_view step_backend(std::size_t s) {
    constexpr std::string_view names[] = {std::string_view(Backends::name)...};
    return names[detail::backend_index<Backends...>(plan.steps[s].backend)];
  }
  /// What step `s` runs: the composite or partition function's name, or the op's.
  static constexpr std::string_view step_name(std::size_t s) {
    const graph_node& n = plan.nodes[static_cast<std::size_t>(plan.steps[s].node)];
    if (n.op != op_id::call) return name_of(n.op);
    const function_info& f = module::value.functions[static_cast<std::size_t>(n.index)];
    return f.composite.empty() ? f.name() : f.composite;
  }

  /// Declared weight `i`: name, dtype, shape and offset in the weight storage.
  static constexpr const tensor_slot& weight(std::size_t i) { return plan.weights[i]; }

  /// Copies every declared weight from `source` (a `safetensors_file`, a `weight_set`, or
  /// anything with `find(name)` and `origin()`), after checking names, dtypes and shapes, then
  /// lets each backend prepare its steps (`kernel<Step>::prepare(state&, in)`, where `in` holds
  /// the step's weight arguments and null for the others: packing GEMM panels, building
  /// primitives). A mismatch changes nothing, and the exception names each offending tensor,
  /// expected vs actual; if a backend's `prepare` throws, the executable is left unbound.
  template <class Source>
  compiled& bind(const Source& source) {
    std::array<const tensor_data*, plan.weights.size()> found{};
    std::string problems;
    for (std::size_t i = 0; i < plan.weights.size(); ++i) {
      found[i] = source.find(plan.weights[i].name);
      detail::check_weight(plan.weights[i], found[i], source.origin(), problems);
    }
    if (!problems.empty()) throw error(detail::concat("partita: bind failed:", problems));
    bound_ = false;
    for (std::size_t i = 0; i < plan.weights.size(); ++i)
      std::memcpy(weights_.get() + plan.weights[i].offset, found[i]->bytes.data(), plan.weights[i].bytes());
    prepare_steps(std::make_index_sequence<num_steps>{});
    bound_ = true;
    return *this;
  }

  /// The per-executable state of backend `B` (one of `Backends...`).
  template <class B>
  typename B::state& state() {
    return boost::hana::at_c<detail::index_of_backend<B, Backends...>>(states_);
  }

  template <class B>
  const typename B::state& state() const {
    return boost::hana::at_c<detail::index_of_backend<B, Backends...>>(states_);
  }

  /// True once `bind` has succeeded.
  bool bound() const { return bound_; }

  /// Runs the model: the inputs, then the outputs, in model order. Each is a
  /// `std::span<const float>` / `std::span<float>`, a `std::vector<float>` or a `tensor_view`;
  /// sizes (and shapes, for views) are checked against the declaration.
  template <class... Args>
  void run(Args&&... args) {
    static_assert(sizeof...(Args) == num_inputs + num_outputs,
                  "partita: run(inputs..., outputs...) takes one argument per model input and per model output");
    if (!bound_ && !plan.weights.empty()) throw error("partita: run called before bind: the weights are not loaded");
    std::array<const float*, num_inputs ? num_inputs : 1> in{};
    std::array<float*, num_outputs ? num_outputs : 1> out{};
    collect(in, out, std::index_sequence_for<Args...>{}, std::forward<Args>(args)...);
    execute(in.data(), out.data());
  }

  /// Runs with already checked raw pointers: one per input and per output, in model order.
  void run_unchecked(const float* const* inputs, float* const* outputs) { execute(inputs, outputs); }

 private:
  template <std::size_t N, std::size_t M, std::size_t... I, class... Args>
  static void collect(std::array<const float*, N>& in, std::array<float*, M>& out, std::index_sequence<I...>,
                      Args&&... args) {
    (collect_one<I>(in, out, std::forward<Args>(args)), ...);
  }

  template <std::size_t I, std::size_t N, std::size_t M, class Arg>
  static void collect_one(std::array<const float*, N>& in, std::array<float*, M>& out, Arg&& arg) {
    if constexpr (I < num_inputs) {
      const auto t = detail::as_input(arg);
      detail::check_run_argument(plan.inputs[I], "input", I, t.size, t.shp);
      in[I] = t.data;
    } else {
      const auto t = detail::as_output(arg);
      detail::check_run_argument(plan.outputs[I - num_inputs], "output", I - num_inputs, t.size, t.shp);
      out[I - num_inputs] = t.data;
    }
  }

  void execute(const float* const* in, float* const* out) {
    run_steps(in, out, std::make_index_sequence<num_steps>{});
    for (const output_copy& c : plan.copies)
      std::memcpy(out[c.output], locate(c.from, in, out), c.bytes);
  }

  template <std::size_t... S>
  void run_steps([[maybe_unused]] const float* const* in, [[maybe_unused]] float* const* out, std::index_sequence<S...>) {
    (run_step<S>(in, out), ...);
  }

  float* locate(const buffer_ref& r, const float* const* in, float* const* out) const {
    switch (r.kind) {
      case storage::input: return const_cast<float*>(in[r.index]);  // read only: only passed as kernel input
      case storage::weight: return reinterpret_cast<float*>(weights_.get() + r.offset);
      case storage::arena: return reinterpret_cast<float*>(arena_.get() + r.offset);
      case storage::output: return out[r.index];
      case storage::none: break;
    }
    return nullptr;
  }

  template <std::size_t S, std::size_t... K>
  static constexpr std::array<buffer_ref, sizeof...(K)> step_inputs(std::index_sequence<K...>) {
    return {plan.ins[static_cast<std::size_t>(plan.steps[S].first_in) + K]...};
  }

  template <std::size_t S>
  static constexpr std::size_t owner_of = detail::backend_index<Backends...>(plan.steps[S].backend);

  template <std::size_t S>
  using kernel_of = typename detail::nth_backend<owner_of<S>, Backends...>::template kernel<
      step_ref<module::value, plan_of<module, Backends...>::value, static_cast<int>(S)>>;

  template <std::size_t S>
  void run_step(const float* const* in, float* const* out) {
    constexpr const plan_step& st = plan.steps[S];
    static_assert(owner_of<S> < sizeof...(Backends), "partita: a step belongs to a backend that is not in compiled<...>");
    // The backend of the step before (cyclically: a run follows the previous one) rests if it can.
    constexpr std::size_t before = owner_of<(S + num_steps - 1) % num_steps>;
    if constexpr (before != owner_of<S>) {
      if constexpr (requires(typename detail::nth_backend<before, Backends...>::state& b) { b.rest(); })
        boost::hana::at_c<before>(states_).rest();
    }
    constexpr auto refs = step_inputs<S>(std::make_index_sequence<static_cast<std::size_t>(st.num_in)>{});
    std::array<const float*, refs.size()> args{};
    for (std::size_t k = 0; k < refs.size(); ++k) args[k] = locate(refs[k], in, out);
    kernel_of<S>::run(boost::hana::at_c<owner_of<S>>(states_), args.data(), locate(st.out, in, out));
  }

  template <std::size_t... S>
  void prepare_steps(std::index_sequence<S...>) {
    (prepare_step<S>(), ...);
  }

  template <std::size_t S>
  void prepare_step() {
    if constexpr (requires(typename detail::nth_backend<owner_of<S>, Backends...>::state& st, const float* const* p) {
                    kernel_of<S>::prepare(st, p);
                  }) {
      constexpr auto refs = step_inputs<S>(std::make_index_sequence<static_cast<std::size_t>(plan.steps[S].num_in)>{});
      std::array<const float*, refs.size()> args{};
      for (std::size_t k = 0; k < refs.size(); ++k)
        args[k] = refs[k].kind == storage::weight ? reinterpret_cast<const float*>(weights_.get() + refs[k].offset) : nullptr;
      try {
        kernel_of<S>::prepare(boost::hana::at_c<owner_of<S>>(states_), args.data());
      } catch (const std::exception& e) {
        throw error(detail::concat("partita: bind: backend '", std::string_view(detail::nth_backend<owner_of<S>, Backends...>::name),
                                   "' rejected step ", std::to_string(S), " (", step_name(S), "): ", e.what()));
      }
    }
  }

  detail::aligned_buffer arena_;
  detail::aligned_buffer weights_;
  // One state per backend, of unrelated types: a Hana tuple, indexed at compile time.
  boost::hana::tuple<typename Backends::state...> states_{};
  bool bound_ = false;
};

}  // namespace partita
