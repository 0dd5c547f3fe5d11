#pragma once
/// Inspecting a module: its functions, their parameters, bodies and results, and what each call
/// calls. Everything is constexpr, for `static_assert` as much as for run-time code.
#include <cstddef>
#include <string_view>

#include "partita/core/error.hpp"
#include "partita/ir/module.hpp"
#include "partita/ir/view.hpp"

namespace partita {

/// What a function of a module is: `main`, a composite formed from a pattern table, or a
/// partition outlined for a backend.
enum class function_kind { main, composite, partition };

/// One function of a module, read-only.
class function_view {
 public:
  constexpr function_view(const graph_node* nodes, const int* args, const function_info* info, int index)
      : nodes_(nodes), args_(args), f_(info), index_(index) {}

  /// Its position in the module's function table (main is 0), what calls refer to.
  constexpr int index() const { return index_; }
  constexpr std::string_view name() const { return f_->name(); }
  constexpr function_kind kind() const {
    if (index_ == 0) return function_kind::main;
    return f_->composite.empty() ? function_kind::partition : function_kind::composite;
  }
  /// The pattern name of a composite (`"cpu.conv2d_bias_act"`); empty for other functions.
  constexpr std::string_view composite() const { return f_->composite; }
  /// The backend that runs the function: a partition's `backend` attribute, or the prefix of a
  /// composite's pattern name up to its first `.` (empty without one, and for main).
  constexpr std::string_view backend() const {
    return kind() == function_kind::composite ? composite_backend(f_->composite) : f_->backend;
  }

  /// Its parameters in order: `param` nodes for composites and partitions, the model's inputs
  /// for main.
  constexpr int num_params() const {
    int n = 0;
    for (int i = 0; i < size(); ++i) n += is_param(node(i));
    return n;
  }
  constexpr op_view param(int k) const {
    int seen = 0;
    for (int i = 0; i < size(); ++i)
      if (is_param(node(i)) && (kind() == function_kind::main ? seen++ == k : node(i).node().index == k)) return node(i);
    detail::raise(error("partita: function_view::param: no parameter of this position"));
  }

  /// Its nodes in topological order: parameters, weights and ops, the result last among those
  /// it reads.
  constexpr int size() const { return f_->num_nodes; }
  constexpr op_view node(int i) const { return {nodes_, args_, f_->first_node + i}; }
  /// How many of its nodes run `op`.
  constexpr int count(op_id op) const {
    int n = 0;
    for (int i = 0; i < size(); ++i) n += node(i).is(op);
    return n;
  }
  /// How many of its nodes are operations: neither parameters, inputs, weights nor tuples.
  constexpr int num_ops() const {
    int n = 0;
    for (int i = 0; i < size(); ++i) n += !is_leaf(node(i).op()) && !node(i).is(op_id::tuple);
    return n;
  }

  /// The node it returns; a tuple when it has several outputs.
  constexpr op_view result() const { return {nodes_, args_, f_->result}; }
  constexpr int num_outputs() const { return result().is(op_id::tuple) ? result().num_args() : 1; }
  constexpr op_view output(int k) const { return result().is(op_id::tuple) ? result().arg(k) : result(); }

 private:
  constexpr bool is_param(op_view v) const { return v.is(kind() == function_kind::main ? op_id::input : op_id::param); }

  const graph_node* nodes_;
  const int* args_;
  const function_info* f_;
  int index_;
};

/// A module, read-only: `inspect<M>()` for a module type, or `module_view(M::value)`.
class module_view {
 public:
  template <std::size_t N, std::size_t A, std::size_t F>
  constexpr explicit module_view(const module_value<N, A, F>& m)
      : nodes_(m.nodes.data()), args_(m.args.data()), functions_(m.functions.data()), num_functions_(static_cast<int>(F)) {}

  constexpr int num_functions() const { return num_functions_; }
  constexpr function_view function(int i) const {
    if (i < 0 || i >= num_functions_) detail::raise(error("partita: module_view::function: no function of this index"));
    return {nodes_, args_, functions_ + i, i};
  }
  constexpr function_view main() const { return function(0); }
  /// The index of the function called `name`, or -1.
  constexpr int find(std::string_view name) const {
    for (int i = 0; i < num_functions_; ++i)
      if (functions_[i].name() == name) return i;
    return -1;
  }
  /// The function called `name`; an error if there is none.
  constexpr function_view function(std::string_view name) const {
    const int i = find(name);
    if (i < 0) detail::raise(error("partita: module_view::function: no function of this name"));
    return function(i);
  }
  /// The function that call node `call` calls; an error for a node that is not a call.
  constexpr function_view callee(op_view call) const {
    if (!call.is(op_id::call)) detail::raise(error("partita: module_view::callee: the node is not a call"));
    return function(call.node().index);
  }
  /// How many functions are of kind `k`.
  constexpr int count(function_kind k) const {
    int n = 0;
    for (int i = 0; i < num_functions_; ++i) n += function(i).kind() == k;
    return n;
  }
  /// How many functions `name` names: partitions of backend `name` and composites of pattern
  /// `name`, with a backend prefix or without (what `count_functions` counts).
  constexpr int count(std::string_view name) const {
    int n = 0;
    if (name.empty()) return 0;
    for (int i = 0; i < num_functions_; ++i) n += functions_[i].backend == name || functions_[i].composite == name;
    return n;
  }

 private:
  const graph_node* nodes_;
  const int* args_;
  const function_info* functions_;
  int num_functions_;
};

/// The view of module type `M` (a pass result, `partition<...>`, `module_of<model<...>>`).
template <module_type M>
constexpr module_view inspect() {
  return module_view(M::value);
}

}  // namespace partita
