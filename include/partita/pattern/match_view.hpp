#pragma once
/// `match_view`: what a pattern predicate sees of a match.
#include <string_view>

#include "partita/core/error.hpp"
#include "partita/ir/view.hpp"

namespace partita {

/// What a composite's predicate sees of a match, before anything is claimed: the root, every
/// node absorbed into the composite, its parameters, bound weights and pattern variables.
class match_view {
 public:
  struct parts {
    const int* body;
    int body_size;
    const int* params;
    int num_params;
    const int* vars;
    const std::string_view* var_names;
    int num_vars;
  };

  constexpr match_view(const graph_node* nodes, const int* args, int root, parts p)
      : nodes_(nodes), args_(args), root_(root), p_(p) {}

  /// The node the match is rooted at (the composite's result).
  constexpr op_view root() const { return view(root_); }
  /// Nodes absorbed into the composite (ops and bound weights), the root included.
  constexpr int size() const { return p_.body_size; }
  constexpr op_view node(int i) const { return view(p_.body[i]); }
  /// The composite's parameters, in order.
  constexpr int num_params() const { return p_.num_params; }
  constexpr op_view param(int i) const { return view(p_.params[i]); }
  /// Whether the pattern declares variable `name` and this match bound it (a variable of an
  /// `alt` branch the match did not take is unbound).
  constexpr bool bound(std::string_view name) const {
    const int i = find(name);
    return i >= 0 && p_.vars[i] >= 0;
  }
  /// The node bound to pattern variable `name`. A name the pattern does not declare (a typo),
  /// or an unbound variable, is an error rather than some other node: predicates run in
  /// constant evaluation, where it stops the compilation at this line; at run time it throws
  /// `partita::error`.
  constexpr op_view var(std::string_view name) const {
    const int i = find(name);
    if (i < 0) detail::raise(error("partita: match_view::var: the pattern declares no variable of this name"));
    if (p_.vars[i] < 0)
      detail::raise(error("partita: match_view::var: this match did not bind the variable (check bound() first)"));
    return view(p_.vars[i]);
  }
  /// True when `f(op_view)` holds for every absorbed node.
  template <class F>
  constexpr bool all(F f) const {
    for (int i = 0; i < p_.body_size; ++i)
      if (!f(node(i))) return false;
    return true;
  }

 private:
  constexpr op_view view(int i) const { return {nodes_, args_, i}; }
  constexpr int find(std::string_view name) const {
    for (int i = 0; i < p_.num_vars; ++i)
      if (p_.var_names[i] == name) return i;
    return -1;
  }
  const graph_node* nodes_;
  const int* args_;
  int root_;
  parts p_;
};

/// Predicate accepting every match.
struct always {
  static constexpr bool check(const match_view&) { return true; }
};

/// Predicate accepting matches whose nodes are all f32.
struct only_f32 {
  static constexpr bool check(const match_view& m) {
    return m.all([](op_view v) { return v.dtype() == dtype::f32; });
  }
};

}  // namespace partita
