#pragma once
/// `compiled<Model, Backends...>`: the executable, its `bind` and its `run`.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/at.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>

#include "partita/backend/backend.hpp"
#include "partita/core/error.hpp"
#include "partita/core/shape.hpp"
#include "partita/core/tensor_view.hpp"
#include "partita/core/detail/aligned_buffer.hpp"
#include "partita/core/detail/clock.hpp"
#include "partita/ir/model.hpp"
#include "partita/pass/pipeline.hpp"
#include "partita/runtime/aliasing.hpp"
#include "partita/runtime/bind.hpp"
#include "partita/runtime/detail/call_guard.hpp"
#include "partita/runtime/detail/run_arguments.hpp"
#include "partita/runtime/detail/step_calls.hpp"
#include "partita/runtime/named_tensor.hpp"
#include "partita/runtime/plan.hpp"
#include "partita/runtime/profile.hpp"

namespace partita {
namespace detail {

static_assert(aligned_buffer::align == alignment, "the arena's buffers are aligned as the plan assumes");
}  // namespace detail

/// What `bind` does when its source holds tensors the model has no weight for (a checkpoint of
/// a larger model, a renamed layer): `report` binds and lists them in `unused_weights()`;
/// `reject` throws a `partita::error` naming them and leaves the executable as it was.
enum class on_unused : std::uint8_t { report, reject };

/// A model compiled for the given backends (host last): `compiled<net, cpu> exe;`.
/// `Model` is a module type produced by passes, run as it is, or a `model<...>`, which first
/// goes through the eager flow `partition<Model, Backends...>` when a backend has patterns,
/// phases or claims ops (so `compiled<net, cpu>` runs cpu's fused composites). Everything about the model's
/// structure is fixed at compile time; the executable holds the weights (after `bind`), the
/// arena (`arena_bytes`) and each backend's state. `run` allocates nothing.
///
/// Threads: an executable runs one call at a time. A `run` or `bind` that starts while another
/// thread is inside `run` or `bind` of the same executable throws a `partita::error` saying it is
/// busy; it never waits and never shares the arena. Give each thread its own executable (they
/// share nothing), or serialize the calls; calls made one after another may come from
/// different threads.
template <class Model, class... Backends>
class compiled {
  static_assert(sizeof...(Backends) >= 1, "partita: compiled<Model, Backends...> needs at least the host backend");
  static_assert(backends_ok<Backends...>, "partita: compiled<Model, Backends...>: a backend failed the checks reported above");
  // Each step's backend, kernel, prepared state and buffers, and the function that calls it.
  using steps = detail::step_calls<Model, Backends...>;

 public:
  using module = typename steps::module;
  static constexpr const auto& plan = steps::plan;

 private:
  // What run time reads of the plan, as tables of their own: `plan` itself (its nodes point at
  // every node type's descriptor) then stays a compile-time value and never reaches the object
  // file with the descriptors and their long symbol names.
  static constexpr auto input_slots = plan.inputs;
  static constexpr auto output_slots = plan.outputs;
  static constexpr auto weight_slots = plan.weights;

 public:
  /// Bytes of activation memory, planned at compile time.
  static constexpr std::size_t arena_bytes = plan.arena_bytes;
  /// Bytes of the declared weights (each aligned), as `bind` receives them.
  static constexpr std::size_t weight_bytes = plan.weight_bytes;
  /// Alignment of every buffer in the arena and the weight storage.
  static constexpr std::size_t alignment = partita::alignment;
  static constexpr std::size_t num_inputs = plan.inputs.size();
  static constexpr std::size_t num_outputs = plan.outputs.size();
  static constexpr std::size_t num_steps = plan.steps.size();

  /// Number of kernel instantiations: steps of a backend with `shares_kernels` that compute the
  /// same thing (same op or composite body, attributes, dtypes and shapes) share one, so a
  /// network of repeated blocks has far fewer kernels than steps (`num_kernels <= num_steps`).
  static constexpr std::size_t num_kernels = detail::count_kernels(steps::canonical);
  /// The step whose kernel instantiation step `s` runs (`Step::index` of its kernel): `s`
  /// itself, or the first step with the same signature when its backend shares kernels.
  static constexpr std::size_t kernel_step(std::size_t s) { return static_cast<std::size_t>(steps::canonical[s]); }

  /// Bytes of weights the executable keeps as given after `bind`: those a kernel reads at run
  /// time. Weights that only backends with packed forms use (`packs_weights`) are not kept.
  static constexpr std::size_t kept_weight_bytes = steps::layout.kept_bytes;

  compiled() : arena_(arena_bytes, "the arena (activations between steps, `arena_bytes`)") {
    // With no weights there is no bind: backends prepare their kernels now. With literals only,
    // binding needs nothing from the caller, so it happens here.
    if constexpr (plan.weights.empty()) {
      steps::prepare_steps(states_, weight_at_.data());
    } else if constexpr (literals_only) {
      bind(detail::no_weight_source{});
    }
  }
  compiled(const compiled&) = delete;
  compiled& operator=(const compiled&) = delete;
  /// Moves the buffers and backend states; the moved-from executable is left unusable (`bound()`
  /// false, `run` and `bind` throw) until another executable is assigned to it.
  compiled(compiled&& o) noexcept
      : arena_(std::move(o.arena_)),
        weights_(std::move(o.weights_)),
        weight_at_(o.weight_at_),
        states_(std::move(o.states_)),
        profile_(o.profile_),
        unused_(std::move(o.unused_)),
        bound_(std::exchange(o.bound_, false)),
        live_(std::exchange(o.live_, false)) {}
  compiled& operator=(compiled&& o) noexcept {
    if (this != &o) {
      arena_ = std::move(o.arena_);
      weights_ = std::move(o.weights_);
      weight_at_ = o.weight_at_;
      states_ = std::move(o.states_);
      profile_ = o.profile_;
      unused_ = std::move(o.unused_);
      bound_ = std::exchange(o.bound_, false);
      live_ = std::exchange(o.live_, false);
    }
    return *this;
  }

  /// Declared input `i`: name, dtype and shape.
  static constexpr const tensor_slot& input(std::size_t i) { return input_slots[i]; }
  /// Declared output `i`: name (as `output<"name", X>` or the ONNX graph gives it, else
  /// `output<i>`), dtype and shape.
  static constexpr const tensor_slot& output(std::size_t i) { return output_slots[i]; }
  /// The backend that runs step `s` (by name: the host's too).
  static constexpr std::string_view step_backend(std::size_t s) {
    constexpr std::string_view names[] = {std::string_view(Backends::name)...};
    return names[steps::owner[s]];
  }
  /// What step `s` runs: the composite or partition function's name, or the op's.
  static constexpr std::string_view step_name(std::size_t s) { return steps::step_names[s].name(); }

  /// True when every weight is a `literal` (or there are none): the executable binds itself
  /// when constructed, and `run` needs no `bind` first.
  static constexpr bool literals_only = std::ranges::all_of(weight_slots, [](const tensor_slot& w) { return w.literal != nullptr; });

  /// Declared weight `i`: name, dtype, shape and offset in the weight storage; `literal` points
  /// at the values of a `literal`, which `bind` takes from the program, not from its source.
  static constexpr const tensor_slot& weight(std::size_t i) { return weight_slots[i]; }

  /// Loads every declared weight from `source` (a `safetensors_file`, a `weight_set`, or
  /// anything with `find(name)` and `origin()`), after checking names, dtypes and shapes, then
  /// lets each backend prepare its steps (`kernel<Step>::prepare(state&, in)`, where `in` holds
  /// the step's weight arguments and null for the others: packing GEMM panels, building
  /// primitives).
  ///
  /// Transactional: the weights are copied into new storage and the backends prepare into new
  /// states (`state::fork()`, a copy, or a new state); only when every step has accepted them
  /// does the executable switch to them. A mismatch or a backend's refusal throws a
  /// `partita::error` (naming each offending tensor, expected vs actual, or the backend and the
  /// step) and leaves the executable exactly as it was, bound to its previous weights if it had
  /// any.
  ///
  /// Tensors of the source that no weight reads are not an error by default: `unused_weights()`
  /// lists them after the bind. With `on_unused::reject` they are, found with the mismatches (a
  /// source that does not list its tensors, without `tensors()`, cannot be checked so and throws).
  template <class Source>
  compiled& bind(const Source& source, on_unused unused = on_unused::report) {
    const detail::busy_guard guard(busy_, "bind");
    check_live("bind");
    if (unused == on_unused::reject && !detail::listing_source<Source>)
      detail::raise(error(detail::concat("partita: bind: ", source.origin(),
                                 " does not list its tensors (no tensors()), so on_unused::reject cannot check them")));
    std::vector<std::string> names = detail::unused_tensors(weight_slots, source);
    detail::aligned_buffer kept(steps::layout.kept_bytes, "the weights kept"), staged(steps::layout.staged_bytes, "the weights to pack");
    detail::gather_weights(weight_slots, source, steps::raw_needed, steps::layout.offset, kept.get(), staged.get(),
                           unused == on_unused::reject ? detail::unused_problems(names, source.origin()) : std::string());
    states_t next = fork_states(std::make_index_sequence<sizeof...(Backends)>{});
    steps::prepare_steps(next, steps::weight_table(kept.get(), staged.get()).data());
    weight_at_ = steps::weight_table(kept.get(), nullptr);
    weights_ = std::move(kept);
    states_ = std::move(next);
    unused_ = std::move(names);
    bound_ = true;
    return *this;
  }

  /// The names of the tensors the last successful `bind` found in its source and did not read
  /// (no weight of the model has their name), in the source's order; empty when its source does
  /// not list its tensors.
  const std::vector<std::string>& unused_weights() const { return unused_; }

  /// The per-executable state of backend `B` (one of `Backends...`).
  template <class B>
  typename B::state& state() {
    return boost::hana::at_c<detail::index_of_backend<B, Backends...>>(states_);
  }

  template <class B>
  const typename B::state& state() const {
    return boost::hana::at_c<detail::index_of_backend<B, Backends...>>(states_);
  }

  /// The wall time of each step over the runs so far (see `step_profile`; all zero unless the
  /// program is built with `-DPARTITA_PROFILE`). `print_profile(exe)` prints it as a table.
  const step_profile<num_steps>& profile() const { return profile_; }
  /// Starts the profile afresh (after warm-up runs, say).
  void reset_profile() { profile_ = {}; }

  /// True once `bind` has succeeded (false again on a moved-from executable).
  bool bound() const { return bound_ && live_; }

  /// Bytes this executable holds: the arena, the weights it keeps (`kept_weight_bytes` once
  /// bound) and what each backend state reports (`state::resident_bytes()`, where it has one:
  /// packed weights, scratch).
  std::size_t resident_bytes() const {
    return arena_.size() + weights_.size() +
           boost::hana::unpack(states_, [](const auto&... st) { return (std::size_t{0} + ... + detail::state_bytes(st)); });
  }

  /// Runs the model: the inputs, then the outputs, in model order. Each is a
  /// `std::span<const float>` / `std::span<float>`, a `std::vector<float>` or a `tensor_view`,
  /// of the element type of the declared dtype (`std::int64_t` for an `i64` input such as token
  /// ids; a mismatch does not compile).
  /// Checked before anything runs, each failure a `partita::error` naming the argument:
  /// sizes (and shapes, for views) against the declaration; no null or misaligned
  /// (`alignof(float)`) buffer; no two outputs overlapping, and no output overlapping an input
  /// unless the plan proves it harmless (every read of the input comes before the output is
  /// written, or one elementwise step updates the very same buffer in place); the executable
  /// bound, not moved from, and not busy in another thread.
  template <class... Args>
  void run(Args&&... args) {
    static_assert(sizeof...(Args) == num_inputs + num_outputs,
                  "partita: run(inputs..., outputs...) takes one argument per model input and per model output");
    const detail::busy_guard guard(busy_, "run");
    check_ready();
    std::array<const float*, num_inputs ? num_inputs : 1> in{};
    std::array<float*, num_outputs ? num_outputs : 1> out{};
    detail::run_arguments<input_slots, output_slots>::collect(in, out, std::index_sequence_for<Args...>{},
                                                             std::forward<Args>(args)...);
    detail::check_aliasing<plan>(in.data(), out.data());
    execute(in.data(), out.data());
  }

  /// Runs the model with its inputs and outputs given by name, in any order:
  /// `exe.run({{"x", x}}, {{"logits", y}})` (the names of `input(i)` and `output(i)`). Each
  /// declared input and output takes exactly one buffer, checked as `run(inputs..., outputs...)`
  /// checks it, its element type at run time: a name the model does not declare, one given
  /// twice, one missing, or a buffer that does not fit throws a `partita::error` naming the
  /// tensor, before anything runs.
  void run(std::initializer_list<named_input> inputs, std::initializer_list<named_output> outputs) {
    const detail::busy_guard guard(busy_, "run");
    check_ready();
    std::array<const float*, num_inputs ? num_inputs : 1> in{};
    std::array<float*, num_outputs ? num_outputs : 1> out{};
    detail::collect_named(input_slots, "input", std::span<const named_input>(inputs.begin(), inputs.size()), in);
    detail::collect_named(output_slots, "output", std::span<const named_output>(outputs.begin(), outputs.size()), out);
    detail::check_aliasing<plan>(in.data(), out.data());
    execute(in.data(), out.data());
  }

  /// Runs with raw pointers, one per input and per output in model order, that the caller has
  /// checked: sizes, null, alignment and overlap are not looked at. The executable's own
  /// checks (bound, not moved from, not busy) still apply.
  void run_unchecked(const float* const* inputs, float* const* outputs) {
    const detail::busy_guard guard(busy_, "run");
    check_ready();
    execute(inputs, outputs);
  }

 private:
  using states_t = typename steps::states;

  void check_live(const char* what) const {
    if (!live_)
      detail::raise(error(detail::concat("partita: ", what, " on a moved-from executable: it has no buffers or backend states; "
                                                    "assign an executable to it first")));
  }

  void check_ready() const {
    check_live("run");
    if (!bound_ && !plan.weights.empty())
      detail::raise(error("partita: run called before bind: the weights are not loaded"));
  }

  template <std::size_t... I>
  states_t fork_states(std::index_sequence<I...>) const {
    return states_t(detail::fork_state(boost::hana::at_c<I>(states_))...);
  }

  void execute(const float* const* in, float* const* out) {
    const detail::step_frame frame{in, out, weight_at_.data(), arena_.get()};
    for (std::size_t s = 0; s < num_steps; ++s) {
      steps::rest_before(states_, s);
      [[maybe_unused]] const auto start = profiling ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      steps::runs[s](states_, frame, static_cast<int>(s));
      if constexpr (profiling) profile_.ns[s] += detail::ns_since(start);
    }
    [[maybe_unused]] const auto copies_start =
        profiling ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    for (const output_copy& c : copies) {
      const float* from = steps::locate(c.from, frame);
      // An output given the very buffer of the input it copies needs no copy (alias_rules).
      if (from != out[c.output]) std::memcpy(out[c.output], from, c.bytes);
    }
    if constexpr (profiling) {
      profile_.copies_ns += detail::ns_since(copies_start);
      ++profile_.runs;
    }
  }

  // Outputs that are inputs, weights or another output's value: copied after the last step.
  static constexpr auto copies = plan.copies;

  detail::aligned_buffer arena_;
  detail::aligned_buffer weights_;  // the kept weights (`kept_weight_bytes`), after bind
  // Where each kept weight lies in `weights_` (null for the others); moving `weights_` moves
  // its block, not the bytes, so the pointers follow it.
  std::array<const std::byte*, steps::num_weights> weight_at_{};
  states_t states_{};
  step_profile<num_steps> profile_{};
  std::vector<std::string> unused_;  // the source's tensors the last bind did not read
  bool bound_ = false;
  bool live_ = true;  // false once moved from
  std::atomic<bool> busy_{false};
};

}  // namespace partita
