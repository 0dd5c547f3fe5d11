#pragma once
// Compile-time queries on modules, for static_assert tests of the passes.
#include <initializer_list>
#include <string_view>

#include <partita/partita.hpp>

namespace test_queries {
using namespace partita;

// Shorthands over the public inspection API (partita/ir/query.hpp), which they also exercise.
template <module_type M>
constexpr int function_named(std::string_view name) {
  return inspect<M>().find(name);
}
/// Whether the ops of a function's body (params, inputs and weights excluded) are exactly `ops`, in order.
template <module_type M>
constexpr bool body_is(int fn, std::initializer_list<op_id> ops) {
  const function_view f = inspect<M>().function(fn);
  auto it = ops.begin();
  for (int i = 0; i < f.size(); ++i) {
    const op_id op = f.node(i).op();
    if (is_leaf(op)) continue;
    if (it == ops.end() || *it != op) return false;
    ++it;
  }
  return it == ops.end();
}
template <module_type M>
constexpr int count_op(int fn, op_id op) {
  return inspect<M>().function(fn).count(op);
}
template <module_type M>
constexpr int params_of(int fn) {
  return inspect<M>().function(fn).num_params();
}
/// The name of the input passed as argument k to main's call of function fn.
template <module_type M>
constexpr std::string_view call_arg_name(int fn, int k) {
  const module_view m = inspect<M>();
  const function_view main = m.main();
  for (int i = 0; i < main.size(); ++i)
    if (main.node(i).is(op_id::call) && m.callee(main.node(i)).index() == fn) return main.node(i).arg(k).name();
  return "<no call>";
}
/// How many calls main makes to functions that `name` names (partitions of a backend,
/// composites of a pattern): identical functions are one, called from several places.
template <module_type M>
constexpr int calls_of(std::string_view name) {
  const module_view m = inspect<M>();
  int n = 0;
  for (int i = 0; i < m.main().size(); ++i) {
    const op_view v = m.main().node(i);
    if (v.is(op_id::call) && (m.callee(v).backend() == name || m.callee(v).composite() == name)) ++n;
  }
  return n;
}
template <module_type M>
constexpr int composites() {
  return inspect<M>().count(function_kind::composite);
}
template <module_type M>
constexpr int ops_in(int fn) {
  return inspect<M>().function(fn).num_ops();
}
template <module_type M>
constexpr int outputs_of(int fn) {
  return inspect<M>().function(fn).num_outputs();
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
