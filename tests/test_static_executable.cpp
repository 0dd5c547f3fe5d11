// static_executable: weights read in place from a table compiled into the program, the arena a
// member; the same outputs as compiled<> with those weights bound, on the reference and on cpu.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include <partita/partita.hpp>

#include <models/tiny/seeded.hpp>

namespace {
using namespace partita;

// A small CNN: conv + bias + relu, depthwise, pooling, dense; one weight is a literal.
using x = input<"x", f32, 1, 3, 8, 8>;
using c1 = relu<bias_add<conv2d<x, weight<"c1.w", f32, 8, 3, 3, 3>, {.padding = {1, 1}}>, weight<"c1.b", f32, 8>>>;
using dw = clip<conv2d<c1, weight<"dw.w", f32, 8, 1, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}, .groups = 8}>, 0.f, 6.f>;
using pooled = flatten<global_avg_pool2d<dw>>;
using logits = bias_add<dense<pooled, weight<"fc.w", f32, 4, 8>>, literal<dims<4>, 0.5f, -0.25f, 0.125f, 1.f>>;
using net = model<logits>;

constexpr auto c1_w = models::tiny::uniform<8 * 3 * 3 * 3>(1, 0.25f);
constexpr auto c1_b = models::tiny::uniform<8>(2, 0.1f);
constexpr auto dw_w = models::tiny::uniform<8 * 9>(3, 0.4f);
constexpr auto fc_w = models::tiny::uniform<4 * 8>(4, 0.5f);

struct table {
  static constexpr std::array tensors{
      static_tensor{"fc.w", f32, shape{2, {4, 8}}, fc_w.data()},  // any order: found by name
      static_tensor{"c1.w", f32, shape{4, {8, 3, 3, 3}}, c1_w.data()},
      static_tensor{"c1.b", f32, shape{1, {8}}, c1_b.data()},
      static_tensor{"dw.w", f32, shape{4, {8, 1, 3, 3}}, dw_w.data()},
      static_tensor{"unused", f32, shape{1, {1}}, c1_b.data()},  // a table may hold more than the model reads
  };
};

// The executables live at namespace scope, as on a microcontroller: static storage, no heap.
static_executable<net, table, reference> on_reference;
static_executable<net, table, cpu> on_cpu;

weight_set bound_weights() {
  weight_set w;
  w.add("c1.w", std::span<const float>(c1_w), {8, 3, 3, 3})
      .add("c1.b", std::span<const float>(c1_b), {8})
      .add("dw.w", std::span<const float>(dw_w), {8, 1, 3, 3})
      .add("fc.w", std::span<const float>(fc_w), {4, 8});
  return w;
}

}  // namespace

TEST_CASE("static_executable: the weights where they lie, the same outputs as compiled<> with them bound") {
  static_assert(std::is_same_v<decltype(on_reference)::input_span<0>, std::span<const float, 192>>);
  static_assert(std::is_same_v<decltype(on_reference)::output_span<0>, std::span<float, 4>>);
  static_assert(decltype(on_reference)::weight_bytes == (216 + 8 + 72 + 32 + 4) * sizeof(float));
  // The arena is part of the object: its size is known before the program runs.
  static_assert(sizeof(on_reference) >= decltype(on_reference)::arena_bytes);

  const std::vector<float> in = [] {
    const auto v = models::tiny::uniform<192>(9, 1.f);
    return std::vector<float>(v.begin(), v.end());
  }();
  std::array<float, 192> in_array{};
  std::copy(in.begin(), in.end(), in_array.begin());

  compiled<net, reference> oracle;
  oracle.bind(bound_weights());
  std::vector<float> want(4);
  oracle.run(in, want);

  std::array<float, 4> got{}, got_cpu{};
  on_reference.run(in_array, got);
  on_cpu.run(in_array, got_cpu);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(got[i] == want[i]);  // the same kernels on the same weights: bit for bit
    CHECK(got_cpu[i] == doctest::Approx(want[i]).epsilon(1e-5));
  }
  // The literal bias is read from the program too.
  CHECK(want[0] != 0.f);

  // A second run over the same arena gives the same answer.
  std::array<float, 4> again{};
  on_reference.run(in_array, again);
  CHECK(again == got);
}

namespace {
// Two outputs and no weights.
using y = input<"y", f32, 1, 4>;
static_executable<model<relu<y>, neg<y>>, no_static_weights, reference> two_outputs;
}  // namespace

TEST_CASE("static_executable: outputs that overlap are refused before anything runs") {
  const std::array<float, 4> in{1.f, -2.f, 3.f, -4.f};
  std::array<float, 4> a{}, b{};
  two_outputs.run(in, a, b);
  CHECK(a == std::array<float, 4>{1.f, 0.f, 3.f, 0.f});
  CHECK(b == std::array<float, 4>{-1.f, 2.f, -3.f, 4.f});
  std::array<float, 4> both{9.f, 9.f, 9.f, 9.f};
  CHECK_THROWS_AS(two_outputs.run(in, both, both), partita::error);
  CHECK(both == std::array<float, 4>{9.f, 9.f, 9.f, 9.f});
}
