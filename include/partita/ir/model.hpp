#pragma once
/// `model<Outputs...>`: a model type and its module.
#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "partita/core/fixed_string.hpp"
#include "partita/ir/graph.hpp"
#include "partita/ir/node.hpp"

namespace partita {

/// A model output with a name, as an input has one: `model<output<"logits", fc2>>`.
/// `compiled::output(i).name` reports it and `run` finds the output's buffer by it; an output
/// given without a name is called `output<k>` after its position (`output0`, `output1`, ...).
/// Only `model<...>` reads the wrapper: elsewhere, use the node itself.
template <fixed_string Name, class X>
struct output {};

namespace detail {

/// "output<k>", the name of an unnamed output `k`, as a string usable at compile time.
template <std::size_t K>
inline constexpr auto default_output_name = [] {
  constexpr std::size_t digits = [] {
    std::size_t d = 1;
    for (std::size_t v = K; v >= 10; v /= 10) ++d;
    return d;
  }();
  fixed_string<sizeof("output") + digits> r{};
  for (std::size_t i = 0; i + 1 < sizeof("output"); ++i) r.chars[i] = "output"[i];
  std::size_t v = K;
  for (std::size_t i = 0; i < digits; ++i, v /= 10) r.chars[sizeof("output") - 1 + digits - 1 - i] = static_cast<char>('0' + v % 10);
  return r;
}();

/// What `model<...>` reads of its argument `O` at position `K`: the node and the output's name.
template <class O, std::size_t K>
struct output_of {
  using node = O;
  static constexpr std::string_view name = default_output_name<K>.view();
};

template <fixed_string Name, class X, std::size_t K>
struct output_of<output<Name, X>, K> {
  static_assert(Name.size() > 0, "partita: output<Name, X>: the name must not be empty");
  using node = X;
  static constexpr std::string_view name = Name.view();
};

template <class... Outputs, std::size_t... K>
constexpr std::array<std::string_view, sizeof...(Outputs)> output_names_of(std::index_sequence<K...>) {
  return {output_of<Outputs, K>::name...};
}

/// The index of the first output whose name an earlier one has, or -1.
template <std::size_t N>
constexpr int repeated_name(const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (names[i] == names[j]) return static_cast<int>(i);
  return -1;
}

/// Fails, printing `Name` in the instantiation, when two outputs of a model share it.
template <fixed_string Name>
constexpr bool output_name_is_unique() {
  static_assert(sizeof(Name) == 0, "partita: model<...>: two outputs have the same name (shown as Name above)");
  return true;  // reported once, above
}

template <const auto& Names>
constexpr bool check_output_names() {
  constexpr int r = repeated_name(Names);
  if constexpr (r >= 0) {
    return output_name_is_unique<to_fixed<Names[static_cast<std::size_t>(r)].size()>(Names[static_cast<std::size_t>(r)])>();
  } else {
    return true;
  }
}

}  // namespace detail

/// A model: its outputs, in order (`model<logits>`, `model<boxes, scores>`), each a node or a
/// named `output<"name", node>`. Inputs are the `input<...>` nodes reachable from the outputs, in
/// order of first use in a depth-first, left-to-right walk from the first output.
template <class... Outputs>
struct model {
  static_assert(sizeof...(Outputs) >= 1, "partita: a model needs at least one output");
  static_assert(detail::args_are_nodes<model, typename detail::output_of<Outputs, 0>::node...>(
      std::index_sequence_for<Outputs...>{}));
  static constexpr const node_desc* outputs[] = {&detail::desc_of<typename detail::output_of<Outputs, 0>::node>()...};
  static constexpr int num_outputs = static_cast<int>(sizeof...(Outputs));
  /// The outputs' names, in order (`output<k>` for an output given without one).
  static constexpr std::array<std::string_view, sizeof...(Outputs)> output_names =
      detail::output_names_of<Outputs...>(std::index_sequence_for<Outputs...>{});
  static_assert(detail::check_output_names<output_names>());
};

namespace detail {

/// The first pair of distinct leaves (inputs/weights) sharing a name, if any.
struct name_clash {
  int first = -1;
  int second = -1;
};

template <class M>
constexpr name_clash find_name_clash(const M& m) {
  // Leaves are few compared with ops; sort their indices by name to find clashes in n log n.
  std::vector<int> leaves;
  for (std::size_t i = 0; i < m.nodes.size(); ++i)
    if (m.nodes[i].op == op_id::input || m.nodes[i].op == op_id::weight) leaves.push_back(static_cast<int>(i));
  std::sort(leaves.begin(), leaves.end(), [&](int a, int b) {
    return m.nodes[static_cast<std::size_t>(a)].name < m.nodes[static_cast<std::size_t>(b)].name;
  });
  for (std::size_t i = 1; i < leaves.size(); ++i)
    if (m.nodes[static_cast<std::size_t>(leaves[i - 1])].name == m.nodes[static_cast<std::size_t>(leaves[i])].name)
      return {leaves[i - 1], leaves[i]};
  return {};
}

/// The clashing name as a type, so the diagnostic prints it.
template <fixed_string Name>
struct name_is {};

template <const auto& M, name_clash C>
constexpr bool check_names() {
  if constexpr (C.first >= 0) {
    constexpr const graph_node& a = M.nodes[static_cast<std::size_t>(C.first)];
    constexpr const graph_node& b = M.nodes[static_cast<std::size_t>(C.second)];
    return checked<name_is<to_fixed<a.name.size()>(a.name)>, verdict{problem::duplicate_name, a.out, b.out, a.type, b.type}>;
  } else {
    return true;
  }
}

template <class Model>
struct main_module_of {
  static constexpr module_sizes sizes = main_module_sizes(Model::outputs, Model::num_outputs);
  static constexpr auto value = main_module<sizes>(Model::outputs, Model::num_outputs, Model::output_names.data());
  static_assert(check_names<value, find_name_clash(value)>());
};

}  // namespace detail

/// The module of a model: `main` only, before any pass. A module type: `module_of<net>::value`
/// is the constexpr table that passes transform and `compiled` executes.
template <class Model>
struct module_of {
  static constexpr const auto& value = detail::main_module_of<Model>::value;
};

/// `M` itself when it is a module type (the result of passes), else `module_of<M>`: entry points
/// accept both.
template <class M>
using module_type_t = typename std::conditional_t<module_type<M>, std::type_identity<M>, std::type_identity<module_of<M>>>::type;

}  // namespace partita
