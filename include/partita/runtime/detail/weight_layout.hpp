#pragma once
/// Where `bind` puts each weight: kept for `run`, or staged for the backends' `prepare` only.
#include <array>
#include <cstddef>

#include "partita/ir/layout.hpp"
#include "partita/runtime/plan_records.hpp"

namespace partita::detail {

/// Which weights `run` reads as given: those of every step whose kernel does not pack them
/// (`packs[s]` false), and those an output copies. The others reach `prepare` from a staging
/// buffer that `bind` frees once the backends have packed them.
template <std::size_t W, class P, std::size_t N>
constexpr std::array<bool, W> weights_kept(const P& plan, const std::array<bool, N>& packs) {
  std::array<bool, W> keep{};
  for (std::size_t s = 0; s < N; ++s) {
    if (packs[s]) continue;
    const plan_step& st = plan.steps[s];
    for (int k = 0; k < st.num_in; ++k) {
      const buffer_ref& r = plan.ins[static_cast<std::size_t>(st.first_in + k)];
      if (r.kind == storage::weight) keep[static_cast<std::size_t>(r.index)] = true;
    }
  }
  for (const output_copy& c : plan.copies)
    if (c.from.kind == storage::weight) keep[static_cast<std::size_t>(c.from.index)] = true;
  return keep;
}

/// Kept weights lie back to back in the weight storage, staged ones in the staging buffer.
template <std::size_t W>
struct weight_layout {
  std::array<std::size_t, W> offset{};
  std::size_t kept_bytes = 0, staged_bytes = 0;
};

template <std::size_t W, class P>
constexpr weight_layout<W> lay_out_weights(const P& plan, const std::array<bool, W>& kept) {
  weight_layout<W> l;
  for (std::size_t i = 0; i < plan.weights.size(); ++i) {
    std::size_t& end = kept[i] ? l.kept_bytes : l.staged_bytes;
    l.offset[i] = end;
    end += align_up(plan.weights[i].bytes());
  }
  return l;
}

}  // namespace partita::detail
