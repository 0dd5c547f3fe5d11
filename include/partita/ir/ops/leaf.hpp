#pragma once
/// Leaf ops: model inputs, named weights and literals.
#include <bit>
#include <cstddef>
#include <cstdint>

#include "partita/core/fixed_string.hpp"
#include "partita/ir/node.hpp"

namespace partita {
namespace detail {

template <op_id Op, fixed_string Name, dtype D, std::int64_t... Dims>
struct leaf_node {
  static_assert(sizeof...(Dims) <= max_rank, "partita: too many dimensions for an input or weight (at most 6)");
  static_assert(((Dims > 0) && ...), "partita: every dimension of an input or weight must be positive");
  static_assert(Name.size() > 0, "partita: an input or weight needs a non-empty name");
  static_assert(checked<leaf_node, size_verdict(shape_of<Dims...>)>);
  static constexpr node_desc desc = [] {
    // Too large to count: reported above; an empty shape keeps the plan from overflowing after.
    constexpr shape s = shape_of<Dims...>.countable() ? shape_of<Dims...> : shape{};
    node_desc d{Op, D, s, attrs{}, Name.view(), nullptr, 0, 0, false};
    d.hash = structural_hash(d);
    return d;
  }();
};

}  // namespace detail

/// A model input, fed at `run` time: `input<"x", f32, 1, 784>`.
template <fixed_string Name, dtype D, std::int64_t... Dims>
struct input : detail::leaf_node<op_id::input, Name, D, Dims...> {};

/// A named weight, bound once with `bind`: `weight<"fc1.weight", f32, 512, 784>`.
template <fixed_string Name, dtype D, std::int64_t... Dims>
struct weight : detail::leaf_node<op_id::weight, Name, D, Dims...> {};

namespace detail {

/// A literal's name: "literal." and 16 hex digits hashing its dtype, shape and value bits, so
/// that equal literals are one weight slot and different ones never collide by name.
template <shape S, dtype D, float... V>
constexpr fixed_string<25> literal_name() {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < S.rank; ++i) h = hash_mix(h, static_cast<std::uint64_t>(S[i]));
  h = hash_mix(h, static_cast<std::uint64_t>(S.rank));
  // f32 literals keep the names they had before literals had other dtypes.
  if (D != dtype::f32) h = hash_mix(h, 0x100u + static_cast<std::uint64_t>(D));
  ((h = hash_mix(h, std::bit_cast<std::uint32_t>(V))), ...);
  fixed_string<25> r{};
  const char lead[] = "literal.";
  for (int i = 0; i < 8; ++i) r.chars[i] = lead[i];
  for (int i = 0; i < 16; ++i) r.chars[8 + i] = "0123456789abcdef"[(h >> (60 - 4 * i)) & 15];
  return r;
}

/// The C++ element type of a literal of dtype `D`.
template <dtype D>
struct literal_element {
  static_assert(D == dtype::f32 || D == dtype::u8 || D == dtype::i8 || D == dtype::i32 || D == dtype::boolean,
                "partita: a literal's dtype is f32, u8, i8, i32 or boolean");
  using type = element_of<D>;
};

/// `S`'s elements `V...` of dtype `D` (integers given as floats, each exact: checked by the
/// literal types that take integers).
template <shape S, dtype D, float... V>
struct literal_node {
  static_assert(S.rank <= max_rank, "partita: too many dimensions for a literal (at most 6)");
  static_assert(sizeof...(V) == static_cast<std::size_t>(S.elements()),
                "partita: literal<Dims, Values...> needs exactly one value per element of Dims");
  using element = typename literal_element<D>::type;
  static constexpr element values[] = {static_cast<element>(V)...};
  static constexpr fixed_string<25> name = literal_name<S, D, V...>();
  static constexpr node_desc desc = [] {
    attrs a{};
    a.data.values = values;
    node_desc d{op_id::weight, D, S, a, name.view(), nullptr, 0, 0, false};
    d.hash = structural_hash(d);
    return d;
  }();
};

template <class Dims, float... V>
struct literal_of;
template <std::int64_t... D, float... V>
struct literal_of<dims<D...>, V...> : literal_node<shape_of<D...>, dtype::f32, V...> {
  static_assert(((D > 0) && ...), "partita: every dimension of a literal must be positive");
};

}  // namespace detail

/// A small f32 tensor written in the model type and compiled into the binary: a weight that
/// `bind` takes from the program instead of the weight source (which need not have it), so a
/// model whose only weights are literals needs no `bind`. `literal<dims<2>, 3.f, 6.f>`.
template <class Dims, float... Values>
struct literal : detail::literal_of<Dims, Values...> {};

/// A rank-0 f32 literal, broadcast by the elementwise ops: `multiply<x, scalar<0.125f>>`.
template <float Value>
struct scalar : detail::literal_node<shape{}, dtype::f32, Value> {};

/// A rank-0 integer literal of dtype `D` (u8, i8 or i32): a quantized tensor's zero point
/// written in the model type, `int_scalar<u8, 128>` (docs/quantization.md).
template <dtype D, std::int64_t Value>
struct int_scalar : detail::literal_node<shape{}, D, static_cast<float>(Value)> {
  static_assert(D == dtype::u8 || D == dtype::i8 || D == dtype::i32, "partita: int_scalar<D, Value>: D is u8, i8 or i32");
  static_assert(Value >= lowest_of(D) && Value <= highest_of(D),
                "partita: int_scalar<D, Value>: Value is out of the range of D");
  static_assert(Value >= -(std::int64_t{1} << 24) && Value <= (std::int64_t{1} << 24),
                "partita: int_scalar<D, Value>: |Value| is at most 2^24");
};

}  // namespace partita
