// Tuple-valued ops: one node, one kernel, several tensors (`topk`'s values and indices), read
// with `get`; their fields in the printer and the plan, in composites and in partitions.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <partita/partita.hpp>

using namespace partita;

namespace {
using x25 = input<"x", f32, 2, 5>;
using top3 = topk<x25, 3>;

static_assert(top3::desc.is_tuple && is_tuple_op(op_id::topk));
static_assert(get<top3, 0>::desc.out == shape{2, {2, 3}} && get<top3, 0>::desc.type == dtype::f32);
static_assert(get<top3, 1>::desc.out == shape{2, {2, 3}} && get<top3, 1>::desc.type == dtype::i64);
static_assert(get<topk<x25, 1, 0, false>, 1>::desc.out == shape{2, {1, 5}});

// Runs `Net` (two outputs: values and indices) on `Backend`.
template <class Net, class Backend, class V = float>
std::pair<std::vector<V>, std::vector<std::int64_t>> run_top(const std::vector<V>& x) {
  compiled<Net, Backend> exe;
  std::vector<V> v(static_cast<std::size_t>(decltype(exe)::output(0).shp.elements()));
  std::vector<std::int64_t> i(v.size());
  exe.run(x, v, i);
  return {v, i};
}

template <class Net, class V = float>
std::pair<std::vector<V>, std::vector<std::int64_t>> both(const std::vector<V>& x) {
  const auto r = run_top<Net, reference, V>(x);
  const auto c = run_top<Net, cpu, V>(x);
  CHECK(r.second == c.second);
  for (std::size_t k = 0; k < r.first.size(); ++k) CHECK((r.first[k] == c.first[k] || (r.first[k] != r.first[k] && c.first[k] != c.first[k])));
  return r;
}

template <class T>
using both_fields = model<get<T, 0>, get<T, 1>>;

const float qnan = std::numeric_limits<float>::quiet_NaN();
}  // namespace

TEST_CASE("topk: the largest or smallest, sorted, ties by index, NaN above every number") {
  const std::vector<float> x{3, 1, 4, 1, 5, 9, 2, 6, 5, 3};
  auto [v, i] = both<both_fields<top3>>(x);
  CHECK(v == std::vector<float>{5, 4, 3, 9, 6, 5});
  CHECK(i == std::vector<std::int64_t>{4, 2, 0, 0, 2, 3});
  // The smallest, along axis 0: one of each column.
  auto [s, si] = both<both_fields<topk<x25, 1, 0, false>>>(x);
  CHECK(s == std::vector<float>{3, 1, 4, 1, 3});
  CHECK(si == std::vector<std::int64_t>{0, 0, 0, 0, 1});
  // Equal values: the lower index first; NaN counts as the largest.
  const std::vector<float> ties{1, 7, 7, qnan, 0, 2, 2, 2, 2, 2};
  auto [t, ti] = both<both_fields<top3>>(ties);
  CHECK(std::isnan(t[0]));
  CHECK(ti == std::vector<std::int64_t>{3, 1, 2, 0, 1, 2});
  auto [low, li] = both<both_fields<topk<x25, 2, -1, false>>>(ties);
  CHECK(low == std::vector<float>{0, 1, 2, 2});
  CHECK(li == std::vector<std::int64_t>{4, 0, 0, 1});
}

TEST_CASE("topk of integers keeps their dtype") {
  using ids = input<"ids", i32, 6>;
  const std::vector<std::int32_t> x{-4, 12, 7, 12, 0, -9};
  auto [v, i] = both<both_fields<topk<ids, 4>>, std::int32_t>(x);
  CHECK(v == std::vector<std::int32_t>{12, 12, 7, 0});
  CHECK(i == std::vector<std::int64_t>{1, 3, 2, 4});
}

TEST_CASE("one step writes both fields, back to back in one buffer; the fields are read in place") {
  using net = model<relu<get<top3, 0>>, get<top3, 1>>;
  using exe_t = compiled<net, cpu>;
  static_assert(exe_t::plan.steps.size() == 2);  // topk, relu: no step per field
  CHECK(print(module_of<net>{}).find("topk(%x, k=3, axis=-1, largest) : (f32[2, 3], i64[2, 3])") != std::string::npos);
  const std::string plan = print(exe_t::plan);
  CHECK(plan.find("topk(in0) -> arena+0 : tuple") != std::string::npos);
  CHECK(plan.find("relu(arena+0)") != std::string::npos);  // field 0 at the buffer's start
  CHECK(plan.find("copy arena+64 -> out1 (48 bytes)") != std::string::npos);  // field 1 aligned after it
  exe_t exe;
  std::vector<float> y(6);
  std::vector<std::int64_t> i(6);
  exe.run(std::vector<float>{-3, -1, -4, -1, -5, 9, 2, 6, 5, 3}, y, i);
  CHECK(y == std::vector<float>{0, 0, 0, 9, 6, 5});
  CHECK(i == std::vector<std::int64_t>{1, 3, 0, 0, 2, 3});
}

namespace {
// A backend that takes topk and relu: the partition holding topk returns its tuple whole, and
// the host projects its fields.
struct sorter {
  static constexpr fixed_string name = "sorter";
  struct state {};
  static constexpr bool supports(const op_view& v) { return v.is(op_id::topk) || v.is(op_id::relu); }
  template <class Step>
  struct kernel {
    static void run(state&, const float* const* in, float* out) {
      reference::state none;
      reference::kernel<Step>::run(none, in, out);
    }
  };
};

using scored = input<"s", f32, 3, 8>;
using best = topk<relu<scored>, 2>;
using ranked = model<exp_<get<best, 0>>, get<best, 1>>;
}  // namespace

TEST_CASE("a partition returning a tuple-valued op's value whole, and a composite holding one") {
  using parts = partition<ranked, sorter, cpu>;
  const std::string text = print(parts{});
  CHECK(text.find("-> (f32[3, 2], i64[3, 2])") != std::string::npos);  // the partition's result: topk's tuple
  const std::vector<float> x{1, -2, 3, 8, 0, 5, 5, -1, 0, 0, 0, 0, 0, 0, 0, 1, -7, 6, 2, 9, 4, 4, 1, 0};
  auto run_on = [&]<class E>(E& exe) {
    std::vector<float> v(6);
    std::vector<std::int64_t> i(6);
    exe.run(x, v, i);
    return std::make_pair(v, i);
  };
  compiled<ranked, reference> ref;
  compiled<parts, sorter, cpu> split_exe;
  const auto want = run_on(ref);
  CHECK(run_on(split_exe) == want);
  CHECK(want.second == std::vector<std::int64_t>{3, 5, 7, 0, 3, 1});

  // A composite whose body projects field 0 of a topk, as TVM's patterns project a tuple-valued
  // batch_norm with TupleGetItem: the tuple stays inside, the composite returns one tensor.
  using table = pattern_table<composite<"t.top_exp", exp_p<get_p<op_p<op_id::topk, any>, 0>>>>;
  using fused = merge_composite<module_of<model<exp_<get<best, 0>>>>, table>;
  const std::string f = print(fused{});
  CHECK(f.find("attrs {composite=\"t.top_exp\"}") != std::string::npos);
  CHECK(f.find("topk(%p0, k=2, axis=-1, largest) : (f32[3, 2], i64[3, 2])") != std::string::npos);
  compiled<fused, cpu> exe;
  std::vector<float> v(6);
  exe.run(x, v);
  CHECK(v == run_on(ref).first);
}
