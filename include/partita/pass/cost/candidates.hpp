#pragma once
/// The candidate list of a cost-based search, generated chunk by chunk in bounded constant evaluations.
#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "partita/ir/module_builder.hpp"
#include "partita/pass/cost/detail/candidate_table.hpp"
#include "partita/pass/cost/planner.hpp"

namespace partita::detail {

/// Main's nodes per constant evaluation of candidates: GCC bounds the work of each one.
inline constexpr int candidate_chunk = 256;

/// Backend `I`'s candidates rooted in chunk `Chunk` of main's nodes, in a constant evaluation of
/// their own (twice: sizes, then contents).
template <class Pre, class Config, std::size_t I, std::size_t Chunk, class... Bs>
struct chunk_candidates {
  static constexpr std::vector<cost_candidate> make() {
    const module_builder m = to_builder(Pre::value);
    const cost_graph g(m);
    const int lo = static_cast<int>(Chunk) * candidate_chunk;
    const int hi = lo + candidate_chunk < g.n ? lo + candidate_chunk : g.n;
    return cost_planner<Config, Bs...>::template candidates_of<I>(g, lo, hi);
  }
  static constexpr candidate_sizes sizes = sizes_of(make());
  static constexpr candidate_table<sizes> value = pack<sizes>(make());
};

template <class Pre, class Config, std::size_t I, class Chunks, class... Bs>
struct base_candidates;
template <class Pre, class Config, std::size_t I, std::size_t... C, class... Bs>
struct base_candidates<Pre, Config, I, std::index_sequence<C...>, Bs...> {
  using type = table_list<chunk_candidates<Pre, Config, I, C, Bs...>...>;
};

/// The unions of backend `I`'s candidates `Base` (a `table_list`), in a constant evaluation of
/// their own.
template <class Pre, class Config, std::size_t I, class Base, class... Bs>
struct union_candidates {
  static constexpr std::vector<cost_candidate> make() {
    const module_builder m = to_builder(Pre::value);
    const cost_graph g(m);
    std::vector<cost_candidate> all = cost_planner<Config, Bs...>::template unions_of<I>(g, Base::unpacked());
    all.erase(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(Base::size));
    return all;
  }
  static constexpr candidate_sizes sizes = sizes_of(make());
  static constexpr candidate_table<sizes> value = pack<sizes>(make());
};

/// Backend `I`'s candidates: its single ops and pattern matches chunk by chunk, then its unions.
template <class Pre, class Config, std::size_t I, class... Bs>
struct backend_candidates {
  static constexpr std::size_t chunks =
      (static_cast<std::size_t>(Pre::value.main().num_nodes) + candidate_chunk - 1) / static_cast<std::size_t>(candidate_chunk);
  using base = typename base_candidates<Pre, Config, I, std::make_index_sequence<chunks>, Bs...>::type;
  using type = std::conditional_t<cost_planner<Config, Bs...>::template makes_unions<I>,
                                  typename concat_tables<base, table_list<union_candidates<Pre, Config, I, base, Bs...>>>::type, base>;
};

/// Every backend's candidates, in backend order: `list[i]` is candidate `i`.
template <class Pre, class Config, class... Bs>
struct candidate_list {
  template <std::size_t... I>
  static constexpr auto join(std::index_sequence<I...>) -> typename concat_tables<typename backend_candidates<Pre, Config, I, Bs...>::type...>::type;
  using tables = decltype(join(std::index_sequence_for<Bs...>{}));
  static constexpr std::size_t size = tables::size;
  static constexpr std::array<search_candidate, size> list = [] {
    std::vector<search_candidate> v;
    v.reserve(size);
    tables::refs(v);
    std::array<search_candidate, size> a{};
    for (std::size_t i = 0; i < size; ++i) a[i] = v[i];
    return a;
  }();
};

template <class Pre, class Config, class... Bs>
struct cost_choice {
  using candidates = candidate_list<Pre, Config, Bs...>;
  static constexpr std::size_t n = static_cast<std::size_t>(Pre::value.main().num_nodes);
  static constexpr cost_choice_value<n> value = cost_planner<Config, Bs...>::template run<n>(
      to_builder(Pre::value), std::vector<search_candidate>(candidates::list.begin(), candidates::list.end()));
};

}  // namespace partita::detail
