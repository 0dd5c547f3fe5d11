#pragma once
/// Kernel sharing: which steps compute the same thing, so that they run one kernel instantiation.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "partita/backend/backend.hpp"
#include "partita/ir/graph.hpp"
#include "partita/ir/module.hpp"
#include "partita/ir/node_desc.hpp"
#include "partita/runtime/plan_records.hpp"

namespace partita::detail {

/// The backend of each step of `plan`: its position in `Backends...` (`sizeof...(Backends)` for
/// one that is not listed).
template <std::size_t N, class... Backends, class P>
constexpr std::array<std::size_t, N> step_owners(const P& plan) {
  std::array<std::size_t, N> o{};
  for (std::size_t s = 0; s < N; ++s) o[s] = backend_index<Backends...>(plan.steps[s].backend);
  return o;
}

/// The fields of a node that a kernel may read as constants: op, dtype, shape, attributes, tuple.
constexpr bool same_computation(const graph_node& a, const graph_node& b) {
  return a.op == b.op && a.type == b.type && a.out == b.out && *a.at == *b.at && a.is_tuple == b.is_tuple &&
         a.nargs == b.nargs && a.index == b.index;
}

/// The same for two functions' bodies, node by node, with each argument taken relative to its
/// function: a composite's structure, its attributes and the shapes of the weights bound in it,
/// not their names. A call inside a body must call the very same function.
template <class M>
constexpr bool same_body(const M& m, int fa, int fb) {
  const function_info& a = m.functions[static_cast<std::size_t>(fa)];
  const function_info& b = m.functions[static_cast<std::size_t>(fb)];
  if (a.composite != b.composite || a.num_nodes != b.num_nodes || a.num_params != b.num_params ||
      a.result - a.first_node != b.result - b.first_node || !a.backend.empty() || !b.backend.empty())
    return false;
  for (int i = 0; i < a.num_nodes; ++i) {
    const graph_node& x = m.node(a.first_node + i);
    const graph_node& y = m.node(b.first_node + i);
    if (!same_computation(x, y)) return false;
    for (int k = 0; k < x.nargs; ++k)
      if (m.arg(a.first_node + i, k) - a.first_node != m.arg(b.first_node + i, k) - b.first_node) return false;
  }
  return true;
}

/// What `Step` tells a shared kernel about argument `k` of a step: dtype, shape, and whether it
/// is a bound weight (a kernel may pack those at `prepare`).
constexpr bool same_argument(const graph_node& a, const graph_node& b) {
  return a.type == b.type && a.out == b.out && (a.op == op_id::weight) == (b.op == op_id::weight);
}

/// Whether plan steps `a` and `b` (of module `m`) have the same signature: the same op node
/// (for a fused composite, the same composite and body) and arguments of the same dtypes and
/// shapes, all in the same layouts. The owning backend is the caller's to compare.
template <class M, class P>
constexpr bool same_signature(const M& m, const P& plan, int a, int b) {
  const plan_step& sa = plan.steps[static_cast<std::size_t>(a)];
  const plan_step& sb = plan.steps[static_cast<std::size_t>(b)];
  const graph_node& x = plan.nodes[static_cast<std::size_t>(sa.node)];
  const graph_node& y = plan.nodes[static_cast<std::size_t>(sb.node)];
  if (sa.out.layout != sb.out.layout || sa.num_in != sb.num_in) return false;
  for (int k = 0; k < sa.num_in; ++k) {
    const buffer_ref& ia = plan.ins[static_cast<std::size_t>(sa.first_in + k)];
    if (ia.layout != plan.ins[static_cast<std::size_t>(sb.first_in + k)].layout) return false;
  }
  const bool call = x.op == op_id::call;
  if (call ? !(y.op == op_id::call && x.type == y.type && x.out == y.out && x.is_tuple == y.is_tuple &&
               x.nargs == y.nargs && same_body(m, x.index, y.index))
           : !same_computation(x, y))
    return false;
  for (int k = 0; k < x.nargs; ++k) {
    const auto arg = [&](const graph_node& n, int i) -> const graph_node& {
      return plan.nodes[static_cast<std::size_t>(plan.args[static_cast<std::size_t>(n.first_arg + i)])];
    };
    if (!same_argument(arg(x, k), arg(y, k))) return false;
  }
  return true;
}

/// A hash of step `s`'s signature (equal signatures, equal hashes): what `same_signature`
/// compares, less the attributes and the bodies' arguments.
template <class M, class P>
constexpr std::uint64_t signature_hash(const M& m, const P& plan, int s) {
  const graph_node& n = plan.nodes[static_cast<std::size_t>(plan.steps[static_cast<std::size_t>(s)].node)];
  const auto mix_node = [](std::uint64_t h, const graph_node& g) {
    h = hash_mix(h, static_cast<std::uint64_t>(g.op) << 8 | static_cast<std::uint64_t>(g.type));
    for (int i = 0; i < g.out.rank; ++i) h = hash_mix(h, static_cast<std::uint64_t>(g.out[i]));
    return hash_mix(h, static_cast<std::uint64_t>(g.nargs));
  };
  std::uint64_t h = mix_node(0xcbf29ce484222325ull, n);
  if (n.op == op_id::call) {
    const function_info& f = m.functions[static_cast<std::size_t>(n.index)];
    for (char c : f.composite) h = hash_mix(h, static_cast<unsigned char>(c));
    for (int i = 0; i < f.num_nodes; ++i) h = mix_node(h, m.node(f.first_node + i));
  }
  for (int k = 0; k < n.nargs; ++k) {
    const graph_node& a = plan.nodes[static_cast<std::size_t>(plan.args[static_cast<std::size_t>(n.first_arg + k)])];
    h = hash_mix(h, static_cast<std::uint64_t>(a.type) << 1 | (a.op == op_id::weight ? 1u : 0u));
    for (int i = 0; i < a.out.rank; ++i) h = hash_mix(h, static_cast<std::uint64_t>(a.out[i]));
  }
  return h;
}

/// For each step of `plan`, the first step with the same signature on the same backend:
/// `owner[s]` is the index of step s's backend, `shares[b]` whether backend b shares kernels.
/// Steps of other backends, and whole partitions, are their own.
template <std::size_t N, class M, class P, std::size_t B>
constexpr std::array<int, N> canonical_steps(const M& m, const P& plan, const std::array<std::size_t, N>& owner,
                                             const std::array<bool, B>& shares) {
  std::array<int, N> first{};
  index_table seen;
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    const int si = static_cast<int>(s);
    first[s] = si;
    const graph_node& n = plan.nodes[static_cast<std::size_t>(plan.steps[s].node)];
    const bool partition = n.op == op_id::call && !m.functions[static_cast<std::size_t>(n.index)].backend.empty();
    if (owner[s] >= B || !shares[owner[s]] || partition) continue;
    const std::uint64_t key = hash_mix(signature_hash(m, plan, si), owner[s]);
    const int c = seen.find(key, [&](int r) {
      return owner[static_cast<std::size_t>(r)] == owner[s] && same_signature(m, plan, r, si);
    });
    if (c >= 0) {
      first[s] = c;
    } else {
      seen.insert(key, si);
    }
  }
  return first;
}

/// Number of distinct kernels: the steps that are their own canonical step.
template <std::size_t N>
constexpr std::size_t count_kernels(const std::array<int, N>& canonical) {
  std::size_t n = 0;
  for (std::size_t s = 0; s < N; ++s)
    if (canonical[s] == static_cast<int>(s)) ++n;
  return n;
}

/// Calls kernel `K` of backend `B` as it is declared. It is shared (`shared`) when `B` declares
/// `shares_kernels` and `K::run` takes the step's index (`run(state&, in, out, step)`, then
/// `prepare(state&, in, step)`); otherwise it is the step's own, called without the index, as a
/// kernel with the three-argument `run` of a backend derived from `reference` (which inherits
/// the flag) is.
template <class B, class K>
struct kernel_call {
  static constexpr bool takes_step = requires(typename B::state& st, const float* const* in, float* out) {
    K::run(st, in, out, 0);
  };
  static constexpr bool shared = backend_shares_kernels<B> && takes_step;
  static constexpr bool runs = shared || requires(typename B::state& st, const float* const* in, float* out) {
    K::run(st, in, out);
  };
  static_assert(runs, "partita: backend (B) needs `kernel<Step>::run(state&, const float* const* in, float* out)`, or "
                      "`shares_kernels` and `run(state&, const float* const* in, float* out, int step)`");
  static constexpr bool prepares_stepless = requires(typename B::state& st, const float* const* in) { K::prepare(st, in); };
  static constexpr bool prepares = shared ? requires(typename B::state& st, const float* const* in) {
    K::prepare(st, in, 0);
  } : prepares_stepless;
  static_assert(prepares || !shared || !prepares_stepless,
                "partita: a kernel shared between steps (B has `shares_kernels`, its `run` takes the step) needs "
                "`prepare(state&, const float* const* in, int step)`: it gets the step's index at bind too");

  /// `K::packs_weights`: `run` reads none of the step's weights (packed at `prepare`).
  static constexpr bool packs_weights = [] {
    if constexpr (requires { K::packs_weights; }) {
      return static_cast<bool>(K::packs_weights);
    } else {
      return false;
    }
  }();

  static void run(typename B::state& st, const float* const* in, float* out, [[maybe_unused]] int step) {
    if constexpr (shared) {
      K::run(st, in, out, step);
    } else {
      K::run(st, in, out);
    }
  }
  static void prepare(typename B::state& st, const float* const* in, [[maybe_unused]] int step) {
    if constexpr (shared) {
      K::prepare(st, in, step);
    } else {
      K::prepare(st, in);
    }
  }
};

/// Where step `s` reads its arguments (`ins[first_in + k]`) and writes its result, and the step
/// whose prepared state it runs with (`prepared_steps`), read at run time by a shared kernel's
/// caller.
struct step_io {
  int first_in = 0;
  buffer_ref out{};
  int prepared = 0;
};

template <std::size_t N, class P>
constexpr std::array<step_io, N> step_ios(const P& plan, const std::array<int, N>& prepared) {
  std::array<step_io, N> io{};
  for (std::size_t s = 0; s < N; ++s) io[s] = {plan.steps[s].first_in, plan.steps[s].out, prepared[s]};
  return io;
}

/// For each step, the step whose prepared state it uses at `bind` and `run`: the first step that
/// runs the same kernel (`canonical`) with the same weights (at least one) in the same places,
/// else itself.
/// A function called twice (identical composites are one function) or any two steps computing
/// the same thing from the same weights prepare once: a kernel's per-step state (packed weights)
/// depends only on its signature and its weights.
template <std::size_t N, class P>
constexpr std::array<int, N> prepared_steps(const P& plan, const std::array<int, N>& canonical) {
  std::array<int, N> first{};
  for (std::size_t s = 0; s < N; ++s) {
    first[s] = static_cast<int>(s);
    for (std::size_t t = 0; t < s; ++t) {
      if (canonical[t] != canonical[s] || first[t] != static_cast<int>(t) || canonical[s] == static_cast<int>(s)) continue;
      bool same = plan.steps[t].num_in == plan.steps[s].num_in, weights = false;
      for (int k = 0; same && k < plan.steps[s].num_in; ++k) {
        const buffer_ref& a = plan.ins[static_cast<std::size_t>(plan.steps[t].first_in + k)];
        const buffer_ref& b = plan.ins[static_cast<std::size_t>(plan.steps[s].first_in + k)];
        same = (a.kind == storage::weight) == (b.kind == storage::weight) &&
               (a.kind != storage::weight || (a.index == b.index && a.offset == b.offset));
        weights = weights || a.kind == storage::weight;
      }
      if (same && weights) {  // steps without weights keep their own index (nothing to share)
        first[s] = static_cast<int>(t);
        break;
      }
    }
  }
  return first;
}

}  // namespace partita::detail
