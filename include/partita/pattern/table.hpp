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

/// A table entry in value form.
struct table_entry {
  std::string_view name{};
  int root = 0;
  bool (*predicate)(const match_view&) = nullptr;
};

namespace detail {

struct table_sizes {
  std::size_t nodes, children, entries, vars;
};

template <class... Cs>
constexpr detail::pattern_builder build_table(std::vector<table_entry>& entries) {
  detail::pattern_builder b;
  ((entries.push_back({Cs::name, Cs::pattern::build(b), &Cs::predicate::check})), ...);
  return b;
}

template <class... Cs>
constexpr table_sizes sizes_of_table() {
  std::vector<table_entry> e;
  const auto b = build_table<Cs...>(e);
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
