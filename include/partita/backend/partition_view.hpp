#pragma once
/// What a backend sees of one of its partitions when it decides whether to take it (`accepts`).
#include <string_view>

#include "partita/ir/module.hpp"
#include "partita/ir/view.hpp"

namespace partita {

/// What a backend's `accepts` sees of one of its partitions, at compile time.
class partition_view {
 public:
  constexpr partition_view(const graph_node* nodes, const int* args, const function_info& f, int heavy)
      : nodes_(nodes), args_(args), f_(f), heavy_(heavy) {}
  /// The partition function's nodes: parameters, bound weights, ops and composite calls.
  constexpr int size() const { return f_.num_nodes; }
  constexpr op_view node(int i) const { return {nodes_, args_, f_.first_node + i}; }
  constexpr int num_params() const { return f_.num_params; }
  /// Its conv2d and dense ops, composites included.
  constexpr int heavy_ops() const { return heavy_; }
  constexpr std::string_view name() const { return f_.name(); }

 private:
  const graph_node* nodes_;
  const int* args_;
  function_info f_;
  int heavy_;
};

}  // namespace partita
