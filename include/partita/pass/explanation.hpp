#pragma once
/// The placement report's types: where an op runs, how, and why not on each other backend
/// (`explanation`, made by `explain` in explain.hpp), and its text form.
#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "partita/core/error.hpp"
#include "partita/ir/module.hpp"
#include "partita/ir/op_id.hpp"

namespace partita {

/// How an op came to run where it runs.
enum class placement : unsigned char {
  composite,   // inside a composite of that backend's pattern table
  supports,    // alone: the first backend whose `supports` accepts it
  pinned,      // `on<backend, ...>`
  host,        // no other backend took it (tuples and projections always stay with the host)
  given_back,  // its partition was given back to the host by a post_partition pass
};

/// Why a backend does not run an op.
enum class refusal : unsigned char {
  none,              // it does run it
  pinned_elsewhere,  // the op (or the match's root) is pinned to another backend
  composite_first,   // another backend's composite took it first
  earlier_backend,   // a backend before it in priority order claims the op too
  unsupported,       // none of its patterns matched and its `supports` refused the op
  predicate,         // its pattern `pattern`, matched at `root`, was refused by the pattern's predicate
  escapes,           // its pattern matched at `root`, but the value of `node` is used by `user` outside (-1: returned)
  overlaps,          // its pattern matched at `root`, but `node` was already in another composite
  given_back,        // its partition was given back to the host by `pass`
  host_only_rest,    // the host takes only what no other backend runs
};

/// One backend's side of an op's placement.
struct refusal_info {
  refusal why = refusal::none;
  std::string_view pattern{};  // the pattern concerned (predicate, escapes, overlaps, composite_first)
  int root = -1;               // the node that pattern was matched at
  int node = -1;               // the escaping or already claimed node
  int user = -1;               // where the escaping value goes (-1: main returns it)
  std::string_view pass{};     // given_back: `prune_partitions`, `host_fallback` or a backend's own pass
};

/// The placement of one op of the model, `NB` backends.
template <std::size_t NB>
struct op_placement {
  int node = -1;  // its index in the module the patterns see (`print` shows it as %node)
  op_id op = op_id::input;
  std::string_view backend{};
  placement how = placement::host;
  std::string_view pattern{};  // how == composite: its pattern
  int root = -1;               // how == composite: the composite's root
  function_info partition{};   // the partition function that holds it (`partition.name()`; empty on the host)
  std::array<refusal_info, NB> not_on{};  // per backend, in `Backends...` order
  refusal_info unfused{};  // not in a composite: why a pattern of its backend that matched it was refused
  int merge_blocked_with = -1;     // an argument on the same backend whose region could not be merged with this op's...
  int merge_blocked_through = -1;  // ...because a path through this node of another backend would have closed a cycle
};

/// The report `explain` returns: the backends and every op of the explained module's main.
template <std::size_t N, std::size_t NB>
struct explanation {
  std::array<std::string_view, NB> backends{};
  std::array<op_placement<NB>, N> ops{};

  /// The placement of node `node` (as `print` numbers it); an error for a node that is not an op.
  constexpr const op_placement<NB>& at(int node) const {
    for (const op_placement<NB>& p : ops)
      if (p.node == node) return p;
    detail::raise(error("partita: explanation::at: the node is not an op of the explained module"));
  }
  /// The first op of kind `op` (to find a model's only softmax, say).
  constexpr const op_placement<NB>& first(op_id op) const {
    for (const op_placement<NB>& p : ops)
      if (p.op == op) return p;
    detail::raise(error("partita: explanation::first: the module has no op of this kind"));
  }
  /// Why backend `backend` does not run `p` (refusal::none where it does).
  constexpr const refusal_info& why_not(const op_placement<NB>& p, std::string_view backend) const {
    for (std::size_t b = 0; b < NB; ++b)
      if (backends[b] == backend) return p.not_on[b];
    detail::raise(error("partita: explanation::why_not: no backend of this name"));
  }
};

namespace detail {
// Appends every part in order. Written out because `"literal" + std::string` inserts at the
// front, where GCC 12 reports a false -Wrestrict overlap in libstdc++'s copy.
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string s;
  (s.append(std::string_view(parts)), ...);
  return s;
}
inline std::string node_name(int i) { return cat("%", std::to_string(i)); }
}  // namespace detail

/// One line of text for a refusal.
inline std::string describe(const refusal_info& r) {
  using detail::cat;
  using detail::node_name;
  switch (r.why) {
    case refusal::none: return "runs it";
    case refusal::pinned_elsewhere: return "it is pinned to another backend";
    case refusal::composite_first: return cat("composite ", r.pattern, " at ", node_name(r.root), " took it first");
    case refusal::earlier_backend: return "a backend earlier in priority order claims it";
    case refusal::unsupported: return "no pattern matched it, and supports() refused it";
    case refusal::predicate: return cat("pattern ", r.pattern, " matched at ", node_name(r.root), ", but its predicate refused");
    case refusal::escapes:
      return cat("pattern ", r.pattern, " matched at ", node_name(r.root), ", but the value of ", node_name(r.node),
                 r.user >= 0 ? cat(" is used by ", node_name(r.user), " outside it") : std::string(" is returned by main"));
    case refusal::overlaps:
      return cat("pattern ", r.pattern, " matched at ", node_name(r.root), ", but ", node_name(r.node),
                 " was in another composite");
    case refusal::given_back: return cat("its partition was given back to the host by ", r.pass);
    case refusal::host_only_rest: return "the host runs only what no other backend takes";
  }
  return {};
}

/// The report as text: one line per op (where it runs, how, and its partition), then one
/// indented line per backend that does not run it, and why, and for an op outside any
/// composite one saying why a pattern of its own backend that matched it did not fuse it (a
/// QDQ region its predicate left in float, a value used outside the match).
template <std::size_t N, std::size_t NB>
std::string to_string(const explanation<N, NB>& e) {
  static constexpr const char* how[] = {"composite", "supports", "pinned", "host", "given back"};
  std::string s;
  using detail::cat;
  using detail::node_name;
  for (const op_placement<NB>& p : e.ops) {
    s += cat(node_name(p.node), " ", name_of(p.op), " -> ", p.backend, " (", how[static_cast<int>(p.how)]);
    if (p.how == placement::composite) s += cat(" ", p.pattern, " at ", node_name(p.root));
    if (!p.partition.name().empty()) s += cat(", in ", p.partition.name());
    s += ")\n";
    for (std::size_t b = 0; b < NB; ++b)
      if (p.not_on[b].why != refusal::none) s += cat("    not ", e.backends[b], ": ", describe(p.not_on[b]), "\n");
    if (p.unfused.why != refusal::none) s += cat("    not fused: ", describe(p.unfused), "\n");
    if (p.merge_blocked_with >= 0)
      s += cat("    not merged with ", node_name(p.merge_blocked_with), "'s region: ", node_name(p.merge_blocked_through),
               " runs elsewhere between them (a cycle)\n");
  }
  return s;
}

}  // namespace partita
