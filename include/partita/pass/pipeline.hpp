#pragma once
/// The eager flow and pass lists: `partition`, phases and user passes.
#include <string_view>

#include "partita/backend/backend.hpp"
#include "partita/ir/model.hpp"
#include "partita/pass/annotate_target.hpp"
#include "partita/pass/merge_composite.hpp"
#include "partita/pass/merge_regions.hpp"
#include "partita/ir/module_builder.hpp"
#include "partita/pass/partition_graph.hpp"

namespace partita {

/// Runs `Passes...` (from `partita::passes` or a backend's own) in order on a model or module;
/// the intermediate modules are never materialised. The whole pipeline is one constant
/// evaluation: for models of thousands of nodes, chain the pass types instead
/// (`partition_graph<merge_regions<...>>`), each of which is its own.
/// `pipeline<net, passes::merge_composite<npu::patterns>, passes::annotate_target<npu, reference>>`.
template <class M, class... Passes>
struct pipeline;

/// The eager, UMA-style flow for `Backends...` (priority order, host last): each backend's
/// `pre_partition` passes, MergeComposite with each backend's `patterns` in backend order,
/// AnnotateTarget, MergeCompilerRegions, PartitionGraph, then each backend's `post_partition`
/// passes. Backends without patterns or passes simply take part in annotation.
template <class M, class... Backends>
struct partition;

/// Passes as values, for `pipeline` and backend pass phases: each is a type with
/// `static constexpr detail::module_builder run(detail::module_builder)`.
namespace passes {

/// MergeComposite with `Table` (a `pattern_table`).
template <class Table>
struct merge_composite {
  static constexpr detail::module_builder run(detail::module_builder m) { return detail::merge_composite(std::move(m), Table::value); }
};

/// AnnotateTarget with `Backends...` in priority order.
template <class... Backends>
struct annotate_target {
  static constexpr detail::module_builder run(detail::module_builder m) { return detail::annotate_target<Backends...>(std::move(m)); }
};

/// MergeCompilerRegions.
struct merge_regions {
  static constexpr detail::module_builder run(detail::module_builder m) { return detail::merge_regions(std::move(m)); }
};

/// PartitionGraph.
struct partition_graph {
  static constexpr detail::module_builder run(detail::module_builder m) { return detail::partition_graph(m); }
};

}  // namespace passes

/// A list of passes run in order (used for backend phases: `using pre_partition = pass_list<...>;`).
template <class... Passes>
struct pass_list {
  static constexpr detail::module_builder run(detail::module_builder m) {
    ((m = Passes::run(std::move(m))), ...);
    return m;
  }
};

namespace detail {

template <class M, class... Passes>
struct pipeline_pass {
  using input = module_type_t<M>;
  static constexpr module_builder run() { return pass_list<Passes...>::run(to_builder(module_type_t<M>::value)); }
};

template <class B>
constexpr module_builder backend_patterns(module_builder m) {
  if constexpr (requires { B::patterns::value; }) {
    return merge_composite(std::move(m), B::patterns::value);
  } else {
    return m;
  }
}

template <class B>
constexpr module_builder pre_partition(module_builder m) {
  if constexpr (requires { typename B::pre_partition; }) {
    return B::pre_partition::run(std::move(m));
  } else {
    return m;
  }
}

template <class B>
constexpr module_builder post_partition(module_builder m) {
  if constexpr (requires { typename B::post_partition; }) {
    return B::post_partition::run(std::move(m));
  } else {
    return m;
  }
}

template <class M, class... Backends>
struct composite_phase {
  using input = module_type_t<M>;
  static constexpr module_builder run() {
    module_builder m = to_builder(module_type_t<M>::value);
    ((m = pre_partition<Backends>(std::move(m))), ...);
    ((m = backend_patterns<Backends>(std::move(m))), ...);
    return m;
  }
};

template <class M, class... Backends>
struct post_partition_phase {
  using input = M;
  static constexpr module_builder run() {
    module_builder m = to_builder(M::value);
    ((m = post_partition<Backends>(std::move(m))), ...);
    return m;
  }
};

template <class B>
inline constexpr bool has_post_partition = requires { typename B::post_partition; };

/// The eager flow's phases, each a small named type: they appear in the symbols of every kernel
/// (`step_ref` names the module) and in diagnostics, where nesting the passes' own types would
/// repeat the whole flow at each level.
template <class M, class... Backends>
struct composites_of : module_from<composite_phase<M, Backends...>> {};
template <class M, class... Backends>
struct annotated_of : module_from<annotate_target_pass<composites_of<M, Backends...>, Backends...>> {};
template <class M, class... Backends>
struct regions_of : module_from<merge_regions_pass<annotated_of<M, Backends...>>> {};
template <class M, class... Backends>
struct partitioned_of : module_from<partition_graph_pass<regions_of<M, Backends...>>> {};
template <class M, class... Backends>
struct post_partitioned_of : module_from<post_partition_phase<partitioned_of<M, Backends...>, Backends...>> {};

/// The eager flow, one materialised module per phase: each constant evaluation stays small
/// (compilers bound the work of a single one).
template <class M, class... Backends>
struct partition_flow {
  using composites = composites_of<M, Backends...>;
  using annotated = annotated_of<M, Backends...>;
  using partitioned = partitioned_of<M, Backends...>;
  using type = std::conditional_t<(has_post_partition<Backends> || ...), post_partitioned_of<M, Backends...>, partitioned>;
};

}  // namespace detail

template <class M, class... Passes>
struct pipeline : detail::module_from<detail::pipeline_pass<M, Passes...>> {};

template <class M, class... Backends>
struct partition : std::conditional_t<backends_ok<Backends...>, detail::partition_flow<M, Backends...>,
                                      std::type_identity<module_type_t<M>>>::type {};

/// Number of functions of module `M` that `Name` names: partitions of backend `Name` and
/// composites of pattern `Name`, with a backend prefix (`"cpu.conv2d_bias"`) or without.
template <module_type M, fixed_string Name>
inline constexpr int count_functions = [] {
  int n = 0;
  for (const function_info& f : M::value.functions) {
    const std::string_view want = Name.view();
    n += (f.backend == want || f.composite == want) ? 1 : 0;
  }
  return n;
}();

namespace detail {

template <class M>
inline constexpr bool is_model = false;
template <class... Outs>
inline constexpr bool is_model<model<Outs...>> = true;

/// True for backends that change a model before it runs: their patterns, phases, or claims.
template <class B>
inline constexpr bool takes_part = !is_host_backend<B> || requires { typename B::patterns; } ||
                                   requires { typename B::pre_partition; } || requires { typename B::post_partition; };

/// What `compiled<Model, Backends...>` runs: a module as given; a `model<...>` through the eager
/// flow (`partition<Model, Backends...>`) when a backend takes part in it, as is.
template <class Model, class... Backends>
using compiled_module = typename std::conditional_t<is_model<Model> && (takes_part<Backends> || ...),
                                                    std::type_identity<partition<Model, Backends...>>,
                                                    std::type_identity<module_type_t<Model>>>::type;

}  // namespace detail
}  // namespace partita
