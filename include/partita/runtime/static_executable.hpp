#pragma once
/// `static_executable<Model, Weights, Backends...>`: weights read where they lie, the arena inside.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include <boost/hana/tuple.hpp>

#include "partita/core/dtype.hpp"
#include "partita/core/fixed_string.hpp"
#include "partita/core/static_tensor.hpp"
#include "partita/runtime/aliasing.hpp"
#include "partita/runtime/detail/step_calls.hpp"
#include "partita/runtime/plan.hpp"

namespace partita {

namespace detail {

/// What can be wrong between a declared weight and a static weight table.
enum class static_weight_problem : std::uint8_t { none, missing, dtype_mismatch, shape_mismatch };

/// Instantiated for each declared weight; when it does not match the table, an assertion fires,
/// and the compiler prints the weight's name (`Weight`) with it.
template <fixed_string Weight, static_weight_problem P>
struct static_weight_report {
  static_assert(P != static_weight_problem::missing,
                "partita: static_executable: the weight table (Weights::tensors) has no tensor of this name (Weight)");
  static_assert(P != static_weight_problem::dtype_mismatch,
                "partita: static_executable: the weight table's tensor of this name (Weight) has another dtype than the model declares");
  static_assert(P != static_weight_problem::shape_mismatch,
                "partita: static_executable: the weight table's tensor of this name (Weight) has another shape than the model declares");
  static constexpr bool ok = P == static_weight_problem::none;
};

/// The index in `table` of the tensor called `name`, or -1.
template <std::size_t N>
constexpr int static_tensor_index(const std::array<static_tensor, N>& table, std::string_view name) {
  for (std::size_t i = 0; i < N; ++i)
    if (table[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace detail

/// A model compiled with its weights in the program: `Weights::tensors` is a `constexpr`
/// `std::array<static_tensor, N>` (the importer writes one with `--embed-weights=arrays`), and
/// each declared weight is found in it by name, dtype and shape at compile time. The executable
/// reads the weights where they lie (flash on a microcontroller) and copies none; its arena is a
/// member array of `arena_bytes`, so an executable defined at namespace scope is planned
/// memory the linker places, and its size, `sizeof`, is known before the program runs.
///
/// No heap, no exceptions, no threads of its own, no clock: the profile of `docs/embedded.md`.
/// Backends prepare their steps when the executable is constructed (a backend that packs
/// weights allocates then, and only then). `run` takes fixed-extent spans of the declared
/// element types (C arrays and `std::array`s convert), so a buffer of the wrong size or type
/// does not compile; buffers that overlap where the plan forbids it are a `partita::error`
/// (through the error hook without exceptions).
template <class Model, class Weights, class... Backends>
class static_executable {
  static_assert(sizeof...(Backends) >= 1, "partita: static_executable<Model, Weights, Backends...> needs at least the host backend");
  static_assert(backends_ok<Backends...>, "partita: static_executable: a backend failed the checks reported above");
  using steps = detail::step_calls<Model, Backends...>;

 public:
  using module = typename steps::module;
  static constexpr const auto& plan = steps::plan;
  static constexpr std::size_t num_inputs = plan.inputs.size();
  static constexpr std::size_t num_outputs = plan.outputs.size();
  static constexpr std::size_t num_steps = plan.steps.size();
  /// Bytes of activation memory: the arena this object holds.
  static constexpr std::size_t arena_bytes = plan.arena_bytes;
  /// Alignment of the arena's buffers.
  static constexpr std::size_t alignment = partita::alignment;

 private:
  static constexpr auto input_slots = plan.inputs;
  static constexpr auto output_slots = plan.outputs;
  static constexpr auto weight_slots = plan.weights;
  static constexpr std::size_t num_weights = steps::num_weights;

  // For each declared weight, the index of its tensor in `Weights::tensors` (-1 for a literal,
  // whose values the program holds already); each checked by a report above.
  static constexpr auto literal = [] {
    std::array<bool, num_weights> is{};
    for (std::size_t i = 0; i < weight_slots.size(); ++i) is[i] = weight_slots[i].literal != nullptr;
    return is;
  }();
  static constexpr auto source = [] {
    std::array<int, num_weights> at{};
    for (std::size_t i = 0; i < weight_slots.size(); ++i)
      at[i] = literal[i] ? -1 : detail::static_tensor_index(Weights::tensors, weight_slots[i].name);
    return at;
  }();
  template <std::size_t I>
  static constexpr detail::static_weight_problem problem_of() {
    if (literal[I]) return detail::static_weight_problem::none;
    if (source[I] < 0) return detail::static_weight_problem::missing;
    const static_tensor& t = Weights::tensors[static_cast<std::size_t>(source[I])];
    if (t.type != weight_slots[I].type) return detail::static_weight_problem::dtype_mismatch;
    if (!(t.shp == weight_slots[I].shp)) return detail::static_weight_problem::shape_mismatch;
    return detail::static_weight_problem::none;
  }
  static constexpr bool weights_match = []<std::size_t... I>(std::index_sequence<I...>) {
    return (true && ... &&
            detail::static_weight_report<detail::to_fixed<weight_slots[I].name.size()>(weight_slots[I].name), problem_of<I>()>::ok);
  }(std::make_index_sequence<weight_slots.size()>{});
  static_assert(weights_match, "partita: static_executable: the weight table does not match the model (see above)");

  template <std::size_t I>
  using input_element = element_of<input_slots[I].type>;
  template <std::size_t I>
  using output_element = element_of<output_slots[I].type>;

 public:
  /// The buffer type `run` takes for input `I`: `std::span<const float, 784>`.
  template <std::size_t I>
  using input_span = std::span<const input_element<I>, static_cast<std::size_t>(input_slots[I].shp.elements())>;
  /// The buffer type `run` takes for output `I`.
  template <std::size_t I>
  using output_span = std::span<output_element<I>, static_cast<std::size_t>(output_slots[I].shp.elements())>;

  /// Bytes of the weights the program holds for this model (the table's tensors it reads).
  static constexpr std::size_t weight_bytes = [] {
    std::size_t n = 0;
    for (const tensor_slot& w : weight_slots) n += w.bytes();
    return n;
  }();

  /// Points the steps at the weights and lets each backend prepare its steps.
  static_executable() {
    for (std::size_t i = 0; i < weight_slots.size(); ++i)
      weight_at_[i] = static_cast<const std::byte*>(
          literal[i] ? weight_slots[i].literal : Weights::tensors[static_cast<std::size_t>(source[i])].data);
    steps::prepare_steps(states_, weight_at_.data());
  }
  // The steps hold pointers into the arena member: an executable stays where it was made.
  static_executable(const static_executable&) = delete;
  static_executable& operator=(const static_executable&) = delete;

  /// Declared input `i`: name, dtype and shape.
  static constexpr const tensor_slot& input(std::size_t i) { return input_slots[i]; }
  /// Declared output `i`.
  static constexpr const tensor_slot& output(std::size_t i) { return output_slots[i]; }
  /// What step `s` runs: the composite or partition function's name, or the op's.
  static constexpr std::string_view step_name(std::size_t s) { return steps::step_names[s].name(); }
  /// The backend that runs step `s`.
  static constexpr std::string_view step_backend(std::size_t s) {
    constexpr std::string_view names[] = {std::string_view(Backends::name)...};
    return names[steps::owner[s]];
  }

  /// The per-executable state of backend `B`.
  template <class B>
  typename B::state& state() {
    return boost::hana::at_c<detail::index_of_backend<B, Backends...>>(states_);
  }

  /// Runs the model: the inputs, then the outputs, in model order, each convertible to its
  /// `input_span<I>` / `output_span<I>` (a buffer of another size or element type does not
  /// compile). Outputs that overlap each other, or an input where the plan cannot allow it, are
  /// reported before anything runs.
  template <class... Args>
  void run(Args&&... args) {
    static_assert(sizeof...(Args) == num_inputs + num_outputs,
                  "partita: static_executable::run(inputs..., outputs...) takes one buffer per model input and per "
                  "model output");
    std::array<const float*, num_inputs ? num_inputs : 1> in{};
    std::array<float*, num_outputs ? num_outputs : 1> out{};
    collect(in, out, std::index_sequence_for<Args...>{}, std::forward<Args>(args)...);
    detail::check_aliasing<plan>(in.data(), out.data());
    run_unchecked(in.data(), out.data());
  }

  /// Runs with raw pointers, one per input and per output in model order, that the caller has
  /// checked (sizes, alignment, overlap).
  void run_unchecked(const float* const* in, float* const* out) {
    const detail::step_frame frame{in, out, weight_at_.data(), arena_};
    for (std::size_t s = 0; s < num_steps; ++s) {
      steps::rest_before(states_, s);
      steps::runs[s](states_, frame, static_cast<int>(s));
    }
    for (const output_copy& c : copies) {
      const float* from = steps::locate(c.from, frame);
      if (from != out[c.output]) std::memcpy(out[c.output], from, c.bytes);
    }
  }

 private:
  template <std::size_t... I, class... Args>
  static void collect(std::array<const float*, num_inputs ? num_inputs : 1>& in,
                      std::array<float*, num_outputs ? num_outputs : 1>& out, std::index_sequence<I...>, Args&&... args) {
    (one<I>(in, out, std::forward<Args>(args)), ...);
  }

  template <std::size_t I, class Arg>
  static void one(std::array<const float*, num_inputs ? num_inputs : 1>& in,
                  std::array<float*, num_outputs ? num_outputs : 1>& out, Arg&& arg) {
    if constexpr (I < num_inputs) {
      static_assert(std::is_convertible_v<Arg&&, input_span<I>>,
                    "partita: static_executable::run: an input buffer is not of the declared element type and "
                    "element count (see input_span<I>)");
      const input_span<I> s = std::forward<Arg>(arg);
      in[I] = reinterpret_cast<const float*>(s.data());
    } else {
      static_assert(std::is_convertible_v<Arg&&, output_span<I - num_inputs>>,
                    "partita: static_executable::run: an output buffer is not writable, or not of the declared "
                    "element type and element count (see output_span<I>)");
      const output_span<I - num_inputs> s = std::forward<Arg>(arg);
      out[I - num_inputs] = reinterpret_cast<float*>(s.data());
    }
  }

  static constexpr auto copies = plan.copies;
  using states_t = typename steps::states;

  alignas(partita::alignment) std::byte arena_[arena_bytes ? arena_bytes : 1]{};
  std::array<const std::byte*, num_weights> weight_at_{};
  states_t states_{};
};

}  // namespace partita
