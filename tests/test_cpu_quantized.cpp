// Quantized models in QDQ form on the cpu backend: its quantized composites claim the
// integer-friendly regions and agree with the reference backend, which evaluates the QDQ graph
// as written (in float), within 1 in the last place.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <partita/partita.hpp>

using namespace partita;

namespace {

template <class T>
std::span<const std::byte> bytes_of(const std::vector<T>& v) {
  return std::as_bytes(std::span<const T>(v));
}

// A per-channel quantized 3x3 convolution with an i32 bias and a ReLU, u8 in and out.
template <dtype Act, int C, int O, int H, int Groups = 1>
struct qconv_net {
  using x = input<"x", Act, 1, C, H, H>;
  using xs = weight<"x.scale", f32>;
  using xz = weight<"x.zp", Act>;
  using wq = weight<"w", i8, O, C / Groups, 3, 3>;
  using ws = weight<"w.scale", f32, O>;
  using wz = weight<"w.zp", i8, O>;
  using bq = weight<"b", i32, O>;
  using bs = weight<"b.scale", f32, O>;
  using bz = weight<"b.zp", i32, O>;
  using conv = conv2d<dequantize<x, xs, xz>, dequantize<wq, ws, wz, 0>,
                      {.padding = {1, 1}, .padding_end = {1, 1}, .groups = Groups}>;
  using y = quantize<relu<bias_add<conv, dequantize<bq, bs, bz, 0>>>, weight<"y.scale", f32>, weight<"y.zp", Act>>;
  using net = model<y>;
};

template <dtype Act>
using act_t = std::conditional_t<Act == dtype::u8, std::uint8_t, std::int8_t>;

// The weights of a qconv_net, random; `set()` refers to them (a weight_set does not copy).
template <dtype Act>
struct qconv_weights {
  using A = act_t<Act>;
  int c, o, groups;
  std::vector<std::int8_t> w, wz;
  std::vector<float> ws, bs, xs{0.02f}, ys{0.05f};
  std::vector<std::int32_t> b, bz;
  std::vector<A> xz{static_cast<A>(Act == dtype::u8 ? 128 : -5)}, yz{static_cast<A>(Act == dtype::u8 ? 3 : -100)};

  qconv_weights(int c_, int o_, int groups_, std::mt19937& rng) : c(c_), o(o_), groups(groups_) {
    const auto n = static_cast<std::size_t>(o);
    std::uniform_int_distribution<int> wd(-127, 127);
    w.resize(n * static_cast<std::size_t>(c / groups * 9));
    for (auto& v : w) v = static_cast<std::int8_t>(wd(rng));
    wz.assign(n, 0);
    bz.assign(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      ws.push_back(0.001f * static_cast<float>(1 + i % 7));
      bs.push_back(xs[0] * ws[i]);
      b.push_back(std::uniform_int_distribution<int>(-20000, 20000)(rng));
    }
  }
  weight_set set() const {
    return weight_set{}
        .add("x.scale", xs, {})
        .add("x.zp", Act, bytes_of(xz), {})
        .add("w", dtype::i8, bytes_of(w), {o, c / groups, 3, 3})
        .add("w.scale", ws, {o})
        .add("w.zp", dtype::i8, bytes_of(wz), {o})
        .add("b", dtype::i32, bytes_of(b), {o})
        .add("b.scale", bs, {o})
        .add("b.zp", dtype::i32, bytes_of(bz), {o})
        .add("y.scale", ys, {})
        .add("y.zp", Act, bytes_of(yz), {});
  }
};

// Runs Net on both backends with random inputs; returns how many outputs differ by one (none
// may differ by more).
template <class Net, dtype Act>
int compare(const weight_set& weights, std::size_t in_size, std::size_t out_size, std::mt19937& rng) {
  using A = act_t<Act>;
  compiled<Net, reference> ref;
  compiled<Net, cpu> fast;
  ref.bind(weights);
  fast.bind(weights);
  std::vector<A> x(in_size);
  std::uniform_int_distribution<int> d(Act == dtype::u8 ? 0 : -128, Act == dtype::u8 ? 255 : 127);
  for (auto& v : x) v = static_cast<A>(d(rng));
  std::vector<A> want(out_size), got(out_size);
  ref.run(x, want);
  fast.run(x, got);
  int off_by_one = 0;
  for (std::size_t i = 0; i < out_size; ++i) {
    const int diff = std::abs(static_cast<int>(want[i]) - static_cast<int>(got[i]));
    REQUIRE(diff <= 1);
    off_by_one += diff;
  }
  return off_by_one;
}

// qconv_net<Act, C, O, H, Groups> on both backends: one integer step on cpu, every output
// within 1 of the reference's and at most one in twenty off by one.
template <dtype Act, int C, int O, int H, int Groups = 1>
void check_qconv(std::mt19937& rng) {
  using n = qconv_net<Act, C, O, H, Groups>;
  CHECK(print(compiled<typename n::net, cpu>::plan).find("[qconv_") != std::string::npos);
  const int off = compare<typename n::net, Act>(qconv_weights<Act>(C, O, Groups, rng).set(), C * H * H, O * H * H, rng);
  CHECK(off <= O * H * H / 20);
}

}  // namespace

TEST_CASE("a QDQ convolution runs as one integer composite, within 1 LSB of the QDQ graph") {
  std::mt19937 rng(7);
  SUBCASE("u8 activations, 3 -> 8 channels") { check_qconv<dtype::u8, 3, 8, 9>(rng); }
  SUBCASE("i8 activations, 17 -> 5 channels") { check_qconv<dtype::i8, 17, 5, 7>(rng); }
  SUBCASE("u8 activations, 17 -> 5 channels") { check_qconv<dtype::u8, 17, 5, 7>(rng); }
  SUBCASE("i8 activations, 3 -> 8 channels") { check_qconv<dtype::i8, 3, 8, 9>(rng); }
  SUBCASE("a residual block: the input's dequantize, read by the convolution and the add, is copied") {
    using n = qconv_net<dtype::u8, 8, 8, 9>;
    using ys = weight<"y.scale", f32>;
    using yz = weight<"y.zp", u8>;
    using block = model<quantize<add<dequantize<n::y, ys, yz>, dequantize<n::x, n::xs, n::xz>>, ys, yz>>;
    const std::string plan = print(compiled<block, cpu>::plan);
    CHECK(plan.find("[qconv_") != std::string::npos);
    CHECK(plan.find("[qadd") != std::string::npos);
    CHECK(compiled<block, cpu>::plan.steps.size() == 2);
    const int off = compare<block, dtype::u8>(qconv_weights<dtype::u8>(8, 8, 1, rng).set(), 8 * 81, 8 * 81, rng);
    CHECK(off <= 8 * 81 / 10);
  }
  SUBCASE("PyTorch's conv-bn: a division and a batch norm folded into the integer layer") {
    using n = qconv_net<dtype::u8, 5, 6, 8>;
    using divisor = literal<dims<1, 6, 1, 1>, 1.25f, 0.75f, 1.f, 1.5f, 0.9f, 1.1f>;
    using bn = batch_norm<divide<bias_add<n::conv, dequantize<n::bq, n::bs, n::bz, 0>>, divisor>, weight<"g", f32, 6>,
                          weight<"beta", f32, 6>, weight<"mean", f32, 6>, weight<"var", f32, 6>, 1e-5f>;
    using net = model<quantize<relu<bn>, weight<"y.scale", f32>, weight<"y.zp", u8>>>;
    CHECK(compiled<net, cpu>::plan.steps.size() == 1);
    CHECK(print(compiled<net, cpu>::plan).find("[qconv_") != std::string::npos);
    const qconv_weights<dtype::u8> w(5, 6, 1, rng);
    const std::vector<float> g{0.5f, -1.2f, 2.f, 0.8f, 1.f, 0.3f}, beta{0.1f, -0.2f, 0.3f, 0.f, 0.5f, -0.4f},
        mean{0.05f, -0.1f, 0.2f, 0.f, -0.3f, 0.1f}, var{1.f, 0.5f, 2.f, 0.8f, 1.5f, 0.25f};
    weight_set set = w.set();
    set.add("g", g, {6}).add("beta", beta, {6}).add("mean", mean, {6}).add("var", var, {6});
    const int off = compare<net, dtype::u8>(set, 5 * 64, 6 * 64, rng);
    CHECK(off <= 6 * 64 / 20);
  }
  SUBCASE("depthwise, 12 channels") { check_qconv<dtype::u8, 12, 12, 8, 12>(rng); }

}

namespace {

// Two u8 activations with their own quantization, for the composites without weights.
using qa = input<"a", u8, 1, 6, 9, 9>;
using qb = input<"b", u8, 1, 6, 9, 9>;
template <class Q>
using dq = dequantize<Q, weight<"in.scale", f32>, weight<"in.zp", u8>>;
template <class Q>
using dq2 = dequantize<Q, weight<"in2.scale", f32>, weight<"in2.zp", u8>>;
template <class X>
using q_out = quantize<X, weight<"out.scale", f32>, weight<"out.zp", u8>>;

struct eltwise_weights {
  std::vector<float> s1{0.03f}, s2{0.011f}, so{0.045f};
  std::vector<std::uint8_t> z1{100}, z2{7}, zo{128};
  weight_set set() const {
    return weight_set{}
        .add("in.scale", s1, {})
        .add("in.zp", dtype::u8, bytes_of(z1), {})
        .add("in2.scale", s2, {})
        .add("in2.zp", dtype::u8, bytes_of(z2), {})
        .add("out.scale", so, {})
        .add("out.zp", dtype::u8, bytes_of(zo), {});
  }
};

// Runs a model of input a, or of inputs a and b (u8), on both backends: outputs within 1 of
// each other, and the cpu plan runs `kernel`.
template <class Net, int Inputs>
void compare_eltwise(std::size_t out_size, std::string_view kernel) {
  std::mt19937 rng(11);
  const eltwise_weights w;
  compiled<Net, reference> ref;
  compiled<Net, cpu> fast;
  ref.bind(w.set());
  fast.bind(w.set());
  if (!kernel.empty()) CHECK(print(compiled<Net, cpu>::plan).find(std::string("[") + std::string(kernel)) != std::string::npos);
  std::vector<std::uint8_t> a(6 * 81), b(6 * 81);
  std::uniform_int_distribution<int> d(0, 255);
  for (auto& v : a) v = static_cast<std::uint8_t>(d(rng));
  for (auto& v : b) v = static_cast<std::uint8_t>(d(rng));
  std::vector<std::uint8_t> want(out_size), got(out_size);
  if constexpr (Inputs == 1) {
    ref.run(a, want);
    fast.run(a, got);
  } else {
    ref.run(a, b, want);
    fast.run(a, b, got);
  }
  int off = 0;
  for (std::size_t i = 0; i < out_size; ++i) {
    const int diff = std::abs(static_cast<int>(want[i]) - static_cast<int>(got[i]));
    REQUIRE(diff <= 1);
    off += diff;
  }
  CHECK(off <= static_cast<int>(out_size) / 20 + 1);
}

}  // namespace

TEST_CASE("QDQ add, pooling, concatenation and clamp run as integer composites") {
  SUBCASE("add with a ReLU") {
    compare_eltwise<model<q_out<relu<add<dq<qa>, dq2<qb>>>>>, 2>(6 * 81, "qadd");
  }
  SUBCASE("average pooling, padded") {
    compare_eltwise<model<q_out<avg_pool2d<dq<qa>, {.size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}}>>>, 1>(
        6 * 25, "qavg_pool");
  }
  SUBCASE("global average pooling") {
    compare_eltwise<model<q_out<global_avg_pool2d<dq<qa>>>>, 1>(6, "qavg_pool");
  }
  SUBCASE("max pooling with another output quantization") {
    compare_eltwise<model<q_out<max_pool2d<dq<qa>, {.size = {2, 2}}>>>, 1>(6 * 16, "qmax_pool");
  }
  SUBCASE("concatenation of two differently quantized values") {
    compare_eltwise<model<q_out<concatenate<1, dq<qa>, dq2<qb>>>>, 2>(12 * 81, "qconcat");
  }
  SUBCASE("ReLU6 between two QDQ pairs is an integer clamp") {
    compare_eltwise<model<q_out<clip<dq<qa>, 0.f, 6.f>>>, 1>(6 * 81, "qclamp");
  }
  SUBCASE("a flatten between two QDQ pairs is a copy, requantized") {
    compare_eltwise<model<q_out<flatten<dq<qa>>>>, 1>(6 * 81, "qreshape");
  }
  SUBCASE("a sigmoid between the pairs stays in float") {
    using net = model<q_out<sigmoid<dq<qa>>>>;
    CHECK(print(compiled<net, cpu>::plan).find("[q") == std::string::npos);
    compare_eltwise<net, 1>(6 * 81, "");
  }
}

namespace {

// Both backends on one model with the given weights and u8 inputs: outputs within 1.
template <class Net, class... In>
void compare_u8(const weight_set& weights, std::size_t out_size, std::string_view kernel, const In&... inputs) {
  compiled<Net, reference> ref;
  compiled<Net, cpu> fast;
  ref.bind(weights);
  fast.bind(weights);
  CHECK(print(compiled<Net, cpu>::plan).find(std::string("[") + std::string(kernel)) != std::string::npos);
  std::vector<std::uint8_t> want(out_size), got(out_size);
  ref.run(inputs..., want);
  fast.run(inputs..., got);
  int off = 0;
  for (std::size_t i = 0; i < out_size; ++i) {
    const int diff = std::abs(static_cast<int>(want[i]) - static_cast<int>(got[i]));
    REQUIRE(diff <= 1);
    off += diff;
  }
  CHECK(off <= static_cast<int>(out_size) / 20 + 1);
}

std::vector<std::uint8_t> random_u8(std::size_t n, std::mt19937& rng) {
  std::vector<std::uint8_t> v(n);
  std::uniform_int_distribution<int> d(0, 255);
  for (auto& x : v) x = static_cast<std::uint8_t>(d(rng));
  return v;
}

}  // namespace

TEST_CASE("QDQ dense and matmul run as integer composites") {
  std::mt19937 rng(3);
  const eltwise_weights q;
  SUBCASE("dense of per-channel weights with a bias and a ReLU, 3 rows of 37") {
    using x = input<"a", u8, 3, 37>;
    using w = dequantize<weight<"w", i8, 11, 37>, weight<"w.scale", f32, 11>, weight<"w.zp", i8, 11>, 0>;
    using b = dequantize<weight<"b", i32, 11>, weight<"b.scale", f32, 11>, weight<"b.zp", i32, 11>, 0>;
    using net = model<q_out<relu<bias_add<dense<dq<x>, w>, b, -1>>>>;
    std::vector<std::int8_t> wv(11 * 37), wz(11, 0);
    std::uniform_int_distribution<int> wd(-127, 127);
    for (auto& v : wv) v = static_cast<std::int8_t>(wd(rng));
    std::vector<float> ws(11), bs(11);
    std::vector<std::int32_t> bv(11), bz(11, 0);
    for (int i = 0; i < 11; ++i) {
      ws[static_cast<std::size_t>(i)] = 0.002f * static_cast<float>(1 + i % 5);
      bs[static_cast<std::size_t>(i)] = q.s1[0] * ws[static_cast<std::size_t>(i)];
      bv[static_cast<std::size_t>(i)] = std::uniform_int_distribution<int>(-3000, 3000)(rng);
    }
    weight_set set = q.set();
    set.add("w", dtype::i8, bytes_of(wv), {11, 37})
        .add("w.scale", ws, {11})
        .add("w.zp", dtype::i8, bytes_of(wz), {11})
        .add("b", dtype::i32, bytes_of(bv), {11})
        .add("b.scale", bs, {11})
        .add("b.zp", dtype::i32, bytes_of(bz), {11});
    compare_u8<net>(set, 3 * 11, "qdense", random_u8(3 * 37, rng));
  }
  SUBCASE("matmul of two activations, batched") {
    using a = input<"a", u8, 2, 3, 19>;
    using b = input<"b", u8, 2, 19, 6>;
    using net = model<q_out<matmul<dq<a>, dq2<b>>>>;
    compare_u8<net>(q.set(), 2 * 3 * 6, "qmatmul", random_u8(2 * 3 * 19, rng), random_u8(2 * 19 * 6, rng));
  }
}
