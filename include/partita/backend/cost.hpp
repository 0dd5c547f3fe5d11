#pragma once
/// Costs for cost-based partitioning: throughputs, transfers, candidate views and measured costs.
#include <cstdint>
#include <string_view>

#include "partita/backend/backend.hpp"
#include "partita/ir/view.hpp"

namespace partita {

/// A backend's speed for the default cost estimate (`static constexpr throughput speed = {...};`
/// in the backend). 1 GFLOP/s is one flop per nanosecond, 1 GB/s one byte per nanosecond.
struct throughput {
  double gflops = 20;        // arithmetic rate
  double gbytes_per_s = 20;  // memory traffic rate
  double call_ns = 1000;     // fixed cost of one kernel call
};

/// The link between a backend's own memory and host memory (`static constexpr memory_link link =
/// {...};` in the backend). Backends without one compute in host memory: tensors cross between
/// them for free.
struct memory_link {
  double gbytes_per_s = 10;
  double latency_ns = 2000;
};

/// One measured cost: what `tune` writes, `cost_config<Costs>` reads. `signature` identifies the
/// candidate's structure (ops, shapes, attributes, composites, how its nodes connect) and is the
/// same in every build of the same model.
struct measured_cost {
  std::string_view backend{};
  std::uint64_t signature = 0;
  double ns = 0;
};

/// A measured hand-over from one backend to another, in nanoseconds (what `tune` writes in
/// `transfers`): replaces `transfer<From, To>` for that pair.
struct measured_transfer {
  std::string_view from{};
  std::string_view to{};
  double ns = 0;
};

/// The measured costs a search uses when none are given.
struct no_measured_costs {
  static constexpr measured_cost entries[1] = {};
};

/// What a backend's `cost` sees of one candidate of the cost-based search: its ops (in
/// topological order), how it runs, and the work and traffic the default estimate uses.
class candidate_view {
 public:
  struct numbers {
    int steps = 0;             // kernel calls when each composite and op is a step (views are free)
    double flops = 0;          // arithmetic, composites included
    double boundary_bytes = 0; // what it reads (inputs, weights) and writes (its results), as one kernel
    double step_bytes = 0;     // what its steps read and write, each on its own
    std::uint64_t signature = 0;
  };

  constexpr candidate_view(const graph_node* nodes, const int* args, const int* members, const std::string_view* parts, int size,
                           numbers n)
      : nodes_(nodes), args_(args), members_(members), parts_(parts), size_(size), n_(n) {}

  /// Its ops (composite calls of an earlier pass count as one), in topological order.
  constexpr int size() const { return size_; }
  constexpr op_view node(int i) const { return {nodes_, args_, members_[i]}; }
  /// The pattern name of the composite node `i` belongs to (empty for a single op).
  constexpr std::string_view composite(int i) const { return parts_[i]; }
  /// Kernel calls when the backend runs composites and ops one by one.
  constexpr int steps() const { return n_.steps; }
  constexpr double flops() const { return n_.flops; }
  /// Bytes read and written when it runs as one kernel (a whole partition).
  constexpr double boundary_bytes() const { return n_.boundary_bytes; }
  /// Bytes read and written when each composite and op runs on its own.
  constexpr double step_bytes() const { return n_.step_bytes; }
  /// Its structure's hash, the key of measured costs.
  constexpr std::uint64_t signature() const { return n_.signature; }

 private:
  const graph_node* nodes_;
  const int* args_;
  const int* members_;
  const std::string_view* parts_;
  int size_;
  numbers n_;
};

/// A backend's throughput: its `speed`, or `throughput{}`'s defaults.
template <class B>
inline constexpr throughput speed_of = [] {
  if constexpr (requires { B::speed; }) {
    return throughput(B::speed);
  } else {
    return throughput{};
  }
}();

/// The default estimate, in nanoseconds: per call a fixed cost, plus the larger of the time to
/// compute and the time to move the bytes (a roofline). A backend that runs whole partitions
/// makes one call and moves only what crosses the candidate's boundary.
template <class B>
constexpr double estimate_ns(const candidate_view& c) {
  constexpr throughput t = speed_of<B>;
  const double calls = runs_partitions<B> ? 1.0 : static_cast<double>(c.steps());
  const double bytes = runs_partitions<B> ? c.boundary_bytes() : c.step_bytes();
  const double compute = c.flops() / t.gflops;
  const double traffic = bytes / t.gbytes_per_s;
  return calls * t.call_ns + (compute > traffic ? compute : traffic);
}

/// The estimated cost of candidate `c` on backend `B`, in nanoseconds: `B::cost(c)` when the
/// backend has one, otherwise `estimate_ns<B>`.
template <class B>
constexpr double cost_of(const candidate_view& c) {
  if constexpr (requires { B::cost(c); }) {
    return static_cast<double>(B::cost(c));
  } else {
    return estimate_ns<B>(c);
  }
}

/// The time to move `bytes` from backend `From` to backend `To`, in nanoseconds. By default zero
/// between backends that compute in host memory; a backend with a `link` pays it in each
/// direction (two device backends: through the host). Specialize for a pair with a direct path:
/// `template <> struct partita::transfer<npu, dsp> { static constexpr double ns(double b) {...} };`
template <class From, class To>
struct transfer {
  static constexpr double ns(double bytes) { return leg<From>(bytes) + leg<To>(bytes); }

 private:
  template <class B>
  static constexpr double leg(double bytes) {
    if constexpr (requires { B::link; }) {
      return memory_link(B::link).latency_ns + bytes / memory_link(B::link).gbytes_per_s;
    } else {
      return 0.0;
    }
  }
};

}  // namespace partita
