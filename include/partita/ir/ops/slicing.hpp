#pragma once
/// Ops that select or place parts of a tensor: slice, split, pad and gather.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "partita/ir/ops/rules.hpp"
#include "partita/ir/ops/tuple.hpp"

namespace partita {

/// The elements a slice takes along one axis of extent `dim`: `count` of them, from `start`,
/// every `step`. Begin and end follow numpy and ONNX: negative values count from the back and
/// both are clamped into range (so `End` = INT64_MAX means "to the end").
struct slice_range {
  std::int64_t start = 0, count = 0, step = 1;
};

constexpr slice_range slice_bounds(std::int64_t dim, std::int64_t begin, std::int64_t end, std::int64_t step) {
  if (step == 0) return {0, 0, 0};
  auto clamp = [](std::int64_t v, std::int64_t lo, std::int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); };
  if (begin < 0) begin += dim;
  if (end < 0 && end != std::numeric_limits<std::int64_t>::min()) end += dim;
  if (step > 0) {
    begin = clamp(begin, 0, dim);
    end = clamp(end, 0, dim);
    return {begin, end > begin ? (end - begin + step - 1) / step : 0, step};
  }
  begin = clamp(begin, -1, dim - 1);
  end = clamp(end, -1, dim - 1);
  return {begin, begin > end ? (begin - end - step - 1) / -step : 0, step};
}

namespace rules {

constexpr inference slice(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  const shape& x = a[0].shp;
  const int axis = normalize_axis(at.axis, x.rank);
  const shape asked{4, {at.axis, at.start, at.stop, at.step}};
  if (axis < 0 || axis >= x.rank) return fail(problem::slice_range, x, asked);
  const slice_range r = slice_bounds(x[axis], at.start, at.stop, at.step);
  if (r.count < 1) return fail(problem::slice_range, x, asked);
  shape out = x;
  out.dims[static_cast<std::size_t>(axis)] = r.count;
  return ok(out, a[0].type);
}

constexpr inference pad(const attrs& at, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  shape out = a[0].shp;
  for (int i = 0; i < out.rank; ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (at.pad_before[u] < 0 || at.pad_after[u] < 0)
      return fail(problem::pad_amount, a[0].shp, shape{3, {i, at.pad_before[u], at.pad_after[u]}});
    out.dims[u] += at.pad_before[u] + at.pad_after[u];
  }
  return ok(out, a[0].type);
}

constexpr inference gather(const attrs& at, const arg_info* a, int n) {
  if (a[0].is_tuple || (n > 1 && a[1].is_tuple)) return fail(problem::tuple_as_tensor, a[0].shp, shape{});
  const shape& t = a[0].shp;
  const shape& idx = a[1].shp;
  const int axis = normalize_axis(at.axis, t.rank);
  if (axis < 0 || axis >= t.rank || (a[1].type != dtype::i32 && a[1].type != dtype::i64) ||
      t.rank - 1 + idx.rank > max_rank) {
    inference r = fail(problem::gather_indices, t, idx);
    r.v.rhs_type = a[1].type;
    return r;
  }
  shape out{t.rank - 1 + idx.rank, {}};
  int k = 0;
  for (int i = 0; i < axis; ++i) out.dims[static_cast<std::size_t>(k++)] = t[i];
  for (int i = 0; i < idx.rank; ++i) out.dims[static_cast<std::size_t>(k++)] = idx[i];
  for (int i = axis + 1; i < t.rank; ++i) out.dims[static_cast<std::size_t>(k++)] = t[i];
  return ok(out, a[0].type);
}

}  // namespace rules

namespace detail {
constexpr attrs slice_attrs(int axis, std::int64_t begin, std::int64_t end, std::int64_t step) {
  attrs a{};
  a.axis = axis;
  a.start = begin;
  a.stop = end;
  a.step = step;
  return a;
}

template <class Before, class After>
struct pad_attrs;
template <std::int64_t... B, std::int64_t... A>
struct pad_attrs<dims<B...>, dims<A...>> {
  static_assert(sizeof...(B) == sizeof...(A), "partita: pad<X, dims<before...>, dims<after...>>: one amount per axis in each");
  static constexpr int rank = static_cast<int>(sizeof...(B));
  static constexpr attrs value(float v) {
    attrs a{};
    const std::int64_t b[] = {B..., 0}, e[] = {A..., 0};
    for (std::size_t i = 0; i < sizeof...(B); ++i) {
      a.pad_before[i] = static_cast<int>(b[i]);
      a.pad_after[i] = static_cast<int>(e[i]);
    }
    a.alpha = v;
    return a;
  }
};
}  // namespace detail

/// Elements `Begin, Begin + Step, ...` before `End` along `Axis`, numpy-style (negative values
/// count from the back, out-of-range ones are clamped, a negative Step walks backwards):
/// `slice<x, 1, 0, 1>` is `x[:, 0:1]`. The result must not be empty.
template <class X, int Axis, std::int64_t Begin, std::int64_t End, std::int64_t Step = 1>
struct slice : detail::op_node<op_id::slice, detail::slice_attrs(Axis, Begin, End, Step), &rules::slice, X> {
  static_assert(well_formed<slice, X>);
};

namespace detail {
template <class X, int Axis, class I, std::int64_t... Sizes>
struct split_fields;
template <class X, int Axis, std::size_t... I, std::int64_t... Sizes>
struct split_fields<X, Axis, std::index_sequence<I...>, Sizes...> {
  static constexpr std::array<std::int64_t, sizeof...(Sizes)> size{Sizes...};
  static constexpr std::int64_t offset(std::size_t i) {
    std::int64_t o = 0;
    for (std::size_t j = 0; j < i; ++j) o += size[j];
    return o;
  }
  static constexpr verdict check = [] {
    const shape x = desc_of<X>().out;
    const int axis = normalize_axis(Axis, x.rank);
    bool good = axis >= 0 && axis < x.rank && offset(sizeof...(Sizes)) == x[axis];
    for (std::int64_t s : size) good = good && s > 0;
    // The report shows the sizes (the first max_rank of them: a shape holds no more).
    shape sizes{};
    for (std::size_t i = 0; i < size.size() && i < static_cast<std::size_t>(max_rank); ++i) sizes.dims[i] = size[i];
    sizes.rank = static_cast<int>(std::min<std::size_t>(size.size(), static_cast<std::size_t>(max_rank)));
    return good ? verdict{} : verdict{problem::split_sizes, x, sizes};
  }();
  // On bad sizes the fields are not formed (each is X, so that `get` of any of them is well
  // formed): the split's own report is the only error.
  template <std::size_t>
  using whole = X;
  using type = std::conditional_t<check.what == problem::none,
                                  tuple<slice<X, Axis, offset(I), offset(I) + size[I]>...>, tuple<whole<I>...>>;
};
}  // namespace detail

/// Cuts X along `Axis` into consecutive parts of the given sizes: a tuple whose fields are read
/// with `get` (`get<split<qkv, -1, 256, 256, 256>, 1>` is K). Each field is a `slice`.
template <class X, int Axis, std::int64_t... Sizes>
struct split : detail::split_fields<X, Axis, std::index_sequence_for<decltype(Sizes)...>, Sizes...>::type {
  static_assert(sizeof...(Sizes) >= 1 && sizeof...(Sizes) <= 64, "partita: split<X, Axis, Sizes...> needs 1 to 64 sizes");
  static_assert(checked<split, detail::split_fields<X, Axis, std::index_sequence_for<decltype(Sizes)...>, Sizes...>::check>);
};

/// Constant padding: `Before` and `After` list, per axis of X, how many `Value` elements go
/// before and after it: `pad<x, dims<0, 0, 1, 1>, dims<0, 0, 1, 1>>` adds a one-pixel border to
/// NCHW x (ONNX `Pad` in constant mode).
template <class X, class Before, class After, float Value = 0.f>
struct pad : detail::op_node<op_id::pad, detail::pad_attrs<Before, After>::value(Value), &rules::pad, X> {
  static_assert(!node<X> || detail::pad_attrs<Before, After>::rank == detail::desc_of<X>().out.rank,
                "partita: pad<X, Before, After>: Before and After need one amount per axis of X");
  static_assert(well_formed<pad, X>);
};

/// Entries of `Table` along `Axis` picked by the integer tensor `Indices` (i32 or i64; negative
/// values count from the back; out-of-range ones make `run` throw): the result has Table's
/// axes before Axis, then Indices' axes, then Table's after Axis (ONNX `Gather`).
template <class Table, class Indices, int Axis = 0>
struct gather : detail::op_node<op_id::gather, detail::axis_attrs(Axis), &rules::gather, Table, Indices> {
  static_assert(well_formed<gather, Table, Indices>);
};

/// An embedding lookup: rows of `Table` [vocab, d] for the token ids `Ids`, [..., d].
template <class Table, class Ids>
struct embedding : gather<Table, Ids, 0> {};

}  // namespace partita
