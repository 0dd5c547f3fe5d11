#pragma once
/// Pattern tables: `(name, pattern, predicate)` entries in priority order.
#include <array>
#include <cstddef>
#include <string_view>

#include "partita/pattern/match_view.hpp"
#include "partita/pattern/pattern.hpp"

namespace partita {

/// One entry of a pattern table: a named composite, its pattern and the predicate that must
/// accept a match before it is claimed. The name's prefix up to the first `.` is the backend
/// that the composite is offloaded to (`"npu.conv2d_bias_relu"` belongs to `npu`).
template <fixed_string Name, class Pattern, class Predicate = always>
struct composite {
  static constexpr std::string_view name = Name.view();
  using pattern = Pattern;
  using predicate = Predicate;
};

/// A table entry in value form. `root_ops` holds the ops a node needs to have for the pattern
/// to match there: MergeComposite tries every entry at every node, and this one test turns most
/// of those tries away without walking the pattern.
struct table_entry {
  std::string_view name{};
  int root = 0;
  bool (*predicate)(const match_view&) = nullptr;
  op_set root_ops = op_set::all();
  /// Ops every match contains (the conv2d of `relu_p<conv2d_p<any, constant>>`): an entry whose
  /// ops a module lacks cannot match anywhere in it, and is skipped without a try.
  op_set needs{};
};

namespace detail {

/// The ops a node can have where pattern node `p` of `b` matches.
constexpr op_set root_ops(const pattern_builder& b, int p) {
  const pattern_node& n = b.nodes[static_cast<std::size_t>(p)];
  auto child = [&](int k) { return b.children[static_cast<std::size_t>(n.first + k)]; };
  op_set s;
  switch (n.kind) {
    case pattern_kind::wildcard: return op_set::all();
    case pattern_kind::constant: s.insert(op_id::weight); return s;
    case pattern_kind::input: s.insert(op_id::input); return s;
    case pattern_kind::op:
    case pattern_kind::tuple: s.insert(n.op); return s;
    case pattern_kind::get: s.insert(op_id::get); return s;
    case pattern_kind::elementwise:
      for (int op = 0; op <= static_cast<int>(op_id::call); ++op)
        if (is_elementwise(op_id(op))) s.insert(op_id(op));
      return s;
    case pattern_kind::alt:
      s = root_ops(b, child(0));
      s.insert(root_ops(b, child(1)));
      return s;
    case pattern_kind::var:
    case pattern_kind::has_dtype:
    case pattern_kind::has_shape:
    case pattern_kind::has_attr: return root_ops(b, child(0));
    case pattern_kind::dominates: return root_ops(b, child(2));
  }
  return op_set::all();
}

/// The ops every match of pattern node `p` of `b` holds (see `table_entry::needs`).
constexpr op_set needed_ops(const pattern_builder& b, int p) {
  const pattern_node& n = b.nodes[static_cast<std::size_t>(p)];
  auto child = [&](int k) { return b.children[static_cast<std::size_t>(n.first + k)]; };
  op_set s;
  switch (n.kind) {
    case pattern_kind::wildcard:
    case pattern_kind::constant:
    case pattern_kind::input:
    case pattern_kind::elementwise: return s;
    case pattern_kind::op:
    case pattern_kind::tuple:
      s.insert(n.op);
      for (int k = 0; k < n.count; ++k) s.insert(needed_ops(b, child(k)));
      return s;
    case pattern_kind::get:
      s.insert(op_id::get);
      s.insert(needed_ops(b, child(0)));
      return s;
    case pattern_kind::alt: return needed_ops(b, child(0)).common(needed_ops(b, child(1)));
    case pattern_kind::var:
      return n.count > 0 ? needed_ops(b, child(0)) : s;
    case pattern_kind::has_dtype:
    case pattern_kind::has_shape:
    case pattern_kind::has_attr: return needed_ops(b, child(0));
    case pattern_kind::dominates:
      s = needed_ops(b, child(0));
      s.insert(needed_ops(b, child(2)));
      return s;
  }
  return s;
}

struct table_sizes {
  std::size_t nodes, children, entries, vars;
};

/// The table's patterns in `b` and its entries; their `root_ops` and `needs` only where
/// `with_ops` (the sizes need none: each evaluation counts against the compiler's step budget).
template <class... Cs>
constexpr detail::pattern_builder build_table(std::vector<table_entry>& entries, bool with_ops = true) {
  detail::pattern_builder b;
  ((entries.push_back({Cs::name, Cs::pattern::build(b), &Cs::predicate::check})), ...);
  if (with_ops)
    for (table_entry& e : entries) {
      e.root_ops = root_ops(b, e.root);
      e.needs = needed_ops(b, e.root);
    }
  return b;
}

template <class... Cs>
constexpr table_sizes sizes_of_table() {
  std::vector<table_entry> e;
  const auto b = build_table<Cs...>(e, false);
  return {b.nodes.size(), b.children.size(), e.size(), b.vars.size()};
}

}  // namespace detail

/// The flat, constexpr form of a pattern table that the matcher walks.
template <detail::table_sizes S>
struct pattern_table_value {
  std::array<pattern_node, S.nodes> nodes{};
  std::array<int, S.children> children{};
  std::array<table_entry, S.entries> entries{};
  std::array<std::string_view, S.vars> vars{};
};

/// A backend's composites in priority order: earlier entries claim nodes first.
template <class... Composites>
struct pattern_table {
  static constexpr detail::table_sizes sizes = detail::sizes_of_table<Composites...>();
  static constexpr pattern_table_value<sizes> value = [] {
    std::vector<table_entry> e;
    const auto b = detail::build_table<Composites...>(e);
    pattern_table_value<sizes> t{};
    for (std::size_t i = 0; i < sizes.nodes; ++i) t.nodes[i] = b.nodes[i];
    for (std::size_t i = 0; i < sizes.children; ++i) t.children[i] = b.children[i];
    for (std::size_t i = 0; i < sizes.entries; ++i) t.entries[i] = e[i];
    for (std::size_t i = 0; i < sizes.vars; ++i) t.vars[i] = b.vars[i];
    return t;
  }();
};

}  // namespace partita
