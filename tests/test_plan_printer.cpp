// The plan printer, and the exact arena a small two-branch model gets: which buffers share
// offsets, when each is live, and where each step reads and writes.
#include <doctest/doctest.h>

#include <string>

#include <partita/partita.hpp>

using namespace partita;

namespace {

using x = input<"x", f32, 1, 8>;
using a = relu<dense<x, weight<"a.w", f32, 32, 8>>>;
using b = sigmoid<dense<x, weight<"b.w", f32, 16, 8>>>;
using y = add<dense<a, weight<"ya.w", f32, 4, 32>>, dense<b, weight<"yb.w", f32, 4, 16>>>;
using net = model<y>;
using exe = compiled<net, reference>;
constexpr const auto& plan = exe::plan;

// Greedy by size: the 128-byte buffer of branch a goes first at 0; branch a's 64-byte result,
// live until the add, takes 128; branch b's buffers reuse 0 (a's is dead by then) and 64.
static_assert(plan.arena_bytes == 192);
static_assert(plan.buffers.size() == 4);
static_assert(plan.buffers[0].offset == 0 && plan.buffers[0].bytes == 128 && plan.buffers[0].first == 0 && plan.buffers[0].last == 2);
static_assert(plan.buffers[1].offset == 128 && plan.buffers[1].bytes == 64 && plan.buffers[1].first == 2 && plan.buffers[1].last == 6);
static_assert(plan.buffers[2].offset == 0 && plan.buffers[2].bytes == 64 && plan.buffers[2].first == 3 && plan.buffers[2].last == 5);
static_assert(plan.buffers[3].offset == 64 && plan.buffers[3].bytes == 64 && plan.buffers[3].first == 5 && plan.buffers[3].last == 6);
// relu and sigmoid run in place; the add writes the caller's output.
static_assert(plan.steps[1].out.offset == plan.steps[0].out.offset && plan.steps[4].out.offset == plan.steps[3].out.offset);
static_assert(plan.steps[6].out.kind == storage::output && plan.copies.empty());
// Weights lie back to back, each aligned, in the order the steps first read them.
static_assert(plan.weights[1].name == "ya.w" && plan.weights[1].offset == 1024 && plan.weights[3].offset == 2048);

}  // namespace

TEST_CASE("print(plan) lists tensors, steps with their locations, and the arena with offsets and lifetimes") {
  const std::string want =
      "plan: 7 steps, arena 192 bytes in 4 buffers, weights 2304 bytes\n"
      "inputs:\n"
      "  in0 x f32[1, 8]\n"
      "outputs:\n"
      "  out0 output0 f32[1, 4]\n"
      "weights:\n"
      "  w0 a.w f32[32, 8] at 0 (1024 bytes)\n"
      "  w1 ya.w f32[4, 32] at 1024 (512 bytes)\n"
      "  w2 b.w f32[16, 8] at 1536 (512 bytes)\n"
      "  w3 yb.w f32[4, 16] at 2048 (256 bytes)\n"
      "steps:\n"
      "  0 host dense(in0, w0) -> arena+0 : f32[1, 32]\n"
      "  1 host relu(arena+0) -> arena+0 : f32[1, 32]\n"
      "  2 host dense(arena+0, w1) -> arena+128 : f32[1, 4]\n"
      "  3 host dense(in0, w2) -> arena+0 : f32[1, 16]\n"
      "  4 host sigmoid(arena+0) -> arena+0 : f32[1, 16]\n"
      "  5 host dense(arena+0, w3) -> arena+64 : f32[1, 4]\n"
      "  6 host add(arena+128, arena+64) -> out0 : f32[1, 4]\n"
      "arena:\n"
      "  buffer 0 at 0 (128 bytes) steps 0-2 |###.....|\n"
      "  buffer 1 at 128 (64 bytes) steps 2-6 |..#####.|\n"
      "  buffer 2 at 0 (64 bytes) steps 3-5 |...###..|\n"
      "  buffer 3 at 64 (64 bytes) steps 5-6 |.....##.|\n";
  CHECK(print(plan) == want);
}

TEST_CASE("print(plan) names each step's backend and the copies made after the last step") {
  // An output that is a model input is copied at the end; a partitioned step names its backend.
  using passthrough = model<x, relu<x>>;
  const std::string text = print(compiled<passthrough, reference>::plan);
  CHECK(text.find("  0 host relu(in0) -> out1 : f32[1, 8]\n") != std::string::npos);
  CHECK(text.find("  copy in0 -> out0 (32 bytes)\n") != std::string::npos);
  CHECK(text.find("arena:") == std::string::npos);  // nothing lives in the arena
}
