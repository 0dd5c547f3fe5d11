#pragma once
/// Cost-based partitioning (`cost_partition`, `cost_partition_with`): the entry points and their flow.
#include <type_traits>

#include "partita/backend/backend.hpp"
#include "partita/ir/module_builder.hpp"
#include "partita/pass/cost/candidates.hpp"
#include "partita/pass/cost/config.hpp"
#include "partita/pass/cost/planner.hpp"
#include "partita/pass/pipeline.hpp"

namespace partita {

/// Cost-based partitioning (Collage-style) with explicit options (`cost_config`): each
/// backend's `pre_partition` passes, then a search over alternative partitionings of main that
/// minimises the estimated run time, then each backend's `post_partition` passes. The result is
/// an ordinary partitioned module (composites, `<backend>_main_<n>` partitions), as the eager
/// flow's. `search` reports the estimate and the search's size.
template <class Config, class M, class... Backends>
struct cost_partition_with;

/// Cost-based partitioning with the default options: every match of every backend's patterns,
/// every single op a backend supports and unions of touching candidates (for backends that run
/// whole partitions) are candidates; each costs `Backend::cost(candidate_view)` or the estimate
/// from the backend's `speed`, plus `transfer<From, To>` for every tensor crossing between
/// backends; the cheapest cover of the graph wins, and touching partitions of one backend are
/// coalesced when no cycle results. `cost_partition<net, onednn, cpu>`.
template <class M, class... Backends>
struct cost_partition;

namespace detail {

/// Each backend's `pre_partition` passes on `M`: the module the search covers.
template <class M, class... Bs>
struct pre_partition_phase {
  static constexpr module_builder run() {
    module_builder m = to_builder(module_type_t<M>::value);
    ((m = pre_partition<Bs>(std::move(m))), ...);
    return m;
  }
};

/// The search's choice applied to the pre-partitioned module: composites, targets, PartitionGraph.
template <class Pre, class Choice, class Config, class... Bs>
struct cost_apply_pass {
  static constexpr module_builder run() { return cost_planner<Config, Bs...>::apply(to_builder(Pre::value), Choice::value); }
};

/// The whole flow as types: pre-partition, candidates and search, application, post-partition.
template <class Config, class M, class... Bs>
struct cost_flow {
  using pre = module_from<pre_partition_phase<M, Bs...>>;
  using choice = cost_choice<pre, Config, Bs...>;
  static_assert(choice::value.complete, "partita: cost_partition: a node has no candidate (no backend runs it)");
  using partitioned = module_from<cost_apply_pass<pre, choice, Config, Bs...>>;
  using type = std::conditional_t<(has_post_partition<Bs> || ...), module_from<post_partition_phase<partitioned, Bs...>>, partitioned>;
};

template <class... Bs>
inline constexpr bool has_host = (is_host_backend<Bs> || ...);

/// The flow when its backends are well-formed; otherwise the model as it is (the entry point's
/// static_asserts say what is wrong, without a cascade of errors from the search).
template <class Config, class M, class... Bs>
struct checked_cost_flow : cost_flow<Config, M, Bs...> {
  static constexpr search_stats stats = cost_flow<Config, M, Bs...>::choice::value.stats;
};
template <class M>
struct unchecked_cost_flow {
  using type = module_type_t<M>;
  static constexpr search_stats stats{};
};
template <class Config, class M, class... Bs>
using cost_flow_for =
    std::conditional_t<backends_ok<Bs...> && has_host<Bs...>, checked_cost_flow<Config, M, Bs...>, unchecked_cost_flow<M>>;

}  // namespace detail

template <class Config, class M, class... Backends>
struct cost_partition_with : detail::cost_flow_for<Config, M, Backends...>::type {
  static_assert(backends_ok<Backends...>, "partita: cost_partition: a backend failed the checks reported above");
  static_assert(detail::has_host<Backends...>,
                "partita: cost_partition<Model, Backends...> needs a host backend (such as cpu), listed last: it runs what no other "
                "backend is cheaper for");
  /// The search's estimate of the chosen partitioning and its statistics.
  static constexpr detail::search_stats search = detail::cost_flow_for<Config, M, Backends...>::stats;
};

template <class M, class... Backends>
struct cost_partition : cost_partition_with<cost_config<>, M, Backends...> {};

}  // namespace partita
