// The cpu backend's int8 conv2d, dense and matmul kernels (detail/int8/) against the plain
// integer oracles (reference/qgemm_kernels.hpp): random shapes and data from a fixed seed, every
// combination the kernels branch on (u8 and i8 on each side, zero points at the ends of their
// range, per-tensor and per-channel weights, fused relu and clip, saturation at both ends,
// groups, depthwise, strides, padding, dilation, 1×1, odd depths). Both follow the same rule, so
// every output must be equal, bit for bit. test_cpu_int8_kernels_portable compiles this file
// again with PARTITA_INT8_PORTABLE, for the kernels' portable path.
#include "partita/backends/cpu/detail/int8/qconv.hpp"
#include "partita/backends/cpu/detail/int8/qdense.hpp"
#include "partita/backends/reference/qgemm_kernels.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace int8 = partita::detail::cpu::int8;
namespace ref = partita::reference_kernels;
using partita::dtype;

namespace {

constexpr float inf = std::numeric_limits<float>::infinity();

/// The quantization of one run: types, zero points, whether the weights have a scale and zero
/// point per output, and the fused activation.
struct variant {
  dtype x_type;
  std::int32_t x_zp;  // -1000: random
  dtype w_type;
  std::int32_t w_zp;  // -1000: random (per output when per-channel)
  bool per_channel;
  dtype y_type;
  std::int32_t y_zp;  // -1000: random
  float act_lo, act_hi;
};

constexpr std::int32_t random_zp = -1000;

const variant variants[] = {
    {dtype::u8, 128, dtype::i8, 0, true, dtype::u8, 128, -inf, inf},
    {dtype::u8, 0, dtype::i8, -128, false, dtype::u8, 0, 0.f, inf},       // relu
    {dtype::u8, 255, dtype::u8, 255, true, dtype::i8, -128, -inf, inf},
    {dtype::i8, -128, dtype::i8, 127, true, dtype::i8, 127, -1.f, 2.f},   // clip
    {dtype::i8, 127, dtype::u8, 0, false, dtype::i8, 0, 0.f, inf},        // relu
    {dtype::u8, random_zp, dtype::i8, random_zp, true, dtype::u8, random_zp, 0.f, 6.f},
    {dtype::i8, random_zp, dtype::i8, random_zp, false, dtype::u8, 255, -inf, inf},
};

std::int32_t lowest(dtype t) { return t == dtype::u8 ? 0 : -128; }
std::int32_t highest(dtype t) { return t == dtype::u8 ? 255 : 127; }

/// The inputs and quantization parameters of one run, drawn from `rng`.
struct operands {
  std::vector<std::uint8_t> x, w;  // bytes of the type the variant gives
  float x_scale = 0, y_scale = 0;
  std::int32_t x_zp = 0, y_zp = 0;
  std::vector<float> w_scale, bias;
  std::vector<std::int32_t> w_zp;
};

std::int32_t pick_zp(std::mt19937& rng, std::int32_t zp, dtype t) {
  return zp != random_zp ? zp : std::uniform_int_distribution<std::int32_t>(lowest(t), highest(t))(rng);
}

std::vector<std::uint8_t> random_bytes(std::mt19937& rng, std::size_t n) {
  std::vector<std::uint8_t> v(n);
  std::uniform_int_distribution<int> d(0, 255);
  for (auto& b : v) b = static_cast<std::uint8_t>(d(rng));
  return v;
}

/// Draws data and scales for `outputs` outputs of depth `k`; the output scale spreads the sums
/// over about ±80 steps, so that some outputs saturate at each end and most do not.
operands draw(std::mt19937& rng, const variant& v, std::size_t x_count, std::size_t w_count, int outputs, int k,
              bool with_bias) {
  operands o;
  o.x = random_bytes(rng, x_count);
  o.w = random_bytes(rng, w_count);
  std::uniform_real_distribution<float> unit(0.5f, 1.5f);
  o.x_scale = 0.02f * unit(rng);
  o.x_zp = pick_zp(rng, v.x_zp, v.x_type);
  const int n = v.per_channel ? outputs : 1;
  for (int i = 0; i < n; ++i) {
    o.w_scale.push_back(0.005f * unit(rng));
    o.w_zp.push_back(pick_zp(rng, v.w_zp, v.w_type));
  }
  o.y_zp = pick_zp(rng, v.y_zp, v.y_type);
  const double mx = (lowest(v.x_type) + highest(v.x_type)) / 2.0 - o.x_zp;
  const double mw = (lowest(v.w_type) + highest(v.w_type)) / 2.0 - o.w_zp[0];
  const double spread = std::sqrt(static_cast<double>(k)) * 150.0 * 150.0 + k * std::abs(mx * mw);
  o.y_scale = static_cast<float>(o.x_scale * o.w_scale[0] * spread / 80.0);
  if (with_bias) {
    std::uniform_int_distribution<int> b(-30000, 30000);
    for (int i = 0; i < outputs; ++i) {
      const float s = o.x_scale * o.w_scale[v.per_channel ? i : 0];
      // Most biases as exporters quantize them (a multiple of s_x · s_w), some arbitrary.
      o.bias.push_back(i % 3 == 2 ? static_cast<float>(b(rng)) * 1e-3f : static_cast<float>(b(rng)) * s);
    }
  }
  return o;
}

/// Outputs at the low end, at the high end and between them, over the whole test: each must occur.
struct coverage {
  std::int64_t low = 0, high = 0, between = 0;
};
coverage seen;

void compare(const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& want, dtype y_type,
             const std::string& what) {
  INFO(what);
  REQUIRE(got.size() == want.size());
  std::size_t bad = 0, first = got.size();
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) {
      if (bad++ == 0) first = i;
    }
  if (bad) {
    const auto value = [&](std::uint8_t b) { return y_type == dtype::u8 ? int{b} : int{static_cast<std::int8_t>(b)}; };
    FAIL_CHECK(bad << " of " << got.size() << " outputs differ; first at " << first << ": " << value(got[first])
                   << " (oracle " << value(want[first]) << ")");
  }
  for (std::uint8_t b : want) {
    const int q = y_type == dtype::u8 ? int{b} : int{static_cast<std::int8_t>(b)};
    if (q == lowest(y_type)) ++seen.low;
    else if (q == highest(y_type)) ++seen.high;
    else ++seen.between;
  }
}

std::string describe(const variant& v, int index) {
  return "variant " + std::to_string(index) + " (x " + std::string(partita::name_of(v.x_type)) + ", w " +
         std::string(partita::name_of(v.w_type)) + (v.per_channel ? " per channel" : " per tensor") + ", y " +
         std::string(partita::name_of(v.y_type)) + ")";
}

struct conv_case {
  int n, c, h, w, o, kh, kw, stride_h, stride_w, pad_top, pad_left, pad_bottom, pad_right, dil_h, dil_w, groups;
};

void check_conv(const conv_case& cc, partita::detail::cpu::state& st, std::mt19937& rng) {
  const int oh = (cc.h + cc.pad_top + cc.pad_bottom - (cc.kh - 1) * cc.dil_h - 1) / cc.stride_h + 1;
  const int ow = (cc.w + cc.pad_left + cc.pad_right - (cc.kw - 1) * cc.dil_w - 1) / cc.stride_w + 1;
  const int cg = cc.c / cc.groups, k = cg * cc.kh * cc.kw;
  int index = 0;
  for (const variant& v : variants) {
    const std::string what = "conv " + std::to_string(cc.c) + "x" + std::to_string(cc.h) + "x" + std::to_string(cc.w) +
                             " -> " + std::to_string(cc.o) + ", " + std::to_string(cc.kh) + "x" + std::to_string(cc.kw) +
                             " stride " + std::to_string(cc.stride_h) + " groups " + std::to_string(cc.groups) + ", " +
                             describe(v, index);
    const bool with_bias = index % 2 == 0;
    ++index;
    const std::size_t x_count = static_cast<std::size_t>(cc.n) * cc.c * cc.h * cc.w;
    const std::size_t y_count = static_cast<std::size_t>(cc.n) * cc.o * oh * ow;
    operands op = draw(rng, v, x_count, static_cast<std::size_t>(cc.o) * k, cc.o, k, with_bias);
    const int w_count = static_cast<int>(op.w_scale.size());

    std::vector<std::uint8_t> want(y_count), got(y_count, 0x5a);
    partita::conv2d_attrs a;
    a.stride = {cc.stride_h, cc.stride_w};
    a.padding = {cc.pad_top, cc.pad_left};
    a.padding_end = {cc.pad_bottom, cc.pad_right};
    a.dilation = {cc.dil_h, cc.dil_w};
    a.groups = cc.groups;
    ref::qconv2d(op.x.data(), partita::shape{4, {cc.n, cc.c, cc.h, cc.w}}, {v.x_type, op.x_scale, op.x_zp},
                 op.w.data(), partita::shape{4, {cc.o, cg, cc.kh, cc.kw}},
                 {v.w_type, op.w_scale.data(), op.w_zp.data(), w_count}, with_bias ? op.bias.data() : nullptr,
                 want.data(), partita::shape{4, {cc.n, cc.o, oh, ow}},
                 {v.y_type, op.y_scale, op.y_zp, v.act_lo, v.act_hi}, a);

    const int8::qconv_geometry g{cc.n,      cc.c,         cc.h,     cc.w,    cc.o,    cc.kh,    cc.kw,
                                 oh,        ow,           cc.stride_h, cc.stride_w, cc.pad_top, cc.pad_left,
                                 cc.dil_h,  cc.dil_w,     cc.groups,   v.x_type,    v.w_type,   v.y_type};
    const int8::qconv_params p{op.x_scale,  op.x_zp,   op.w_scale.data(), op.w_zp.data(),
                               w_count,     op.y_scale, op.y_zp,        with_bias ? op.bias.data() : nullptr,
                               v.act_lo,    v.act_hi};
    std::vector<std::uint32_t> packed((int8::qconv_packed_bytes(g) + 3) / 4);
    int8::qconv_prepare(g, op.w.data(), p, packed.data());
    st.need_scratch(0, int8::scratch_floats(int8::qconv_scratch_bytes(g)));
    int8::qconv_run(st, g, packed.data(), op.x.data(), got.data());
    compare(got, want, v.y_type, what);
  }
}

}  // namespace

TEST_CASE("int8: the requantization rounds half to even and clamps before it rounds") {
  const int8::requant r = int8::make_requant({0, 255}, 128);
  CHECK(int8::requantize(5, 0.5f, r) == 130);    // 2.5 -> 2
  CHECK(int8::requantize(7, 0.5f, r) == 132);    // 3.5 -> 4
  CHECK(int8::requantize(-5, 0.5f, r) == 126);   // -2.5 -> -2
  CHECK(int8::requantize(-7, 0.5f, r) == 124);   // -3.5 -> -4
  CHECK(int8::requantize(std::numeric_limits<std::int32_t>::max(), 1.f, r) == 255);
  CHECK(int8::requantize(std::numeric_limits<std::int32_t>::min(), 1.f, r) == 0);
  // relu: lo = zp; clip(-1, 2) at scale 0.1: lo = zp - 10, hi = zp + 20.
  CHECK(int8::output_bounds(dtype::u8, 0.1f, 128, 0.f, inf).lo == 128);
  CHECK(int8::output_bounds(dtype::i8, 0.1f, 0, -1.f, 2.f).lo == -10);
  CHECK(int8::output_bounds(dtype::i8, 0.1f, 0, -1.f, 2.f).hi == 20);
  CHECK(int8::output_bounds(dtype::i8, 0.01f, 100, -inf, 6.f).hi == 127);
  CHECK(int8::integer_bias(0.75f, 0.5f, 1.f) == 2);  // 1.5 -> 2
  CHECK(int8::integer_bias(1.25f, 0.5f, 1.f) == 2);  // 2.5 -> 2
#if PARTITA_INT8_AVX2
  // The vector requantization is the scalar one, lane for lane, over sums of every size.
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::int32_t> any(std::numeric_limits<std::int32_t>::min(),
                                                  std::numeric_limits<std::int32_t>::max());
  std::uniform_int_distribution<std::int32_t> small(-100000, 100000);
  std::uniform_real_distribution<float> ms(1e-6f, 1e-2f);
  const int8::requant ri = int8::make_requant({-100, 90}, -3);
  int differ = 0;
  for (int i = 0; i < 20000; ++i) {
    alignas(32) std::int32_t acc[8], q[8];
    for (auto& s : acc) s = i % 4 == 0 ? any(rng) : small(rng);
    const float m = ms(rng);
    _mm256_store_si256(reinterpret_cast<__m256i*>(q),
                       int8::requantize8(_mm256_load_si256(reinterpret_cast<const __m256i*>(acc)), _mm256_set1_ps(m),
                                         _mm256_set1_ps(ri.lo), _mm256_set1_ps(ri.hi), _mm256_set1_epi32(ri.zp)));
    for (int l = 0; l < 8; ++l) differ += q[l] != int8::requantize(acc[l], m, ri);
  }
  CHECK(differ == 0);
#endif
}

TEST_CASE("int8: conv2d equals the integer oracle") {
  const char* path = PARTITA_INT8_AVX2 ? "int8 kernels: the AVX2 path" : "int8 kernels: the portable path";
  MESSAGE(std::string(path));
  std::mt19937 rng(2024);
  partita::detail::cpu::state st;
  const conv_case cases[] = {
      // n, c, h, w, o, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, groups
      {1, 3, 17, 19, 8, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},      // first layer
      {1, 3, 23, 21, 5, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1},      // first layer, 7x7
      {2, 13, 9, 11, 21, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},     // 1x1, read in place
      {1, 16, 10, 10, 24, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1, 1},    // 1x1 stride 2
      {1, 64, 6, 5, 33, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},      // 1x1, depth 64
      {1, 7, 12, 13, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 37, 8, 9, 19, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},      // depth 333
      {3, 5, 7, 6, 4, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1},        // batch 3, no padding
      {1, 10, 11, 9, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},     // groups 2
      {1, 12, 9, 9, 12, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4},      // groups 4, stride 2
      {1, 5, 13, 12, 6, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1},      // dilation 2
      {1, 4, 10, 11, 5, 3, 3, 2, 2, 1, 0, 0, 1, 1, 1, 1},      // asymmetric padding
      {1, 6, 9, 14, 7, 1, 3, 1, 2, 0, 1, 0, 1, 1, 1, 1},       // 1x3, strides 1 and 2
      {1, 3, 21, 46, 6, 7, 7, 2, 2, 3, 3, 3, 3, 1, 1, 1},      // first layer, rows of whole vectors
      {1, 5, 6, 37, 4, 3, 3, 1, 1, 1, 2, 1, 0, 1, 2, 1},       // rows of whole vectors, dilation 1 by 2
      {1, 11, 14, 14, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 11},   // depthwise 3x3
      {2, 9, 15, 16, 9, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 9},      // depthwise 3x3 stride 2
      {1, 8, 13, 17, 8, 5, 5, 1, 1, 2, 2, 2, 2, 1, 1, 8},      // depthwise 5x5
      {1, 7, 16, 15, 7, 5, 5, 2, 2, 2, 2, 2, 2, 1, 1, 7},      // depthwise 5x5 stride 2
      {1, 6, 12, 12, 6, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 6},      // depthwise dilation 2
      {1, 5, 9, 10, 5, 3, 3, 2, 2, 1, 0, 0, 1, 1, 1, 5},       // depthwise, asymmetric padding
      {1, 4, 9, 75, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4},       // depthwise stride 2, rows of whole vectors
      {1, 3, 11, 53, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},      // depthwise, rows of whole vectors
      {1, 4, 13, 40, 4, 3, 3, 1, 2, 1, 0, 1, 2, 1, 1, 4},      // depthwise strides 1 and 2
      {1, 3, 14, 16, 3, 3, 3, 3, 3, 0, 1, 2, 1, 1, 1, 3},      // depthwise stride 3
      {1, 3, 12, 41, 3, 3, 5, 2, 2, 1, 2, 1, 2, 2, 1, 3},      // depthwise 3x5, dilation 2 by 1, stride 2
      {1, 5, 8, 8, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 5},       // channel multiplier 2
      {1, 32, 28, 28, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},    // large enough for both threads
      {1, 48, 28, 28, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 48},   // depthwise, both threads
  };
  for (const conv_case& cc : cases) check_conv(cc, st, rng);
}

TEST_CASE("int8: dense equals the integer oracle") {
  std::mt19937 rng(99);
  partita::detail::cpu::state st;
  const int shapes[][3] = {{1, 1, 1},    {1, 37, 50},  {3, 64, 24},  {5, 129, 49}, {17, 255, 100},
                           {64, 17, 7},  {70, 300, 33}, {2, 1000, 130}, {130, 64, 200}};
  for (const auto& s : shapes) {
    const int m = s[0], k = s[1], n = s[2];
    int index = 0;
    for (const variant& v : variants) {
      const std::string what =
          "dense " + std::to_string(m) + "x" + std::to_string(k) + " by " + std::to_string(n) + ", " + describe(v, index);
      const bool with_bias = index % 2 == 1;
      ++index;
      operands op = draw(rng, v, static_cast<std::size_t>(m) * k, static_cast<std::size_t>(n) * k, n, k, with_bias);
      const int w_count = static_cast<int>(op.w_scale.size());
      std::vector<std::uint8_t> want(static_cast<std::size_t>(m) * n), got(want.size(), 0x5a);
      ref::qdense(op.x.data(), {v.x_type, op.x_scale, op.x_zp}, op.w.data(),
                  {v.w_type, op.w_scale.data(), op.w_zp.data(), w_count}, with_bias ? op.bias.data() : nullptr,
                  want.data(), {v.y_type, op.y_scale, op.y_zp, v.act_lo, v.act_hi}, m, k, n);
      const int8::qdense_geometry g{m, k, n, v.x_type, v.w_type, v.y_type};
      const int8::qdense_params p{op.x_scale, op.x_zp,   op.w_scale.data(), op.w_zp.data(), w_count, op.y_scale,
                                  op.y_zp,    with_bias ? op.bias.data() : nullptr, v.act_lo, v.act_hi};
      std::vector<std::uint32_t> packed((int8::qdense_packed_bytes(g) + 3) / 4);
      int8::qdense_prepare(g, op.w.data(), p, packed.data());
      st.need_scratch(0, int8::scratch_floats(int8::qdense_scratch_bytes(g)));
      int8::qdense_run(st, g, packed.data(), op.x.data(), got.data());
      compare(got, want, v.y_type, what);
    }
  }
}

TEST_CASE("int8: matmul equals the integer oracle") {
  std::mt19937 rng(5);
  partita::detail::cpu::state st;
  struct mm_case {
    int batch, m, k, n;
    bool b_batched;
  };
  const mm_case cases[] = {{1, 1, 1, 1, true},    {2, 5, 33, 27, true},   {3, 16, 64, 50, false},
                           {4, 9, 7, 3, true},    {1, 70, 130, 100, true}, {12, 20, 64, 20, true},
                           {2, 100, 48, 96, false}};
  for (const mm_case& c : cases) {
    int index = 0;
    for (const variant& v : variants) {
      // B per tensor: the variant's weight type and first zero point.
      const variant per_tensor{v.x_type, v.x_zp, v.w_type, v.w_zp, false, v.y_type, v.y_zp, v.act_lo, v.act_hi};
      const std::string what = "matmul " + std::to_string(c.batch) + " x " + std::to_string(c.m) + "x" +
                               std::to_string(c.k) + " by " + std::to_string(c.n) + ", " + describe(per_tensor, index);
      ++index;
      const std::size_t b_count = static_cast<std::size_t>(c.b_batched ? c.batch : 1) * c.k * c.n;
      operands op = draw(rng, per_tensor, static_cast<std::size_t>(c.batch) * c.m * c.k, b_count, 1, c.k, false);
      std::vector<std::uint8_t> want(static_cast<std::size_t>(c.batch) * c.m * c.n), got(want.size(), 0x5a);
      ref::qmatmul(op.x.data(), {v.x_type, op.x_scale, op.x_zp}, op.w.data(), {v.w_type, op.w_scale[0], op.w_zp[0]},
                   c.b_batched, want.data(), {v.y_type, op.y_scale, op.y_zp, v.act_lo, v.act_hi}, c.batch, c.m, c.k,
                   c.n);
      const int8::qmatmul_geometry g{c.batch, c.m, c.k, c.n, c.b_batched, v.x_type, v.w_type, v.y_type};
      const int8::qmatmul_params p{op.x_scale, op.x_zp, op.w_scale[0], op.w_zp[0], op.y_scale, op.y_zp,
                                   v.act_lo,   v.act_hi};
      st.need_scratch(0, int8::scratch_floats(int8::qmatmul_scratch_bytes(g)));
      int8::qmatmul_run(st, g, p, op.x.data(), op.w.data(), got.data());
      compare(got, want, v.y_type, what);
    }
  }
}

TEST_CASE("int8: the cases reach both ends of the output range and the values between") {
  // After the cases above (doctest runs the test cases of a file in order of declaration).
  CHECK(seen.low > 0);
  CHECK(seen.high > 0);
  CHECK(seen.between > seen.low + seen.high);
}
