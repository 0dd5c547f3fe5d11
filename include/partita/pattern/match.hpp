#pragma once
/// The pattern matcher: a pattern against a node of a module.
#include <vector>

#include "partita/ir/module.hpp"
#include "partita/pattern/pattern.hpp"

namespace partita::detail {

/// What a match collected: nodes absorbed into the composite (ops, projections and weights
/// matched by `constant`, in post-order), the values that become parameters (in the pattern's
/// post-order), and the node bound to each pattern variable.
/// `swaps` chooses the operand order tried first at each commutative node the match meets
/// (bit k for the k-th met; a clear bit is the written order), and `choices` counts those nodes.
struct match_state {
  std::vector<int> body;
  std::vector<int> params;
  std::vector<int> var_node;
  std::vector<int> trail;  // variables bound so far, in order, for rollback
  unsigned swaps = 0;
  int choices = 0;

  constexpr void reset(std::size_t num_vars, unsigned swap_mask = 0) {
    body.clear();
    params.clear();
    trail.clear();
    var_node.assign(num_vars, -1);
    swaps = swap_mask;
    choices = 0;
  }
};

/// Matches the pattern nodes of table `T` against the nodes of one function.
template <class T>
class matcher {
 public:
  constexpr matcher(const T& table, const graph_node* nodes, const int* args, match_state& st)
      : t_(table), nodes_(nodes), args_(args), st_(st) {}

  constexpr bool match(int p, int n) {
    const pattern_node& pn = t_.nodes[static_cast<std::size_t>(p)];
    const graph_node& g = nodes_[n];
    switch (pn.kind) {
      case pattern_kind::wildcard:
        st_.params.push_back(n);
        return true;
      case pattern_kind::constant:
        if (g.op != op_id::weight) return false;
        st_.body.push_back(n);
        return true;
      case pattern_kind::input:
        if (g.op != op_id::input || (!pn.name.empty() && pn.name != g.name)) return false;
        st_.params.push_back(n);
        return true;
      case pattern_kind::op:
      case pattern_kind::tuple:
        return match_call(pn, n);
      case pattern_kind::elementwise:
        if (!is_elementwise(g.op)) return false;
        for (int k = 0; k < g.nargs; ++k) st_.params.push_back(arg(n, k));
        st_.body.push_back(n);
        return true;
      case pattern_kind::get:
        if (g.op != op_id::get || (pn.index >= 0 && g.index != pn.index) || !match(child(pn, 0), arg(n, 0)))
          return false;
        st_.body.push_back(n);
        return true;
      case pattern_kind::alt: {
        // An alternative that cannot match at n's op is skipped with no mark to restore: a
        // nested table entry (MobileNet's stages) meets several at every node it is tried on,
        // and each save and restore counts against the compiler's constant-evaluation budget.
        if (fails_at(child(pn, 0), n)) return match(child(pn, 1), n);
        const mark m = save();
        if (match(child(pn, 0), n)) return true;
        restore(m);
        return match(child(pn, 1), n);
      }
      case pattern_kind::var: {
        int& bound = st_.var_node[static_cast<std::size_t>(pn.index)];
        if (bound >= 0) return bound == n;
        if (!match(child(pn, 0), n)) return false;
        st_.var_node[static_cast<std::size_t>(pn.index)] = n;
        st_.trail.push_back(pn.index);
        return true;
      }
      case pattern_kind::has_dtype:
        return !g.is_tuple && g.type == pn.type && match(child(pn, 0), n);
      case pattern_kind::has_shape:
        return !g.is_tuple && g.out == pn.shp && match(child(pn, 0), n);
      case pattern_kind::has_attr:
        return pn.attr_check(*g.at) && match(child(pn, 0), n);
      case pattern_kind::dominates:
        return match_dominator(pn, n);
    }
    return false;
  }

 private:
  struct mark {
    std::size_t body, params, trail;
  };
  constexpr mark save() const { return {st_.body.size(), st_.params.size(), st_.trail.size()}; }
  constexpr void restore(const mark& m) {
    st_.body.resize(m.body);
    st_.params.resize(m.params);
    while (st_.trail.size() > m.trail) {
      st_.var_node[static_cast<std::size_t>(st_.trail.back())] = -1;
      st_.trail.pop_back();
    }
  }
  constexpr int child(const pattern_node& pn, int k) const { return t_.children[static_cast<std::size_t>(pn.first + k)]; }
  constexpr int arg(int n, int k) const { return args_[nodes_[n].first_arg + k]; }

  constexpr bool match_args(const pattern_node& pn, int n, bool swapped) {
    for (int k = 0; k < pn.count; ++k)
      if (!match(child(pn, k), arg(n, swapped ? 1 - k : k))) return false;
    return true;
  }

  constexpr bool match_call(const pattern_node& pn, int n) {
    const graph_node& g = nodes_[n];
    if (g.op != pn.op) return false;
    if (pn.any_arity ? g.nargs < pn.count : g.nargs != pn.count) return false;
    const bool commutative = (g.op == op_id::add || g.op == op_id::multiply) && pn.count == 2 && !pn.any_arity;
    bool swapped = false;
    if (commutative) {
      const int k = st_.choices++;
      swapped = k < 32 && ((st_.swaps >> k) & 1u) != 0;
    }
    const mark m = save();
    if (!match_args(pn, n, swapped)) {
      restore(m);
      if (!commutative || !match_args(pn, n, !swapped)) {
        restore(m);
        return false;
      }
    }
    for (int k = pn.count; k < g.nargs; ++k) st_.params.push_back(arg(n, k));
    st_.body.push_back(n);
    return true;
  }

 public:
  /// Whether node `n` could match pattern node `p`, judging by `n` alone (its op, dtype, shape,
  /// attributes): a cheap test before `match`, never false when `match` could succeed.
  constexpr bool looks_like(int p, int n) const {
    const pattern_kind k = t_.nodes[static_cast<std::size_t>(p)].kind;
    return k == pattern_kind::dominates || k == pattern_kind::constant || k == pattern_kind::input || shallow(p, n);
  }

 private:
  // True where pattern p fails at node n whatever n's arguments are, with nothing recorded: an
  // op, tuple, projection or elementwise pattern of another op, or an alternation of such. (A
  // wildcard, constant, input, variable or dominator is never judged so.)
  constexpr bool fails_at(int p, int n) const {
    const pattern_node& pn = t_.nodes[static_cast<std::size_t>(p)];
    switch (pn.kind) {
      case pattern_kind::op:
      case pattern_kind::tuple:
      case pattern_kind::get:
      case pattern_kind::elementwise: return !shallow(p, n);  // the op test alone, as a dominator path's
      case pattern_kind::alt: return fails_at(child(pn, 0), n) && fails_at(child(pn, 1), n);
      default: return false;
    }
  }

  // Does node n look like pattern p at n itself (ignoring p's arguments)? Used for the path of
  // a dominator pattern, whose arguments are walked rather than matched.
  constexpr bool shallow(int p, int n) const {
    const pattern_node& pn = t_.nodes[static_cast<std::size_t>(p)];
    const graph_node& g = nodes_[n];
    switch (pn.kind) {
      case pattern_kind::wildcard: return true;
      case pattern_kind::op:
      case pattern_kind::tuple: return g.op == pn.op;
      case pattern_kind::elementwise: return is_elementwise(g.op);
      case pattern_kind::get: return g.op == op_id::get;
      case pattern_kind::alt: return shallow(child(pn, 0), n) || shallow(child(pn, 1), n);
      case pattern_kind::var: return shallow(child(pn, 0), n);
      case pattern_kind::has_dtype: return g.type == pn.type && shallow(child(pn, 0), n);
      case pattern_kind::has_shape: return g.out == pn.shp && shallow(child(pn, 0), n);
      case pattern_kind::has_attr: return pn.attr_check(*g.at) && shallow(child(pn, 0), n);
      default: return false;
    }
  }

  // Relay's rule for a dominator (TVM's matcher after its 2023 and 2024 fixes): every argument
  // of the root and of each node on a path is the parent, or a node matching `Path` whose own
  // arguments obey the same rule. A weight or input beside such an argument is a side input (a
  // bias, say: weights are bound into the composite, inputs become its parameters), but a node
  // whose arguments are all leaves ends at an input, not at the parent, and fails the match, as
  // does an op matching neither pattern. One node is the parent: another that looks like it must
  // pass as a path node. (TVM stopped at a node's first argument matching the parent until 2023,
  // so `add(conv, relu(input))` matched there.)
  constexpr bool match_dominator(const pattern_node& pn, int root) {
    if (!match(child(pn, 2), root)) return false;
    int parent = -1;
    std::vector<int> todo{root};  // nodes whose arguments are still to examine
    std::vector<int> seen;
    while (!todo.empty()) {
      const int n = todo.back();
      todo.pop_back();
      bool inner = false;  // has an argument that is not a leaf
      for (int k = 0; k < nodes_[n].nargs; ++k) {
        const int a = arg(n, k);
        if (is_leaf(nodes_[a].op)) {
          // A weight beside a path is bound into the composite, as Relay copies a constant that
          // no pattern node made an input; the root's arguments are its own pattern's business.
          if (n != root && nodes_[a].op == op_id::weight) st_.body.push_back(a);
          continue;
        }
        inner = true;
        bool again = a == parent;
        for (int s : seen) again = again || s == a;
        if (again) continue;
        if (parent < 0 && shallow(child(pn, 0), a)) {
          const mark m = save();
          if (match(child(pn, 0), a)) {
            parent = a;
            continue;
          }
          restore(m);
        }
        if (!shallow(child(pn, 1), a)) return false;
        seen.push_back(a);
        st_.body.push_back(a);
        todo.push_back(a);
      }
      if (!inner) return false;
    }
    return parent >= 0;
  }

  const T& t_;
  const graph_node* nodes_;
  const int* args_;
  match_state& st_;
};

}  // namespace partita::detail
