#pragma once
/// A partition translated at compile time into oneDNN layers (the program).
#include <array>
#include <cstddef>
#include <vector>

#include "partita/ir/module.hpp"
#include "partita/ir/layout.hpp"

namespace partita::detail::onednn {

/// What a primitive applies to its result before storing it, in order: the sum of a residual
/// (`op_id::add`) or an activation (relu, clip, sigmoid, tanh).
struct post_op {
  op_id op = op_id::relu;
  float lo = 0.f, hi = 0.f;  // clip bounds
};

inline constexpr int max_post_ops = 4;

/// One layer of a partition as oneDNN runs it: a primitive with its fused post-ops, a
/// parameter of the partition, or a view. Values are named by layer index; weights by the
/// kernel input slot they arrive in at bind.
struct layer {
  op_id op = op_id::param;
  shape out{};             // the result's dims
  shape in{};              // the source's dims as the primitive reads them; binary: the second operand's
  shape wshape{};          // conv2d / dense: the weight's dims
  int src = -1;            // the layer whose value is read
  int src2 = -1;           // binary: the second operand, when it is not a weight
  int residual = -1;       // conv2d / dense: the layer summed into the result (a `sum` post-op)
  int weight = -1;         // conv2d / dense weights; bias_add bias; binary weight operand
  int bias = -1;           // conv2d / dense bias (after fusion)
  std::array<int, 4> norm{-1, -1, -1, -1};  // batch norm gamma, beta, mean, var
  float epsilon = 0.f;
  attrs at{};
  int index = 0;  // param: its position among the partition's parameters
  std::array<post_op, max_post_ops> post{};
  int num_post = 0;
};

/// A result of the partition: the layer holding it and its byte offset in the step's output.
struct result {
  int value = -1;
  std::size_t offset = 0;
};

/// A partition translated at compile time: its layers in execution order and its results.
/// `translatable` is false when the partition holds an op with no translation (`culprit`).
template <std::size_t L, std::size_t R>
struct program {
  std::array<layer, L> layers{};
  std::array<result, R> results{};
  bool translatable = true;
  op_id culprit = op_id::param;
};

struct program_sizes {
  std::size_t layers, results;
};

constexpr bool is_activation(op_id op) { return is_unary_elementwise(op); }
constexpr bool is_heavy(op_id op) { return op == op_id::conv2d || op == op_id::dense; }

/// A value or a weight, as an argument of an op in the partition.
struct ref {
  int layer = -1;
  int slot = -1;
};

struct lowering {
  std::vector<layer> layers;
  std::vector<result> results;
  bool translatable = true;
  op_id culprit = op_id::param;

  constexpr void fail(op_id op) {
    if (translatable) culprit = op;
    translatable = false;
  }
};

/// Translates one op of the partition (its arguments already translated) into a layer.
template <class M>
constexpr ref translate_op(const M& m, int i, const std::vector<ref>& refs, lowering& out) {
  const graph_node& g = m.node(i);
  auto arg = [&](int k) { return refs[static_cast<std::size_t>(m.arg(i, k))]; };
  auto arg_shape = [&](int k) { return m.node(m.arg(i, k)).out; };
  layer l{};
  l.op = g.op;
  l.out = g.out;
  l.at = *g.at;
  l.epsilon = g.at->epsilon;
  if (g.type != dtype::f32 || g.nargs < 1 || (arg(0).layer < 0 && !is_binary_elementwise(g.op))) {
    out.fail(g.op);
    return {};
  }
  l.src = arg(0).layer;
  l.in = arg_shape(0);
  switch (g.op) {
    case op_id::conv2d:
    case op_id::dense:
      if (arg(1).slot < 0 || (g.op == op_id::dense && l.in.rank != 2)) out.fail(g.op);
      l.weight = arg(1).slot;
      l.wshape = arg_shape(1);
      break;
    case op_id::bias_add:
      if (arg(1).slot < 0) out.fail(g.op);
      l.weight = arg(1).slot;
      break;
    case op_id::batch_norm:
      for (int k = 0; k < 4; ++k) {
        if (arg(k + 1).slot < 0) out.fail(g.op);
        l.norm[static_cast<std::size_t>(k)] = arg(k + 1).slot;
      }
      break;
    case op_id::add:
    case op_id::subtract:
    case op_id::multiply: {
      // The first operand is a value of the result's shape; the second may broadcast or be a weight.
      int a = 0, b = 1;
      const bool swappable = g.op != op_id::subtract;
      if (swappable && (arg(0).layer < 0 || !(arg_shape(0) == g.out)) && arg(1).layer >= 0 && arg_shape(1) == g.out) {
        a = 1;
        b = 0;
      }
      if (arg(a).layer < 0 || !(arg_shape(a) == g.out)) out.fail(g.op);
      l.src = arg(a).layer;
      l.src2 = arg(b).layer;
      l.weight = arg(b).slot;
      l.in = arg_shape(b);
      break;
    }
    case op_id::relu:
    case op_id::clip:
    case op_id::sigmoid:
    case op_id::tanh:
    case op_id::max_pool2d:
    case op_id::avg_pool2d:
    case op_id::global_avg_pool2d:
    case op_id::softmax:
    case op_id::flatten:
    case op_id::reshape: break;
    default: out.fail(g.op);
  }
  out.layers.push_back(l);
  return {static_cast<int>(out.layers.size()) - 1, -1};
}

/// Walks function `fn` (the partition, or a composite it calls with arguments `args`),
/// translating each op; returns what its result is.
template <class M>
constexpr ref translate_function(const M& m, int fn, const std::vector<ref>& args, const std::vector<int>& slots,
                                 std::vector<ref>& refs, lowering& out) {
  const function_info& f = m.functions[static_cast<std::size_t>(fn)];
  const bool partition = !f.backend.empty();
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    const graph_node& g = m.node(i);
    ref& r = refs[static_cast<std::size_t>(i)];
    if (g.op == op_id::param) {
      if (partition) {
        layer p{};
        p.out = g.out;
        p.index = g.index;
        if (g.type != dtype::f32 || g.is_tuple) out.fail(g.op);
        out.layers.push_back(p);
        r = {static_cast<int>(out.layers.size()) - 1, -1};
      } else {
        r = args[static_cast<std::size_t>(g.index)];
      }
    } else if (g.op == op_id::weight) {
      r = {-1, slots[static_cast<std::size_t>(i)]};
    } else if (g.op == op_id::call) {
      std::vector<ref> a;
      for (int k = 0; k < g.nargs; ++k) a.push_back(refs[static_cast<std::size_t>(m.arg(i, k))]);
      r = translate_function(m, g.index, a, slots, refs, out);
    } else if (g.op == op_id::tuple) {
      if (i != f.result || !partition) out.fail(g.op);  // only a partition's several results
    } else {
      r = translate_op(m, i, refs, out);
    }
  }
  if (m.node(f.result).op != op_id::tuple && refs[static_cast<std::size_t>(f.result)].layer < 0)
    out.fail(m.node(f.result).op);
  return refs[static_cast<std::size_t>(f.result)];
}

/// Dense layers reading a flattened 4-D value read the 4-D value itself (its weights viewed as
/// [units, C, H, W]): no reorder to the plain layout just to flatten it.
constexpr void read_through_flatten(std::vector<layer>& ls) {
  for (layer& d : ls) {
    if (d.op != op_id::dense) continue;
    const layer& v = ls[static_cast<std::size_t>(d.src)];
    if (v.op != op_id::flatten && v.op != op_id::reshape) continue;
    const shape& s = ls[static_cast<std::size_t>(v.src)].out;
    if (s.rank != 4 || v.out.rank != 2 || s[0] != v.out[0]) continue;
    d.src = v.src;
    d.in = s;
    d.wshape = shape{4, {d.wshape[0], s[1], s[2], s[3]}};
  }
}

/// Fuses into each conv2d / dense the chain of ops that only it feeds: a bias, a batch norm
/// (both folded into its weights at bind), a residual add (a `sum` post-op, for a residual
/// computed before it) and activations; into a binary op, the activations after it. A value
/// that leaves the partition or has several readers ends the chain.
constexpr void fuse(std::vector<layer>& ls, const std::vector<result>& results, std::vector<int>& forward,
                    std::vector<char>& dead) {
  const std::size_t n = ls.size();
  std::vector<int> uses(n, 0), consumer(n, -1);
  std::vector<char> escapes(n, false);
  for (std::size_t j = 0; j < n; ++j)
    for (int r : {ls[j].src, ls[j].src2, ls[j].residual})
      if (r >= 0) {
        ++uses[static_cast<std::size_t>(r)];
        consumer[static_cast<std::size_t>(r)] = static_cast<int>(j);
      }
  for (const result& r : results) escapes[static_cast<std::size_t>(r.value)] = true;
  // Views nothing reads any more (dense reads through them) compute nothing and are dropped.
  for (std::size_t j = 0; j < n; ++j)
    if (is_view(ls[j].op) && uses[j] == 0 && !escapes[j]) dead[j] = true;
  auto resolve = [&](int r) {
    while (forward[static_cast<std::size_t>(r)] != r) r = forward[static_cast<std::size_t>(r)];
    return r;
  };
  for (std::size_t li = 0; li < n; ++li) {
    layer& l = ls[li];
    const bool heavy = is_heavy(l.op);
    if (dead[li] || !(heavy || is_binary_elementwise(l.op) || l.op == op_id::bias_add)) continue;
    int cur = static_cast<int>(li);
    while (uses[static_cast<std::size_t>(cur)] == 1 && !escapes[static_cast<std::size_t>(cur)]) {
      const int ci = consumer[static_cast<std::size_t>(cur)];
      const layer& c = ls[static_cast<std::size_t>(ci)];
      const bool plain_chain = l.num_post == 0;
      if (heavy && c.op == op_id::bias_add && l.bias < 0 && l.norm[0] < 0 && plain_chain) {
        const int axis = normalize_axis(c.at.axis, c.out.rank);
        if (axis != 1) break;
        l.bias = c.weight;
      } else if (heavy && c.op == op_id::batch_norm && l.norm[0] < 0 && plain_chain) {
        l.norm = c.norm;
        l.epsilon = c.epsilon;
      } else if (heavy && c.op == op_id::add && l.residual < 0 && plain_chain && c.src2 >= 0 && c.in == c.out) {
        const int other = c.src == cur ? c.src2 : c.src;
        if (other == cur || resolve(other) >= static_cast<int>(li)) break;  // must exist before this layer runs
        l.residual = other;
        l.post[static_cast<std::size_t>(l.num_post++)] = {op_id::add};
      } else if (is_activation(c.op) && l.num_post < max_post_ops) {
        l.post[static_cast<std::size_t>(l.num_post++)] = {c.op, c.at.lo, c.at.hi};
      } else {
        break;
      }
      dead[static_cast<std::size_t>(ci)] = true;
      forward[static_cast<std::size_t>(ci)] = static_cast<int>(li);
      cur = ci;
    }
  }
}

/// The partition `fn` of module `m` as oneDNN layers (before compaction into a `program`).
template <class M>
constexpr lowering lower(const M& m, int fn) {
  lowering out;
  std::vector<int> slots(m.nodes.size(), -1);
  int next = m.functions[static_cast<std::size_t>(fn)].num_params;
  for_each_bound_weight(m, fn, [&](int j) { slots[static_cast<std::size_t>(j)] = next++; });
  std::vector<ref> refs(m.nodes.size());
  translate_function(m, fn, {}, slots, refs, out);
  if (!out.translatable) return out;

  const function_info& f = m.functions[static_cast<std::size_t>(fn)];
  const graph_node& r = m.node(f.result);
  const int count = r.op == op_id::tuple ? r.nargs : 1;
  for (int k = 0; k < count; ++k) {
    const int node = r.op == op_id::tuple ? m.arg(f.result, k) : f.result;
    const ref v = refs[static_cast<std::size_t>(node)];
    if (v.layer < 0) {
      out.fail(m.node(node).op);
      return out;
    }
    out.results.push_back({v.layer, r.op == op_id::tuple ? field_offset(m, fn, k) : 0});
  }

  read_through_flatten(out.layers);
  const std::size_t n = out.layers.size();
  std::vector<int> forward(n, 0);
  for (std::size_t i = 0; i < n; ++i) forward[i] = static_cast<int>(i);
  std::vector<char> dead(n, false);
  fuse(out.layers, out.results, forward, dead);

  // Compaction: the surviving layers, references renumbered.
  std::vector<int> renumber(n, -1);
  std::vector<layer> kept;
  for (std::size_t i = 0; i < n; ++i)
    if (!dead[i]) {
      renumber[i] = static_cast<int>(kept.size());
      kept.push_back(out.layers[i]);
    }
  auto resolve = [&](int v) {
    if (v < 0) return v;
    while (forward[static_cast<std::size_t>(v)] != v) v = forward[static_cast<std::size_t>(v)];
    return renumber[static_cast<std::size_t>(v)];
  };
  for (layer& l : kept) {
    l.src = resolve(l.src);
    l.src2 = resolve(l.src2);
    l.residual = resolve(l.residual);
  }
  for (result& res : out.results) res.value = resolve(res.value);
  out.layers = std::move(kept);
  return out;
}

template <class M>
constexpr program_sizes sizes_of(const M& m, int fn) {
  const lowering l = lower(m, fn);
  return {l.layers.size(), l.results.size()};
}

/// The partition `fn` of module `m` as a constant table of layers.
template <program_sizes S, class M>
constexpr program<S.layers, S.results> make_program(const M& m, int fn) {
  const lowering l = lower(m, fn);
  program<S.layers, S.results> p{};
  for (std::size_t i = 0; i < S.layers; ++i) p.layers[i] = l.layers[i];
  for (std::size_t i = 0; i < S.results; ++i) p.results[i] = l.results[i];
  p.translatable = l.translatable;
  p.culprit = l.culprit;
  return p;
}

}  // namespace partita::detail::onednn
