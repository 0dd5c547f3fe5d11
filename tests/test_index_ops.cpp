// The index ops of classifiers' and detectors' tails: argmax and argmin (ties, NaN, keepdims),
// cumsum (exclusive, reverse, integers), gather_elements on computed indices; reference and cpu.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <partita/partita.hpp>

using namespace partita;

namespace {
using x25 = input<"x", f32, 2, 5>;
const float qnan = std::numeric_limits<float>::quiet_NaN();

// `Net` (one input, one output of element type T) on the reference and on cpu, which must agree.
template <class Net, class T, class In>
std::vector<T> both(const std::vector<In>& x) {
  std::vector<T> r(static_cast<std::size_t>(compiled<Net, reference>::output(0).shp.elements())), c(r.size());
  compiled<Net, reference> ref;
  compiled<Net, cpu> exe;
  ref.run(x, r);
  exe.run(x, c);
  CHECK(r == c);
  return r;
}
using idx = std::vector<std::int64_t>;
}  // namespace

TEST_CASE("argmax and argmin: first of equals, or the last; NaN wins; the axis kept or dropped") {
  const std::vector<float> x{3, 9, 9, 1, 1, 4, qnan, 2, qnan, 0};
  CHECK(both<model<argmax<x25, 1>>, std::int64_t>(x) == idx{1, 1});
  CHECK(both<model<argmax<x25, 1, false, true>>, std::int64_t>(x) == idx{2, 3});
  CHECK(both<model<argmin<x25, 1>>, std::int64_t>(x) == idx{3, 1});
  CHECK(both<model<argmin<x25, 1, true, true>>, std::int64_t>(x) == idx{4, 3});
  CHECK(both<model<argmax<x25, 0, false>>, std::int64_t>(x) == idx{1, 1, 0, 1, 0});
  static_assert(argmax<x25, 1>::desc.out == shape{2, {2, 1}} && argmax<x25, 1, false>::desc.out == shape{1, {2}});
  const std::vector<std::int32_t> ints{4, -2, 7, 7, 0, 1};
  CHECK(both<model<argmax<input<"n", i32, 6>>>, std::int64_t>(ints) == idx{2});
}

TEST_CASE("cumsum: inclusive or exclusive, forwards or backwards, in the input's dtype") {
  const std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  CHECK(both<model<cumsum<x25, 1>>, float>(x) == std::vector<float>{1, 3, 6, 10, 15, 6, 13, 21, 30, 40});
  CHECK(both<model<cumsum<x25, 1, true>>, float>(x) == std::vector<float>{0, 1, 3, 6, 10, 0, 6, 13, 21, 30});
  CHECK(both<model<cumsum<x25, 1, false, true>>, float>(x) == std::vector<float>{15, 14, 12, 9, 5, 40, 34, 27, 19, 10});
  CHECK(both<model<cumsum<x25, 0>>, float>(x) == std::vector<float>{1, 2, 3, 4, 5, 7, 9, 11, 13, 15});
  const std::vector<std::int64_t> ids{1, 0, 1, 1};
  CHECK(both<model<cumsum<input<"m", i64, 4>, 0>>, std::int64_t>(ids) == idx{1, 1, 2, 3});
}

TEST_CASE("gather_elements follows computed indices: the top scores' boxes") {
  // Four boxes of 2 coordinates and their scores: the two best boxes by score, via topk's
  // indices broadcast to both coordinates.
  using scores = input<"s", f32, 4, 1>;
  using best = get<topk<scores, 2, 0>, 1>;                                          // [2, 1], i64
  using both_coords = cast<add<cast<best, f32>, literal<dims<1, 2>, 0.f, 0.f>>, i64>;  // [2, 2]
  using boxes = weight<"boxes", f32, 4, 2>;
  using net = model<gather_elements<boxes, both_coords, 0>>;
  weight_set w;
  const std::vector<float> b{0, 1, 10, 11, 20, 21, 30, 31};
  w.add("boxes", b, {4, 2});
  std::vector<float> r(4), c(4);
  compiled<net, reference> ref;
  compiled<net, cpu> exe;
  ref.bind(w);
  exe.bind(w);
  ref.run(std::vector<float>{0.1f, 0.9f, 0.3f, 0.7f}, r);
  exe.run(std::vector<float>{0.1f, 0.9f, 0.3f, 0.7f}, c);
  CHECK(r == std::vector<float>{10, 11, 30, 31});
  CHECK(c == r);
  // An index out of range: run throws, naming it.
  using given = model<gather_elements<x25, input<"i", i64, 1, 2>, 1>>;
  compiled<given, cpu> g;
  std::vector<float> y(2);
  g.run(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, std::vector<std::int64_t>{-1, 0}, y);
  CHECK(y == std::vector<float>{5, 1});
  CHECK_THROWS_WITH_AS(g.run(std::vector<float>(10), std::vector<std::int64_t>{5, 0}, y),
                       doctest::Contains("index 5 at position 0 of the indices is out of range"), error);
  CHECK(print(module_of<given>{}).find("gather_elements(%x, %i, axis=1) : f32[1, 2]") != std::string::npos);
}

TEST_CASE("non_max_suppression: greedy by score, per image and class, a static maximum and a count") {
  // Two images of 4 boxes (y1, x1, y2, x2), two classes.
  using boxes = input<"boxes", f32, 2, 4, 4>;
  using scores = input<"scores", f32, 2, 2, 4>;
  using nms = non_max_suppression<boxes, scores, 2, 0.5f, 0.1f>;
  using net = model<get<nms, 0>, get<nms, 1>>;
  static_assert(get<nms, 0>::desc.out == shape{2, {8, 3}} && get<nms, 1>::desc.out == shape{1, {1}});
  const std::vector<float> b{0, 0, 10, 10,   1, 1, 11, 11,   20, 20, 30, 30,   0, 0, 10, 10,      // image 0: 0 and 1 overlap
                             0, 0, 4, 4,     10, 10, 0, 0,   0, 5, 4, 9,       50, 50, 52, 52};   // image 1: 1 is 0's bigger twin
  const std::vector<float> s{0.9f, 0.8f, 0.7f, 0.05f,   0.2f, 0.3f, 0.3f, 0.6f,   // image 0, classes 0 and 1
                             0.5f, 0.6f, 0.55f, 0.4f,  0.f, 0.f, 0.f, 0.f};        // image 1
  const auto run_on = [&]<class B>(B) {
    compiled<net, B> exe;
    std::vector<std::int64_t> sel(24), n(1);
    exe.run(b, s, sel, n);
    return std::make_pair(sel, n);
  };
  const auto [sel, n] = run_on(reference{});
  CHECK(run_on(cpu{}).first == sel);
  CHECK(n == idx{6});
  // image 0, class 0: 0 (0.9), then 1 overlaps it (IoU 0.68) and goes, 2 (0.7); at most 2.
  // image 0, class 1: 3 (0.6), then 1 and 2 tie at 0.3: 1 first (IoU with 3 is 0.68: gone), 2.
  // image 1, class 0: 1 (0.6), 2 (0.55) does not overlap it; 0 would be third. Class 1: none.
  CHECK(sel == idx{0, 0, 0, 0, 0, 2, 0, 1, 3, 0, 1, 2, 1, 0, 1, 1, 0, 2, -1, -1, -1, -1, -1, -1});
}
