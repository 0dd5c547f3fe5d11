#pragma once
/// `model<Outputs...>`: a model type and its module.
#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "partita/core/fixed_string.hpp"
#include "partita/ir/graph.hpp"
#include "partita/ir/node.hpp"

namespace partita {

/// A model: its outputs, in order (`model<logits>`, `model<boxes, scores>`). Inputs are the
/// `input<...>` nodes reachable from the outputs, in order of first use in a depth-first,
/// left-to-right walk from the first output.
template <class... Outputs>
struct model {
  static_assert(sizeof...(Outputs) >= 1, "partita: a model needs at least one output");
  static_assert(detail::args_are_nodes<model, Outputs...>(std::index_sequence_for<Outputs...>{}));
  static constexpr const node_desc* outputs[] = {&detail::desc_of<Outputs>()...};
  static constexpr int num_outputs = static_cast<int>(sizeof...(Outputs));
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
  static constexpr auto value = main_module<sizes>(Model::outputs, Model::num_outputs);
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
