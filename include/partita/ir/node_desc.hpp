#pragma once
/// `graph_node`, one node of a module, and `function_info`, one function.
#include <bit>
#include <cstdint>
#include <string_view>

#include "partita/core/dtype.hpp"
#include "partita/core/shape.hpp"
#include "partita/ir/attrs.hpp"
#include "partita/ir/op_id.hpp"

namespace partita {

/// The compile-time description of one node type: every node type `T` (input, weight, op) has
/// exactly one `static constexpr node_desc desc`, and its arguments point at their own
/// descriptors. Flattening a model walks these pointers, so each node type is visited once.
struct node_desc {
  op_id op = op_id::input;
  dtype type = dtype::f32;
  shape out{};                  // for a tuple: empty; its fields are the arguments
  attrs at{};
  std::string_view name{};      // inputs and weights
  const node_desc* const* args = nullptr;
  int nargs = 0;
  std::uint64_t hash = 0;       // structural, used to bucket descriptors while flattening
  bool is_tuple = false;
  std::string_view pinned{};    // backend name, for on<backend, expr>
};

namespace detail {

constexpr std::uint64_t hash_mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0x100000001b3ull;
}

/// Mixes every attribute into `h` (a literal's values are in its name already). Two nodes
/// that differ in any attribute must hash differently: descriptors compare their arguments by
/// hash, so a missed field would make `reshape<slice<x, 2, 0, 2>, ...>` and `reshape<slice<x,
/// 2, 2, 4>, ...>` one node. A field added to `attrs` is added here.
constexpr std::uint64_t mix_all_attrs(std::uint64_t h, const attrs& a) {
  const auto mix = [&h](auto v) { h = hash_mix(h, static_cast<std::uint64_t>(v)); };
  const auto mix_float = [&mix](float v) { mix(std::bit_cast<std::uint32_t>(v)); };
  for (const auto* pair : {&a.stride, &a.padding, &a.padding_end, &a.dilation, &a.window, &a.output_padding})
    for (int v : *pair) mix(static_cast<std::uint32_t>(v));
  for (int v : {a.groups, a.block, static_cast<int>(a.depth_order), a.axis, static_cast<int>(a.resize), a.axes,
                static_cast<int>(a.direction), static_cast<int>(a.activation)})
    mix(static_cast<std::uint32_t>(v));
  for (float v : {a.lo, a.hi, a.epsilon, a.alpha, a.beta, a.rnn_clip}) mix_float(v);
  for (bool v : {a.count_include_pad, a.ceil_mode, a.transpose_a, a.transpose_b, a.keepdims, a.align_corners, a.upper,
                 a.largest, a.batch_first, a.linear_before_reset, a.select_last, a.exclusive, a.reverse})
    mix(v);
  for (std::int64_t v : {a.start, a.stop, a.step}) mix(static_cast<std::uint64_t>(v));
  for (const auto* list : {&a.perm, &a.pad_before, &a.pad_after})
    for (int v : *list) mix(static_cast<std::uint32_t>(v));
  mix(static_cast<std::uint32_t>(a.target.rank));
  for (std::int64_t v : a.target.dims) mix(static_cast<std::uint64_t>(v));
  return h;
}

constexpr std::uint64_t structural_hash(const node_desc& d) {
  std::uint64_t h = hash_mix(0xcbf29ce484222325ull, static_cast<std::uint64_t>(d.op));
  for (char c : d.name) h = hash_mix(h, static_cast<unsigned char>(c));
  for (int i = 0; i < d.out.rank; ++i) h = hash_mix(h, static_cast<std::uint64_t>(d.out[i]));
  h = hash_mix(h, static_cast<std::uint64_t>(d.type));
  h = mix_all_attrs(h, d.at);
  for (int i = 0; i < d.nargs; ++i) h = hash_mix(h, d.args[i]->hash);
  for (char c : d.pinned) h = hash_mix(h, static_cast<unsigned char>(c));
  return h;
}

}  // namespace detail
}  // namespace partita
