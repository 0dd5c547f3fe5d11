#pragma once
/// The module: nodes, arguments and functions as constexpr arrays (`module_value`).
#include <array>
#include <cstddef>
#include <string_view>

#include "partita/core/dtype.hpp"
#include "partita/core/shape.hpp"
#include "partita/ir/attrs.hpp"
#include "partita/ir/op_id.hpp"

namespace partita {

/// One node of a module's node table. Arguments are indices into the module's `args` pool.
/// Attributes are held by pointer to the op descriptor's own (static, never changing) copy:
/// passes copy nodes many times, and a pointer is far cheaper to copy at compile time.
struct graph_node {
  op_id op = op_id::input;
  dtype type = dtype::f32;
  shape out{};
  const attrs* at = &no_attrs;
  std::string_view name{};  // inputs and weights
  int first_arg = 0;
  int nargs = 0;
  bool is_tuple = false;
  std::string_view pinned{};  // backend chosen by the user with on<backend, expr>
  std::string_view target{};  // backend chosen by annotate_target
  int region = -1;            // region chosen by merge_regions
  int index = 0;              // param: its position; get: the field; call: the callee function
  friend constexpr bool operator==(const graph_node& a, const graph_node& b) {
    return a.op == b.op && a.type == b.type && a.out == b.out && *a.at == *b.at && a.name == b.name &&
           a.first_arg == b.first_arg && a.nargs == b.nargs && a.is_tuple == b.is_tuple && a.pinned == b.pinned &&
           a.target == b.target && a.region == b.region && a.index == b.index;
  }
};

/// Longest function name a module stores (`<backend>_<function>_<region id>`).
inline constexpr std::size_t max_function_name = 64;

/// A function of a module: `main`, a composite or a backend partition. Its nodes are the
/// contiguous range [first_node, first_node + num_nodes) of the module's table, in topological
/// order; `result` is the node it returns (a tuple for several results).
struct function_info {
  std::array<char, max_function_name> name_chars{};
  int name_length = 0;
  std::string_view composite{};  // pattern name for a composite function
  std::string_view backend{};    // owning backend for a partition function
  int first_node = 0;
  int num_nodes = 0;
  int num_params = 0;
  int result = -1;
  // main: the model's output names, one per result (`model::output_names`); passes copy main's
  // info, so the names reach the plan.
  const std::string_view* result_names = nullptr;
  int num_result_names = 0;

  constexpr std::string_view name() const { return {name_chars.data(), static_cast<std::size_t>(name_length)}; }
  constexpr void set_name(std::string_view s) {
    name_length = 0;
    for (char c : s)
      if (static_cast<std::size_t>(name_length) < max_function_name) name_chars[static_cast<std::size_t>(name_length++)] = c;
  }
};

/// The backend a composite belongs to: its name up to the first `.` (empty if there is none).
/// (A plain loop: GCC's -fsanitize=undefined makes string_view::find unusable in constant
/// evaluation of names held in template arguments.)
constexpr std::string_view composite_backend(std::string_view name) {
  for (std::size_t i = 0; i < name.size(); ++i)
    if (name[i] == '.') return name.substr(0, i);
  return {};
}

/// A module as a constexpr value: every function's nodes in one table. Passes are constexpr
/// functions from one module value to another; a *module type* is any type with a
/// `static constexpr` member `value` of this template (see `module_of`).
template <std::size_t N, std::size_t A, std::size_t F>
struct module_value {
  std::array<graph_node, N> nodes{};
  std::array<int, A> args{};
  std::array<function_info, F> functions{};

  static constexpr std::size_t num_nodes = N;
  static constexpr std::size_t num_functions = F;

  /// Index of argument `i` of node `n`.
  constexpr int arg(int n, int i) const { return args[static_cast<std::size_t>(nodes[static_cast<std::size_t>(n)].first_arg + i)]; }
  constexpr const graph_node& node(int n) const { return nodes[static_cast<std::size_t>(n)]; }
  constexpr const function_info& main() const { return functions[0]; }
};

/// True for module types: types with a `static constexpr value` that is a module_value.
template <class M>
concept module_type = requires {
  M::value.nodes;
  M::value.functions;
  M::value.args;
};

}  // namespace partita
