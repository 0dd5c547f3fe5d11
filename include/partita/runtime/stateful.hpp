#pragma once
/// `stateful<Exe, carry<"in", "out">...>`: an executable whose states persist between runs.
// Each carried state has two buffers in the wrapper, allocated when it is constructed: a run
// reads the state from one and writes its successor into the other, and the two swap when the
// run returns. Nothing is copied, `run` allocates nothing, and a run that throws leaves the
// state as it was.
#include <array>
#include <cstddef>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>

#include "partita/core/detail/aligned_buffer.hpp"
#include "partita/core/detail/concat.hpp"
#include "partita/core/error.hpp"
#include "partita/core/fixed_string.hpp"
#include "partita/ir/layout.hpp"
#include "partita/runtime/aliasing.hpp"
#include "partita/runtime/detail/run_arguments.hpp"
#include "partita/runtime/named_tensor.hpp"

namespace partita {

/// One state of a `stateful` executable: model input `In` receives, at every run, the value that
/// model output `Out` had at the end of the previous run (zeros before the first run and after
/// `reset()`). `In` and `Out` must have one dtype and one shape.
template <fixed_string In, fixed_string Out>
struct carry {};

/// An executable (`compiled<...>` or `static_executable<...>`) with state carried across runs:
/// a recurrent layer's hidden state over the blocks of an audio stream, a fixed-size KV cache
/// over the tokens of a decode. The carried inputs and outputs are the wrapper's own; `run`
/// takes the others, inputs then outputs in model order, checked as the executable's `run`
/// checks them.
///
/// ```
/// using streaming = stateful<compiled<net, cpu>, carry<"h", "h_next">>;
/// streaming s;
/// s.bind(weights);
/// for (auto& block : blocks) s.run(block, y);  // "h" is the last run's "h_next"
/// s.reset();                                   // a new stream: zeros
/// ```
///
/// The state belongs to the wrapper: like an executable, it runs one call at a time (a second
/// thread's `run` throws while one is inside), and two streams need two wrappers.
template <class Exe, class... Carries>
class stateful;

template <class Exe, fixed_string... In, fixed_string... Out>
class stateful<Exe, carry<In, Out>...> {
  static constexpr std::size_t num_carries = sizeof...(In);
  static_assert(num_carries >= 1, "partita: stateful<Exe, carry<In, Out>...> needs at least one carry");
  static constexpr std::size_t all_inputs = Exe::num_inputs, all_outputs = Exe::num_outputs;
  static constexpr std::array<std::string_view, num_carries> in_names{In.view()...};
  static constexpr std::array<std::string_view, num_carries> out_names{Out.view()...};

  template <class Slot>
  static constexpr int find(std::string_view name, std::size_t n, Slot slot) {
    for (std::size_t i = 0; i < n; ++i)
      if (slot(i).name == name) return static_cast<int>(i);
    return -1;
  }
  static constexpr std::array<int, num_carries> in_at = [] {
    std::array<int, num_carries> r{};
    for (std::size_t k = 0; k < num_carries; ++k) r[k] = find(in_names[k], all_inputs, [](std::size_t i) { return Exe::input(i); });
    return r;
  }();
  static constexpr std::array<int, num_carries> out_at = [] {
    std::array<int, num_carries> r{};
    for (std::size_t k = 0; k < num_carries; ++k) r[k] = find(out_names[k], all_outputs, [](std::size_t i) { return Exe::output(i); });
    return r;
  }();
  static constexpr bool names_found = [] {
    for (std::size_t k = 0; k < num_carries; ++k)
      if (in_at[k] < 0 || out_at[k] < 0) return false;
    return true;
  }();
  static_assert(names_found, "partita: stateful: a carry<In, Out> names an input or an output the model does not declare");
  static constexpr bool types_match = [] {
    if constexpr (names_found) {
      for (std::size_t k = 0; k < num_carries; ++k) {
        const tensor_slot &i = Exe::input(static_cast<std::size_t>(in_at[k])), &o = Exe::output(static_cast<std::size_t>(out_at[k]));
        if (i.type != o.type || !(i.shp == o.shp)) return false;
      }
    }
    return true;
  }();
  static_assert(types_match, "partita: stateful: a carry<In, Out> joins an input and an output of different dtypes or shapes");
  static constexpr bool each_once = [] {
    for (std::size_t k = 0; k < num_carries; ++k)
      for (std::size_t j = 0; j < k; ++j)
        if (in_at[k] == in_at[j] || out_at[k] == out_at[j]) return false;
    return true;
  }();
  static_assert(each_once, "partita: stateful: two carries name the same input or the same output");

  static constexpr bool carried(const std::array<int, num_carries>& at, std::size_t i) {
    for (int a : at)
      if (a == static_cast<int>(i)) return true;
    return false;
  }

  // After a failed check above, empty: the one message stands alone.
  static constexpr bool checked = names_found && types_match && each_once;
  static constexpr std::size_t free_inputs = checked ? all_inputs - num_carries : 0;
  static constexpr std::size_t free_outputs = checked ? all_outputs - num_carries : 0;
  // The inputs and outputs `run` takes, and where each lies among the executable's.
  static constexpr auto free_in_at = [] {
    std::array<std::size_t, free_inputs ? free_inputs : 1> r{};
    for (std::size_t i = 0, j = 0; checked && i < all_inputs; ++i)
      if (!carried(in_at, i)) r[j++] = i;
    return r;
  }();
  static constexpr auto free_out_at = [] {
    std::array<std::size_t, free_outputs ? free_outputs : 1> r{};
    for (std::size_t i = 0, j = 0; checked && i < all_outputs; ++i)
      if (!carried(out_at, i)) r[j++] = i;
    return r;
  }();
  static constexpr auto free_in_slots = [] {
    std::array<tensor_slot, free_inputs> r{};
    for (std::size_t j = 0; j < free_inputs; ++j) r[j] = Exe::input(free_in_at[j]);
    return r;
  }();
  static constexpr auto free_out_slots = [] {
    std::array<tensor_slot, free_outputs> r{};
    for (std::size_t j = 0; j < free_outputs; ++j) r[j] = Exe::output(free_out_at[j]);
    return r;
  }();

  // Each state's bytes and offset in one copy of the state block; the block holds two copies.
  static constexpr std::array<std::size_t, num_carries> offset = [] {
    std::array<std::size_t, num_carries> r{};
    std::size_t at = 0;
    for (std::size_t k = 0; checked && k < num_carries; ++k) {
      r[k] = at;
      at += detail::align_up(Exe::input(static_cast<std::size_t>(in_at[k])).bytes());
    }
    return r;
  }();

 public:
  /// Bytes of one copy of the states (each aligned); the wrapper holds two.
  static constexpr std::size_t state_bytes =
      checked ? offset[num_carries - 1] + detail::align_up(Exe::input(static_cast<std::size_t>(in_at[num_carries - 1])).bytes())
              : 0;
  /// What `run` takes: the inputs and outputs that are not carried, in model order.
  static constexpr std::size_t num_inputs = free_inputs, num_outputs = free_outputs;
  static constexpr const tensor_slot& input(std::size_t i) { return free_in_slots[i]; }
  static constexpr const tensor_slot& output(std::size_t i) { return free_out_slots[i]; }

  /// The executable, constructed in place from `args`, and the states, zero.
  template <class... A>
  explicit stateful(A&&... args) : exe_(std::forward<A>(args)...), block_(2 * state_bytes, "the carried states") {
    reset();
  }

  /// The wrapped executable: `bind` it, read its plan or profile.
  Exe& executable() { return exe_; }
  const Exe& executable() const { return exe_; }
  /// Binds the executable's weights (`compiled::bind`); the states are kept.
  template <class Source>
  stateful& bind(const Source& source) {
    exe_.bind(source);
    return *this;
  }

  /// Every state to zero, as before the first run.
  void reset() {
    std::memset(block_.get(), 0, 2 * state_bytes);
    current_ = 0;
  }

  /// The current value of the state read by input `name` (a carry's `In`), as elements of type T
  /// (the input's dtype): read it, or write an initial state before a run. A name that no carry
  /// has, or a T of another dtype, throws a `partita::error`.
  template <class T>
  std::span<T> state(std::string_view name) {
    for (std::size_t k = 0; k < num_carries; ++k) {
      if (in_names[k] != name) continue;
      const tensor_slot& s = Exe::input(static_cast<std::size_t>(in_at[k]));
      if (detail::element_dtype<std::remove_const_t<T>>() != s.type)
        detail::raise(error(detail::concat("partita: stateful::state: '", name, "' holds ", name_of(s.type), " elements")));
      return {reinterpret_cast<T*>(at(current_, k)), static_cast<std::size_t>(s.shp.elements())};
    }
    detail::raise(error(detail::concat("partita: stateful::state: no carry reads the input '", name, "'")));
  }

  /// Runs once: the inputs and outputs that are not carried, in model order, as `compiled::run`
  /// takes them; the carried inputs read the states, and the carried outputs become them.
  template <class... Args>
  void run(Args&&... args) {
    static_assert(sizeof...(Args) == free_inputs + free_outputs,
                  "partita: stateful::run takes one argument per model input and output that no carry names");
    std::array<const float*, free_inputs ? free_inputs : 1> fin{};
    std::array<float*, free_outputs ? free_outputs : 1> fout{};
    detail::run_arguments<free_in_slots, free_out_slots>::collect(fin, fout, std::index_sequence_for<Args...>{},
                                                                  std::forward<Args>(args)...);
    std::array<const float*, all_inputs> in{};
    std::array<float*, all_outputs> out{};
    for (std::size_t j = 0; j < free_inputs; ++j) in[free_in_at[j]] = fin[j];
    for (std::size_t j = 0; j < free_outputs; ++j) out[free_out_at[j]] = fout[j];
    for (std::size_t k = 0; k < num_carries; ++k) {
      in[static_cast<std::size_t>(in_at[k])] = reinterpret_cast<const float*>(at(current_, k));
      out[static_cast<std::size_t>(out_at[k])] = reinterpret_cast<float*>(at(1 - current_, k));
    }
    detail::check_aliasing<Exe::plan>(in.data(), out.data());
    exe_.run_unchecked(in.data(), out.data());
    current_ = 1 - current_;
  }

 private:
  std::byte* at(int copy, std::size_t k) const {
    return block_.get() + static_cast<std::size_t>(copy) * state_bytes + offset[k];
  }

  Exe exe_;
  detail::aligned_buffer block_;
  int current_ = 0;
};

}  // namespace partita
