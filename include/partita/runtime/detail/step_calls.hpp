#pragma once
/// `step_calls<Model, Backends...>`: each step's backend, kernel, state and buffers, and its call.
#include <algorithm>
#include <array>
#include <cstddef>
#include <exception>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <boost/hana/at.hpp>
#include <boost/hana/tuple.hpp>

#include "partita/backend/backend.hpp"
#include "partita/core/error.hpp"
#include "partita/core/detail/concat.hpp"
#include "partita/pass/pipeline.hpp"
#include "partita/runtime/detail/kernel_sharing.hpp"
#include "partita/runtime/detail/weight_layout.hpp"
#include "partita/runtime/plan.hpp"
#include "partita/runtime/step_ref.hpp"

namespace partita::detail {

/// Where a step's buffers lie in one call: the caller's inputs and outputs, each weight (null for
/// those no kernel reads at run time) and the arena. Weights are a table of pointers, not one
/// block, so that an executable may read them where they lie (`static_executable`: in flash).
struct step_frame {
  const float* const* in;
  float* const* out;
  const std::byte* const* weights;
  std::byte* arena;
};

/// What `compiled<Model, Backends...>` knows of its steps at compile time, and how it calls them:
/// the module and its plan; the backend of each step; the step whose kernel it runs and the step
/// whose prepared state it reads (kernel_sharing.hpp); the weights kept after `bind` and where
/// each lies (weight_layout.hpp); one function per kernel, in a table indexed by step, for `run`
/// and for `bind`'s `prepare`.
template <class Model, class... Backends>
struct step_calls {
  using module = compiled_module<Model, Backends...>;
  static constexpr const auto& plan = plan_of<module, Backends...>::value;
  static constexpr std::size_t num_steps = plan.steps.size();
  /// One state per backend, of unrelated types: a Hana tuple, indexed at compile time.
  using states = boost::hana::tuple<typename Backends::state...>;

  // A partition's name lives in the module: it is copied (a function_info holds just the name).
  static constexpr auto step_names = detail::step_names<num_steps>(module::value, plan);

  // Step s runs on backend owner[s], on the kernel of step canonical[s] (the first step with its signature where
  // its backend `shares_kernels` and the kernel takes the step's index; s itself otherwise), with the state
  // prepared for step prepared[s] (the first with that kernel and the same weights): kernel_sharing.hpp.
  static constexpr auto owner = detail::step_owners<num_steps, Backends...>(plan);
  static_assert(std::ranges::none_of(owner, [](std::size_t o) { return o >= sizeof...(Backends); }),
                "partita: a step belongs to a backend that is not in compiled<...>");

  template <std::size_t S>
  using backend_of = detail::nth_backend<owner[S], Backends...>;
  template <std::size_t C>
  using call_at = detail::kernel_call<backend_of<C>, typename backend_of<C>::template kernel<
      step_ref<module::value, plan_of<module, Backends...>::value, static_cast<int>(C)>>>;
  static constexpr auto canonical = []<std::size_t... S>(std::index_sequence<S...>) {
    constexpr auto first = detail::canonical_steps(module::value, plan, owner, std::array{backend_shares_kernels<Backends>...});
    return std::array<int, num_steps>{(call_at<static_cast<std::size_t>(first[S])>::shared ? first[S] : static_cast<int>(S))...};
  }(std::make_index_sequence<num_steps>{});
  static constexpr auto prepared = detail::prepared_steps<num_steps>(plan, canonical);
  template <std::size_t S>
  using call_of = call_at<static_cast<std::size_t>(canonical[S])>;

  static constexpr std::size_t num_weights = plan.weights.size() ? plan.weights.size() : 1;
  // Weights some kernel reads at run time are kept as given after bind (weight_layout.hpp).
  static constexpr auto raw_needed = detail::weights_kept<num_weights>(plan, []<std::size_t... S>(std::index_sequence<S...>) {
    return std::array<bool, num_steps>{call_of<S>::packs_weights...};
  }(std::make_index_sequence<num_steps>{}));
  static constexpr auto layout = detail::lay_out_weights(plan, raw_needed);

  // Each step is one call through `runs`, to the function of its canonical step C: shared by
  // every step with C's signature, it reads the step's buffers from `io` and `ins` at run time.
  static constexpr auto io = detail::step_ios<num_steps>(plan, prepared);
  static constexpr auto ins = plan.ins;

  // `r.offset`: a view's byte offset in its tensor (a contiguous slice); in the arena, the buffer's.
  static float* locate(const buffer_ref& r, const step_frame& f) {
    switch (r.kind) {
      case storage::input:  // read only: only passed as kernel input
        return reinterpret_cast<float*>(reinterpret_cast<std::byte*>(const_cast<float*>(f.in[r.index])) + r.offset);
      case storage::weight:
        // A weight only packing kernels read is not kept: they get null and do not look.
        return raw_needed[static_cast<std::size_t>(r.index)]
                   ? reinterpret_cast<float*>(const_cast<std::byte*>(f.weights[r.index]) + r.offset)
                   : nullptr;
      case storage::arena: return reinterpret_cast<float*>(f.arena + r.offset);
      case storage::output: return reinterpret_cast<float*>(reinterpret_cast<std::byte*>(f.out[r.index]) + r.offset);
      case storage::none: break;
    }
    return nullptr;
  }

  template <std::size_t C>
  static void run_kernel(states& st, const step_frame& f, int s) {
    const int step = call_of<C>::shared ? s : static_cast<int>(C);  // a constant where the kernel is the step's own
    const detail::step_io& at = io[static_cast<std::size_t>(step)];
    std::array<const float*, static_cast<std::size_t>(plan.steps[C].num_in)> args{};
    for (std::size_t k = 0; k < args.size(); ++k) args[k] = locate(ins[static_cast<std::size_t>(at.first_in) + k], f);
    call_of<C>::run(boost::hana::at_c<owner[C]>(st), args.data(), locate(at.out, f), at.prepared);
  }

  using run_fn = void (*)(states&, const step_frame&, int);
  static constexpr auto runs = []<std::size_t... S>(std::index_sequence<S...>) {
    return std::array<run_fn, num_steps>{&run_kernel<static_cast<std::size_t>(canonical[S])>...};
  }(std::make_index_sequence<num_steps>{});

  // `prepare` with step s's weights (`at`: where each weight lies, kept or staged), null for its
  // other arguments.
  template <std::size_t C>
  static void prepare_kernel(states& st, const std::byte* const* at, int s) {
    const int step = call_of<C>::shared ? s : static_cast<int>(C);
    std::array<const float*, static_cast<std::size_t>(plan.steps[C].num_in)> args{};
    for (std::size_t k = 0; k < args.size(); ++k) {
      const buffer_ref& r = ins[static_cast<std::size_t>(io[static_cast<std::size_t>(step)].first_in) + k];
      if (r.kind != storage::weight) continue;
      const auto w = static_cast<std::size_t>(r.index);
      args[k] = reinterpret_cast<const float*>(at[w] + r.offset);
    }
#if defined(__cpp_exceptions)
    try {
      call_of<C>::prepare(boost::hana::at_c<owner[C]>(st), args.data(), step);
    } catch (const std::exception& e) {
      // Steps that share a kernel have the same name (the op's or the composite's).
      detail::raise(error(detail::concat("partita: bind: backend '", std::string_view(backend_of<C>::name),
                                                  "' rejected step ", std::to_string(step), " (", step_names[C].name(),
                                                  "): ", e.what())));
    }
#else
    // Without exceptions a backend that refuses reports through the error hook itself.
    call_of<C>::prepare(boost::hana::at_c<owner[C]>(st), args.data(), step);
#endif
  }

  using prepare_fn = void (*)(states&, const std::byte* const*, int);
  static constexpr auto prepares = []<std::size_t... S>(std::index_sequence<S...>) {
    return std::array<prepare_fn, num_steps>{[]<std::size_t C>(std::integral_constant<std::size_t, C>) -> prepare_fn {
      if constexpr (call_of<C>::prepares) return &prepare_kernel<C>;
      return nullptr;
    }(std::integral_constant<std::size_t, static_cast<std::size_t>(canonical[S])>{})...};
  }(std::make_index_sequence<num_steps>{});

  /// Lets each backend prepare its steps into `st`, from the weights at `at` (one pointer per
  /// weight, kept or staged).
  static void prepare_steps(states& st, const std::byte* const* at) {
    for (std::size_t s = 0; s < num_steps; ++s)
      if (prepares[s] && prepared[s] == static_cast<int>(s)) prepares[s](st, at, static_cast<int>(s));
  }

  /// Before step `s`: the backend of the step before it (cyclically, a run following the
  /// previous one) rests if it can (`state::rest()`: cpu's pool stops spinning) when another
  /// backend runs `s`.
  static void rest_before(states& st, std::size_t s) {
    if constexpr (sizeof...(Backends) > 1) {
      const std::size_t before = owner[(s + num_steps - 1) % (num_steps ? num_steps : 1)];  // no division by zero to warn of
      if (before != owner[s]) rest(st, before, std::make_index_sequence<sizeof...(Backends)>{});
    }
  }

  template <std::size_t... B>
  static void rest(states& st, std::size_t b, std::index_sequence<B...>) {
    const auto one = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) {
      if constexpr (requires(typename detail::nth_backend<I, Backends...>::state& x) { x.rest(); })
        if (b == I) boost::hana::at_c<I>(st).rest();
    };
    (one(std::integral_constant<std::size_t, B>{}), ...);
  }

  /// Where each weight lies in bind's two blocks: `kept` for those `run` reads, `staged` for
  /// those only `prepare` does.
  static std::array<const std::byte*, num_weights> weight_table(const std::byte* kept, const std::byte* staged) {
    std::array<const std::byte*, num_weights> at{};
    for (std::size_t w = 0; w < plan.weights.size(); ++w) {
      const std::byte* base = raw_needed[w] ? kept : staged;
      at[w] = base ? base + layout.offset[w] : nullptr;
    }
    return at;
  }
};

}  // namespace partita::detail
