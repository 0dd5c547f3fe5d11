// Every op through compiled<..., reference>, on cases small enough to check by hand: proves that
// the executable hands each kernel the right arguments, shapes and attributes.
#include <doctest/doctest.h>

#include <vector>

#include <partita/partita.hpp>

using namespace partita;

namespace {

// Runs a model with one input and one output, weights given as (name, values, dims).
template <class Net>
std::vector<float> run1(const std::vector<float>& x, const weight_set& w = {}) {
  compiled<Net, reference> exe;
  if (decltype(exe)::weight_bytes) exe.bind(w);
  std::vector<float> y(static_cast<std::size_t>(decltype(exe)::output(0).shp.elements()));
  exe.run(x, y);
  return y;
}

using v = std::vector<float>;
using x4 = input<"x", f32, 1, 4>;
using img = input<"img", f32, 1, 1, 3, 3>;
const v nine{1, 2, 3, 4, 5, 6, 7, 8, 9};

}  // namespace

TEST_CASE("dense and bias_add") {
  const v w{1, 0, 0, 0, 0, 1, 1, 0, 1, 1, 1, 1}, b{10, 20, 30};
  weight_set ws;
  ws.add("w", w, {3, 4}).add("b", b, {3});
  CHECK(run1<model<bias_add<dense<x4, weight<"w", f32, 3, 4>>, weight<"b", f32, 3>>>>(v{1, 2, 3, 4}, ws) == v{11, 25, 40});
}

TEST_CASE("conv2d with padding, stride and groups") {
  const v ones(4, 1.f);
  weight_set ws;
  ws.add("k", ones, {1, 1, 2, 2});
  CHECK(run1<model<conv2d<img, weight<"k", f32, 1, 1, 2, 2>>>>(nine, ws) == v{12, 16, 24, 28});
  CHECK(run1<model<conv2d<img, weight<"k", f32, 1, 1, 2, 2>, {.stride = {2, 2}, .padding = {1, 1}}>>>(nine, ws) ==
        v{1, 5, 11, 28});
  // Two groups of one channel each: channel c is scaled by (c + 1).
  const v scale{1, 2};
  weight_set g;
  g.add("g", scale, {2, 1, 1, 1});
  CHECK(run1<model<conv2d<input<"two", f32, 1, 2, 1, 2>, weight<"g", f32, 2, 1, 1, 1>, {.groups = 2}>>>(v{1, 2, 3, 4}, g) ==
        v{1, 2, 6, 8});
}

TEST_CASE("binary ops broadcast") {
  using a = input<"a", f32, 2, 2>;
  using row = weight<"row", f32, 2>;
  const v r{10, 100};
  weight_set ws;
  ws.add("row", r, {2});
  CHECK(run1<model<add<a, row>>>(v{1, 2, 3, 4}, ws) == v{11, 102, 13, 104});
  CHECK(run1<model<subtract<a, row>>>(v{1, 2, 3, 4}, ws) == v{-9, -98, -7, -96});
  CHECK(run1<model<multiply<row, a>>>(v{1, 2, 3, 4}, ws) == v{10, 200, 30, 400});
}

TEST_CASE("unary ops") {
  const v x{-2, -0.5f, 0.5f, 8};
  CHECK(run1<model<relu<x4>>>(x) == v{0, 0, 0.5f, 8});
  CHECK(run1<model<clip<x4, -1.f, 6.f>>>(x) == v{-1, -0.5f, 0.5f, 6});
  const v s = run1<model<sigmoid<x4>>>(x);
  CHECK(s[0] == doctest::Approx(0.1192029));
  CHECK(s[3] == doctest::Approx(0.9996646));
  const v t = run1<model<tanh_<x4>>>(x);
  CHECK(t[1] == doctest::Approx(-0.4621172));
}

TEST_CASE("pooling") {
  CHECK(run1<model<max_pool2d<img, {.size = {2, 2}, .stride = {1, 1}}>>>(nine) == v{5, 6, 8, 9});
  CHECK(run1<model<avg_pool2d<img, {.size = {2, 2}, .stride = {1, 1}}>>>(nine) == v{3, 4, 6, 7});
  // Padding: the corner window sees 1, 2, 4, 5 and three padded cells that do not count.
  const v padded = run1<model<avg_pool2d<img, {.size = {2, 2}, .stride = {2, 2}, .padding = {1, 1}}>>>(nine);
  CHECK(padded == v{1, 2.5f, 5.5f, 7});
  CHECK(run1<model<global_avg_pool2d<img>>>(nine) == v{5});
}

TEST_CASE("batch_norm") {
  using x = input<"x", f32, 1, 2, 1, 1>;
  using c = weight<"gamma", f32, 2>;
  const v gamma{2, 1}, beta{1, 0}, mean{1, 10}, var{4, 1};
  weight_set ws;
  ws.add("gamma", gamma, {2}).add("beta", beta, {2}).add("mean", mean, {2}).add("var", var, {2});
  using bn = batch_norm<x, c, weight<"beta", f32, 2>, weight<"mean", f32, 2>, weight<"var", f32, 2>, 0.f>;
  CHECK(run1<model<bn>>(v{5, 10}, ws) == v{5, 0});  // (5 - 1) / 2 * 2 + 1, (10 - 10) / 1 * 1 + 0
}

TEST_CASE("views, concatenate, softmax and tuples") {
  // flatten and reshape move no data; the following op reads through them.
  CHECK(run1<model<relu<reshape<flatten<img>, 3, 3>>>>(nine) == nine);
  CHECK(run1<model<concatenate<1, x4, relu<x4>>>>(v{-1, 2, -3, 4}) == v{-1, 2, -3, 4, 0, 2, 0, 4});
  CHECK(run1<model<concatenate<0, reshape<x4, 2, 2>, reshape<x4, 2, 2>>>>(v{1, 2, 3, 4}) == v{1, 2, 3, 4, 1, 2, 3, 4});
  const v s = run1<model<softmax<reshape<x4, 2, 2>>>>(v{0, 0, 1, 3});
  CHECK(s[0] == doctest::Approx(0.5));
  CHECK(s[3] == doctest::Approx(0.8807971));
  const v s0 = run1<model<softmax<reshape<x4, 2, 2>, 0>>>(v{0, 0, 0, 3});
  CHECK(s0[0] == doctest::Approx(0.5));
  CHECK(s0[1] == doctest::Approx(0.0474259));
  using pair = tuple<relu<x4>, sigmoid<x4>>;
  CHECK(run1<model<add<get<pair, 0>, get<pair, 0>>>>(v{-1, 1, 2, 3}) == v{0, 2, 4, 6});
}

// Nodes that differ only in an attribute deeper down stay distinct: descriptors compare their
// arguments by structural hash, which therefore covers every attribute.
static_assert(relu<clip<x4, 0.f, 1.f>>::desc.hash != relu<clip<x4, 0.f, 6.f>>::desc.hash);
static_assert(relu<slice<x4, 1, 0, 2>>::desc.hash != relu<slice<x4, 1, 2, 4>>::desc.hash);

TEST_CASE("nodes that differ only in an argument's attributes are not merged") {
  CHECK(run1<model<add<relu<clip<x4, 0.f, 1.f>>, relu<clip<x4, 0.f, 6.f>>>>>(v{0.5f, 2, 3, 7}) == v{1, 3, 4, 7});
  using x = input<"x", f32, 2, 1, 6>;
  using low = reshape<slice<x, 2, 0, 2>, 2, 2, 1>;
  using high = reshape<slice<x, 2, 2, 4>, 2, 2, 1>;
  CHECK(run1<model<subtract<high, low>>>(v{1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60}) == v{2, 2, 20, 20});
}

TEST_CASE("contiguous slices are views: of an input, a weight, a result, and an output") {
  // x [1, 4, 16]: channel c holds 16·c + i. Slices along the channels start at multiples of 64
  // bytes and are read in place; the last one (a step of 2 over rows) is copied.
  using x = input<"x", f32, 1, 4, 16>;
  using w = weight<"w", f32, 4, 16>;
  v xs(64), ws(64);
  for (std::size_t i = 0; i < 64; ++i) {
    xs[i] = static_cast<float>(i);
    ws[i] = static_cast<float>(1000 + i);
  }
  weight_set set;
  set.add("w", ws, {4, 16});
  using parts = split<x, 1, 1, 3>;
  using net = model<add<get<parts, 1>, reshape<slice<w, 0, 1, 4>, 1, 3, 16>>,  // input and weight views
                    slice<relu<x>, 1, 2, 4>,                                   // a view of a result, returned
                    relu<x>,                                                    // ... which is also an output
                    slice<relu<x>, 1, 0, 4, 2>>;                               // channels 0 and 2: a copy
  using exe_t = compiled<net, reference>;
  static_assert(exe_t::num_steps == 3);  // add, relu, the strided slice
  exe_t exe;
  exe.bind(set);
  v sum(48), tail(32), all(64), even(32);
  exe.run(xs, sum, tail, all, even);
  for (std::size_t i = 0; i < 48; ++i) CHECK(sum[i] == xs[16 + i] + ws[16 + i]);
  for (std::size_t i = 0; i < 32; ++i) CHECK(tail[i] == xs[32 + i]);
  CHECK(all == xs);
  for (std::size_t i = 0; i < 16; ++i) {
    CHECK(even[i] == xs[i]);
    CHECK(even[16 + i] == xs[32 + i]);
  }
}
