#pragma once
/// Options of cost-based partitioning (`cost_config`) and the lookup of measured costs.
#include <string_view>

#include "partita/backend/cost.hpp"
#include "partita/pass/cost/detail/cover.hpp"

namespace partita {

/// Options of the cost-based search: `Costs`, measured costs (a type with a `static constexpr`
/// array `entries` of `measured_cost`, and optionally `transfers` of `measured_transfer`, as
/// `tune` writes), used instead of the estimates for the candidates and backend pairs they name;
/// `MaxDepth`, the longest chain of ops a union of candidates may hold.
template <class Costs = no_measured_costs, int MaxDepth = 3>
struct cost_config {
  using costs = Costs;
  static constexpr int max_depth = MaxDepth;
  /// Unions generated per backend at most (the search stays bounded on large models).
  static constexpr int max_unions = 4000;
};

namespace detail {

/// The measured cost of the candidate of `backend` with `signature` in `Costs::entries`, if any.
template <class Costs>
constexpr const measured_cost* find_measured(std::string_view backend, std::uint64_t signature) {
  for (const measured_cost& e : Costs::entries)
    if (e.signature == signature && !e.backend.empty() && e.backend == backend) return &e;
  return nullptr;
}

/// The measured hand-over from `from` to `to` in `Costs::transfers`, if it has one (else -1).
template <class Costs>
constexpr double measured_handover(std::string_view from, std::string_view to) {
  if constexpr (requires { Costs::transfers; }) {
    for (const measured_transfer& t : Costs::transfers)
      if (t.from == from && t.to == to) return t.ns;
  }
  return -1;
}

template <class Costs, class From, class... Tos>
constexpr void transfer_row(transfer_fn* out) {
  int j = 0;
  ((out[j++] = {&transfer<From, Tos>::ns, measured_handover<Costs>(std::string_view(From::name), std::string_view(Tos::name))}), ...);
}

}  // namespace detail
}  // namespace partita
