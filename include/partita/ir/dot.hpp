#pragma once
/// Graphviz output of a module (`to_dot`).
#include <cstdint>
#include <string>

#include "partita/ir/printer.hpp"

namespace partita {
namespace detail {

/// A stable, readable fill colour per backend name (the host and main stay white).
inline std::string backend_colour(std::string_view backend) {
  if (backend.empty()) return "white";
  static constexpr const char* palette[] = {"#a6cee3", "#b2df8a", "#fb9a99", "#fdbf6f", "#cab2d6", "#ffff99", "#8dd3c7"};
  std::uint64_t h = 1469598103934665603ull;
  for (char c : backend) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return palette[h % (sizeof palette / sizeof *palette)];
}

inline std::string dot_escape(std::string_view s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r;
}

}  // namespace detail

/// The module as a Graphviz digraph: one cluster per function, filled with the colour of the
/// function's backend (a composite's: the prefix of its name); weights are grey notes, inputs ellipses, ops boxes. Render with
/// `dot -Tsvg`.
template <module_type M>
std::string to_dot(M) {
  const auto& m = M::value;
  std::string out =
      "digraph partita {\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fillcolor=white, "
      "fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n";
  for (std::size_t fi = 0; fi < m.functions.size(); ++fi) {
    const function_info& f = m.functions[fi];
    out += detail::concat("  subgraph cluster_", std::to_string(fi), " {\n    label=\"", detail::dot_escape(f.name()));
    if (!f.composite.empty()) out += detail::concat("\\n", detail::dot_escape(f.composite));
    const std::string_view owner = f.backend.empty() ? composite_backend(f.composite) : f.backend;
    out += detail::concat("\";\n    style=filled; fillcolor=\"", detail::backend_colour(owner), "\"; color=grey40;\n");
    for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
      const graph_node& n = m.node(i);
      std::string label, shape_attr;
      if (n.op == op_id::weight) {
        label = detail::dot_escape(detail::value_name(m, i));  // a scalar literal shows its value
        if (label.starts_with('@')) label.erase(0, 1);
        shape_attr = ", shape=note, fillcolor=grey90";
      } else if (n.op == op_id::input || n.op == op_id::param) {
        label = detail::dot_escape(detail::value_name(m, i));
        shape_attr = ", shape=ellipse";
      } else if (n.op == op_id::call) {
        label = detail::concat("@", detail::dot_escape(m.functions[static_cast<std::size_t>(n.index)].name()));
        shape_attr = ", shape=box3d";
      } else {
        label = std::string(name_of(n.op));
        if (auto a = detail::attr_string(n); !a.empty()) label += detail::concat("\\n", a);
      }
      label += detail::concat("\\n", detail::type_string(m, i));
      out += detail::concat("    n", std::to_string(i), " [label=\"", label, "\"", shape_attr, "];\n");
    }
    out += "  }\n";
  }
  for (std::size_t i = 0; i < m.nodes.size(); ++i)
    for (int k = 0; k < m.nodes[i].nargs; ++k)
      out += detail::concat("  n", std::to_string(m.arg(static_cast<int>(i), k)), " -> n", std::to_string(i), ";\n");
  out += "}\n";
  return out;
}

}  // namespace partita
