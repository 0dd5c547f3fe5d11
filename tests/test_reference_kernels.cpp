#include "partita/backends/reference/kernels.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

namespace rk = partita::reference_kernels;
using partita::attrs;
using partita::op_id;
using partita::shape;

namespace {

using vec = std::vector<float>;

/// A 64-bit LCG (Knuth's MMIX constants): the same numbers on every platform and library,
/// which std::uniform_real_distribution does not promise.
struct lcg {
  std::uint64_t state;
  explicit lcg(std::uint64_t seed) : state(seed) {}
  std::uint32_t next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(state >> 32);
  }
  /// Uniform in [lo, hi), with 24 random bits so that every value is exact in float.
  float uniform(float lo, float hi) {
    return lo + (hi - lo) * static_cast<float>(next() >> 8) / static_cast<float>(1u << 24);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint32_t>(n)); }
};

vec random_vec(lcg& rng, std::int64_t n, float lo = -1.f, float hi = 1.f) {
  vec v(static_cast<std::size_t>(n));
  for (auto& x : v) x = rng.uniform(lo, hi);
  return v;
}

shape make_shape(std::initializer_list<std::int64_t> d) {
  shape s;
  for (auto v : d) s.dims[static_cast<std::size_t>(s.rank++)] = v;
  return s;
}

/// max_i |got - want| / max(|want|, floor). The floor keeps the measure meaningful where the
/// reference value is (near) zero and only absolute agreement can be asked for.
double max_rel_error(const vec& got, const vec& want, double floor = 1e-6) {
  REQUIRE(got.size() == want.size());
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double w = want[i];
    const double err = std::fabs(static_cast<double>(got[i]) - w) / std::max(std::fabs(w), floor);
    worst = std::isnan(err) ? std::numeric_limits<double>::infinity() : std::max(worst, err);
  }
  return worst;
}

void expect_values(const vec& got, std::initializer_list<float> want) {
  REQUIRE(got.size() == want.size());
  std::size_t i = 0;
  for (float w : want) {
    INFO("element " << i);
    CHECK(got[i] == doctest::Approx(w).epsilon(1e-6));
    ++i;
  }
}

attrs conv_attrs(int stride, int padding, int dilation, int groups = 1) {
  attrs a;
  a.stride = {stride, stride};
  a.padding = {padding, padding};
  a.dilation = {dilation, dilation};
  a.groups = groups;
  return a;
}

attrs pool_attrs(int window, int stride, int padding, bool count_include_pad = false) {
  attrs a;
  a.window = {window, window};
  a.stride = {stride, stride};
  a.padding = {padding, padding};
  a.count_include_pad = count_include_pad;
  return a;
}

std::int64_t conv_out(std::int64_t in, std::int64_t k, int s, int p, int d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

std::int64_t pool_out(std::int64_t in, int k, int s, int p) { return (in + 2 * p - k) / s + 1; }

/// The 3x3 plane 1..9 used by the hand-checked conv and pool cases.
const vec one_to_nine{1, 2, 3, 4, 5, 6, 7, 8, 9};

}  // namespace

// ---------------------------------------------------------------------------------------------
// Hand-checked cases.

TEST_CASE("dense: 2x3 input, 2 units") {
  const vec x{1, 2, 3, 4, 5, 6};
  const vec w{1, 0, -1, 2, 1, 0};  // [units=2, in=3]
  vec y(4);
  rk::dense(x.data(), make_shape({2, 3}), w.data(), make_shape({2, 3}), y.data());
  // [1-3, 2+2 ; 4-6, 8+5]
  expect_values(y, {-2, 4, -2, 13});

  SUBCASE("leading dims are flattened") {
    vec y3(4);
    rk::dense(x.data(), make_shape({2, 1, 3}), w.data(), make_shape({2, 3}), y3.data());
    expect_values(y3, {-2, 4, -2, 13});
  }
}

TEST_CASE("conv2d: 1x1x3x3 input, 2x2 kernel") {
  const vec w{1, 2, 3, 4};
  const shape xs = make_shape({1, 1, 3, 3}), ws = make_shape({1, 1, 2, 2});

  SUBCASE("no padding") {
    vec y(4);
    rk::conv2d(one_to_nine.data(), xs, w.data(), ws, y.data(), make_shape({1, 1, 2, 2}), conv_attrs(1, 0, 1));
    // 1*1+2*2+4*3+5*4, 2+6+15+24, 4+10+21+32, 5+12+24+36
    expect_values(y, {37, 47, 67, 77});
  }
  SUBCASE("padding 1") {
    vec y(16);
    rk::conv2d(one_to_nine.data(), xs, w.data(), ws, y.data(), make_shape({1, 1, 4, 4}), conv_attrs(1, 1, 1));
    // Border cells see only the kernel taps that land inside the input: the top-left one is 4*1.
    expect_values(y, {4, 11, 18, 9,  //
                      18, 37, 47, 21,  //
                      36, 67, 77, 33,  //
                      14, 23, 26, 9});
  }
  SUBCASE("stride 2, padding 1") {
    vec y(4);
    rk::conv2d(one_to_nine.data(), xs, w.data(), ws, y.data(), make_shape({1, 1, 2, 2}), conv_attrs(2, 1, 1));
    // Rows and columns 0 and 2 of the padding-1 result.
    expect_values(y, {4, 18, 36, 77});
  }
  SUBCASE("dilation 2") {
    vec y(1);
    rk::conv2d(one_to_nine.data(), xs, w.data(), ws, y.data(), make_shape({1, 1, 1, 1}), conv_attrs(1, 0, 2));
    // Taps on the corners: 1*1 + 2*3 + 3*7 + 4*9.
    expect_values(y, {64});
  }
  SUBCASE("asymmetric stride and padding") {
    attrs a = conv_attrs(1, 0, 1);
    a.stride = {2, 1};
    a.padding = {0, 1};
    vec y(4);  // H: (3-2)/2+1 = 1, W: (3+2-2)/1+1 = 4
    rk::conv2d(one_to_nine.data(), xs, w.data(), ws, y.data(), make_shape({1, 1, 1, 4}), a);
    // Row 1 of the padding-1 result, shifted up: taps w00..w11 over rows 0-1.
    expect_values(y, {18, 37, 47, 21});
  }
}

TEST_CASE("conv2d: groups=2 uses each group's own input channels") {
  const vec x{1, 2, 3, 4};              // [1, 4, 1, 1]
  const vec w{1, 10, 100, 1000};        // [2, 2, 1, 1]: output o reads channels 2o, 2o+1
  vec y(2);
  rk::conv2d(x.data(), make_shape({1, 4, 1, 1}), w.data(), make_shape({2, 2, 1, 1}), y.data(),
             make_shape({1, 2, 1, 1}), conv_attrs(1, 0, 1, 2));
  expect_values(y, {1 * 1 + 2 * 10, 3 * 100 + 4 * 1000});
}

TEST_CASE("conv2d: batch and several output channels") {
  // Two images of one channel, 1x1 kernels scaling by 2 and -1.
  const vec x{1, 2, 3, 4};  // [2, 1, 1, 2]
  const vec w{2, -1};       // [2, 1, 1, 1]
  vec y(8);
  rk::conv2d(x.data(), make_shape({2, 1, 1, 2}), w.data(), make_shape({2, 1, 1, 1}), y.data(),
             make_shape({2, 2, 1, 2}), conv_attrs(1, 0, 1));
  expect_values(y, {2, 4, -1, -2, 6, 8, -3, -4});
}

TEST_CASE("bias_add") {
  SUBCASE("last axis of a matrix") {
    const vec x{1, 2, 3, 4, 5, 6}, b{10, 20, 30};
    vec y(6);
    rk::bias_add(x.data(), make_shape({2, 3}), b.data(), 1, y.data());
    expect_values(y, {11, 22, 33, 14, 25, 36});
  }
  SUBCASE("first axis") {
    const vec x{1, 2, 3, 4, 5, 6}, b{100, 200};
    vec y(6);
    rk::bias_add(x.data(), make_shape({2, 3}), b.data(), 0, y.data());
    expect_values(y, {101, 102, 103, 204, 205, 206});
  }
  SUBCASE("channel axis of NCHW") {
    const vec x{1, 2, 3, 4, 5, 6, 7, 8}, b{10, 20};  // [2, 2, 1, 2]
    vec y(8);
    rk::bias_add(x.data(), make_shape({2, 2, 1, 2}), b.data(), 1, y.data());
    expect_values(y, {11, 12, 23, 24, 15, 16, 27, 28});
  }
}

TEST_CASE("binary: broadcasting") {
  const vec a{1, 2, 3, 4, 5, 6};  // [2, 3]
  SUBCASE("[2,3] + [3]") {
    const vec b{10, 20, 30};
    vec y(6);
    rk::binary(op_id::add, a.data(), make_shape({2, 3}), b.data(), make_shape({3}), y.data(), make_shape({2, 3}));
    expect_values(y, {11, 22, 33, 14, 25, 36});
  }
  SUBCASE("[2,3] * [2,1]") {
    const vec b{2, -1};
    vec y(6);
    rk::binary(op_id::multiply, a.data(), make_shape({2, 3}), b.data(), make_shape({2, 1}), y.data(),
               make_shape({2, 3}));
    expect_values(y, {2, 4, 6, -4, -5, -6});
  }
  SUBCASE("[2,1] - [3] broadcasts both sides") {
    const vec l{1, 2}, r{10, 20, 30};
    vec y(6);
    rk::binary(op_id::subtract, l.data(), make_shape({2, 1}), r.data(), make_shape({3}), y.data(),
               make_shape({2, 3}));
    expect_values(y, {-9, -19, -29, -8, -18, -28});
  }
  SUBCASE("[3] - [2,3]: the order of operands is kept") {
    const vec l{10, 20, 30};
    vec y(6);
    rk::binary(op_id::subtract, l.data(), make_shape({3}), a.data(), make_shape({2, 3}), y.data(),
               make_shape({2, 3}));
    expect_values(y, {9, 18, 27, 6, 15, 24});
  }
  SUBCASE("same shapes") {
    vec y(6);
    rk::binary(op_id::multiply, a.data(), make_shape({2, 3}), a.data(), make_shape({2, 3}), y.data(),
               make_shape({2, 3}));
    expect_values(y, {1, 4, 9, 16, 25, 36});
  }
  SUBCASE("a non-binary op is refused") {
    vec y(6);
    CHECK_THROWS_AS(rk::binary(op_id::relu, a.data(), make_shape({2, 3}), a.data(), make_shape({2, 3}), y.data(),
                               make_shape({2, 3})),
                    partita::error);
  }
}

TEST_CASE("broadcast_shape") {
  CHECK(rk::broadcast_shape(make_shape({2, 3}), make_shape({3})) == make_shape({2, 3}));
  CHECK(rk::broadcast_shape(make_shape({2, 1}), make_shape({1, 3})) == make_shape({2, 3}));
  CHECK(rk::broadcast_shape(make_shape({4, 1, 5}), make_shape({3, 1})) == make_shape({4, 3, 5}));
  CHECK_THROWS_AS(rk::broadcast_shape(make_shape({2, 3}), make_shape({2})), partita::error);
}

TEST_CASE("unary") {
  attrs a;
  SUBCASE("relu") {
    const vec x{-1, 0, 2, -0.5f};
    vec y(4);
    rk::unary(op_id::relu, x.data(), 4, y.data(), a);
    expect_values(y, {0, 0, 2, 0});
  }
  SUBCASE("clip") {
    a.lo = -1;
    a.hi = 1;
    const vec x{-2, -0.5f, 0.5f, 3};
    vec y(4);
    rk::unary(op_id::clip, x.data(), 4, y.data(), a);
    expect_values(y, {-1, -0.5f, 0.5f, 1});
  }
  SUBCASE("sigmoid") {
    // sigmoid(ln 3) = 1 / (1 + 1/3) = 3/4.
    const vec x{0, std::log(3.f), -std::log(3.f), 100, -100};
    vec y(5);
    rk::unary(op_id::sigmoid, x.data(), 5, y.data(), a);
    expect_values(y, {0.5f, 0.75f, 0.25f, 1, 0});
  }
  SUBCASE("tanh") {
    // tanh(ln 2) = (2 - 1/2) / (2 + 1/2) = 3/5.
    const vec x{0, std::log(2.f), -std::log(2.f), 30};
    vec y(4);
    rk::unary(op_id::tanh, x.data(), 4, y.data(), a);
    expect_values(y, {0, 0.6f, -0.6f, 1});
  }
  SUBCASE("NaN propagates through relu and clip") {
    const vec x{std::numeric_limits<float>::quiet_NaN()};
    vec y(1);
    rk::unary(op_id::relu, x.data(), 1, y.data(), a);
    CHECK(std::isnan(y[0]));
    a.lo = -1;
    a.hi = 1;
    rk::unary(op_id::clip, x.data(), 1, y.data(), a);
    CHECK(std::isnan(y[0]));
  }
  SUBCASE("a non-unary op is refused") {
    const vec x{1};
    vec y(1);
    CHECK_THROWS_AS(rk::unary(op_id::add, x.data(), 1, y.data(), a), partita::error);
  }
}

TEST_CASE("max_pool2d") {
  SUBCASE("2x2 window, stride 2") {
    vec x(16);
    for (int i = 0; i < 16; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
    vec y(4);
    rk::max_pool2d(x.data(), make_shape({1, 1, 4, 4}), y.data(), make_shape({1, 1, 2, 2}), pool_attrs(2, 2, 0));
    expect_values(y, {6, 8, 14, 16});
  }
  SUBCASE("padded cells never win, even against negative values") {
    vec x(9);
    for (int i = 0; i < 9; ++i) x[static_cast<std::size_t>(i)] = -static_cast<float>(i + 1);
    vec y(4);  // (3 + 2 - 2) / 2 + 1 = 2
    rk::max_pool2d(x.data(), make_shape({1, 1, 3, 3}), y.data(), make_shape({1, 1, 2, 2}), pool_attrs(2, 2, 1));
    // Windows: {-1}, {-2,-3}, {-4,-7}, {-5,-6,-8,-9}.
    expect_values(y, {-1, -2, -4, -5});
  }
  SUBCASE("stride 0 means the window size") {
    vec x(16);
    for (int i = 0; i < 16; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
    vec y(4);
    rk::max_pool2d(x.data(), make_shape({1, 1, 4, 4}), y.data(), make_shape({1, 1, 2, 2}), pool_attrs(2, 0, 0));
    expect_values(y, {6, 8, 14, 16});
  }
  SUBCASE("NaN propagates") {
    vec x{1, std::numeric_limits<float>::quiet_NaN(), 3, 4};
    vec y(1);
    rk::max_pool2d(x.data(), make_shape({1, 1, 2, 2}), y.data(), make_shape({1, 1, 1, 1}), pool_attrs(2, 2, 0));
    CHECK(std::isnan(y[0]));
  }
}

TEST_CASE("avg_pool2d") {
  SUBCASE("2x2 window, stride 2") {
    vec x(16);
    for (int i = 0; i < 16; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
    vec y(4);
    rk::avg_pool2d(x.data(), make_shape({1, 1, 4, 4}), y.data(), make_shape({1, 1, 2, 2}), pool_attrs(2, 2, 0));
    // (1+2+5+6)/4, (3+4+7+8)/4, (9+10+13+14)/4, (11+12+15+16)/4
    expect_values(y, {3.5f, 5.5f, 11.5f, 13.5f});
  }
  SUBCASE("padding 1: the average excludes padded cells") {
    vec y(16);  // (3 + 2 - 2) / 1 + 1 = 4
    rk::avg_pool2d(one_to_nine.data(), make_shape({1, 1, 3, 3}), y.data(), make_shape({1, 1, 4, 4}),
                   pool_attrs(2, 1, 1));
    // Corners hold one in-bounds cell, edges two, the middle four.
    expect_values(y, {1, 1.5f, 2.5f, 3,  //
                      2.5f, 3, 4, 4.5f,  //
                      5.5f, 6, 7, 7.5f,  //
                      7, 7.5f, 8.5f, 9});
  }
  SUBCASE("padding 1 with count_include_pad divides by the window size") {
    vec y(16);
    rk::avg_pool2d(one_to_nine.data(), make_shape({1, 1, 3, 3}), y.data(), make_shape({1, 1, 4, 4}),
                   pool_attrs(2, 1, 1, true));
    expect_values(y, {0.25f, 0.75f, 1.25f, 0.75f,  //
                      1.25f, 3, 4, 2.25f,  //
                      2.75f, 6, 7, 3.75f,  //
                      1.75f, 3.75f, 4.25f, 2.25f});
  }
}

TEST_CASE("global_avg_pool2d") {
  const vec x{1, 2, 3, 4, 10, 20, 30, 40};  // [1, 2, 2, 2]
  vec y(2);
  rk::global_avg_pool2d(x.data(), make_shape({1, 2, 2, 2}), y.data());
  expect_values(y, {2.5f, 25});
}

TEST_CASE("batch_norm") {
  // var + eps is 4 and 25 exactly, so the standard deviations are 2 and 5.
  const vec x{1, 3, 10, 20, 2, 2, 15, 15};  // [2, 2, 1, 2]
  const vec gamma{2, 0.5f}, beta{1, -1}, mean{2, 15}, var{3.75f, 24.75f};
  vec y(8);
  rk::batch_norm(x.data(), make_shape({2, 2, 1, 2}), gamma.data(), beta.data(), mean.data(), var.data(), 0.25f,
                 y.data());
  // channel 0: (x-2)/2*2+1; channel 1: (x-15)/5*0.5-1
  expect_values(y, {0, 2, -1.5f, -0.5f, 1, 1, -1, -1});

  SUBCASE("rank 2 input [N, C]") {
    const vec x2{1, 10, 3, 20};
    vec y2(4);
    rk::batch_norm(x2.data(), make_shape({2, 2}), gamma.data(), beta.data(), mean.data(), var.data(), 0.25f,
                   y2.data());
    expect_values(y2, {0, -1.5f, 2, -0.5f});
  }
}

TEST_CASE("concatenate") {
  SUBCASE("axis 1 of matrices") {
    const vec a{1, 2}, b{3, 4, 5};
    const float* in[] = {a.data(), b.data()};
    const shape shapes[] = {make_shape({1, 2}), make_shape({1, 3})};
    vec y(5);
    rk::concatenate(in, shapes, 2, 1, y.data(), make_shape({1, 5}));
    expect_values(y, {1, 2, 3, 4, 5});
  }
  SUBCASE("axis 0") {
    const vec a{1, 2, 3, 4}, b{5, 6};
    const float* in[] = {a.data(), b.data()};
    const shape shapes[] = {make_shape({2, 2}), make_shape({1, 2})};
    vec y(6);
    rk::concatenate(in, shapes, 2, 0, y.data(), make_shape({3, 2}));
    expect_values(y, {1, 2, 3, 4, 5, 6});
  }
  SUBCASE("a middle axis interleaves the inputs") {
    const vec a{1, 2, 3, 4};                          // [2, 1, 2]
    const vec b{5, 6, 7, 8, 9, 10, 11, 12};           // [2, 2, 2]
    const float* in[] = {a.data(), b.data()};
    const shape shapes[] = {make_shape({2, 1, 2}), make_shape({2, 2, 2})};
    vec y(12);
    rk::concatenate(in, shapes, 2, 1, y.data(), make_shape({2, 3, 2}));
    expect_values(y, {1, 2, 5, 6, 7, 8, 3, 4, 9, 10, 11, 12});
  }
}

TEST_CASE("softmax") {
  SUBCASE("a row whose exponentials are 1, 2, 3") {
    const vec x{0, std::log(2.f), std::log(3.f)};
    vec y(3);
    rk::softmax(x.data(), make_shape({1, 3}), 1, y.data());
    expect_values(y, {1.f / 6, 1.f / 3, 0.5f});
  }
  SUBCASE("large inputs do not overflow") {
    // exp(1000) overflows even a double; only the shift by the row maximum keeps this finite.
    const vec x{1000, 1000, -1000, 1000};
    vec y(4);
    rk::softmax(x.data(), make_shape({1, 4}), 1, y.data());
    expect_values(y, {1.f / 3, 1.f / 3, 0, 1.f / 3});
  }
  SUBCASE("axis 0 runs down the columns") {
    const vec x{0, 5, std::log(3.f), 5};  // [2, 2]
    vec y(4);
    rk::softmax(x.data(), make_shape({2, 2}), 0, y.data());
    expect_values(y, {0.25f, 0.5f, 0.75f, 0.5f});
  }
}

// ---------------------------------------------------------------------------------------------
// Random cases against independent formulations.

namespace {

/// conv2d as im2col + matrix multiply, group by group: for each image and group, the patches
/// become the columns of a [Cg*KH*KW, OH*OW] matrix that the group's [Og, Cg*KH*KW] weights
/// multiply.
vec conv2d_im2col(const vec& x, const shape& xs, const vec& w, const shape& ws, const shape& ys, const attrs& a) {
  const std::int64_t n_img = xs[0], c = xs[1], h = xs[2], wd = xs[3];
  const std::int64_t o = ws[0], cg = ws[1], kh = ws[2], kw = ws[3];
  const std::int64_t oh = ys[2], ow = ys[3];
  const std::int64_t og = o / a.groups;
  const std::int64_t rows = cg * kh * kw, cols = oh * ow;
  vec y(static_cast<std::size_t>(ys.elements()));
  std::vector<double> col(static_cast<std::size_t>(rows * cols));
  for (std::int64_t n = 0; n < n_img; ++n)
    for (std::int64_t g = 0; g < a.groups; ++g) {
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t ci = r / (kh * kw), i = (r / kw) % kh, j = r % kw;
        for (std::int64_t p = 0; p < oh; ++p)
          for (std::int64_t q = 0; q < ow; ++q) {
            const std::int64_t hh = p * a.stride[0] + i * a.dilation[0] - a.padding[0];
            const std::int64_t ww = q * a.stride[1] + j * a.dilation[1] - a.padding[1];
            const bool inside = hh >= 0 && hh < h && ww >= 0 && ww < wd;
            const std::int64_t ch = g * cg + ci;
            col[static_cast<std::size_t>(r * cols + p * ow + q)] =
                inside ? x[static_cast<std::size_t>(((n * c + ch) * h + hh) * wd + ww)] : 0.0;
          }
      }
      for (std::int64_t m = 0; m < og; ++m) {
        const std::int64_t oc = g * og + m;
        for (std::int64_t k = 0; k < cols; ++k) {
          double acc = 0;
          for (std::int64_t r = 0; r < rows; ++r)
            acc += static_cast<double>(w[static_cast<std::size_t>(oc * rows + r)]) *
                   col[static_cast<std::size_t>(r * cols + k)];
          y[static_cast<std::size_t>((n * o + oc) * cols + k)] = static_cast<float>(acc);
        }
      }
    }
  return y;
}

/// Copies NCHW `x` into a larger tensor padded by (ph, pw) on each side with `fill`.
vec pad_nchw(const vec& x, const shape& xs, int ph, int pw, float fill, shape& padded) {
  padded = make_shape({xs[0], xs[1], xs[2] + 2 * ph, xs[3] + 2 * pw});
  vec r(static_cast<std::size_t>(padded.elements()), fill);
  for (std::int64_t p = 0; p < xs[0] * xs[1]; ++p)
    for (std::int64_t i = 0; i < xs[2]; ++i)
      for (std::int64_t j = 0; j < xs[3]; ++j)
        r[static_cast<std::size_t>((p * padded[2] + i + ph) * padded[3] + j + pw)] =
            x[static_cast<std::size_t>((p * xs[2] + i) * xs[3] + j)];
  return r;
}

}  // namespace

TEST_CASE("conv2d matches im2col + matmul over a sweep of shapes") {
  using pair = std::array<int, 2>;
  lcg rng(0x5eed);
  int cases = 0;
  for (int c : {1, 2, 4})
    for (int groups : {1, 2, 4}) {
      if (c % groups) continue;  // covers groups = 1, 2 and = channels
      for (auto [h, w] : {std::pair<std::int64_t, std::int64_t>{5, 6}, {7, 3}})
        for (auto [kh, kw] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {3, 3}, {2, 3}})
          // Unequal height and width settings catch a kernel that mixes up the two axes.
          for (pair stride : {pair{1, 1}, pair{2, 2}, pair{1, 2}, pair{2, 1}})
            for (pair pad : {pair{0, 0}, pair{1, 1}, pair{2, 2}, pair{0, 1}, pair{2, 0}})
              for (pair dil : {pair{1, 1}, pair{2, 2}, pair{1, 2}}) {
                const std::int64_t n = 1 + (cases % 2), o = groups * (1 + cases % 3);
                attrs a;
                a.stride = stride;
                a.padding = pad;
                a.dilation = dil;
                a.groups = groups;
                const std::int64_t oh = conv_out(h, kh, stride[0], pad[0], dil[0]);
                const std::int64_t ow = conv_out(w, kw, stride[1], pad[1], dil[1]);
                if (oh < 1 || ow < 1) continue;
                const shape xs = make_shape({n, c, h, w}), ws = make_shape({o, c / groups, kh, kw});
                const shape ys = make_shape({n, o, oh, ow});
                const vec x = random_vec(rng, xs.elements()), wt = random_vec(rng, ws.elements());
                vec y(static_cast<std::size_t>(ys.elements()));
                rk::conv2d(x.data(), xs, wt.data(), ws, y.data(), ys, a);
                INFO("x " << partita::to_string(xs) << " w " << partita::to_string(ws) << " stride " << stride[0]
                          << "," << stride[1] << " pad " << pad[0] << "," << pad[1] << " dil " << dil[0] << ","
                          << dil[1] << " groups " << groups);
                CHECK(max_rel_error(y, conv2d_im2col(x, xs, wt, ws, ys, a)) <= 1e-5);
                ++cases;
              }
    }
  CHECK(cases > 1000);
}

TEST_CASE("dense matches a matmul with the transposed weight") {
  lcg rng(42);
  for (auto [rows, k, m] : {std::tuple<std::int64_t, std::int64_t, std::int64_t>{1, 1, 1}, {3, 7, 5}, {8, 33, 17},
                            {5, 64, 10}}) {
    const vec x = random_vec(rng, rows * k), w = random_vec(rng, m * k);
    vec wt(static_cast<std::size_t>(k * m));  // [k, m]
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < k; ++j)
        wt[static_cast<std::size_t>(j * m + i)] = w[static_cast<std::size_t>(i * k + j)];
    std::vector<double> acc(static_cast<std::size_t>(rows * m), 0.0);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < k; ++j)
        for (std::int64_t i = 0; i < m; ++i)
          acc[static_cast<std::size_t>(r * m + i)] += static_cast<double>(x[static_cast<std::size_t>(r * k + j)]) *
                                                      wt[static_cast<std::size_t>(j * m + i)];
    const vec want(acc.begin(), acc.end());
    vec y(want.size());
    rk::dense(x.data(), make_shape({rows, k}), w.data(), make_shape({m, k}), y.data());
    INFO("rows " << rows << " k " << k << " m " << m);
    CHECK(max_rel_error(y, want) <= 1e-5);
  }
}

TEST_CASE("avg_pool2d over the whole input equals global_avg_pool2d; max_pool2d equals the plane max") {
  lcg rng(7);
  for (auto [h, w] : {std::pair<std::int64_t, std::int64_t>{1, 1}, {5, 7}, {4, 4}, {9, 2}}) {
    const shape xs = make_shape({2, 3, h, w}), ys = make_shape({2, 3, 1, 1});
    const vec x = random_vec(rng, xs.elements(), -5, 5);
    attrs a;
    a.window = {static_cast<int>(h), static_cast<int>(w)};
    vec avg(6), glob(6), mx(6);
    rk::avg_pool2d(x.data(), xs, avg.data(), ys, a);
    rk::global_avg_pool2d(x.data(), xs, glob.data());
    rk::max_pool2d(x.data(), xs, mx.data(), ys, a);
    CHECK(max_rel_error(avg, glob) <= 1e-5);
    vec plane_max(6);
    for (std::size_t p = 0; p < 6; ++p) {
      const auto area = static_cast<std::size_t>(h * w);
      plane_max[p] = *std::max_element(x.begin() + static_cast<std::ptrdiff_t>(p * area),
                                       x.begin() + static_cast<std::ptrdiff_t>((p + 1) * area));
    }
    CHECK(max_rel_error(mx, plane_max) == 0);
  }
}

TEST_CASE("pooling with padding equals pooling the explicitly padded input") {
  // max: pad with -inf. avg including padding: pad with 0. avg excluding padding: the zero-padded
  // mean divided by the zero-padded mean of an all-ones input (the in-bounds fraction).
  lcg rng(11);
  for (int k : {2, 3})
    for (int s : {1, 2})
      for (int p = 0; p <= k / 2; ++p)
        for (auto [h, w] : {std::pair<std::int64_t, std::int64_t>{5, 5}, {6, 7}, {3, 4}}) {
          const shape xs = make_shape({2, 2, h, w});
          const shape ys = make_shape({2, 2, pool_out(h, k, s, p), pool_out(w, k, s, p)});
          const vec x = random_vec(rng, xs.elements(), -3, 3);
          const vec ones(x.size(), 1.f);
          shape padded;
          const vec x_inf = pad_nchw(x, xs, p, p, -std::numeric_limits<float>::infinity(), padded);
          const vec x_zero = pad_nchw(x, xs, p, p, 0.f, padded);
          const vec ones_zero = pad_nchw(ones, xs, p, p, 0.f, padded);
          const auto n = static_cast<std::size_t>(ys.elements());
          vec got_max(n), got_incl(n), got_excl(n), want_max(n), want_incl(n), frac(n), want_excl(n);
          rk::max_pool2d(x.data(), xs, got_max.data(), ys, pool_attrs(k, s, p));
          rk::avg_pool2d(x.data(), xs, got_incl.data(), ys, pool_attrs(k, s, p, true));
          rk::avg_pool2d(x.data(), xs, got_excl.data(), ys, pool_attrs(k, s, p, false));
          rk::max_pool2d(x_inf.data(), padded, want_max.data(), ys, pool_attrs(k, s, 0));
          rk::avg_pool2d(x_zero.data(), padded, want_incl.data(), ys, pool_attrs(k, s, 0));
          rk::avg_pool2d(ones_zero.data(), padded, frac.data(), ys, pool_attrs(k, s, 0));
          for (std::size_t i = 0; i < n; ++i) want_excl[i] = want_incl[i] / frac[i];
          INFO("k " << k << " s " << s << " p " << p << " h " << h << " w " << w);
          CHECK(max_rel_error(got_max, want_max) == 0);
          CHECK(max_rel_error(got_incl, want_incl, 1.0) <= 1e-5);
          CHECK(max_rel_error(got_excl, want_excl, 1.0) <= 1e-5);
        }
}

TEST_CASE("batch_norm equals multiply by scale then bias_add of shift") {
  lcg rng(3);
  for (auto xs : {make_shape({2, 3, 4, 5}), make_shape({1, 8, 3, 3}), make_shape({4, 6})}) {
    const std::int64_t c = xs[1];
    const vec x = random_vec(rng, xs.elements(), -4, 4);
    const vec gamma = random_vec(rng, c, 0.5f, 2), beta = random_vec(rng, c), mean = random_vec(rng, c),
              var = random_vec(rng, c, 0.1f, 3);
    const float eps = 1e-5f;
    vec scale(static_cast<std::size_t>(c)), shift(static_cast<std::size_t>(c));
    for (std::size_t i = 0; i < scale.size(); ++i) {
      scale[i] = static_cast<float>(gamma[i] / std::sqrt(static_cast<double>(var[i]) + eps));
      shift[i] = beta[i] - mean[i] * scale[i];
    }
    // scale is [C, 1, 1] (or [C] for a matrix) so that it broadcasts along axis 1.
    shape ss = make_shape({c});
    for (int i = 2; i < xs.rank; ++i) ss.dims[static_cast<std::size_t>(ss.rank++)] = 1;
    vec scaled(x.size()), want(x.size()), got(x.size());
    rk::binary(op_id::multiply, x.data(), xs, scale.data(), ss, scaled.data(), xs);
    rk::bias_add(scaled.data(), xs, shift.data(), 1, want.data());
    rk::batch_norm(x.data(), xs, gamma.data(), beta.data(), mean.data(), var.data(), eps, got.data());
    INFO("x " << partita::to_string(xs));
    // The composition rounds its terms to float before they cancel, hence the absolute floor.
    CHECK(max_rel_error(got, want, 1.0) <= 1e-5);
  }
}

TEST_CASE("softmax sums to 1 and equals exp / sum in double, along every axis") {
  lcg rng(9);
  const shape xs = make_shape({3, 4, 5});
  // Inputs near 300 would overflow a float exp; the reference below uses double, which does not.
  const vec x = random_vec(rng, xs.elements(), 250, 350);
  for (int axis = 0; axis < 3; ++axis) {
    vec y(x.size());
    rk::softmax(x.data(), xs, axis, y.data());
    const std::int64_t len = xs[axis];
    std::int64_t inner = 1;
    for (int d = axis + 1; d < 3; ++d) inner *= xs[d];
    const std::int64_t outer = xs.elements() / (len * inner);
    vec want(x.size());
    double worst_sum = 0;
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i = 0; i < inner; ++i) {
        double denom = 0, total = 0;
        for (std::int64_t k = 0; k < len; ++k)
          denom += std::exp(static_cast<double>(x[static_cast<std::size_t>((o * len + k) * inner + i)]));
        for (std::int64_t k = 0; k < len; ++k) {
          const auto at = static_cast<std::size_t>((o * len + k) * inner + i);
          want[at] = static_cast<float>(std::exp(static_cast<double>(x[at])) / denom);
          total += y[at];
        }
        worst_sum = std::max(worst_sum, std::fabs(total - 1.0));
      }
    INFO("axis " << axis);
    CHECK(worst_sum <= 1e-5);
    CHECK(max_rel_error(y, want, 1e-30) <= 1e-5);
  }
}

TEST_CASE("concatenate then slicing back out returns the inputs") {
  lcg rng(5);
  for (int axis = 0; axis < 4; ++axis) {
    const std::int64_t sizes[] = {1, 3, 2};
    std::vector<shape> shapes;
    std::vector<vec> parts;
    shape ys = make_shape({2, 3, 2, 4});
    ys.dims[static_cast<std::size_t>(axis)] = 0;
    for (std::int64_t sz : sizes) {
      shape s = make_shape({2, 3, 2, 4});
      s.dims[static_cast<std::size_t>(axis)] = sz;
      ys.dims[static_cast<std::size_t>(axis)] += sz;
      shapes.push_back(s);
      parts.push_back(random_vec(rng, s.elements()));
    }
    std::vector<const float*> ptrs;
    for (const auto& p : parts) ptrs.push_back(p.data());
    vec y(static_cast<std::size_t>(ys.elements()));
    rk::concatenate(ptrs.data(), shapes.data(), 3, axis, y.data(), ys);

    // Slice part t back out: its coordinate along `axis` is offset by the sizes before it.
    std::int64_t offset = 0;
    for (std::size_t t = 0; t < parts.size(); ++t) {
      const shape& s = shapes[t];
      vec back(parts[t].size());
      for (std::int64_t i = 0; i < s.elements(); ++i) {
        std::int64_t rest = i, out = 0, stride = 1;
        std::array<std::int64_t, 4> idx{};
        for (int d = 3; d >= 0; --d) {
          idx[static_cast<std::size_t>(d)] = rest % s[d];
          rest /= s[d];
        }
        idx[static_cast<std::size_t>(axis)] += offset;
        for (int d = 3; d >= 0; --d) {
          out += idx[static_cast<std::size_t>(d)] * stride;
          stride *= ys[d];
        }
        back[static_cast<std::size_t>(i)] = y[static_cast<std::size_t>(out)];
      }
      INFO("axis " << axis << " part " << t);
      CHECK(back == parts[t]);
      offset += s[axis];
    }
  }
}

TEST_CASE("binary broadcasting matches explicit index arithmetic") {
  lcg rng(13);
  for (int trial = 0; trial < 60; ++trial) {
    // An output shape, then operands that keep each of its trailing dims or replace it with 1.
    shape out;
    out.rank = 1 + rng.below(4);
    for (int d = 0; d < out.rank; ++d) out.dims[static_cast<std::size_t>(d)] = 1 + rng.below(4);
    auto operand = [&] {
      shape s;
      s.rank = 1 + rng.below(out.rank);
      for (int d = 0; d < s.rank; ++d)
        s.dims[static_cast<std::size_t>(d)] = rng.below(3) == 0 ? 1 : out[out.rank - s.rank + d];
      return s;
    };
    const shape as = operand(), bs = operand();
    const shape ys = rk::broadcast_shape(as, bs);
    const vec a = random_vec(rng, as.elements()), b = random_vec(rng, bs.elements());
    for (op_id op : {op_id::add, op_id::subtract, op_id::multiply}) {
      vec y(static_cast<std::size_t>(ys.elements()));
      rk::binary(op, a.data(), as, b.data(), bs, y.data(), ys);
      vec want(y.size());
      for (std::int64_t i = 0; i < ys.elements(); ++i) {
        // Output coordinates, innermost first, then each operand's flat index built from them.
        std::int64_t rest = i, ai = 0, bi = 0, a_step = 1, b_step = 1;
        for (int j = 0; j < ys.rank; ++j) {
          const std::int64_t coord = rest % ys.back(j);
          rest /= ys.back(j);
          if (j < as.rank) {
            ai += (as.back(j) == 1 ? 0 : coord) * a_step;
            a_step *= as.back(j);
          }
          if (j < bs.rank) {
            bi += (bs.back(j) == 1 ? 0 : coord) * b_step;
            b_step *= bs.back(j);
          }
        }
        const float av = a[static_cast<std::size_t>(ai)], bv = b[static_cast<std::size_t>(bi)];
        want[static_cast<std::size_t>(i)] = op == op_id::add ? av + bv : op == op_id::subtract ? av - bv : av * bv;
      }
      INFO("a " << partita::to_string(as) << " b " << partita::to_string(bs) << " op " << partita::name_of(op));
      CHECK(y == want);
    }
  }
}

TEST_CASE("unary: sigmoid(x) = (1 + tanh(x / 2)) / 2 and relu equals clip to [0, inf)") {
  lcg rng(17);
  const vec x = random_vec(rng, 1000, -12, 12);
  vec half(x.size()), sig(x.size()), th(x.size()), relu(x.size()), clip(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) half[i] = x[i] / 2;  // exact: a power-of-two scale
  attrs a;
  rk::unary(op_id::sigmoid, x.data(), 1000, sig.data(), a);
  rk::unary(op_id::tanh, half.data(), 1000, th.data(), a);
  vec want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = (1 + th[i]) / 2;
  CHECK(max_rel_error(sig, want, 1.0) <= 1e-6);
  rk::unary(op_id::relu, x.data(), 1000, relu.data(), a);
  a.lo = 0;
  a.hi = std::numeric_limits<float>::infinity();
  rk::unary(op_id::clip, x.data(), 1000, clip.data(), a);
  CHECK(relu == clip);
}
