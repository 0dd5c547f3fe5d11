// Per-step profiling (`compiled::profile`, `print_profile`), in a program built with
// PARTITA_PROFILE: every run adds each step's time; a reset starts afresh; the table names
// each step's backend, composite or op and shape, and lists the slowest.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <partita/partita.hpp>

using namespace partita;

static_assert(profiling, "this test is built with PARTITA_PROFILE");

namespace {
using x = input<"x", f32, 1, 8, 12, 12>;
using net = model<softmax<relu<bias_add<conv2d<x, weight<"w", f32, 16, 8, 3, 3>, {.padding = {1, 1}}>,
                                        weight<"b", f32, 16>>>,
                          1>>;
using exe_t = compiled<net, cpu>;
static_assert(exe_t::num_steps == 2);
}  // namespace

TEST_CASE("a profiled executable times each step of every run, and prints the table") {
  std::vector<float> w(16 * 8 * 9, 0.01f), b(16, 0.1f), in(8 * 12 * 12, 1.f), out(16 * 12 * 12);
  weight_set weights;
  weights.add("w", w, {16, 8, 3, 3});
  weights.add("b", b, {16});
  exe_t exe;
  exe.bind(weights);
  CHECK(exe.profile().runs == 0);
  CHECK(print_profile(exe).find("has not run") != std::string::npos);
  for (int i = 0; i < 3; ++i) exe.run(in, out);
  CHECK(exe.profile().runs == 3);
  for (std::size_t s = 0; s < exe_t::num_steps; ++s) {
    CHECK(exe.profile().ns[s] > 0);
    CHECK(exe.profile().mean_us(s) > 0);
  }
  CHECK(exe.profile().total_us() >= exe.profile().mean_us(0) + exe.profile().mean_us(1));

  const std::string table = print_profile(exe, 1);
  INFO(table);
  CHECK(table.find("profile: 3 runs") != std::string::npos);
  CHECK(table.find("cpu.conv2d_bias_act") != std::string::npos);
  CHECK(table.find("softmax") != std::string::npos);
  CHECK(table.find("[1, 16, 12, 12]") != std::string::npos);
  CHECK(table.find("slowest 1:") != std::string::npos);

  exe.reset_profile();
  CHECK(exe.profile().runs == 0);
  CHECK(exe.profile().ns[0] == 0);
  exe.run(in, out);
  CHECK(exe.profile().runs == 1);

  // A moved executable keeps its profile.
  exe_t moved = std::move(exe);
  CHECK(moved.profile().runs == 1);
}
