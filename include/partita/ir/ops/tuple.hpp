#pragma once
/// Tuples: several values as one node, and projections of them.
#include "partita/ir/ops/fields.hpp"
#include "partita/ir/ops/rules.hpp"

namespace partita {
namespace detail {

/// The tuple node a tuple-valued node stands for: itself, or for `get<T, I>` of a nested tuple,
/// the tuple in field I of T.
constexpr const node_desc* tuple_of(const node_desc* t) {
  if (t->op != op_id::get) return t;
  return tuple_of(t->args[0])->args[t->at.axis];
}

}  // namespace detail

namespace rules {

constexpr inference make_tuple(const attrs&, const arg_info*, int) { return inference{{}, dtype::f32, true, {}}; }

}  // namespace rules

/// A tuple of values: several results travelling together (e.g. a multi-output partition).
template <class... Xs>
struct tuple : detail::op_node<op_id::tuple, attrs{}, &rules::make_tuple, Xs...> {
  static_assert(well_formed<tuple, Xs...>);
};

namespace detail {
/// The fields of tuple-valued op node `t` (`is_tuple_op`), from its arguments.
constexpr op_fields fields_of(const node_desc& t) {
  const auto infos = rules::arg_infos(t.nargs, [&](int k) { return info_of(*t.args[k]); });
  return rules::fields_of(t.op, t.at, infos.data(), t.nargs);
}
}  // namespace detail

/// Field `I` of tuple `T`: of a `tuple`, its argument I; of a tuple-valued op (`topk`, the
/// recurrent layers), its output I.
template <class T, int I>
struct get {
 private:
  static constexpr const node_desc* arg_descs[] = {&detail::desc_of<T>()};
  static constexpr inference rule() {
    const node_desc& t = detail::desc_of<T>();
    if (t.nargs < 0) return {};
    if (!t.is_tuple) return rules::fail(problem::not_a_tuple, t.out, shape{});
    if (is_tuple_op(t.op)) {
      const op_fields f = detail::fields_of(t);
      if (I < 0 || I >= f.count) return rules::fail(problem::tuple_index, rules::dims1(I), rules::dims1(f.count));
      return inference{f.at[static_cast<std::size_t>(I)].out, f.at[static_cast<std::size_t>(I)].type, false, {}};
    }
    const node_desc& tup = *detail::tuple_of(&t);
    if (I < 0 || I >= tup.nargs) return rules::fail(problem::tuple_index, rules::dims1(I), rules::dims1(tup.nargs));
    const node_desc& f = *tup.args[I];
    return inference{f.out, f.type, f.is_tuple, {}};
  }

 public:
  static constexpr inference result = rule();
  static constexpr node_desc desc = [] {
    node_desc d{op_id::get, result.type, result.out, detail::axis_attrs(I), {}, arg_descs, 1, 0, result.is_tuple};
    d.hash = detail::structural_hash(d);
    return d;
  }();
  static_assert(well_formed<get, T>);
};

}  // namespace partita
