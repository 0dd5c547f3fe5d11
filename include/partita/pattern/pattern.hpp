#pragma once
/// The pattern language: op patterns, wildcards, alternatives, dominators.
#include <array>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "partita/core/fixed_string.hpp"
#include "partita/ir/module.hpp"

namespace partita {

/// The kinds of pattern node (see the pattern types below for their meaning).
enum class pattern_kind : std::uint8_t {
  wildcard,
  constant,
  input,
  op,
  elementwise,
  tuple,
  get,
  alt,
  var,
  has_dtype,
  has_shape,
  has_attr,
  dominates,
};

/// One node of a pattern, as matched by the constexpr matcher. Children are indices into the
/// owning table's `children` pool.
struct pattern_node {
  pattern_kind kind = pattern_kind::wildcard;
  op_id op = op_id::input;
  bool any_arity = false;  // op/tuple patterns ending in `etc`
  int first = 0;
  int count = 0;
  int index = -1;          // get: field (-1: any); var: variable number
  std::string_view name{};  // input: required name (empty: any); var: its name
  dtype type = dtype::f32;
  shape shp{};
  bool (*attr_check)(const attrs&) = nullptr;
};

namespace detail {

/// The ops an `elementwise` pattern node matches: unary activations, broadcasting binary ops
/// and bias_add.
constexpr bool is_elementwise(op_id op) {
  return is_unary_elementwise(op) || is_binary_elementwise(op) || op == op_id::bias_add;
}

/// Builds the flat table of a pattern type tree.
struct pattern_builder {
  std::vector<pattern_node> nodes;
  std::vector<int> children;
  std::vector<std::string_view> vars;

  constexpr int add(pattern_node n, std::initializer_list<int> kids = {}) {
    n.first = static_cast<int>(children.size());
    n.count = static_cast<int>(kids.size());
    for (int k : kids) children.push_back(k);
    nodes.push_back(n);
    return static_cast<int>(nodes.size()) - 1;
  }
  constexpr int var_id(std::string_view name) {
    for (std::size_t i = 0; i < vars.size(); ++i)
      if (vars[i] == name) return static_cast<int>(i);
    vars.push_back(name);
    return static_cast<int>(vars.size()) - 1;
  }
};

}  // namespace detail

/// Matches any value; what it matches becomes a parameter of the composite.
struct any {
  static constexpr int build(detail::pattern_builder& b) { return b.add({pattern_kind::wildcard}); }
};

/// Matches a weight (never an input); the weight is bound inside the composite.
struct constant {
  static constexpr int build(detail::pattern_builder& b) { return b.add({pattern_kind::constant}); }
};

/// Matches a model input, optionally only the one with the given name.
template <fixed_string Name = "">
struct input_p {
  static constexpr int build(detail::pattern_builder& b) {
    pattern_node n{pattern_kind::input};
    n.name = Name.view();
    return b.add(n);
  }
};

/// As the last argument of an op or tuple pattern: any number of further arguments, each a
/// parameter of the composite (`concatenate_p<etc>` matches a concatenate of any arity).
struct etc {};

namespace detail {

template <class... Ps>
constexpr bool ends_with_etc() {
  if constexpr (sizeof...(Ps) == 0) {
    return false;
  } else {
    return std::is_same_v<etc, std::tuple_element_t<sizeof...(Ps) - 1, std::tuple<Ps...>>>;
  }
}

template <class P>
constexpr int build_child(pattern_builder& b) {
  if constexpr (std::is_same_v<P, etc>) {
    return -1;
  } else {
    return P::build(b);
  }
}

// The children in an array, not a vector: a pattern table is built in one constant
// evaluation, whose step count Clang bounds (2^20 by default), and a vector per node cost
// about a quarter of cpu_patterns' steps.
template <pattern_kind K, op_id Op, class... Ps>
constexpr int build_call(pattern_builder& b) {
  const std::array<int, sizeof...(Ps) + 1> kids{build_child<Ps>(b)..., -1};
  pattern_node n{K, Op};
  n.any_arity = ends_with_etc<Ps...>();
  n.first = static_cast<int>(b.children.size());
  n.count = static_cast<int>(sizeof...(Ps)) - (n.any_arity ? 1 : 0);
  for (int k = 0; k < n.count; ++k) b.children.push_back(kids[static_cast<std::size_t>(k)]);
  b.nodes.push_back(n);
  return static_cast<int>(b.nodes.size()) - 1;
}

}  // namespace detail

/// Matches a node of op `Op` whose arguments match `Args...` positionally (`add` and `multiply`
/// also in swapped order). A trailing `etc` accepts any further arguments.
template <op_id Op, class... Args>
struct op_p {
  static constexpr int build(detail::pattern_builder& b) { return detail::build_call<pattern_kind::op, Op, Args...>(b); }
};

template <class X, class W> using dense_p = op_p<op_id::dense, X, W>;
template <class X, class W> using conv2d_p = op_p<op_id::conv2d, X, W>;
template <class X, class W> using conv1d_p = op_p<op_id::conv1d, X, W>;
template <class X, class W> using conv_transpose2d_p = op_p<op_id::conv_transpose2d, X, W>;
template <class X, class B> using bias_add_p = op_p<op_id::bias_add, X, B>;
template <class A, class B> using add_p = op_p<op_id::add, A, B>;
template <class A, class B> using subtract_p = op_p<op_id::subtract, A, B>;
template <class A, class B> using multiply_p = op_p<op_id::multiply, A, B>;
template <class X> using relu_p = op_p<op_id::relu, X>;
template <class X> using clip_p = op_p<op_id::clip, X>;
template <class X> using sigmoid_p = op_p<op_id::sigmoid, X>;
template <class X> using tanh_p = op_p<op_id::tanh, X>;
template <class X> using max_pool2d_p = op_p<op_id::max_pool2d, X>;
template <class X> using avg_pool2d_p = op_p<op_id::avg_pool2d, X>;
template <class X> using global_avg_pool2d_p = op_p<op_id::global_avg_pool2d, X>;
template <class X, class G, class B, class M, class V> using batch_norm_p = op_p<op_id::batch_norm, X, G, B, M, V>;
template <class X> using flatten_p = op_p<op_id::flatten, X>;
template <class X> using reshape_p = op_p<op_id::reshape, X>;
template <class... Xs> using concatenate_p = op_p<op_id::concatenate, Xs...>;
template <class X> using softmax_p = op_p<op_id::softmax, X>;
template <class A, class B> using matmul_p = op_p<op_id::matmul, A, B>;
template <class X> using transpose_p = op_p<op_id::transpose, X>;
template <class X> using slice_p = op_p<op_id::slice, X>;
template <class X> using pad_p = op_p<op_id::pad, X>;
template <class X> using resize_p = op_p<op_id::resize, X>;
template <class T, class I> using gather_p = op_p<op_id::gather, T, I>;
template <class X, class G, class B> using layer_norm_p = op_p<op_id::layer_norm, X, G, B>;
template <class X, class G> using rms_norm_p = op_p<op_id::rms_norm, X, G>;
template <class A, class B> using divide_p = op_p<op_id::divide, A, B>;
template <class A, class B> using maximum_p = op_p<op_id::maximum, A, B>;
template <class A, class B> using minimum_p = op_p<op_id::minimum, A, B>;
template <class X, class S> using prelu_p = op_p<op_id::prelu, X, S>;
template <class X> using power_p = op_p<op_id::power, X>;
template <class X> using sqrt_p = op_p<op_id::sqrt, X>;
template <class X> using rsqrt_p = op_p<op_id::rsqrt, X>;
template <class X> using exp_p = op_p<op_id::exp, X>;
template <class X> using log_p = op_p<op_id::log, X>;
template <class X> using erf_p = op_p<op_id::erf, X>;
template <class X> using gelu_p = op_p<op_id::gelu, X>;
template <class X> using gelu_tanh_p = op_p<op_id::gelu_tanh, X>;
template <class X> using silu_p = op_p<op_id::silu, X>;
template <class X> using hardswish_p = op_p<op_id::hardswish, X>;
template <class X> using hardsigmoid_p = op_p<op_id::hardsigmoid, X>;
template <class X> using leaky_relu_p = op_p<op_id::leaky_relu, X>;
template <class X> using abs_p = op_p<op_id::abs, X>;
template <class X> using neg_p = op_p<op_id::neg, X>;
template <class X> using reduce_mean_p = op_p<op_id::reduce_mean, X>;
template <class X> using reduce_sum_p = op_p<op_id::reduce_sum, X>;
template <class X> using reduce_max_p = op_p<op_id::reduce_max, X>;

/// Matches any elementwise op (the unary functions and activations, bias_add and the broadcasting
/// binary ops add, subtract, multiply, divide, maximum, minimum, prelu);
/// its arguments are parameters. Mostly useful as the path of a `dominates` pattern.
struct elementwise {
  static constexpr int build(detail::pattern_builder& b) { return b.add({pattern_kind::elementwise}); }
};

/// Matches a tuple whose fields match `Fields...` (a trailing `etc` accepts more fields).
template <class... Fields>
struct tuple_p {
  static constexpr int build(detail::pattern_builder& b) {
    return detail::build_call<pattern_kind::tuple, op_id::tuple, Fields...>(b);
  }
};

/// Matches field `I` of a tuple matching `P`; `I = -1` matches any field.
template <class P, int I = -1>
struct get_p {
  static constexpr int build(detail::pattern_builder& b) {
    const int c = P::build(b);
    pattern_node n{pattern_kind::get};
    n.index = I;
    return b.add(n, {c});
  }
};

/// Alternation: `P` is tried first, `Q` only if `P` fails.
template <class P, class Q>
struct alt {
  static constexpr int build(detail::pattern_builder& b) {
    const int l = P::build(b);
    const int r = Q::build(b);
    return b.add({pattern_kind::alt}, {l, r});
  }
};

/// A pattern variable: the first occurrence matches `P` and binds the node; every other
/// occurrence of the same name must be that very node (`(x + y) * (x - y)`).
template <fixed_string Name, class P = any>
struct var {
  static constexpr int build(detail::pattern_builder& b) {
    const int c = P::build(b);
    pattern_node n{pattern_kind::var};
    n.name = Name.view();
    n.index = b.var_id(Name.view());
    return b.add(n, {c});
  }
};

/// Placeholder for the optional part's argument in `maybe`.
struct self {};

namespace detail {
template <class T, class P>
struct substitute {
  using type = T;
};
template <class P>
struct substitute<self, P> {
  using type = P;
};
template <template <class...> class Tpl, class... Ts, class P>
struct substitute<Tpl<Ts...>, P> {
  using type = Tpl<typename substitute<Ts, P>::type...>;
};
template <op_id Op, class... Ts, class P>
struct substitute<op_p<Op, Ts...>, P> {
  using type = op_p<Op, typename substitute<Ts, P>::type...>;
};
}  // namespace detail

/// `P`, optionally wrapped by `Outer` (in which `self` stands for `P`): Relay's `p.optional(f)`,
/// i.e. `alt<P, Outer[self := P]>`. `maybe<bias_add_p<conv2d_p<any, constant>, constant>, relu_p<self>>`.
/// Maximality comes from visiting roots from the outputs: relu(bias_add(conv)) is found first.
template <class P, class Outer>
using maybe = alt<P, typename detail::substitute<Outer, P>::type>;

/// Matches what `P` matches if its dtype is `D`.
template <class P, dtype D>
struct has_dtype {
  static constexpr int build(detail::pattern_builder& b) {
    const int c = P::build(b);
    pattern_node n{pattern_kind::has_dtype};
    n.type = D;
    return b.add(n, {c});
  }
};

/// Matches what `P` matches if its shape is exactly `Dims...`.
template <class P, std::int64_t... Dims>
struct has_shape {
  static constexpr int build(detail::pattern_builder& b) {
    const int c = P::build(b);
    pattern_node n{pattern_kind::has_shape};
    n.shp = shape_of<Dims...>;
    return b.add(n, {c});
  }
};

/// Matches what `P` matches if attribute `Member` equals `Value`:
/// `has_attr<conv2d_p<any, constant>, &attrs::groups, 1>`.
template <class P, auto Member, auto Value>
struct has_attr {
  static constexpr bool check(const attrs& a) { return a.*Member == Value; }
  static constexpr int build(detail::pattern_builder& b) {
    const int c = P::build(b);
    pattern_node n{pattern_kind::has_attr};
    n.attr_check = &check;
    return b.add(n, {c});
  }
};

/// Dominator pattern (Relay's `dominates(parent, path, child)`): `Child` matches at the root,
/// and every argument of the root and of each node on the way is the one node matching
/// `Parent` or a node matching `Path` whose arguments obey the same rule; weights and inputs
/// beside them are side inputs, but a path ending at an input fails. Nothing on the way may be
/// used outside the match.
/// `dominates<conv2d_p<any, constant>, elementwise, relu_p<any>>`.
template <class Parent, class Path, class Child>
struct dominates {
  static constexpr int build(detail::pattern_builder& b) {
    const int p = Parent::build(b);
    const int q = Path::build(b);
    const int c = Child::build(b);
    return b.add({pattern_kind::dominates}, {p, q, c});
  }
};

namespace detail {
template <class T, int I, class P>
struct substitute<get_p<T, I>, P> {
  using type = get_p<typename substitute<T, P>::type, I>;
};
template <fixed_string N, class T, class P>
struct substitute<var<N, T>, P> {
  using type = var<N, typename substitute<T, P>::type>;
};
template <class T, dtype D, class P>
struct substitute<has_dtype<T, D>, P> {
  using type = has_dtype<typename substitute<T, P>::type, D>;
};
template <class T, std::int64_t... Dims, class P>
struct substitute<has_shape<T, Dims...>, P> {
  using type = has_shape<typename substitute<T, P>::type, Dims...>;
};
template <class T, auto M, auto V, class P>
struct substitute<has_attr<T, M, V>, P> {
  using type = has_attr<typename substitute<T, P>::type, M, V>;
};
}  // namespace detail

}  // namespace partita
