#pragma once
/// A module being rewritten (`module_builder`): emitting nodes, copying functions, naming.
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <vector>

#include "partita/ir/module.hpp"

namespace partita::detail {

/// A module while a pass rewrites it: the same layout as `module_value`, in vectors.
struct module_builder {
  std::vector<graph_node> nodes;
  std::vector<int> args;
  std::vector<function_info> functions;

  constexpr int arg(int n, int k) const { return args.data()[nodes.data()[n].first_arg + k]; }
  constexpr const graph_node& node(int n) const { return nodes.data()[n]; }
  constexpr const function_info& main() const { return functions.data()[0]; }

  /// Appends a node whose arguments are `a`, returning its index.
  constexpr int emit(graph_node n, const int* a, int count) {
    n.first_arg = static_cast<int>(args.size());
    n.nargs = count;
    for (int k = 0; k < count; ++k) args.push_back(a[k]);
    nodes.push_back(n);
    return static_cast<int>(nodes.size()) - 1;
  }

  /// Appends `n`, a copy of node `i` of `src` (possibly edited by the caller), with `i`'s
  /// arguments renumbered through `to`: an index table (`to[old]`) or a callable (`to(old)`).
  /// Every pass that rebuilds a function copies its nodes this way.
  template <class Src, class Map>
  constexpr int emit_mapped(graph_node n, const Src& src, int i, const Map& to) {
    const int count = src.node(i).nargs;
    n.first_arg = static_cast<int>(args.size());
    n.nargs = count;
    for (int k = 0; k < count; ++k) {
      const int a = src.arg(i, k);
      if constexpr (std::is_invocable_v<const Map&, int>) {
        args.push_back(to(a));
      } else {
        args.push_back(to[static_cast<std::size_t>(a)]);
      }
    }
    nodes.push_back(n);
    return static_cast<int>(nodes.size()) - 1;
  }
};

template <class M>
constexpr module_builder to_builder(const M& m) {
  module_builder b;
  b.nodes.assign(m.nodes.begin(), m.nodes.end());
  b.args.assign(m.args.begin(), m.args.end());
  b.functions.assign(m.functions.begin(), m.functions.end());
  return b;
}

struct builder_sizes {
  std::size_t nodes, args, functions;
};

constexpr builder_sizes sizes_of(const module_builder& b) { return {b.nodes.size(), b.args.size(), b.functions.size()}; }

template <builder_sizes S, class Src>
constexpr module_value<S.nodes, S.args, S.functions> materialize(const Src& b) {
  module_value<S.nodes, S.args, S.functions> m{};
  for (std::size_t i = 0; i < S.nodes; ++i) m.nodes[i] = b.nodes[i];
  for (std::size_t i = 0; i < S.args; ++i) m.args[i] = b.args[i];
  for (std::size_t i = 0; i < S.functions; ++i) m.functions[i] = b.functions[i];
  return m;
}

/// Copies every function but main from `src` into `dst` unchanged (same function numbers,
/// nodes moved as blocks), leaving main's slot to be filled by the caller.
constexpr void copy_functions_but_main(module_builder& dst, const module_builder& src) {
  dst.functions = src.functions;
  for (std::size_t f = 1; f < src.functions.size(); ++f) {
    const function_info& old = src.functions[f];
    function_info& nf = dst.functions[f];
    const int shift = static_cast<int>(dst.nodes.size()) - old.first_node;
    nf.first_node = static_cast<int>(dst.nodes.size());
    nf.result = old.result + shift;
    for (int i = old.first_node; i < old.first_node + old.num_nodes; ++i)
      dst.emit_mapped(src.node(i), src, i, [shift](int a) { return a + shift; });
  }
}

/// Records that main's new nodes are those emitted since `start`, returning `result`.
constexpr void finish_main(module_builder& out, int start, int result) {
  function_info& main = out.functions[0];
  main.first_node = start;
  main.num_nodes = static_cast<int>(out.nodes.size()) - start;
  main.result = result;
}

/// Sets `f`'s name to `s` with every character that is not a letter or digit replaced by `_`
/// (names of generated functions).
constexpr void sanitize_into(function_info& f, std::string_view s) {
  f.name_length = 0;
  for (char ch : s) {
    if (static_cast<std::size_t>(f.name_length) == max_function_name) break;
    const bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
    f.name_chars[static_cast<std::size_t>(f.name_length++)] = alnum ? ch : '_';
  }
}

/// Appends `s` to `f`'s name, as far as the name's capacity goes.
constexpr void append_text(function_info& f, std::string_view s) {
  for (char c : s)
    if (static_cast<std::size_t>(f.name_length) < max_function_name) f.name_chars[static_cast<std::size_t>(f.name_length++)] = c;
}

/// Emits one parameter node per producer in `producers` (parameter `k` for `producers[k]`, with
/// its dtype and shape), for a function being outlined from `src`, and records in `to` the
/// parameter that stands for each producer.
template <class Src>
constexpr void emit_params(module_builder& out, const Src& src, const std::vector<int>& producers, std::vector<int>& to) {
  for (std::size_t k = 0; k < producers.size(); ++k) {
    const graph_node& p = src.node(producers[k]);
    graph_node param{op_id::param, p.type, p.out, &no_attrs, {}, 0, 0, p.is_tuple};
    param.index = static_cast<int>(k);
    to[static_cast<std::size_t>(producers[k])] = out.emit(param, nullptr, 0);
  }
}

/// Appends the decimal digits of `v` (>= 0) to `f`'s name, as far as its capacity goes.
constexpr void append_number(function_info& f, int v) {
  char digits[12]{};
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0);
  while (n > 0 && static_cast<std::size_t>(f.name_length) < max_function_name)
    f.name_chars[static_cast<std::size_t>(f.name_length++)] = digits[--n];
}

/// Names the functions one pass adds: `<prefix><middle>_<k>`, with `prefix` sanitized (every
/// character other than a letter or a digit becomes `_`) and k counting the functions of the
/// same backend (a partition, `composite` empty) or of the same pattern `composite`, those the
/// module had first: numbers that a function of another backend or pattern, added anywhere,
/// leaves alone. Should two keys sanitize alike (`a.b` and `a_b`), k goes on to the first free
/// name. The count and that check run once per key, not per function, so that naming stays
/// linear in the number of functions (a model of 1600 nodes outlines some 800 composites).
class function_namer {
 public:
  constexpr void name(function_info& f, const module_builder& m, std::string_view prefix, std::string_view middle,
                      std::string_view backend, std::string_view composite) {
    key* k = nullptr;
    for (key& x : keys_)
      if (x.backend == backend && x.composite == composite) k = &x;
    if (!k) k = &add(m, prefix, middle, backend, composite);
    for (;; ++k->next) {
      f.name_length = 0;
      append_text(f, k->stem.name());
      append_number(f, k->next);
      if (!k->clash || !taken(m, f.name())) break;
    }
    ++k->next;
  }

 private:
  struct key {
    std::string_view backend, composite;
    function_info stem;  // the sanitized prefix, the middle and "_"
    int next = 0;
    bool clash = false;
  };

  static constexpr bool taken(const module_builder& m, std::string_view name) {
    for (const function_info& g : m.functions)
      if (g.name() == name) return true;
    return false;
  }

  constexpr key& add(const module_builder& m, std::string_view prefix, std::string_view middle, std::string_view backend,
                     std::string_view composite) {
    key k{backend, composite, {}, 0, false};
    sanitize_into(k.stem, prefix);
    append_text(k.stem, middle);
    append_text(k.stem, "_");
    const std::string_view stem = k.stem.name();
    for (const function_info& g : m.functions) {
      const bool same = composite.empty() ? (g.composite.empty() && g.backend == backend) : g.composite == composite;
      if (same) ++k.next;
      else k.clash = k.clash || g.name().substr(0, stem.size()) == stem;
    }
    for (key& other : keys_)
      if (other.stem.name() == stem) other.clash = k.clash = true;
    keys_.push_back(k);
    return keys_.back();
  }

  std::vector<key> keys_;
};

/// A pass's result held in a module of capacity `C`: its sizes, and its contents when they fit.
template <builder_sizes C>
struct packed_module {
  builder_sizes sizes{};
  bool fits = false;
  module_value<C.nodes, C.args, C.functions> m{};
};

template <builder_sizes C>
constexpr packed_module<C> pack(const module_builder& b) {
  packed_module<C> p;
  p.sizes = sizes_of(b);
  p.fits = p.sizes.nodes <= C.nodes && p.sizes.args <= C.args && p.sizes.functions <= C.functions;
  if (!p.fits) return p;
  for (std::size_t i = 0; i < p.sizes.nodes; ++i) p.m.nodes[i] = b.nodes[i];
  for (std::size_t i = 0; i < p.sizes.args; ++i) p.m.args[i] = b.args[i];
  for (std::size_t i = 0; i < p.sizes.functions; ++i) p.m.functions[i] = b.functions[i];
  return p;
}

/// Room for a pass's result, judged from the module it reads (`Pass::input`, when it names one):
/// rewrites add parameter nodes, calls and functions, seldom half as many again.
template <class Pass>
constexpr builder_sizes capacity_for() {
  if constexpr (requires { Pass::input::value.nodes; }) {
    const auto& v = Pass::input::value;
    const std::size_t n = v.nodes.size(), a = v.args.size(), f = v.functions.size();
    return {n + n / 2 + 16, a + a / 2 + 16, f + n / 2 + 4};
  } else {
    return {0, 0, 0};
  }
}

/// Runs a pass (a type with `static constexpr module_builder run()`) and stores its result as
/// an exactly sized module value. The sizes are only known once the pass has run, and they are
/// the value's type: the pass runs once into a module of ample capacity (see `capacity_for`),
/// whose contents the exact value then copies; a result that does not fit runs the pass again.
template <class Pass>
struct module_from {
  static constexpr packed_module<capacity_for<Pass>()> packed = pack<capacity_for<Pass>()>(Pass::run());
  static constexpr builder_sizes sizes = packed.sizes;
  static constexpr auto value = [] {
    if constexpr (packed.fits) {
      return materialize<sizes>(packed.m);
    } else {
      return materialize<sizes>(Pass::run());
    }
  }();
};

}  // namespace partita::detail
