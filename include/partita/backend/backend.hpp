#pragma once
/// The backend contract: what a backend type declares, and the checks that name what is missing.
#include <concepts>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "partita/ir/op_id.hpp"
#include "partita/ir/view.hpp"

namespace partita {

/// A backend, as the entry points (`compiled`, `partition`, `annotate_target`) check it:
///
/// | member | meaning |
/// |---|---|
/// | `static constexpr fixed_string name` | unique, never "default" |
/// | `struct state` | per-executable state, default-constructed with the executable |
/// | `state::rest()` (optional) | called before another backend's step runs: stop spinning threads |
/// | `static bool available(state&)` (optional) | whether it can run now (its device present and free): `unavailable_backends(exe)`, `first_available` |
/// | `static constexpr bool host` (optional) | runs every op; takes what no other backend claims |
/// | `static constexpr bool supports(const op_view&)` | which single ops it claims (non-host backends; optional with `patterns`) |
/// | `using patterns = pattern_table<...>` (optional) | its composites, in priority order |
/// | `static constexpr bool fuses(std::string_view)` (optional) | composites it runs as one kernel |
/// | `using pre_partition / post_partition = pass_list<...>` (optional) | its passes per phase |
/// | `static constexpr bool compiles_partitions` (optional) | each of its partitions is one step (graph-compiler granularity) |
/// | `static constexpr bool accepts(const partition_view&)` (optional) | with `passes::host_fallback<B>` in `post_partition`: partitions it refuses run on the host |
/// | `template <class Step> struct kernel` | `static void run(state&, const float* const* in, float* out)` |
/// | `kernel<Step>::prepare(state&, const float* const* in)` (optional) | at `bind`: `in` holds the step's weights (null for activations); throwing rejects the step and fails `bind` |
/// | `static constexpr bool shares_kernels` (optional) | steps with the same signature share one kernel instantiation, which then takes the step's index: `run(state&, in, out, int step)`, `prepare(state&, in, int step)` (a kernel with the three-argument `run` stays per step). Steps that also read the same weights (a function called twice) are prepared once, and all run with the first one's index |
///
/// Kernels run in destination-passing style (the caller owns every buffer). The plan may give an
/// elementwise step (unary ops, bias_add, add/subtract/multiply) the same buffer for its output
/// and its first argument, so those kernels must read each element before writing it.
/// `reference` is the simplest complete example.
template <class B>
concept backend = requires {
  { std::string_view(B::name) } -> std::convertible_to<std::string_view>;
  typename B::state;
  requires std::default_initializable<typename B::state>;
};

namespace detail {

/// Checks `B` member by member so that a type that is not a backend gets one message per
/// missing piece, naming the type (see `Backend` in the instantiation context).
struct module_builder;
using module_builder_t = module_builder;

template <class Backend>
struct check_backend {
  static constexpr bool has_name = requires { std::string_view(Backend::name); };
  static_assert(has_name, "partita: not a backend (Backend): it needs `static constexpr fixed_string name = \"...\";`");
  static constexpr bool has_state = requires { typename Backend::state; };
  static_assert(has_state, "partita: not a backend (Backend): it needs a `struct state {};` (per-executable state, may be empty)");
  static constexpr bool default_state = [] {
    if constexpr (has_state) {
      return std::default_initializable<typename Backend::state>;
    } else {
      return true;
    }
  }();
  static_assert(default_state, "partita: backend (Backend): its `state` must be default-constructible");
  static constexpr bool not_default = [] {
    if constexpr (has_name) {
      return std::string_view(Backend::name) != "default" && !std::string_view(Backend::name).empty();
    } else {
      return true;
    }
  }();
  static_assert(not_default, "partita: backend (Backend): its name must be non-empty and not \"default\"");
  static constexpr bool is_host = [] {
    if constexpr (requires { Backend::host; }) {
      return static_cast<bool>(Backend::host);
    } else {
      return false;
    }
  }();
  static constexpr bool claims_ops = is_host || requires { typename Backend::patterns; } || requires(const op_view& v) {
    { Backend::supports(v) } -> std::convertible_to<bool>;
  };
  static_assert(claims_ops,
                "partita: backend (Backend): a backend that is not a host needs `static constexpr bool supports(const op_view&)` "
                "or `patterns`");
  static constexpr bool patterns_ok = [] {
    if constexpr (requires { typename Backend::patterns; }) {
      return requires { Backend::patterns::value.entries; };
    } else {
      return true;
    }
  }();
  static_assert(patterns_ok, "partita: backend (Backend): its `patterns` must be a pattern_table<composite<...>...>");
  static constexpr bool phases_ok = [] {
    constexpr bool pre = [] {
      if constexpr (requires { typename Backend::pre_partition; }) {
        return requires(module_builder_t m) { Backend::pre_partition::run(m); };
      } else {
        return true;
      }
    }();
    constexpr bool post = [] {
      if constexpr (requires { typename Backend::post_partition; }) {
        return requires(module_builder_t m) { Backend::post_partition::run(m); };
      } else {
        return true;
      }
    }();
    return pre && post;
  }();
  static_assert(phases_ok,
                "partita: backend (Backend): its `pre_partition` / `post_partition` must be a pass_list<...> of passes");
  static constexpr bool ok = has_name && has_state && default_state && not_default && claims_ops && patterns_ok && phases_ok;
};

}  // namespace detail

namespace detail {

/// Index of the backend named `name` in `Bs...`; an empty name means the host (the last one).
/// `sizeof...(Bs)` when there is no such backend.
template <class... Bs>
constexpr std::size_t backend_index(std::string_view name) {
  if constexpr (sizeof...(Bs) == 0) {
    return 0;
  } else {
    if (name.empty()) return sizeof...(Bs) - 1;
    constexpr std::string_view names[] = {std::string_view(Bs::name)...};
    for (std::size_t i = 0; i < sizeof...(Bs); ++i)
      if (names[i] == name) return i;
    return sizeof...(Bs);
  }
}

/// Position of backend type `B` in `Bs...` (`sizeof...(Bs)` when absent).
template <class B, class... Bs>
inline constexpr std::size_t index_of_backend = [] {
  constexpr bool same[] = {std::is_same_v<B, Bs>...};
  for (std::size_t i = 0; i < sizeof...(Bs); ++i)
    if (same[i]) return i;
  return sizeof...(Bs);
}();

/// Backend number `I` of `Bs...`.
template <std::size_t I, class... Bs>
using nth_backend = std::tuple_element_t<I, std::tuple<Bs...>>;

/// Calls `f.template operator()<B>()` for `B`, the backend at position `index` of `Bs...`, and
/// returns what it returns (`R{}` for an index past the end): run-time index, compile-time type.
template <class R, class... Bs, class F>
constexpr R visit_backend(std::size_t index, F&& f) {
  R r{};
  std::size_t i = 0;
  ((i++ == index ? (void)(r = f.template operator()<Bs>()) : void()), ...);
  return r;
}

}  // namespace detail

/// Whether backend `B` claims single op `v`: its `supports`, or nothing without one (a backend
/// that only takes composites).
template <class B>
constexpr bool backend_supports(const op_view& v) {
  if constexpr (requires { B::supports(v); }) {
    return static_cast<bool>(B::supports(v));
  } else {
    return false;
  }
}

/// True when every one of `Backends...` passes the backend checks (reported one by one).
template <class... Backends>
inline constexpr bool backends_ok = (detail::check_backend<Backends>::ok && ...);

/// True for host backends (`static constexpr bool host = true;`): they run every op, and the
/// nodes they get are the ones no other backend claimed.
template <class B>
inline constexpr bool is_host_backend = [] {
  if constexpr (requires { B::host; }) {
    return static_cast<bool>(B::host);
  } else {
    return false;
  }
}();

/// True for backends that share kernels (`static constexpr bool shares_kernels = true;`): steps
/// with the same signature (the same op, or composite and body, attributes, and argument dtypes
/// and shapes; whole partitions never) run one instantiation, `kernel<Step>` for the first such
/// step, so `Step::index` is that step's. Each call gets the real step's index at run time,
/// `run(state&, const float* const* in, float* out, int step)` and `prepare(state&, const float*
/// const* in, int step)`, to key per-step data (packed weights) by; the kernel reads nothing else
/// of the step but what the signature covers (op node, body, argument dtypes, shapes and whether
/// each is a weight), not `Step::step`'s buffers. A kernel whose `run` takes no step index is
/// not shared (a backend derived from `reference` inherits the flag). cpu and reference share theirs.
template <class B>
inline constexpr bool backend_shares_kernels = [] {
  if constexpr (requires { B::shares_kernels; }) {
    return static_cast<bool>(B::shares_kernels);
  } else {
    return false;
  }
}();

/// True for backends whose partitions each run as one step (`static constexpr bool
/// compiles_partitions = true;`, graph-compiler granularity).
template <class B>
inline constexpr bool runs_partitions = [] {
  if constexpr (requires { B::compiles_partitions; }) {
    return static_cast<bool>(B::compiles_partitions);
  } else {
    return false;
  }
}();

}  // namespace partita
