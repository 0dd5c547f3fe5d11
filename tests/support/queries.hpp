#pragma once
// Compile-time queries on modules, for static_assert tests of the passes.
#include <initializer_list>
#include <string_view>

#include <partita/partita.hpp>

namespace test_queries {
using namespace partita;

template <module_type M>
constexpr int function_named(std::string_view name) {
  for (std::size_t f = 0; f < M::value.functions.size(); ++f)
    if (M::value.functions[f].name() == name) return static_cast<int>(f);
  return -1;
}
/// Whether the ops of a function's body (params, inputs and weights excluded) are exactly `ops`, in order.
template <module_type M>
constexpr bool body_is(int fn, std::initializer_list<op_id> ops) {
  const function_info& f = M::value.functions[static_cast<std::size_t>(fn)];
  auto it = ops.begin();
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    const op_id op = M::value.node(i).op;
    if (op == op_id::param || op == op_id::weight || op == op_id::input) continue;
    if (it == ops.end() || *it != op) return false;
    ++it;
  }
  return it == ops.end();
}
template <module_type M>
constexpr int count_op(int fn, op_id op) {
  const function_info& f = M::value.functions[static_cast<std::size_t>(fn)];
  int n = 0;
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) n += M::value.node(i).op == op;
  return n;
}
template <module_type M>
constexpr int params_of(int fn) { return M::value.functions[static_cast<std::size_t>(fn)].num_params; }
/// The name of the input passed as argument k to main's call of function fn.
template <module_type M>
constexpr std::string_view call_arg_name(int fn, int k) {
  const auto& m = M::value;
  const function_info& main = m.main();
  for (int i = main.first_node; i < main.first_node + main.num_nodes; ++i)
    if (m.node(i).op == op_id::call && m.node(i).index == fn) return m.node(m.arg(i, k)).name;
  return "<no call>";
}
template <module_type M>
constexpr int composites() {
  int n = 0;
  for (const function_info& f : M::value.functions) n += !f.composite.empty();
  return n;
}

template <module_type M>
constexpr int ops_in(int fn) {
  const function_info& f = M::value.functions[static_cast<std::size_t>(fn)];
  int n = 0;
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) n += !is_leaf(M::value.node(i).op) && M::value.node(i).op != op_id::tuple;
  return n;
}
template <module_type M>
constexpr int outputs_of(int fn) {
  const auto& f = M::value.functions[static_cast<std::size_t>(fn)];
  const graph_node& r = M::value.node(f.result);
  return r.op == op_id::tuple ? r.nargs : 1;
}
/// Targets of main's non-leaf nodes, in order.
template <module_type M>
constexpr bool targets_are(std::initializer_list<std::string_view> want) {
  const auto& m = M::value;
  auto it = want.begin();
  for (int i = m.main().first_node; i < m.main().first_node + m.main().num_nodes; ++i) {
    if (is_leaf(m.node(i).op)) continue;
    if (it == want.end() || *it != m.node(i).target) return false;
    ++it;
  }
  return it == want.end();
}
template <module_type A, module_type B>
constexpr bool same_module() {
  const auto& a = A::value;
  const auto& b = B::value;
  if (a.nodes.size() != b.nodes.size() || a.functions.size() != b.functions.size()) return false;
  for (std::size_t i = 0; i < a.nodes.size(); ++i)
    if (!(a.nodes[i] == b.nodes[i])) return false;
  for (std::size_t i = 0; i < a.args.size(); ++i)
    if (a.args[i] != b.args[i]) return false;
  for (std::size_t f = 0; f < a.functions.size(); ++f)
    if (a.functions[f].name() != b.functions[f].name() || a.functions[f].backend != b.functions[f].backend) return false;
  return true;
}

}  // namespace test_queries
