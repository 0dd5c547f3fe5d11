#pragma once
/// The step calling convention, shared by the plan and the backends that run whole partitions:
/// alignment, how an activation's elements are ordered, where each field of a tuple-valued step
/// lies, and the order of bound weights.
#include <array>
#include <cstddef>
#include <cstdint>

#include "partita/ir/module.hpp"
#include "partita/ir/ops/fields.hpp"

namespace partita {

/// Alignment of every arena buffer and every weight, in bytes (a cache line; enough for AVX-512).
inline constexpr std::size_t alignment = 64;

/// How the elements of a value lie in its buffer. `planar` is the declared shape's row-major
/// order (NCHW for an image), the only one a caller, a view or another backend ever sees.
/// `channels_last` moves a rank-4 value's second axis last (NHWC): the plan chooses it for
/// values that only go from one step of a backend to another that reads it (see `layout_role`),
/// and it takes the same bytes as the planar value.
enum class tensor_layout : std::uint8_t { planar, channels_last };

/// What a step can do with layouts, as its backend's `layouts(module, graph, node)` member says
/// (a backend without that member: `planar` for every step). An *activation argument* is one
/// that is not a weight, literal or scalar.
enum class layout_role : std::uint8_t {
  planar,        ///< reads and writes planar values only
  same,          ///< every activation argument in the output's layout, whichever that is (an
                 ///< elementwise step's arguments of one position read as either)
  gathers,       ///< a planar output reads planar arguments; a channels-last output reads its
                 ///< first argument in either layout and every other activation argument in its own
  reads_either,  ///< writes planar; reads its first argument in either layout, the others planar
  converts,      ///< reads its first argument in either layout, whatever its output's; every other
                 ///< activation argument in the output's layout
};

/// True for a value whose bytes are the same in either layout, so that a step may read it as
/// the other layout's too: rank 4 or less and one position (its last two axes, right-aligned to
/// four, of extent 1), as a squeeze-and-excite block's per-channel scale [N, C, 1, 1].
constexpr bool same_in_either_layout(const shape& s) {
  if (s.rank > 4) return false;
  if (s.rank == 1) return s[0] == 1;
  return s.rank == 0 || (s[s.rank - 1] == 1 && s[s.rank - 2] == 1);
}

/// A shape in the order of its elements in a channels-last buffer: right-aligned to rank 4 and
/// its second axis moved last ([N, C, H, W] → [N, H, W, C]). For a value of one position
/// (`same_in_either_layout`) it names the same elements in the same order as the planar shape.
constexpr shape channels_last_order(const shape& s) {
  shape r{4, {1, 1, 1, 1}};
  for (int d = 0; d < s.rank && d < 4; ++d) r.dims[static_cast<std::size_t>(4 - s.rank + d)] = s[d];
  return shape{4, {r[0], r[2], r[3], r[1]}};
}

namespace detail {

constexpr std::size_t align_up(std::size_t n, std::size_t a = alignment) { return (n + a - 1) / a * a; }

/// The tuple node that tuple-valued node `t` stands for (looking through projections of nested
/// tuples); a projection of a step's value (a call's, a tuple-valued op's) stands for itself.
template <class M>
constexpr int tuple_node(const M& m, int t) {
  while (m.node(t).op == op_id::get) {
    const int source = tuple_node(m, m.arg(t, 0));
    if (m.node(source).op != op_id::tuple) return t;
    t = m.arg(source, m.node(t).index);
  }
  return t;
}

/// A module node as an argument of the shape rules.
constexpr arg_info arg_info_of(const graph_node& g) { return {g.out, g.type, g.is_tuple, true}; }

/// The byte offset of field `k` among fields `f` lying back to back, each aligned.
constexpr std::size_t fields_offset(const op_fields& f, int k) {
  std::size_t at = 0;
  for (int i = 0; i < k && i < f.count; ++i) {
    const op_field& x = f.at[static_cast<std::size_t>(i)];
    at += align_up(static_cast<std::size_t>(x.out.elements()) * size_of(x.type));
  }
  return at;
}

/// The fields of node `i` of `m`, a tuple-valued op (`is_tuple_op`), from its arguments.
template <class M>
constexpr op_fields op_fields_of(const M& m, int i) {
  const graph_node& g = m.node(i);
  const auto infos = rules::arg_infos(g.nargs, [&](int k) { return arg_info_of(m.node(m.arg(i, k))); });
  return rules::fields_of(g.op, *g.at, infos.data(), g.nargs);
}

/// The byte offset of field `k` of tuple-valued op node `i` in its step's buffer, and the bytes
/// of all its fields: one kernel writes them back to back.
template <class M>
constexpr std::size_t op_field_offset(const M& m, int i, int k) {
  return fields_offset(op_fields_of(m, i), k);
}
template <class M>
constexpr std::size_t op_tuple_bytes(const M& m, int i) {
  const op_fields f = op_fields_of(m, i);
  return fields_offset(f, f.count);
}

/// Calls `f(node)` for each weight bound in function `fn` or in a function it calls, in body
/// order, depth first: the order in which a whole-partition kernel receives them.
template <class M, class F>
constexpr void for_each_bound_weight(const M& m, int fn, F&& f) {
  const function_info& c = m.functions[static_cast<std::size_t>(fn)];
  for (int j = c.first_node; j < c.first_node + c.num_nodes; ++j) {
    if (m.node(j).op == op_id::weight) f(j);
    if (m.node(j).op == op_id::call) for_each_bound_weight(m, m.node(j).index, f);
  }
}

/// Byte offset of field `k` in the storage of a step that returns function `fn`'s tuple: the
/// fields lie back to back, each aligned.
template <class M>
constexpr std::size_t field_offset(const M& m, int fn, int k) {
  const function_info& f = m.functions[static_cast<std::size_t>(fn)];
  if (is_tuple_op(m.node(f.result).op)) return op_field_offset(m, f.result, k);  // the op's own fields
  std::size_t at = 0;
  for (int i = 0; i < k; ++i) {
    const graph_node& field = m.node(m.arg(f.result, i));
    at += align_up(static_cast<std::size_t>(field.out.elements()) * size_of(field.type));
  }
  return at;
}

template <class M>
constexpr std::size_t tuple_bytes(const M& m, int fn) {
  const function_info& f = m.functions[static_cast<std::size_t>(fn)];
  if (is_tuple_op(m.node(f.result).op)) return op_tuple_bytes(m, f.result);
  return field_offset(m, fn, m.node(f.result).nargs);
}

}  // namespace detail
}  // namespace partita
