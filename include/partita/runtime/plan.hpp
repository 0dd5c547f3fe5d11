#pragma once
#include <array>
#include <cstddef>
#include <string_view>
#include <vector>

#include "partita/backend/backend.hpp"
#include "partita/ir/graph.hpp"
#include "partita/ir/module.hpp"
#include "partita/pass/module_builder.hpp"
#include "partita/runtime/memory_plan.hpp"

namespace partita {

/// Where a value lives at run time.
enum class storage : std::uint8_t { none, input, weight, arena, output };

/// A value's location: the caller's input or output buffer number `index`, or a byte offset in
/// the weight storage or the arena.
struct buffer_ref {
  storage kind = storage::none;
  int index = 0;
  std::size_t offset = 0;
};

/// One kernel call: the op node it computes, the backend that runs it (by name), its argument locations
/// (`first_in`, `num_in` into the plan's `ins`) and the location it writes.
struct plan_step {
  int node = 0;                // in the plan's inlined node table
  int source = 0;              // the same node in the module (a call node for a fused composite)
  std::string_view backend{};  // empty: the host backend
  int first_in = 0;
  int num_in = 0;
  buffer_ref out{};
};

/// A declared model input, output or weight.
struct tensor_slot {
  std::string_view name{};
  dtype type = dtype::f32;
  shape shp{};
  int node = 0;
  std::size_t offset = 0;  // weights: byte offset in the weight storage
  constexpr std::size_t bytes() const { return static_cast<std::size_t>(shp.elements()) * size_of(type); }
};

/// Copy of a value into an output buffer after the last step, for outputs that are inputs,
/// weights or a value already written to another output.
struct output_copy {
  buffer_ref from{};
  int output = 0;
  std::size_t bytes = 0;
};

namespace detail {

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

/// The tuple node that tuple-valued node `t` stands for (looking through projections of nested
/// tuples).
template <class M>
constexpr int tuple_node(const M& m, int t) {
  while (m.node(t).op == op_id::get) t = m.arg(tuple_node(m, m.arg(t, 0)), m.node(t).index);
  return t;
}

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

/// Main with every call expanded in place: partition functions run on their backend, a
/// composite call stays one node when its backend `fuses` it (one kernel) and is expanded on
/// that backend otherwise. Each node's `target` is the backend that runs it; `source` maps it
/// back to the module. A node of main annotated for a backend (before partitioning) runs there.
struct inlined {
  module_builder b;
  std::vector<int> source;
};

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

template <class M, class Fuses>
constexpr int expand(const M& m, int fn, const std::vector<int>& params, std::string_view backend, Fuses fuses,
                     inlined& out) {
  const function_info& f = m.functions[static_cast<std::size_t>(fn)];
  std::vector<int> local(static_cast<std::size_t>(f.num_nodes), -1);
  std::vector<int> a;
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    const graph_node& g = m.node(i);
    int& value = local[static_cast<std::size_t>(i - f.first_node)];
    const std::string_view owner = fn == 0 && !g.target.empty() ? g.target : backend;
    a.clear();
    for (int k = 0; k < g.nargs; ++k) a.push_back(local[static_cast<std::size_t>(m.arg(i, k) - f.first_node)]);
    if (g.op == op_id::param) {
      value = params[static_cast<std::size_t>(g.index)];
      continue;
    }
    if (g.op == op_id::call) {
      const function_info& c = m.functions[static_cast<std::size_t>(g.index)];
      if (!c.backend.empty() && fuses.whole_partitions(c.backend)) {
        // One step: the backend's kernel runs the whole partition, its weights after its parameters.
        for_each_bound_weight(m, g.index, [&](int j) {
          a.push_back(out.b.emit(m.node(j), nullptr, 0));
          out.source.push_back(j);
        });
        graph_node copy = g;
        copy.target = c.backend;
        value = out.b.emit(copy, a.data(), static_cast<int>(a.size()));
        out.source.push_back(i);
        continue;
      }
      if (!c.backend.empty()) {
        value = expand(m, g.index, a, c.backend, fuses, out);
        continue;
      }
      if (c.composite.empty() || !fuses(owner, c.composite)) {
        value = expand(m, g.index, a, owner, fuses, out);
        continue;
      }
    }
    graph_node copy = g;
    copy.target = owner;
    if (g.op == op_id::call) {
      // A fused composite: its kernel also receives the weights bound inside it, in body order.
      const function_info& c = m.functions[static_cast<std::size_t>(g.index)];
      for (int j = c.first_node; j < c.first_node + c.num_nodes; ++j) {
        if (m.node(j).op != op_id::weight) continue;
        a.push_back(out.b.emit(m.node(j), nullptr, 0));
        out.source.push_back(j);
      }
    }
    value = out.b.emit(copy, a.data(), static_cast<int>(a.size()));
    out.source.push_back(i);
  }
  return local[static_cast<std::size_t>(f.result - f.first_node)];
}

template <class M, class Fuses>
constexpr inlined inline_calls(const M& m, Fuses fuses) {
  inlined out;
  function_info main{};
  main.set_name("main");
  main.result = expand(m, 0, {}, {}, fuses, out);
  main.num_nodes = static_cast<int>(out.b.nodes.size());
  out.b.functions.push_back(main);
  return out;
}

/// Byte offset of field `k` in the storage of a step that returns function `fn`'s tuple: the
/// fields lie back to back, each aligned.
template <class M>
constexpr std::size_t field_offset(const M& m, int fn, int k) {
  const function_info& f = m.functions[static_cast<std::size_t>(fn)];
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
  return field_offset(m, fn, m.node(f.result).nargs);
}

/// Lowers a module to steps and a memory plan. Views (flatten, reshape) and tuple
/// projections share their argument's storage; an op whose value is a model output writes the
/// caller's output buffer directly; every other op result gets an arena buffer.
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
        p.weights.push_back({g.name, g.type, g.out, i, p.weight_bytes});
        p.weight_bytes += align_up(static_cast<std::size_t>(g.out.elements()) * size_of(g.type));
      }
      where[static_cast<std::size_t>(i)] = {storage::weight, slot, p.weights[static_cast<std::size_t>(slot)].offset};
    } else if (g.op == op_id::tuple) {
      // no storage of its own: consumers project its fields
    } else if (g.op == op_id::get && m.node(tuple_node(m, m.arg(i, 0))).op == op_id::call) {
      // A field of a step returning a tuple (a whole partition): its fields lie back to back.
      const int call = tuple_node(m, m.arg(i, 0));
      rt[i] = rt[call];
      field_at[static_cast<std::size_t>(i)] = field_offset(module, m.node(call).index, g.index);
    } else if (g.op == op_id::get) {
      const int field = m.arg(tuple_node(m, m.arg(i, 0)), g.index);
      rt[i] = rt[field];
      field_at[static_cast<std::size_t>(i)] = field_at[static_cast<std::size_t>(field)];
    } else if (is_view(g.op)) {
      rt[i] = rt[m.arg(i, 0)];
      field_at[static_cast<std::size_t>(i)] = field_at[static_cast<std::size_t>(m.arg(i, 0))];
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
    p.outputs.push_back({{}, g.type, g.out, o, 0});
    const int r = rt[o];
    if (step_of[static_cast<std::size_t>(r)] >= 0 && where[static_cast<std::size_t>(r)].kind == storage::none &&
        !m.node(r).is_tuple) {
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
    const std::size_t bytes = g.is_tuple ? tuple_bytes(module, g.index)
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
  for (plan_step& s : p.steps) {
    s.first_in = static_cast<int>(p.ins.size());
    for (int k = 0; k < s.num_in; ++k) p.ins.push_back(located(m.arg(s.node, k)));
    s.out = where[static_cast<std::size_t>(s.node)];
  }
  for (int k = 0; k < num_outputs; ++k) {
    const tensor_slot& o = p.outputs[static_cast<std::size_t>(k)];
    const buffer_ref src = located(o.node);
    if (src.kind != storage::output || src.index != k) p.copies.push_back({src, k, o.bytes()});
  }
  return p;
}

struct plan_sizes {
  std::size_t nodes, args, steps, ins, inputs, outputs, weights, copies, buffers;
};

template <class M, class Fuses>
constexpr plan_sizes sizes_of_plan(const M& m, Fuses fuses) {
  const plan_builder p = lower(m, fuses);
  return {p.flat.nodes.size(), p.flat.args.size(), p.steps.size(), p.ins.size(), p.inputs.size(),
          p.outputs.size(), p.weights.size(), p.copies.size(), p.buffers.size()};
}

template <class T, std::size_t N>
constexpr std::array<T, N> to_array(const std::vector<T>& v) {
  std::array<T, N> a{};
  for (std::size_t i = 0; i < N; ++i) a[i] = v[i];
  return a;
}

}  // namespace detail

/// The executable plan of a module: steps in schedule order, the static memory plan and the
/// declared inputs, outputs and weights. Computed entirely at compile time.
template <detail::plan_sizes S>
struct plan_value {
  std::array<graph_node, S.nodes> nodes{};  // main with calls inlined; steps index it
  std::array<int, S.args> args{};
  std::array<plan_step, S.steps> steps{};
  std::array<buffer_ref, S.ins> ins{};
  std::array<tensor_slot, S.inputs> inputs{};
  std::array<tensor_slot, S.outputs> outputs{};
  std::array<tensor_slot, S.weights> weights{};
  std::array<output_copy, S.copies> copies{};
  std::array<buffer_lifetime, S.buffers> buffers{};
  std::size_t arena_bytes = 0;
  std::size_t weight_bytes = 0;
};

namespace detail {

template <plan_sizes S, class M, class Fuses>
constexpr plan_value<S> make_plan(const M& m, Fuses fuses) {
  const plan_builder p = lower(m, fuses);
  plan_value<S> r{};
  r.nodes = to_array<graph_node, S.nodes>(p.flat.nodes);
  r.args = to_array<int, S.args>(p.flat.args);
  r.steps = to_array<plan_step, S.steps>(p.steps);
  r.ins = to_array<buffer_ref, S.ins>(p.ins);
  r.inputs = to_array<tensor_slot, S.inputs>(p.inputs);
  r.outputs = to_array<tensor_slot, S.outputs>(p.outputs);
  r.weights = to_array<tensor_slot, S.weights>(p.weights);
  r.copies = to_array<output_copy, S.copies>(p.copies);
  r.buffers = to_array<buffer_lifetime, S.buffers>(p.buffers);
  r.arena_bytes = p.arena_bytes;
  r.weight_bytes = p.weight_bytes;
  return r;
}

}  // namespace detail

namespace detail {

/// Whether the backend named `backend` among `Backends` (empty: the host, the last one) runs
/// composite `name` as one kernel (`static constexpr bool fuses(std::string_view)`).
template <class... Backends>
struct fuses_in {
  constexpr bool operator()(std::string_view backend, std::string_view name) const {
    const std::size_t owner = backend_index<Backends...>(backend);
    bool r = false;
    std::size_t i = 0;
    ((r = r || (i++ == owner && fuses<Backends>(name))), ...);
    return r;
  }
  /// Whether the backend named `backend` runs each of its partitions as one step.
  constexpr bool whole_partitions(std::string_view backend) const {
    const std::size_t owner = backend_index<Backends...>(backend);
    bool r = false;
    std::size_t i = 0;
    ((r = r || (i++ == owner && runs_partitions<Backends>)), ...);
    return r;
  }
  template <class B>
  static constexpr bool fuses(std::string_view name) {
    if constexpr (requires { B::fuses(name); }) {
      return B::fuses(name);
    } else {
      return false;
    }
  }
};

}  // namespace detail

/// The plan of module type `M` for `Backends...` (host last), as a static constexpr object
/// (kernels refer to it by reference).
template <module_type M, class... Backends>
struct plan_of {
  static constexpr detail::plan_sizes sizes = detail::sizes_of_plan(M::value, detail::fuses_in<Backends...>{});
  static constexpr plan_value<sizes> value = detail::make_plan<sizes>(M::value, detail::fuses_in<Backends...>{});
  static_assert(detail::arena_is_valid(value.buffers, value.arena_bytes),
                "partita: internal error: the memory plan places two live buffers at overlapping offsets");
};

}  // namespace partita
