#pragma once
// The definition of `group_oracle` (laws/oracle.hpp), for the translation units of
// `partita_law_oracles` alone: every other one sees its declaration and links the oracles.
#include "oracle.hpp"

namespace laws {

namespace detail {
template <partita::fixed_string About, class... Nets>
oracle pick_oracle(const model_group<About, Nets...>*, int index, unsigned seed) {
  oracle o;
  int i = 0;
  static_cast<void>(((i++ == index ? (o = make_oracle<Nets>(seed), true) : false) || ...));
  return o;
}
}  // namespace detail

template <class Group>
oracle group_oracle(int index, unsigned seed) {
  static_assert(shared_group<Group>, "only the shared list's groups have their oracles compiled once");
  return detail::pick_oracle(static_cast<const Group*>(nullptr), index, seed);
}

}  // namespace laws

/// The explicit instantiation of `laws::group_oracle` for group `laws::nets::Group`.
#define PARTITA_LAW_ORACLES(Group) template laws::oracle laws::group_oracle<laws::nets::Group>(int, unsigned);
