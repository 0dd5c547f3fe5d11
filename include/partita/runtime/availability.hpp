#pragma once
/// Run-time availability: which backends of an executable can run now, and `first_available`,
/// which binds the first of several executables whose backends all can.
#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "partita/core/error.hpp"
#include "partita/runtime/executable.hpp"

namespace partita {

namespace detail {

/// Whether backend `B` can run now: its `available(state&)` where it has one (a device that is
/// absent, unplugged or taken), true otherwise.
template <class B>
bool backend_available(typename B::state& s) {
  if constexpr (requires { { B::available(s) } -> std::convertible_to<bool>; }) {
    return static_cast<bool>(B::available(s));
  } else {
    return true;
  }
}

template <class Exe>
struct executable_backends;
template <class Model, class... Backends>
struct executable_backends<compiled<Model, Backends...>> {
  /// The backends' names, comma-separated, in the executable's order.
  static std::string names() {
    std::string s;
    ((s += (s.empty() ? "" : ", "), s += std::string_view(Backends::name)), ...);
    return s;
  }
};

}  // namespace detail

/// The backends of `exe` that say they cannot run now (`static bool available(state&)`), in
/// the executable's order; empty when every one can.
template <class Model, class... Backends>
std::vector<std::string_view> unavailable_backends(compiled<Model, Backends...>& exe) {
  std::vector<std::string_view> out;
  ((detail::backend_available<Backends>(exe.template state<Backends>()) ? void() : out.push_back(std::string_view(Backends::name))),
   ...);
  return out;
}

/// Several executables of one model, in order of preference (`first_available<compiled<net,
/// npu, cpu>, compiled<net, cpu>>`): `bind` binds the first whose backends are all available
/// and which accepts the weights, and `run` runs it. A plan is fixed at compile time, so a
/// binary built for an accelerator must carry a plan without it for machines where it is
/// absent; this is how it picks one (what ExecuTorch's `is_available` and ONNX Runtime's
/// provider checks give).
template <class... Executables>
class first_available {
  static_assert(sizeof...(Executables) >= 1, "partita: first_available needs at least one executable");

 public:
  /// Tries the executables in order: one with an unavailable backend, or whose `bind` throws,
  /// is skipped, and why goes to `skipped()`. The first that binds is the one `run` uses. If
  /// none does, throws a `partita::error` listing every reason, and the executable bound before
  /// (if any) stays bound.
  template <class Source>
  first_available& bind(const Source& weights) {
    std::vector<std::string> why;
    std::variant<std::monostate, Executables...> next;
    if (!try_from<0>(weights, next, why)) {
      std::string msg = "partita: first_available: no executable can run here";
      for (const std::string& w : why) msg += "; " + w;
      detail::raise(error(msg));
    }
    exe_ = std::move(next);
    skipped_ = std::move(why);
    return *this;
  }

  /// True once `bind` has succeeded.
  bool bound() const { return exe_.index() != 0; }
  /// The position in `Executables...` of the bound executable.
  std::size_t chosen() const {
    require_bound("chosen");
    return exe_.index() - 1;
  }
  /// Why each executable before the chosen one was skipped, one line each, in order: the
  /// backends that reported themselves unavailable, or the `partita::error` its `bind` threw.
  const std::vector<std::string>& skipped() const { return skipped_; }

  /// Runs the bound executable: the arguments of its `run`.
  template <class... Args>
  void run(Args&&... args) {
    require_bound("run");
    std::visit(
        [&](auto& e) {
          if constexpr (!std::is_same_v<std::remove_cvref_t<decltype(e)>, std::monostate>) e.run(std::forward<Args>(args)...);
        },
        exe_);
  }
  /// Calls `f` with the bound executable (to read its plan or a backend's state).
  template <class F>
  void visit(F&& f) {
    require_bound("visit");
    std::visit(
        [&](auto& e) {
          if constexpr (!std::is_same_v<std::remove_cvref_t<decltype(e)>, std::monostate>) f(e);
        },
        exe_);
  }

 private:
  template <std::size_t I, class Source>
  static bool try_from(const Source& weights, std::variant<std::monostate, Executables...>& next, std::vector<std::string>& why) {
    if constexpr (I == sizeof...(Executables)) {
      return false;
    } else {
      using exe_t = std::variant_alternative_t<I + 1, std::variant<std::monostate, Executables...>>;
      exe_t& e = next.template emplace<I + 1>();
      const std::string label = "executable " + std::to_string(I) + " (" + detail::executable_backends<exe_t>::names() + ")";
      const std::vector<std::string_view> missing = unavailable_backends(e);
      if (!missing.empty()) {
        std::string w = label + ": backend ";
        for (std::size_t k = 0; k < missing.size(); ++k) w += std::string(k ? ", " : "") + std::string(missing[k]);
        why.push_back(w + (missing.size() == 1 ? " is" : " are") + " not available");
      } else {
        try {
          e.bind(weights);
          return true;
        } catch (const error& x) {
          why.push_back(label + ": bind failed: " + x.what());
        }
      }
      next.template emplace<0>();
      return try_from<I + 1>(weights, next, why);
    }
  }

  void require_bound(const char* what) const {
    if (!bound())
      detail::raise(error(std::string("partita: first_available::") + what + ": no executable is bound (bind first)"));
  }

  std::variant<std::monostate, Executables...> exe_;
  std::vector<std::string> skipped_;
};

}  // namespace partita
