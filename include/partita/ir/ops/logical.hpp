#pragma once
/// Booleans: comparisons, logical ops, `where`, `cast` between dtypes, and triangular masks.
#include "partita/ir/ops/rules.hpp"

namespace partita {
namespace rules {

/// Whether arithmetic kernels read dtype `t`: f32 and the integer dtypes (not f16, not boolean).
constexpr bool comparable(dtype t) { return t != dtype::f16 && t != dtype::boolean; }

/// equal, less, ...: two tensors of one comparable dtype, broadcast; the result is boolean.
constexpr inference comparison(const attrs&, const arg_info* a, int n) {
  if (auto v = tuple_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  if (a[0].type != a[1].type || !comparable(a[0].type)) {
    inference r = fail(problem::comparison_dtype, a[0].shp, a[1].shp);
    r.v.lhs_type = a[0].type;
    r.v.rhs_type = a[1].type;
    return r;
  }
  inference r = broadcast(a[0], a[1]);
  if (r.v.what == problem::none) r.type = dtype::boolean;
  return r;
}

/// logical_not of one boolean tensor; logical_and, _or, _xor of two, broadcast.
constexpr inference logical(const attrs&, const arg_info* a, int n) {
  if (auto v = tuple_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  for (int i = 0; i < n; ++i)
    if (a[i].type != dtype::boolean) {
      inference r = fail(problem::logical_dtype, a[0].shp, a[n - 1].shp);
      r.v.lhs_type = a[0].type;
      r.v.rhs_type = a[n - 1].type;
      return r;
    }
  return n == 1 ? ok(a[0].shp, dtype::boolean) : broadcast(a[0], a[1]);
}

/// where: a boolean condition and two values of one dtype, all three broadcast together.
constexpr inference where(const attrs&, const arg_info* a, int n) {
  if (auto v = tuple_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  if (a[0].type != dtype::boolean) {
    inference r = fail(problem::where_condition, a[0].shp, a[1].shp);
    r.v.lhs_type = a[0].type;
    r.v.rhs_type = a[1].type;
    return r;
  }
  if (a[1].type != a[2].type) return {{}, {}, false, verdict{problem::dtype_mismatch, a[1].shp, a[2].shp, a[1].type, a[2].type}};
  const inference values = broadcast(a[1], a[2]);
  if (values.v.what != problem::none) return values;
  inference r = broadcast(a[0], arg_info{values.out, a[1].type, false, true});
  if (r.v.what != problem::none) return r;
  r.type = a[1].type;
  return r;
}

/// cast to `D`: from f32, an integer dtype or boolean; the shape is kept.
template <dtype D>
constexpr inference cast_to(const attrs&, const arg_info* a, int n) {
  if (auto v = tuple_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  if (a[0].type == dtype::f16) {
    inference r = fail(problem::cast_dtype, a[0].shp, shape{});
    r.v.lhs_type = a[0].type;
    r.v.rhs_type = D;
    return r;
  }
  return ok(a[0].shp, D);
}

/// trilu: the elements of X on one side of a diagonal of its last two axes; X of rank 2 or more.
constexpr inference trilu(const attrs&, const arg_info* a, int n) {
  if (auto v = tensor_args(a, n); v.what != problem::none) return {{}, {}, false, v};
  if (a[0].shp.rank < 2) return fail(problem::trilu_rank, a[0].shp, dims1(2));
  return ok(a[0].shp, a[0].type);
}

}  // namespace rules

/// `a == b` elementwise with numpy broadcasting: a boolean tensor. The arguments have one dtype,
/// f32 or an integer one (f32 compares as IEEE: NaN equals nothing).
template <class A, class B>
struct equal : detail::op_node<op_id::equal, attrs{}, &rules::comparison, A, B> {
  static_assert(well_formed<equal, A, B>);
};

/// `a < b` elementwise with numpy broadcasting: a boolean tensor.
template <class A, class B>
struct less : detail::op_node<op_id::less, attrs{}, &rules::comparison, A, B> {
  static_assert(well_formed<less, A, B>);
};

/// `a <= b` elementwise with numpy broadcasting: a boolean tensor.
template <class A, class B>
struct less_equal : detail::op_node<op_id::less_equal, attrs{}, &rules::comparison, A, B> {
  static_assert(well_formed<less_equal, A, B>);
};

/// `a > b` elementwise with numpy broadcasting: a boolean tensor.
template <class A, class B>
struct greater : detail::op_node<op_id::greater, attrs{}, &rules::comparison, A, B> {
  static_assert(well_formed<greater, A, B>);
};

/// `a >= b` elementwise with numpy broadcasting: a boolean tensor.
template <class A, class B>
struct greater_equal : detail::op_node<op_id::greater_equal, attrs{}, &rules::comparison, A, B> {
  static_assert(well_formed<greater_equal, A, B>);
};

/// `!x` of a boolean tensor (`not` is a C++ keyword, hence the prefix of all four).
template <class X>
struct logical_not : detail::op_node<op_id::logical_not, attrs{}, &rules::logical, X> {
  static_assert(well_formed<logical_not, X>);
};

/// `a && b` of boolean tensors, with numpy broadcasting.
template <class A, class B>
struct logical_and : detail::op_node<op_id::logical_and, attrs{}, &rules::logical, A, B> {
  static_assert(well_formed<logical_and, A, B>);
};

/// `a || b` of boolean tensors, with numpy broadcasting.
template <class A, class B>
struct logical_or : detail::op_node<op_id::logical_or, attrs{}, &rules::logical, A, B> {
  static_assert(well_formed<logical_or, A, B>);
};

/// `a != b` of boolean tensors, with numpy broadcasting.
template <class A, class B>
struct logical_xor : detail::op_node<op_id::logical_xor, attrs{}, &rules::logical, A, B> {
  static_assert(well_formed<logical_xor, A, B>);
};

/// `a` where `cond`, else `b`, elementwise, the three broadcast together (numpy's and ONNX's
/// `where`): PyTorch's `x.masked_fill(mask, v)` is `where<mask, scalar<v>, x>`. `Cond` is
/// boolean; `A` and `B` have one dtype, the result's.
template <class Cond, class A, class B>
struct where : detail::op_node<op_id::where, attrs{}, &rules::where, Cond, A, B> {
  static_assert(well_formed<where, Cond, A, B>);
};

namespace detail {
constexpr attrs trilu_attrs(bool upper, std::int64_t k) {
  attrs a{};
  a.upper = upper;
  a.start = k;
  return a;
}
}  // namespace detail

/// `x` converted to dtype `D` (ONNX's Cast): to boolean, nonzero is true; from boolean, true is
/// 1; float to an integer dtype truncates toward zero and saturates to the dtype's range (NaN
/// gives 0); integers to f32 round to nearest. `D` is f32, i32, i64, i8, u8 or boolean.
template <class X, dtype D>
struct cast : detail::op_node<op_id::cast, attrs{}, &rules::cast_to<D>, X> {
  static_assert(D != dtype::f16, "partita: cast<X, D>: no kernel converts to f16");
  static_assert(well_formed<cast, X>);
};

/// `x` with the elements above diagonal `K` of its last two axes set to zero (ONNX's Trilu with
/// upper = 0, PyTorch's `tril`): element (i, j) is kept where j - i <= K. Of a boolean tensor,
/// false. A causal mask is `tril` of ones, or `less_equal` of two index ranges.
template <class X, std::int64_t K = 0>
struct tril : detail::op_node<op_id::trilu, detail::trilu_attrs(false, K), &rules::trilu, X> {
  static_assert(well_formed<tril, X>);
};

/// `x` with the elements below diagonal `K` set to zero: kept where j - i >= K (PyTorch's
/// `triu`).
template <class X, std::int64_t K = 0>
struct triu : detail::op_node<op_id::trilu, detail::trilu_attrs(true, K), &rules::trilu, X> {
  static_assert(well_formed<triu, X>);
};

}  // namespace partita
