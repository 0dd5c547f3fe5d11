#pragma once
/// `op_view`: a read-only view of one node, for predicates and backends.
#include <string_view>

#include "partita/ir/module.hpp"

namespace partita {

/// A read-only view of one node of a module, for constexpr predicates: backend `supports`
/// functions and composite predicates see the op, dtype, shape, attributes and arguments.
class op_view {
 public:
  constexpr op_view(const graph_node* nodes, const int* args, int index) : nodes_(nodes), args_(args), index_(index) {}

  constexpr op_id op() const { return node().op; }
  constexpr bool is(op_id o) const { return node().op == o; }
  constexpr partita::dtype dtype() const { return node().type; }
  constexpr const partita::shape& shape() const { return node().out; }
  constexpr const partita::attrs& attributes() const { return *node().at; }
  constexpr std::string_view name() const { return node().name; }
  constexpr int num_args() const { return node().nargs; }
  constexpr op_view arg(int i) const { return {nodes_, args_, args_[node().first_arg + i]}; }
  constexpr int index() const { return index_; }
  constexpr const graph_node& node() const { return nodes_[index_]; }

 private:
  const graph_node* nodes_;
  const int* args_;
  int index_;
};

}  // namespace partita
