// Backends that compile whole partitions (graph-compiler granularity): one step per partition,
// the weights of the partition and of its composites handed over at bind, several results laid
// back to back, compile-time host fallback, and bind-time rejection.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <partita/partita.hpp>

#include <support/graph_compiler.hpp>

using namespace partita;
using test_backends::graph_npu;

namespace {

// Region 1 {add, relu}: both results are used outside it (the sum by the sigmoid), so the
// partition returns a tuple. Region 2 holds a multiply: the device refuses it, and it runs on cpu.
using x = input<"x", f32, 2, 33>;
using sum = add<x, weight<"offset", f32, 33>>;
using rect = relu<sum>;
using squash = sigmoid<sum>;
using square = multiply<squash, squash>;
using tail = relu<add<square, rect>>;
using net = model<tail, rect, squash>;

using parts = partition<net, graph_npu, cpu>;
static_assert(count_functions<parts, "gnpu"> == 1, "the multiply's partition fell back to the host");

using exe_t = compiled<net, graph_npu, cpu>;
using ref_t = compiled<net, reference>;

struct data {
  std::vector<float> offset = std::vector<float>(33), in = std::vector<float>(66);
  weight_set weights;
  data() {
    for (std::size_t i = 0; i < offset.size(); ++i) offset[i] = std::cos(static_cast<float>(i));
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = std::sin(static_cast<float>(i) * 0.7f);
    weights.add("offset", offset, {33});
  }
};

template <class Exe>
std::vector<std::vector<float>> run(Exe& exe, const data& d) {
  std::vector<std::vector<float>> out{std::vector<float>(66), std::vector<float>(66), std::vector<float>(66)};
  exe.run(d.in, out[0], out[1], out[2]);
  return out;
}

}  // namespace

TEST_CASE("a whole partition is one step, gets its weights at bind, and matches the reference") {
  // {add, relu} is one step; sigmoid, multiply, add and relu run on cpu.
  static_assert(exe_t::num_steps == 5);
  static_assert(exe_t::step_backend(0) == "gnpu" && exe_t::step_name(0).starts_with("gnpu_main_"));
  static_assert(exe_t::step_backend(1) == "cpu" && exe_t::step_name(1) == "sigmoid");
  const data d;
  auto exe = std::make_unique<exe_t>();
  exe->bind(d.weights);
  ref_t ref;
  ref.bind(d.weights);
  const auto want = run(ref, d);
  const auto got = run(*exe, d);
  for (std::size_t o = 0; o < want.size(); ++o)
    for (std::size_t i = 0; i < want[o].size(); ++i) CHECK(got[o][i] == doctest::Approx(want[o][i]).epsilon(1e-6));
  const auto& st = exe->state<graph_npu>();
  REQUIRE(st.compiled.size() == 1);
  CHECK(st.compiled[0].starts_with("gnpu_main_"));
  CHECK(st.runs == st.compiled);
  // Its one step is followed by cpu's: the executable lets it rest once per run.
  CHECK(st.rests == 1);
  run(*exe, d);
  CHECK(exe->state<graph_npu>().rests == 2);
}

TEST_CASE("a partition the backend refuses at bind is an error naming it; nothing is bound") {
  const data d;
  auto exe = std::make_unique<exe_t>();
  exe->state<graph_npu>().reject = true;
  try {
    exe->bind(d.weights);
    FAIL("bind accepted a refused partition");
  } catch (const error& e) {
    const std::string what = e.what();
    CHECK(what.find("backend 'gnpu' rejected step") != std::string::npos);
    CHECK(what.find("gnpu_main_") != std::string::npos);
    CHECK(what.find("the device is out of memory") != std::string::npos);
  }
  CHECK_FALSE(exe->bound());
  CHECK_THROWS_AS(run(*exe, d), error);
}
