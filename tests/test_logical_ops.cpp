// Booleans: the shape and dtype rules of comparisons, logical ops, where, cast and tril/triu;
// their results by hand on the reference and cpu; `run` with bool buffers; bool weights.
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <partita/partita.hpp>

using namespace partita;

namespace {
using x23 = input<"x", f32, 2, 3>;
using m13 = input<"m", boolean, 1, 3>;

// The rules: comparisons make booleans of the broadcast shape; where broadcasts all three.
static_assert(less<x23, scalar<0.f>>::desc.type == dtype::boolean);
static_assert(equal<input<"a", i64, 4, 1>, input<"b", i64, 1, 5>>::desc.out == shape{2, {4, 5}});
static_assert(logical_not<m13>::desc.type == dtype::boolean);
static_assert(where<m13, x23, scalar<1.f>>::desc.out == shape{2, {2, 3}});
static_assert(where<input<"c", boolean, 3, 1, 1>, input<"a", i32, 4, 1>, input<"b", i32, 5>>::desc.out ==
              shape{3, {3, 4, 5}});
static_assert(where<input<"c", boolean, 3, 1, 1>, input<"a", i32, 4, 1>, input<"b", i32, 5>>::desc.type == dtype::i32);
static_assert(cast<x23, i8>::desc.type == dtype::i8 && cast<m13, f32>::desc.type == dtype::f32);
static_assert(tril<x23, 1>::desc.out == x23::desc.out && triu<m13>::desc.type == dtype::boolean);
static_assert(name_of(dtype::boolean) == "bool" && size_of(boolean) == 1);

template <class Net, class Backend, class... In>
auto run_on(const std::vector<std::size_t>& sizes, const weight_set* w, const In&... in) {
  compiled<Net, Backend> exe;
  if (w) exe.bind(*w);
  using out_t = element_of<decltype(exe)::output(0).type>;
  std::vector<out_t> y(sizes[0]);
  if constexpr (std::is_same_v<out_t, bool>) {
    std::unique_ptr<bool[]> buf(new bool[sizes[0]]);
    exe.run(in..., std::span<bool>(buf.get(), sizes[0]));
    for (std::size_t i = 0; i < sizes[0]; ++i) y[i] = buf[i];
  } else {
    exe.run(in..., y);
  }
  return y;
}

// Runs `Net` (one output) on the reference and on cpu, checks they agree, returns the result.
template <class Net, class... In>
auto both(std::size_t n, const weight_set* w, const In&... in) {
  const auto r = run_on<Net, reference>({n}, w, in...);
  const auto c = run_on<Net, cpu>({n}, w, in...);
  CHECK(r == c);
  return r;
}

using bools = std::vector<bool>;
const float qnan = std::numeric_limits<float>::quiet_NaN();
const float inf = std::numeric_limits<float>::infinity();
}  // namespace

TEST_CASE("comparisons: IEEE for f32 (NaN compares false), exact for integers, broadcast") {
  const std::vector<float> x{-1.f, 0.f, qnan, 2.f, inf, -0.f};
  CHECK(both<model<less<x23, scalar<0.f>>>>(6, nullptr, x) == bools{true, false, false, false, false, false});
  CHECK(both<model<greater_equal<x23, scalar<0.f>>>>(6, nullptr, x) == bools{false, true, false, true, true, true});
  CHECK(both<model<equal<x23, x23>>>(6, nullptr, x) == bools{true, true, false, true, true, true});
  const std::vector<float> row{0.f, 1.f, 2.f};
  CHECK(both<model<less_equal<input<"r", f32, 3>, x23>>>(6, nullptr, row, x) ==
        bools{false, false, false, true, true, false});
  const std::vector<std::int64_t> a{1, 5, -3}, b{5, -3, 1};
  CHECK(both<model<greater<input<"a", i64, 3>, input<"b", i64, 3>>>>(3, nullptr, a, b) == bools{false, true, false});
}

TEST_CASE("logical ops of masks, broadcast") {
  const std::array<bool, 6> m{true, false, true, false, false, true};
  const std::array<bool, 3> k{true, true, false};
  using mm = input<"m", boolean, 2, 3>;
  using kk = input<"k", boolean, 3>;
  const std::span<const bool> ms(m), ks(k);
  CHECK(both<model<logical_not<mm>>>(6, nullptr, ms) == bools{false, true, false, true, true, false});
  CHECK(both<model<logical_and<mm, kk>>>(6, nullptr, ms, ks) == bools{true, false, false, false, false, false});
  CHECK(both<model<logical_or<mm, kk>>>(6, nullptr, ms, ks) == bools{true, true, true, true, true, true});
  CHECK(both<model<logical_xor<mm, kk>>>(6, nullptr, ms, ks) == bools{false, true, true, true, true, true});
}

TEST_CASE("where: masked_fill's form, both operands, broadcast on different axes") {
  const std::vector<float> x{1, 2, 3, 4, 5, 6};
  const std::array<bool, 3> m{true, false, true};
  const std::span<const bool> ms(m);
  // x.masked_fill(m, -inf): the mask broadcast over the rows.
  using fill = where<m13, scalar<-std::numeric_limits<float>::infinity()>, x23>;
  CHECK(both<model<fill>>(6, nullptr, ms, x) == std::vector<float>{-inf, 2, -inf, -inf, 5, -inf});
  // cond [3, 1], a [1, 2], b scalar: the reference's odometer on cpu too.
  const std::array<bool, 3> c{false, true, false};
  const std::vector<float> a{7, 8};
  CHECK(both<model<where<input<"c", boolean, 3, 1>, input<"a", f32, 1, 2>, scalar<0.5f>>>>(
            6, nullptr, std::span<const bool>(c), a) == std::vector<float>{0.5f, 0.5f, 7, 8, 0.5f, 0.5f});
  // Integers select by bytes.
  const std::vector<std::int32_t> p{1, 2, 3}, q{-1, -2, -3};
  CHECK(both<model<where<input<"c", boolean, 3>, input<"p", i32, 3>, input<"q", i32, 3>>>>(
            3, nullptr, std::span<const bool>(c), p, q) == std::vector<std::int32_t>{-1, 2, -3});
}

TEST_CASE("cast: truncation and saturation from f32, wrapping between integers, booleans as 0 and 1") {
  const std::vector<float> x{-1.7f, 2.9f, 300.f, -300.f, qnan, 0.f};
  CHECK(both<model<cast<x23, i8>>>(6, nullptr, x) == std::vector<std::int8_t>{-1, 2, 127, -128, 0, 0});
  CHECK(both<model<cast<x23, u8>>>(6, nullptr, x) == std::vector<std::uint8_t>{0, 2, 255, 0, 0, 0});
  CHECK(both<model<cast<x23, boolean>>>(6, nullptr, x) == bools{true, true, true, true, true, false});
  const std::vector<std::int64_t> big{300, -129, 5};
  CHECK(both<model<cast<input<"b", i64, 3>, i8>>>(3, nullptr, big) == std::vector<std::int8_t>{44, 127, 5});
  CHECK(both<model<cast<input<"b", i64, 3>, f32>>>(3, nullptr, big) == std::vector<float>{300, -129, 5});
  const std::array<bool, 3> m{true, false, true};
  CHECK(both<model<cast<m13, f32>>>(3, nullptr, std::span<const bool>(m)) == std::vector<float>{1, 0, 1});
}

TEST_CASE("tril and triu keep one side of a diagonal of the last two axes") {
  const std::vector<float> x{1, 2, 3, 4, 5, 6};
  CHECK(both<model<tril<x23>>>(6, nullptr, x) == std::vector<float>{1, 0, 0, 4, 5, 0});
  CHECK(both<model<tril<x23, 1>>>(6, nullptr, x) == std::vector<float>{1, 2, 0, 4, 5, 6});
  CHECK(both<model<triu<x23>>>(6, nullptr, x) == std::vector<float>{1, 2, 3, 0, 5, 6});
  CHECK(both<model<triu<x23, -1>>>(6, nullptr, x) == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(both<model<triu<x23, 2>>>(6, nullptr, x) == std::vector<float>{0, 0, 3, 0, 0, 0});
  // tril and triu of one tensor and diagonal are two nodes: their attributes hash apart.
  static_assert(tril<x23>::desc.hash != triu<x23>::desc.hash);
  CHECK(both<model<add<tril<x23>, triu<x23>>>>(6, nullptr, x) == std::vector<float>{2, 2, 3, 4, 10, 6});
}

TEST_CASE("a causal mask as a bool weight, masked_fill before softmax, as GPT-2 writes it") {
  // bias = tril(ones(3, 3)).bool(); att.masked_fill(~bias, -inf).softmax(-1)
  const std::array<bool, 9> causal{true, false, false, true, true, false, true, true, true};
  weight_set w;
  w.add("causal", boolean, std::as_bytes(std::span<const bool>(causal)), {1, 3, 3});
  using scores = input<"s", f32, 2, 3, 3>;
  using net = model<softmax<where<logical_not<weight<"causal", boolean, 1, 3, 3>>, scalar<-std::numeric_limits<float>::infinity()>, scores>>>;
  const std::vector<float> s(18, 0.f);
  const auto y = both<net>(18, &w, s);
  const std::vector<float> row{1, 0, 0, 0.5f, 0.5f, 0, 1.f / 3, 1.f / 3, 1.f / 3};
  for (std::size_t i = 0; i < 18; ++i) CHECK(y[i] == doctest::Approx(row[i % 9]));
  // A bool weight of the wrong dtype in the source: bind names it, and leaves the executable as it was.
  compiled<net, cpu> exe;
  weight_set wrong;
  const std::vector<float> f(9, 1.f);
  wrong.add("causal", f, {1, 3, 3});
  CHECK_THROWS_WITH_AS(exe.bind(wrong), doctest::Contains("causal"), error);
}

TEST_CASE("the printer and the plan show booleans") {
  using net = model<where<less<x23, scalar<0.f>>, scalar<0.f>, x23>>;
  const std::string text = print(module_of<net>{});
  CHECK(text.find("less") != std::string::npos);
  CHECK(text.find("less(%x, 0) : bool[2, 3]") != std::string::npos);
  CHECK(text.find("where") != std::string::npos);
  const std::string tri = print(module_of<model<tril<x23, -1>, triu<x23>>>{});
  CHECK(tri.find("trilu(%x, lower, k=-1) : f32[2, 3]") != std::string::npos);
  CHECK(tri.find("upper, k=0") != std::string::npos);
}
