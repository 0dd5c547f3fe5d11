#pragma once
/// Post-partition passes that give partitions back to the host: pruning and host fallback.
#include <string_view>
#include <vector>

#include "partita/core/fixed_string.hpp"
#include "partita/backend/partition_view.hpp"
#include "partita/ir/uses.hpp"
#include "partita/ir/module_builder.hpp"

namespace partita {

namespace passes {

/// Post-partition pruning, as TVM's DNNL integration does: a partition of backend `Backend`
/// (by name) with fewer than `MinHeavyOps` conv2d/dense ops (composites included) costs more to
/// offload than it saves, so it is inlined back into main for the host.
template <fixed_string Backend, int MinHeavyOps = 1>
struct prune_partitions;

/// Host fallback, decided at compile time: every partition of backend `B` that
/// `B::accepts(const partition_view&)` refuses is inlined back into main for the host (use it as
/// one of `B`'s `post_partition` passes). A partition refused only at run time, when `bind`
/// prepares it, is an error instead (`bind` throws, naming the backend and the partition).
template <class B>
struct host_fallback;

}  // namespace passes

namespace detail {

/// Compute-intensive nodes (conv2d, dense) in function `f`, counting inside its composites.
constexpr int heavy_ops(const module_builder& m, int f) {
  const function_info& fn = m.functions[static_cast<std::size_t>(f)];
  int n = 0;
  for (int i = fn.first_node; i < fn.first_node + fn.num_nodes; ++i) {
    const graph_node& g = m.node(i);
    if (g.op == op_id::conv2d || g.op == op_id::dense) ++n;
    if (g.op == op_id::call) n += heavy_ops(m, g.index);
  }
  return n;
}

/// Inlines back into main (for the host) every call of a partition of `backend` for which
/// `give_back(m, function)` holds, then drops functions nothing calls any more.
template <class GiveBack>
constexpr module_builder inline_partitions(const module_builder& m, std::string_view backend, GiveBack give_back) {
  const function_info& f = m.main();
  module_builder out;
  copy_functions_but_main(out, m);
  const int start = static_cast<int>(out.nodes.size());
  std::vector<int> to(m.nodes.size(), -1);
  std::vector<int> tuple_fields(m.nodes.size(), -1);  // main call → first of its inlined results
  std::vector<int> fields;
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    const graph_node& g = m.node(i);
    if (g.op == op_id::get && tuple_fields[static_cast<std::size_t>(m.arg(i, 0))] >= 0) {
      to[static_cast<std::size_t>(i)] = fields[static_cast<std::size_t>(tuple_fields[static_cast<std::size_t>(m.arg(i, 0))] + g.index)];
      continue;
    }
    if (g.op == op_id::call) {
      const function_info& c = m.functions[static_cast<std::size_t>(g.index)];
      if (c.backend == backend && give_back(m, g.index)) {
        std::vector<int> local(static_cast<std::size_t>(c.num_nodes), -1);
        for (int j = c.first_node; j < c.first_node + c.num_nodes; ++j) {
          const graph_node& n = m.node(j);
          int& v = local[static_cast<std::size_t>(j - c.first_node)];
          if (n.op == op_id::param) {
            v = to[static_cast<std::size_t>(m.arg(i, n.index))];  // parameter k: the call's argument k
            continue;
          }
          if (j == c.result && n.op == op_id::tuple) break;  // its fields are projected below
          v = out.emit_mapped(n, m, j, [&](int arg) { return local[static_cast<std::size_t>(arg - c.first_node)]; });
        }
        const graph_node& r = m.node(c.result);
        if (r.op == op_id::tuple) {
          tuple_fields[static_cast<std::size_t>(i)] = static_cast<int>(fields.size());
          for (int k = 0; k < r.nargs; ++k) fields.push_back(local[static_cast<std::size_t>(m.arg(c.result, k) - c.first_node)]);
        } else {
          to[static_cast<std::size_t>(i)] = local[static_cast<std::size_t>(c.result - c.first_node)];
        }
        continue;
      }
    }
    to[static_cast<std::size_t>(i)] = out.emit_mapped(g, m, i, to);
  }
  finish_main(out, start, to[static_cast<std::size_t>(f.result)]);
  return remove_dead_functions(out);
}

/// Inlines back the partitions of `backend` holding fewer than `min_heavy` compute-intensive ops.
constexpr module_builder prune_partitions(const module_builder& m, std::string_view backend, int min_heavy) {
  return inline_partitions(m, backend, [min_heavy](const module_builder& mb, int fn) { return heavy_ops(mb, fn) < min_heavy; });
}

}  // namespace detail

namespace passes {

template <fixed_string Backend, int MinHeavyOps>
struct prune_partitions {
  static constexpr detail::module_builder run(detail::module_builder m) {
    return detail::prune_partitions(m, Backend.view(), MinHeavyOps);
  }
};

template <class B>
struct host_fallback {
  static constexpr detail::module_builder run(detail::module_builder m) {
    return detail::inline_partitions(m, std::string_view(B::name), [](const detail::module_builder& mb, int fn) {
      const function_info& f = mb.functions[static_cast<std::size_t>(fn)];
      return !B::accepts(partition_view(mb.nodes.data(), mb.args.data(), f, detail::heavy_ops(mb, fn)));
    });
  }
};

}  // namespace passes
}  // namespace partita
