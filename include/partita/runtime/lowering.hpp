#pragma once
/// Lowering: a module becomes steps in schedule order, value locations and a static memory plan.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "partita/ir/graph.hpp"
#include "partita/ir/layout.hpp"
#include "partita/ir/module_builder.hpp"
#include "partita/ir/ops/slicing.hpp"
#include "partita/runtime/detail/inline_calls.hpp"
#include "partita/runtime/memory_plan.hpp"
#include "partita/runtime/plan_records.hpp"

namespace partita::detail {

/// The plan while it is being built (vectors, inside constexpr evaluation).
struct plan_builder {
  module_builder flat;  // main with every call inlined (fused composite calls excepted)
  std::vector<plan_step> steps;
  std::vector<buffer_ref> ins;
  std::vector<tensor_slot> inputs, outputs, weights;
  std::vector<output_copy> copies;
  std::vector<buffer_lifetime> buffers;
  std::size_t arena_bytes = 0;
  std::size_t weight_bytes = 0;
};

/// Ops whose kernels compute each output element from the same element of their full-shape
/// operands, so they may write over such an operand's storage (the plan's in-place steps, and
/// an input `run` may share with an output).
constexpr bool writes_elementwise(op_id op) {
  return is_unary_elementwise(op) || is_binary_elementwise(op) || op == op_id::bias_add;
}

/// True when step `node` may overwrite its first argument's storage `a0` in place: every other
/// argument sharing that storage has the output's shape, so each element is read before it is
/// written (a broadcast operand in the same storage would be read after being overwritten).
template <class M>
constexpr bool in_place_safe(const M& m, int node, const int* rt, int a0) {
  const graph_node& g = m.node(node);
  if (!(m.node(m.arg(node, 0)).out == g.out)) return false;
  for (int k = 1; k < g.nargs; ++k)
    if (rt[m.arg(node, k)] == a0 && !(m.node(m.arg(node, k)).out == g.out)) return false;
  return true;
}

/// Where a slice of `x` (attributes `at`, elements of `type`) starts in x's storage, in bytes,
/// when it is a view: a contiguous run of x (every axis before the sliced one of extent 1, and a
/// step of 1 or a single element) starting on an `alignment` boundary, as every buffer a kernel
/// reads does. -1 otherwise: the slice is a step that copies.
constexpr std::int64_t slice_view_offset(const shape& x, const attrs& at, dtype type) {
  const int axis = normalize_axis(at.axis, x.rank);
  if (axis < 0 || axis >= x.rank) return -1;
  const slice_range r = slice_bounds(x[axis], at.start, at.stop, at.step);
  if (r.count < 1 || (r.step != 1 && r.count != 1)) return -1;
  std::int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= x[d];
  for (int d = axis + 1; d < x.rank; ++d) inner *= x[d];
  const std::int64_t bytes = r.start * inner * static_cast<std::int64_t>(size_of(type));
  return outer == 1 && bytes % static_cast<std::int64_t>(alignment) == 0 ? bytes : -1;
}

/// Whether a step of role `r` may read a channels-last value as its argument `k`.
constexpr bool reads_channels_last(layout_role r, int k) {
  return r == layout_role::same || r == layout_role::gathers || r == layout_role::converts ||
         (r == layout_role::reads_either && k == 0);
}

/// Whether a step of role `r` may write a channels-last result.
constexpr bool writes_channels_last(layout_role r) {
  return r == layout_role::same || r == layout_role::gathers || r == layout_role::converts;
}

/// The layout plan: which step results lie channels-last (`tensor_layout`). A result may when it
/// is a rank-4 image of more than one position in the arena, its step's role can write it so,
/// and every node reading it is a step of the same backend whose role can read it so (a view, a
/// tuple or a model output reads it planar). Then the roles' rules are enforced until nothing
/// changes, each time turning values back to planar (so it ends): a `same` step with one planar
/// activation has all of them planar (an elementwise step's values of one position, the same in
/// either layout, excepted), a `gathers` or `converts` step's other activations follow
/// its output, and so does a planar `gathers` step's first.
/// `root` maps a node to the step result whose storage it shares.
template <class Module, class Fuses>
constexpr std::vector<char> channels_last_values(const Module& module, const module_builder& m, Fuses fuses,
                                                 const std::vector<plan_step>& steps, const std::vector<int>& step_of,
                                                 const std::vector<int>& root, const std::vector<buffer_ref>& where) {
  const std::size_t n = m.nodes.size();
  std::vector<char> cl(n, 0);
  std::vector<layout_role> role(steps.size(), layout_role::planar);
  bool any = false;
  for (std::size_t s = 0; s < steps.size(); ++s) {
    role[s] = fuses.layouts(steps[s].backend, module, m, steps[s].node);
    any = any || role[s] != layout_role::planar;
  }
  if (!any) return cl;
  const auto role_of = [&](int node) {
    return role[static_cast<std::size_t>(step_of[static_cast<std::size_t>(node)])];
  };
  for (const plan_step& s : steps) {
    const graph_node& g = m.node(s.node);
    const layout_role r = role_of(s.node);
    cl[static_cast<std::size_t>(s.node)] = writes_channels_last(r) && !g.is_tuple &&
                                           g.out.rank == 4 && g.out[2] * g.out[3] > 1 &&
                                           where[static_cast<std::size_t>(s.node)].kind == storage::arena;
  }
  const function_info& f = m.main();
  for (int u = f.first_node; u < f.first_node + f.num_nodes; ++u) {
    const graph_node& g = m.node(u);
    for (int k = 0; k < g.nargs; ++k) {
      const int a = m.arg(u, k), v = root[static_cast<std::size_t>(a)];
      if (v < 0 || !cl[static_cast<std::size_t>(v)]) continue;
      const int su = step_of[static_cast<std::size_t>(u)];
      const bool ok = su >= 0 && a == v && reads_channels_last(role_of(u), k) &&
                      steps[static_cast<std::size_t>(su)].backend ==
                          steps[static_cast<std::size_t>(step_of[static_cast<std::size_t>(v)])].backend;
      if (!ok) cl[static_cast<std::size_t>(v)] = 0;
    }
  }
  const auto is_cl = [&](int a) { return cl[static_cast<std::size_t>(root[static_cast<std::size_t>(a)])] != 0; };
  for (bool changed = true; changed;) {
    changed = false;
    const auto planar = [&](int a) {
      char& c = cl[static_cast<std::size_t>(root[static_cast<std::size_t>(a)])];
      changed = changed || c;
      c = 0;
    };
    // Forward, then backward: a planar value spreads down a chain and up it in one round each
    // way, so long chains need few rounds.
    for (std::size_t i = 0; i < 2 * steps.size(); ++i) {
      const plan_step& s = steps[i < steps.size() ? i : 2 * steps.size() - 1 - i];
      const layout_role r = role_of(s.node);
      const graph_node& g = m.node(s.node);
      if (!writes_channels_last(r)) continue;
      const int first = r == layout_role::same ? 0 : 1;
      // An elementwise step may read a value of one position (a per-channel scale) in either
      // layout: its bytes are the same.
      const bool lenient = r == layout_role::same && is_binary_elementwise(g.op);
      bool agree = is_cl(s.node);
      for (int k = first; k < g.nargs; ++k) {
        const graph_node& a = m.node(m.arg(s.node, k));
        if (a.op != op_id::weight && !(lenient && same_in_either_layout(a.out))) agree = agree && is_cl(m.arg(s.node, k));
      }
      if (agree) continue;
      planar(s.node);
      // A planar `gathers` step reads its first argument planar too; a `converts` step reads it
      // in either layout.
      const int keep = r == layout_role::converts ? 1 : 0;
      for (int k = keep; k < g.nargs; ++k)
        if (m.node(m.arg(s.node, k)).op != op_id::weight && (k >= first || !is_cl(s.node))) planar(m.arg(s.node, k));
    }
  }
  return cl;
}

/// Lowers a module to steps and a memory plan. Views (flatten, reshape, contiguous aligned
/// slices, and so the fields of a split along an outer axis) and tuple projections share their
/// argument's storage; an op whose value is a model output writes the caller's output buffer
/// directly; every other op result gets an arena buffer.
template <class Module, class Fuses>
constexpr plan_builder lower(const Module& module, Fuses fuses) {
  plan_builder p;
  inlined in = inline_calls(module, fuses);
  p.flat = std::move(in.b);
  const module_builder& m = p.flat;
  const function_info& f = m.main();
  index_table weight_by_name;
  const int n = static_cast<int>(m.nodes.size());
  std::vector<int> root(static_cast<std::size_t>(n), -1);  // node whose storage a node shares
  std::vector<buffer_ref> where(static_cast<std::size_t>(n));
  std::vector<int> step_of(static_cast<std::size_t>(n), -1);
  std::vector<int> buffer_of(static_cast<std::size_t>(n), -1);
  std::vector<std::size_t> field_at(static_cast<std::size_t>(n), 0);  // byte offset of a view in its root's storage
  int* rt = root.data();

  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    const graph_node& g = m.node(i);
    rt[i] = i;
    if (g.op == op_id::input) {
      where[static_cast<std::size_t>(i)] = {storage::input, static_cast<int>(p.inputs.size()), 0};
      p.inputs.push_back({g.name, g.type, g.out, i, 0});
    } else if (g.op == op_id::weight) {
      // A weight bound inside several functions is one slot: names are unique in a model.
      std::uint64_t key = 0xcbf29ce484222325ull;
      for (char c : g.name) key = hash_mix(key, static_cast<unsigned char>(c));
      int slot = weight_by_name.find(key, [&](int s) { return p.weights[static_cast<std::size_t>(s)].name == g.name; });
      if (slot < 0) {
        slot = static_cast<int>(p.weights.size());
        weight_by_name.insert(key, slot);
        p.weights.push_back({g.name, g.type, g.out, i, p.weight_bytes, g.at->data.values});
        p.weight_bytes += align_up(static_cast<std::size_t>(g.out.elements()) * size_of(g.type));
      }
      // Offset 0 in the weight: a view of it (a contiguous slice) adds its own.
      where[static_cast<std::size_t>(i)] = {storage::weight, slot, 0};
    } else if (g.op == op_id::tuple) {
      // no storage of its own: consumers project its fields
    } else if (g.op == op_id::get && m.node(tuple_node(m, m.arg(i, 0))).op == op_id::call) {
      // A field of a step returning a tuple (a whole partition): its fields lie back to back.
      const int call = tuple_node(m, m.arg(i, 0));
      rt[i] = rt[call];
      field_at[static_cast<std::size_t>(i)] = field_offset(module, m.node(call).index, g.index);
    } else if (g.op == op_id::get && is_tuple_op(m.node(tuple_node(m, m.arg(i, 0))).op)) {
      // A field of a tuple-valued op (topk, the recurrent layers): its kernel writes its fields
      // back to back.
      const int op = tuple_node(m, m.arg(i, 0));
      rt[i] = rt[op];
      field_at[static_cast<std::size_t>(i)] = field_at[static_cast<std::size_t>(op)] + op_field_offset(m, op, g.index);
    } else if (g.op == op_id::get) {
      const int field = m.arg(tuple_node(m, m.arg(i, 0)), g.index);
      rt[i] = rt[field];
      field_at[static_cast<std::size_t>(i)] = field_at[static_cast<std::size_t>(field)];
    } else if (is_view(g.op)) {
      rt[i] = rt[m.arg(i, 0)];
      field_at[static_cast<std::size_t>(i)] = field_at[static_cast<std::size_t>(m.arg(i, 0))];
    } else if (g.op == op_id::slice && !m.node(m.arg(i, 0)).is_tuple &&
               slice_view_offset(m.node(m.arg(i, 0)).out, *g.at, g.type) >= 0) {
      rt[i] = rt[m.arg(i, 0)];
      field_at[static_cast<std::size_t>(i)] = field_at[static_cast<std::size_t>(m.arg(i, 0))] +
                                              static_cast<std::size_t>(slice_view_offset(m.node(m.arg(i, 0)).out, *g.at, g.type));
    } else {
      step_of[static_cast<std::size_t>(i)] = static_cast<int>(p.steps.size());
      p.steps.push_back({i, in.source[static_cast<std::size_t>(i)], g.target, 0, g.nargs, {}});
    }
  }

  // Outputs: an op result (possibly seen through views) is written straight into the caller's
  // buffer the first time it appears; anything else is copied there at the end.
  const graph_node& result = m.node(f.result);
  const int num_outputs = result.op == op_id::tuple ? result.nargs : 1;
  for (int k = 0; k < num_outputs; ++k) {
    const int o = result.op == op_id::tuple ? m.arg(f.result, k) : f.result;
    const graph_node& g = m.node(o);
    // Named as in the model; a single tuple output counts as its fields, which stay unnamed.
    const function_info& given = module.main();
    const std::string_view name = given.num_result_names == num_outputs ? given.result_names[k] : std::string_view{};
    p.outputs.push_back({name, g.type, g.out, o, 0});
    const int r = rt[o];
    // Only a view of the whole result (not a slice of it) lets the step write the caller's buffer.
    if (step_of[static_cast<std::size_t>(r)] >= 0 && where[static_cast<std::size_t>(r)].kind == storage::none &&
        !m.node(r).is_tuple && field_at[static_cast<std::size_t>(o)] == 0 && m.node(r).out.elements() == g.out.elements()) {
      where[static_cast<std::size_t>(r)] = {storage::output, k, 0};
    }
  }

  // Last step reading each value's storage (the final copies count as a step after the last).
  const int num_steps = static_cast<int>(p.steps.size());
  std::vector<int> last_use(static_cast<std::size_t>(n), -1);
  for (int si = 0; si < num_steps; ++si) {
    const plan_step& s = p.steps[static_cast<std::size_t>(si)];
    for (int k = 0; k < s.num_in; ++k) last_use[static_cast<std::size_t>(rt[m.arg(s.node, k)])] = si;
  }
  for (const tensor_slot& o : p.outputs) last_use[static_cast<std::size_t>(rt[o.node])] = num_steps;

  // Arena buffers for the remaining step results. An elementwise step whose first argument is an
  // arena value of the same shape, read for the last time by this step, writes over it in place.
  for (int si = 0; si < num_steps; ++si) {
    const plan_step& s = p.steps[static_cast<std::size_t>(si)];
    if (where[static_cast<std::size_t>(s.node)].kind != storage::none) continue;
    const graph_node& g = m.node(s.node);
    const int a0 = rt[m.arg(s.node, 0)];
    const bool elementwise = writes_elementwise(g.op);
    if (elementwise && buffer_of[static_cast<std::size_t>(a0)] >= 0 && last_use[static_cast<std::size_t>(a0)] == si &&
        !m.node(a0).is_tuple &&
        m.node(a0).out.elements() == g.out.elements() && in_place_safe(m, s.node, rt, a0)) {
      buffer_of[static_cast<std::size_t>(s.node)] = buffer_of[static_cast<std::size_t>(a0)];
      continue;
    }
    buffer_of[static_cast<std::size_t>(s.node)] = static_cast<int>(p.buffers.size());
    const std::size_t bytes = is_tuple_op(g.op) ? op_tuple_bytes(m, s.node)
                              : g.is_tuple     ? tuple_bytes(module, g.index)
                                               : align_up(static_cast<std::size_t>(g.out.elements()) * size_of(g.type));
    p.buffers.push_back({bytes, si, si, 0});
  }
  for (int si = 0; si < num_steps; ++si) {
    const plan_step& s = p.steps[static_cast<std::size_t>(si)];
    for (int k = 0; k < s.num_in; ++k) {
      const int b = buffer_of[static_cast<std::size_t>(rt[m.arg(s.node, k)])];
      if (b >= 0) p.buffers[static_cast<std::size_t>(b)].last = si;
    }
  }
  for (const tensor_slot& o : p.outputs) {
    const int b = buffer_of[static_cast<std::size_t>(rt[o.node])];
    if (b >= 0) p.buffers[static_cast<std::size_t>(b)].last = num_steps;  // read by the final copy
  }
  p.arena_bytes = assign_offsets(p.buffers);
  for (const plan_step& s : p.steps) {
    const int b = buffer_of[static_cast<std::size_t>(s.node)];
    if (b >= 0) where[static_cast<std::size_t>(s.node)] = {storage::arena, b, p.buffers[static_cast<std::size_t>(b)].offset};
  }

  // A view's location: its root's, moved to the field it shows.
  auto located = [&](int node) {
    buffer_ref r = where[static_cast<std::size_t>(rt[node])];
    r.offset += field_at[static_cast<std::size_t>(node)];
    return r;
  };
  const std::vector<char> cl = channels_last_values(module, m, fuses, p.steps, step_of, root, where);
  const auto laid_out = [&](int node) {
    buffer_ref r = located(node);
    if (cl[static_cast<std::size_t>(rt[node])]) r.layout = tensor_layout::channels_last;
    return r;
  };
  for (plan_step& s : p.steps) {
    s.first_in = static_cast<int>(p.ins.size());
    for (int k = 0; k < s.num_in; ++k) p.ins.push_back(laid_out(m.arg(s.node, k)));
    s.out = laid_out(s.node);
  }
  for (int k = 0; k < num_outputs; ++k) {
    const tensor_slot& o = p.outputs[static_cast<std::size_t>(k)];
    const buffer_ref src = located(o.node);
    if (src.kind != storage::output || src.index != k) p.copies.push_back({src, k, o.bytes()});
  }
  return p;
}

}  // namespace partita::detail
