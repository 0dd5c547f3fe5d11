// The cpu backend's int8 elementwise, pooling and data-movement kernels (detail/int8/) against
// their scalar oracles (reference/qeltwise_kernels.hpp), element for element, and quantize and
// dequantize against ONNX's definitions written here in float: seeded random data, u8 and i8,
// zero points at the ends of the range, saturation both ways, sizes that are no multiple of
// the vector width, ties, -0.0, infinities and NaN (the type's smallest value, as ONNX
// Runtime's CPU provider gives).
#include "partita/backends/cpu/detail/int8/qeltwise.hpp"
#include "partita/backends/cpu/detail/int8/qpool.hpp"
#include "partita/backends/cpu/detail/int8/quantize.hpp"
#include "partita/backends/reference/qeltwise_kernels.hpp"
#include "partita/ir/ops/pooling.hpp"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace q8 = partita::detail::cpu::int8;
namespace ref = partita::reference_kernels;
using partita::dtype;

namespace {

// ONNX's QuantizeLinear for one value, in float only: round half to even by hand (floor and
// the remainder, which are exact), saturation, NaN to the type's smallest value.
float onnx_round(float v) {
  const float f = std::floor(v), d = v - f;
  if (d > 0.5f || (d == 0.5f && std::fmod(f, 2.0f) != 0.0f)) return f + 1.0f;
  return f == 0.0f ? std::copysign(0.0f, v) : f;
}
std::int64_t onnx_quantize(float x, float scale, std::int64_t zp, std::int64_t lo, std::int64_t hi) {
  const float v = x / scale;
  if (std::isnan(v)) return lo;
  const float r = onnx_round(v);
  if (r >= 1e12f) return hi;
  if (r <= -1e12f) return lo;
  const std::int64_t s = static_cast<std::int64_t>(r) + zp;
  return s < lo ? lo : s > hi ? hi : s;
}

std::int64_t lowest(dtype t) { return partita::lowest_of(t); }
std::int64_t highest(dtype t) { return partita::highest_of(t); }

std::int64_t element(const std::vector<std::int32_t>& storage, dtype t, std::int64_t i) {
  return ref::load_integer(storage.data(), t, i);
}

// Bytes enough for n values of any quantized type.
std::vector<std::int32_t> integer_buffer(std::int64_t n) { return std::vector<std::int32_t>(static_cast<std::size_t>(n) + 1); }

// Floats with the cases that matter among random ones: ties at the scale, ±0, huge values,
// infinities, NaN of both signs, denormals.
std::vector<float> quantize_inputs(std::mt19937& rng, std::int64_t n, float scale) {
  std::uniform_real_distribution<float> wide(-300.0f, 300.0f);
  std::uniform_int_distribution<int> k(-300, 300), pick(0, 9);
  const float specials[] = {0.0f,
                            -0.0f,
                            1e30f,
                            -1e30f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::denorm_min(),
                            -1e-30f};
  std::vector<float> x(static_cast<std::size_t>(n));
  for (auto& v : x) {
    const int p = pick(rng);
    if (p < 4) v = wide(rng) * scale;
    else if (p < 8) v = (static_cast<float>(k(rng)) + 0.5f) * scale;  // a tie where the product is exact
    else v = specials[static_cast<std::size_t>(k(rng) + 300) % std::size(specials)];
  }
  return x;
}

struct type_case {
  dtype t;
  std::int32_t zp;
};
const type_case quantize_cases[] = {{dtype::u8, 0},    {dtype::u8, 255},  {dtype::u8, 128}, {dtype::i8, -128},
                                    {dtype::i8, 127},  {dtype::i8, 0},    {dtype::i32, 0},  {dtype::i32, -7},
                                    {dtype::i32, 1 << 30}};

void store_zero_point(std::vector<std::int32_t>& zp, dtype t, std::int64_t i, std::int64_t v) {
  ref::store_integer(zp.data(), t, i, v);
}

}  // namespace

TEST_CASE("quantize per tensor is ONNX's QuantizeLinear, ties to even, NaN to the smallest value") {
  std::mt19937 rng(11);
  const float scales[] = {0.25f, 1.0f, 0.0371f, 3.0f, 1e-3f};
  for (const auto& c : quantize_cases)
    for (float scale : scales)
      for (std::int64_t n : {1, 7, 8, 9, 31, 33, 1003}) {
        CAPTURE(partita::name_of(c.t));
        CAPTURE(c.zp);
        CAPTURE(scale);
        CAPTURE(n);
        const auto x = quantize_inputs(rng, n, scale);
        auto q = integer_buffer(n), zp = integer_buffer(1);
        store_zero_point(zp, c.t, 0, c.zp);
        q8::quantize(x.data(), q.data(), c.t, 1, 1, n, &scale, zp.data(), c.t, false);
        for (std::int64_t i = 0; i < n; ++i) {
          CAPTURE(x[static_cast<std::size_t>(i)]);
          REQUIRE(element(q, c.t, i) == onnx_quantize(x[static_cast<std::size_t>(i)], scale, c.zp, lowest(c.t), highest(c.t)));
        }
      }
}

TEST_CASE("quantize: the named edge values") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // 9 values: the vector loop takes 8, the scalar tail one; both are checked by moving the row.
  const float x[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -0.0f, nan, inf, -inf};
  const std::uint8_t u8_expected[] = {128, 130, 130, 128, 126, 128, 0, 255, 0};
  const std::int8_t i8_expected[] = {0, 2, 2, 0, -2, 0, -128, 127, -128};
  for (int shift = 0; shift < 9; ++shift) {
    float xs[9];
    for (int i = 0; i < 9; ++i) xs[i] = x[(i + shift) % 9];
    const float one = 1.0f;
    std::uint8_t qu[9];
    std::int8_t qi[9];
    const std::uint8_t zu = 128;
    const std::int8_t zi = 0;
    q8::quantize(xs, qu, dtype::u8, 1, 1, 9, &one, &zu, dtype::u8, false);
    q8::quantize(xs, qi, dtype::i8, 1, 1, 9, &one, &zi, dtype::i8, false);
    for (int i = 0; i < 9; ++i) {
      CHECK(qu[i] == u8_expected[(i + shift) % 9]);
      CHECK(qi[i] == i8_expected[(i + shift) % 9]);
    }
  }
  // A true division: 0.3 / 0.1 in float is 3.0000002 → 3, and a multiply by 1 / 0.1f rounds
  // some quotients differently; here the kernel must give the quotient's rounding.
  const float s = 0.1f;
  std::vector<float> xs(64);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = (static_cast<float>(i) - 32.0f + 0.5f) * s;
  std::vector<std::int8_t> q(xs.size());
  const std::int8_t z = 0;
  q8::quantize(xs.data(), q.data(), dtype::i8, 1, 1, 64, &s, &z, dtype::i8, false);
  for (std::size_t i = 0; i < xs.size(); ++i) CHECK(q[i] == onnx_quantize(xs[i], s, 0, -128, 127));
  // A null zero point is 0.
  std::vector<std::uint8_t> qu(xs.size());
  q8::quantize(xs.data(), qu.data(), dtype::u8, 1, 1, 64, &s, nullptr, dtype::u8, false);
  for (std::size_t i = 0; i < xs.size(); ++i) CHECK(qu[i] == onnx_quantize(xs[i], s, 0, 0, 255));
}

TEST_CASE("quantize and dequantize per axis, along the first, a middle and the last axis") {
  std::mt19937 rng(12);
  const std::int64_t dims[3] = {5, 7, 19};
  for (const auto& c : quantize_cases)
    for (int axis = 0; axis < 3; ++axis) {
      CAPTURE(partita::name_of(c.t));
      CAPTURE(axis);
      std::int64_t outer = 1, inner = 1;
      for (int d = 0; d < axis; ++d) outer *= dims[d];
      for (int d = axis + 1; d < 3; ++d) inner *= dims[d];
      const std::int64_t len = dims[axis], n = outer * len * inner;
      std::vector<float> scale(static_cast<std::size_t>(len));
      auto zp = integer_buffer(len);
      std::uniform_real_distribution<float> sd(0.01f, 2.0f);
      std::uniform_int_distribution<std::int64_t> zd(lowest(c.t) == 0 ? 0 : -128, lowest(c.t) == 0 ? 255 : 127);
      for (std::int64_t a = 0; a < len; ++a) {
        scale[static_cast<std::size_t>(a)] = a % 3 == 0 ? 0.5f : sd(rng);
        // The ends of the range among random zero points.
        store_zero_point(zp, c.t, a, a == 0 ? c.zp : a == 1 ? lowest(c.t == dtype::i32 ? dtype::i8 : c.t) : zd(rng));
      }
      const auto x = quantize_inputs(rng, n, 1.0f);
      auto q = integer_buffer(n);
      q8::quantize(x.data(), q.data(), c.t, outer, len, inner, scale.data(), zp.data(), c.t, true);
      std::vector<float> y(static_cast<std::size_t>(n));
      q8::dequantize(q.data(), c.t, y.data(), outer, len, inner, scale.data(), zp.data(), true);
      // The reference backend's quantize and dequantize give the same values.
      auto q_ref = integer_buffer(n);
      std::vector<float> y_ref(static_cast<std::size_t>(n));
      ref::quantize(x.data(), n, scale.data(), zp.data(), c.t, len, inner, true, q_ref.data());
      ref::dequantize(q.data(), c.t, n, scale.data(), zp.data(), len, inner, true, y_ref.data());
      REQUIRE(q == q_ref);
      REQUIRE(std::memcmp(y.data(), y_ref.data(), sizeof(float) * y.size()) == 0);
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t a = (i / inner) % len;
        const float s = scale[static_cast<std::size_t>(a)];
        const std::int64_t z = element(zp, c.t, a), qi = element(q, c.t, i);
        CAPTURE(i);
        CAPTURE(x[static_cast<std::size_t>(i)]);
        REQUIRE(qi == onnx_quantize(x[static_cast<std::size_t>(i)], s, z, lowest(c.t), highest(c.t)));
        REQUIRE(std::bit_cast<std::uint32_t>(y[static_cast<std::size_t>(i)]) ==
                std::bit_cast<std::uint32_t>(static_cast<float>(qi - z) * s));
      }
    }
}

TEST_CASE("dequantize per tensor is ONNX's DequantizeLinear, bit for bit") {
  std::mt19937 rng(13);
  for (const auto& c : quantize_cases)
    for (std::int64_t n : {1, 9, 31, 1003}) {
      CAPTURE(partita::name_of(c.t));
      CAPTURE(n);
      auto q = integer_buffer(n), zp = integer_buffer(1);
      std::uniform_int_distribution<std::int64_t> qd(c.t == dtype::i32 ? -100000 : lowest(c.t),
                                                     c.t == dtype::i32 ? 100000 : highest(c.t));
      for (std::int64_t i = 0; i < n; ++i) ref::store_integer(q.data(), c.t, i, i < 2 ? (i == 0 ? lowest(c.t) : highest(c.t)) : qd(rng));
      store_zero_point(zp, c.t, 0, c.zp);
      const float scale = 0.0371f;
      std::vector<float> y(static_cast<std::size_t>(n));
      q8::dequantize(q.data(), c.t, y.data(), 1, n, 1, &scale, zp.data(), false);
      for (std::int64_t i = 0; i < n; ++i)
        REQUIRE(std::bit_cast<std::uint32_t>(y[static_cast<std::size_t>(i)]) ==
                std::bit_cast<std::uint32_t>(static_cast<float>(element(q, c.t, i) - c.zp) * scale));
    }
}

namespace {

template <class T>
std::vector<T> random_bytes(std::mt19937& rng, std::int64_t n) {
  std::uniform_int_distribution<int> d(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

template <class T>
std::int32_t random_zero_point(std::mt19937& rng, int pick) {
  if (pick == 0) return std::numeric_limits<T>::min();
  if (pick == 1) return std::numeric_limits<T>::max();
  return std::uniform_int_distribution<int>(std::numeric_limits<T>::min(), std::numeric_limits<T>::max())(rng);
}

template <class T>
constexpr dtype type_of() {
  return std::is_unsigned_v<T> ? dtype::u8 : dtype::i8;
}

template <class T>
void check_qadd() {
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> sd(0.002f, 0.2f);
  for (int trial = 0; trial < 60; ++trial) {
    const std::int64_t n = trial % 5 == 0 ? 1 + trial : 1003 + trial;
    const auto a = random_bytes<T>(rng, n), b = random_bytes<T>(rng, n);
    // Trials 0-19 zero points at the ends, 20-39 an output scale that saturates both ends
    // (inputs large against it), the rest random; every third with a fused relu or clip.
    const int pick = trial < 20 ? trial % 2 : 2;
    const q8::qparams qa{sd(rng), random_zero_point<T>(rng, pick)}, qb{sd(rng), random_zero_point<T>(rng, 1 - pick % 2)};
    const q8::qparams qy{trial >= 20 && trial < 40 ? 0.001f : sd(rng), random_zero_point<T>(rng, pick == 2 ? 2 : pick)};
    std::int32_t lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    if (trial % 3 == 1) lo = std::max(lo, qy.zp);                        // relu
    if (trial % 3 == 2) hi = std::min(hi, q8::output_bounds(type_of<T>(), qy.scale, qy.zp, 0.0f, 6.0f).hi), lo = std::max(lo, qy.zp);
    std::vector<T> y(static_cast<std::size_t>(n)), expected(static_cast<std::size_t>(n));
    q8::qadd(a.data(), qa, b.data(), qb, y.data(), qy, type_of<T>(), n, lo, hi);
    ref::qadd(a.data(), {qa.scale, qa.zp}, b.data(), {qb.scale, qb.zp}, expected.data(), {qy.scale, qy.zp}, n, lo, hi);
    CAPTURE(trial);
    REQUIRE(y == expected);
  }
}

template <class T>
void check_qconcat() {
  std::mt19937 rng(22);
  std::uniform_real_distribution<float> sd(0.002f, 0.2f);
  for (int trial = 0; trial < 20; ++trial) {
    const std::int64_t outer = 1 + trial % 3, inner = trial % 2 ? 1 : 13 + trial;
    const std::int64_t len[3] = {3, 1 + trial, 5};
    const q8::qparams qy{sd(rng), random_zero_point<T>(rng, trial % 3)};
    // The first input quantized as the output (a copy), the others not; the second with a
    // tiny scale against a large one so that both ends saturate.
    const q8::qparams qin[3] = {qy, {qy.scale * 40.0f, random_zero_point<T>(rng, (trial + 1) % 3)},
                                {sd(rng), random_zero_point<T>(rng, 2)}};
    const ref::qparams rin[3] = {{qin[0].scale, qin[0].zp}, {qin[1].scale, qin[1].zp}, {qin[2].scale, qin[2].zp}};
    std::vector<T> x[3];
    for (int i = 0; i < 3; ++i) x[i] = random_bytes<T>(rng, outer * len[i] * inner);
    const void* in[3] = {x[0].data(), x[1].data(), x[2].data()};
    const T* rin_data[3] = {x[0].data(), x[1].data(), x[2].data()};
    const std::int64_t n = outer * (len[0] + len[1] + len[2]) * inner;
    std::vector<T> y(static_cast<std::size_t>(n)), expected(static_cast<std::size_t>(n));
    q8::qconcat(in, qin, len, 3, y.data(), qy, type_of<T>(), outer, inner);
    ref::qconcat(rin_data, rin, len, 3, expected.data(), {qy.scale, qy.zp}, outer, inner);
    CAPTURE(trial);
    REQUIRE(y == expected);
  }
}

struct pool_case {
  int h, w, kh, kw, sh, sw, ph, pw, ph_end, pw_end;
  bool count_include_pad, ceil_mode;
};

// Geometries: odd planes wider than a vector (32 bytes), strides 1-3, pads before and after
// (asymmetric too), ceil mode.
const pool_case pool_cases[] = {
    {9, 11, 3, 3, 1, 1, 1, 1, -1, -1, false, false}, {9, 11, 3, 3, 1, 1, 1, 1, -1, -1, true, false},
    {37, 70, 3, 3, 1, 1, 1, 1, -1, -1, false, false}, {37, 70, 3, 3, 1, 1, 1, 1, -1, -1, true, false},
    {35, 67, 3, 3, 2, 2, 1, 1, -1, -1, true, false}, {35, 67, 3, 3, 2, 2, 1, 1, -1, -1, false, true},
    {36, 72, 2, 2, 2, 2, 0, 0, -1, -1, false, false}, {33, 97, 5, 4, 3, 3, 2, 1, 1, 3, true, true},
    {33, 97, 5, 4, 3, 3, 2, 1, 1, 3, false, true},    {8, 40, 1, 1, 1, 1, 0, 0, -1, -1, false, false},
    {17, 45, 7, 7, 1, 2, 3, 3, 0, 2, true, false},    {17, 45, 2, 5, 2, 1, 1, 2, 0, 0, false, true},
};

partita::attrs pool_attrs(const pool_case& c) {
  partita::attrs a{};
  a.window = {c.kh, c.kw};
  a.stride = {c.sh, c.sw};
  a.padding = {c.ph, c.pw};
  a.padding_end = {c.ph_end, c.pw_end};
  a.count_include_pad = c.count_include_pad;
  a.ceil_mode = c.ceil_mode;
  return a;
}

template <class T>
void check_pools() {
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> sd(0.002f, 0.2f);
  int trial = 0;
  for (const auto& c : pool_cases) {
    const partita::attrs a = pool_attrs(c);
    const partita::shape xs{4, {2, 3, c.h, c.w}};
    const partita::shape ys{4,
                            {2, 3, partita::rules::pool_out(c.h, c.kh, c.sh, c.ph, partita::end_padding(a, 0), c.ceil_mode),
                             partita::rules::pool_out(c.w, c.kw, c.sw, c.pw, partita::end_padding(a, 1), c.ceil_mode)}};
    const auto g = partita::detail::cpu::make_pool_geometry(xs, ys, a);
    const std::int64_t n_out = 6 * ys[2] * ys[3];
    const auto x = random_bytes<T>(rng, 6 * c.h * c.w);
    for (int pick = 0; pick < 3; ++pick, ++trial) {
      CAPTURE(trial);
      const q8::qparams qx{sd(rng), random_zero_point<T>(rng, pick)};
      // An output scale small against the input's saturates; the others do not.
      const q8::qparams qy{pick == 1 ? qx.scale / 8.0f : sd(rng), random_zero_point<T>(rng, 2 - pick)};
      std::vector<T> y(static_cast<std::size_t>(n_out)), expected(static_cast<std::size_t>(n_out));
      q8::qavg_pool2d(x.data(), qx, y.data(), qy, type_of<T>(), g);
      ref::qavg_pool2d(x.data(), xs, {qx.scale, qx.zp}, expected.data(), ys, {qy.scale, qy.zp}, a);
      REQUIRE(y == expected);
    }
    std::vector<T> y(static_cast<std::size_t>(n_out)), expected(static_cast<std::size_t>(n_out));
    q8::qmax_pool2d(x.data(), y.data(), type_of<T>(), g);
    ref::qmax_pool2d(x.data(), xs, expected.data(), ys, a);
    REQUIRE(y == expected);
  }
  // Global pooling: planes of 1, of fewer and more bytes than a vector, and a large one.
  for (std::int64_t area : {1, 7, 49, 1025, 224 * 224 + 3})
    for (int pick = 0; pick < 3; ++pick) {
      CAPTURE(area);
      const std::int64_t planes = area > 5000 ? 2 : 17;
      const auto x = random_bytes<T>(rng, planes * area);
      const q8::qparams qx{sd(rng), random_zero_point<T>(rng, pick)}, qy{pick == 1 ? qx.scale / 8.0f : sd(rng), random_zero_point<T>(rng, 2 - pick)};
      std::vector<T> y(static_cast<std::size_t>(planes)), expected(static_cast<std::size_t>(planes));
      q8::qglobal_avg_pool2d(x.data(), qx, y.data(), qy, type_of<T>(), planes, area);
      ref::qglobal_avg_pool2d(x.data(), {qx.scale, qx.zp}, expected.data(), {qy.scale, qy.zp}, planes, area);
      REQUIRE(y == expected);
    }
}

}  // namespace

TEST_CASE("qadd equals its oracle: u8 and i8, zero points at the ends, saturation, relu and clip") {
  check_qadd<std::uint8_t>();
  check_qadd<std::int8_t>();
}

TEST_CASE("qadd's arithmetic, by hand") {
  // (10 - 0) · (0.5 / 1) + (3 - 1) · (0.25 / 1) = 5.5 → 6 (even), + zy 2 = 8.
  const std::uint8_t a = 10, b = 3;
  std::uint8_t y = 0;
  q8::qadd(&a, {0.5f, 0}, &b, {0.25f, 1}, &y, {1.0f, 2}, dtype::u8, 1, 0, 255);
  CHECK(y == 8);
  // 4.5 → 4 (even) + 2 = 6; a relu at zy keeps it; a clip at 5 cuts it.
  const std::uint8_t b2 = 1;
  q8::qadd(&a, {0.45f, 1}, &b2, {0.25f, 1}, &y, {1.0f, 2}, dtype::u8, 1, 2, 255);
  CHECK(y == 6);
  q8::qadd(&a, {0.45f, 1}, &b2, {0.25f, 1}, &y, {1.0f, 2}, dtype::u8, 1, 2, 5);
  CHECK(y == 5);
}

TEST_CASE("qconcat equals its oracle, copying the inputs quantized as the output") {
  check_qconcat<std::uint8_t>();
  check_qconcat<std::int8_t>();
}

TEST_CASE("int8 average, global average and max pooling equal their oracles") {
  check_pools<std::uint8_t>();
  check_pools<std::int8_t>();
}

TEST_CASE("int8 average pooling, by hand: count_include_pad divides by the padded window") {
  // One 2×2 plane of u8 zp 10, scale 1; a 3×3 window, pad 1, stride 2: the single window holds
  // the four values (x - 10 = 1, 2, 3, 6: sum 12) and five padded cells.
  const std::uint8_t x[4] = {11, 12, 13, 16};
  partita::attrs a{};
  a.window = {3, 3};
  a.stride = {2, 2};
  a.padding = {1, 1};
  const partita::shape xs{4, {1, 1, 2, 2}}, ys{4, {1, 1, 1, 1}};
  std::uint8_t y = 0;
  a.count_include_pad = false;  // 12 / 4 = 3, + zy 0
  q8::qavg_pool2d(x, {1.0f, 10}, &y, {1.0f, 0}, dtype::u8, partita::detail::cpu::make_pool_geometry(xs, ys, a));
  CHECK(y == 3);
  a.count_include_pad = true;  // 12 / 9 = 1.33 → 1
  q8::qavg_pool2d(x, {1.0f, 10}, &y, {1.0f, 0}, dtype::u8, partita::detail::cpu::make_pool_geometry(xs, ys, a));
  CHECK(y == 1);
}
