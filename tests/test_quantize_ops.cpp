// quantize and dequantize (ONNX's QuantizeLinear and DequantizeLinear): shapes and dtypes,
// rounding half to even, saturation, per-tensor and per-axis parameters, literals and weights,
// on the reference and cpu backends.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include <partita/partita.hpp>

using namespace partita;

namespace {

using x = input<"x", f32, 1, 8>;
// Literal parameters: a scale of 0.5 and a zero point of 10 (u8) or -3 (i8).
using q_u8 = quantize<x, scalar<0.5f>, int_scalar<u8, 10>>;
using q_i8 = quantize<x, scalar<0.5f>, int_scalar<i8, -3>>;
static_assert(q_u8::desc.type == u8 && q_u8::desc.out == shape_of<1, 8>);
static_assert(q_i8::desc.type == i8);
static_assert(dequantize<q_i8, scalar<0.5f>, int_scalar<i8, -3>>::desc.type == f32);
// Per-axis parameters along the channels of an NCHW tensor, as weights.
using img = input<"img", f32, 1, 3, 2, 2>;
using q_img = quantize<img, weight<"s", f32, 3>, weight<"zp", i8, 3>>;
using dq_img = dequantize<q_img, weight<"s", f32, 3>, weight<"zp", i8, 3>>;
static_assert(q_img::desc.type == i8 && dq_img::desc.out == shape_of<1, 3, 2, 2>);
// A one-element rank-1 scale is per tensor (PyTorch exports them so).
static_assert(quantize<img, weight<"s1", f32, 1>, weight<"z1", u8, 1>>::desc.type == u8);

const std::vector<float> values{0.25f, 0.75f, -0.25f, -0.75f, 1.25f, 1000.f, -1000.f, 3.1f};

template <class Backend>
void check_quantize() {
  SUBCASE("u8: ties to even, then saturation at 0 and 255") {
    compiled<model<q_u8>, Backend> exe;
    std::vector<std::uint8_t> q(8);
    exe.run(values, q);
    // x / 0.5: 0.5, 1.5, -0.5, -1.5, 2.5, 2000, -2000, 6.2 -> 0, 2, -0, -2, 2, 2000, -2000, 6, then + 10.
    CHECK(q == std::vector<std::uint8_t>{10, 12, 10, 8, 12, 255, 0, 16});
  }
  SUBCASE("i8, and back through dequantize") {
    compiled<model<q_i8, dequantize<q_i8, scalar<0.5f>, int_scalar<i8, -3>>>, Backend> exe;
    std::vector<std::int8_t> q(8);
    std::vector<float> back(8);
    exe.run(values, q, back);
    CHECK(q == std::vector<std::int8_t>{-3, -1, -3, -5, -1, 127, -128, 3});
    CHECK(back == std::vector<float>{0, 1, 0, -1, 1, 65, -62.5f, 3});
  }
  SUBCASE("per channel, parameters bound as weights") {
    compiled<model<q_img, dq_img>, Backend> exe;
    const std::vector<float> s{0.1f, 1.f, 4.f};
    const std::vector<std::int8_t> zp{0, 5, -128};
    exe.bind(weight_set{}
                 .add("s", s, {3})
                 .add("zp", dtype::i8, std::as_bytes(std::span<const std::int8_t>(zp)), {3}));
    const std::vector<float> in{0.1f, 0.2f, -0.3f, 20.f, 1.f, 2.f, -3.f, 200.f, 1.f, 2.f, 6.f, 1000.f};
    std::vector<std::int8_t> q(12);
    std::vector<float> back(12);
    exe.run(in, q, back);
    CHECK(q == std::vector<std::int8_t>{1, 2, -3, 127, 6, 7, 2, 127, -128, -128, -126, 122});
    CHECK(back[3] == doctest::Approx(12.7f));
    CHECK(back[7] == 122.f);
    CHECK(back[8] == 0.f);
    CHECK(back[10] == 8.f);
    CHECK(back[11] == 1000.f);
  }
}

}  // namespace

TEST_CASE("quantize and dequantize on the reference backend") { check_quantize<reference>(); }
TEST_CASE("quantize and dequantize on the cpu backend") { check_quantize<cpu>(); }

TEST_CASE("the printer shows integer literals with their dtype") {
  const std::string s = print(module_of<model<q_u8>>{});
  CHECK(s.find("quantize(%x, 0.5, 10:u8)") != std::string::npos);
}

TEST_CASE("a u8 input runs from a std::uint8_t buffer") {
  using qin = input<"q", u8, 1, 4>;
  compiled<model<dequantize<qin, scalar<0.25f>, int_scalar<u8, 128>>>, cpu> exe;
  const std::vector<std::uint8_t> q{0, 127, 128, 255};
  std::vector<float> y(4);
  exe.run(q, y);
  CHECK(y == std::vector<float>{-32.f, -0.25f, 0.f, 31.75f});
}
