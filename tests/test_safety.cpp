// Misuse at run time, each a `partita::error` that names the culprit and changes nothing: a busy
// executable, overlapping buffers, null and misaligned buffers, moved-from executables, a bind
// that a backend refuses. Also built with ASan and UBSan (tests/stress).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <partita/partita.hpp>

#include <laws/conformance.hpp>
#include <models/mlp.hpp>
#include <support/graph_compiler.hpp>

using test_backends::graph_npu;

using namespace partita;

namespace {

std::atomic<bool> hold{false};
std::atomic<bool> entered{false};

/// The reference kernels, except that a step waits while `hold` is set: a run can be kept
/// inside the executable for as long as a test needs.
struct gated {
  static constexpr fixed_string name = "gated";
  static constexpr bool host = true;
  struct state {};
  static constexpr bool supports(const op_view&) { return true; }
  template <class Step>
  struct kernel {
    static void run(state&, const float* const* in, float* out) {
      entered.store(true);
      while (hold.load()) std::this_thread::yield();
      reference::state none;
      reference::kernel<Step>::run(none, in, out);
    }
  };
};

std::string message_of(auto&& f) {
  try {
    f();
  } catch (const error& e) {
    return e.what();
  }
  return "no error";
}

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a second run while one is in progress fails at once with 'busy'; the first completes correctly") {
  using net = model<relu<input<"x", f32, 4>>>;
  compiled<net, gated> exe;
  const std::vector<float> x{-1, 2, -3, 4};
  std::vector<float> y(4, 0.f), z(4, 0.f);
  hold = true;
  entered = false;
  std::thread first([&] { exe.run(x, y); });
  while (!entered.load()) std::this_thread::yield();
  const std::string m = message_of([&] { exe.run(x, z); });
  CHECK(m == "partita: run: the executable is busy: another thread is in its run or bind. An executable runs one call at "
             "a time; give each thread an executable of its own");
  CHECK(contains(message_of([&] { exe.bind(weight_set{}); }), "partita: bind: the executable is busy"));
  hold = false;
  first.join();
  CHECK(y == std::vector<float>{0, 2, 0, 4});
  CHECK(z == std::vector<float>{0, 0, 0, 0});  // the refused call wrote nothing
  exe.run(x, z);  // free again, from another thread than the first call's
  CHECK(z == y);
}

TEST_CASE("outputs overlapping inputs: rejected when the model reads the input afterwards") {
  using x = input<"x", f32, 1, 16>;
  using w = weight<"w", f32, 16, 16>;
  using net = model<relu<x>, dense<x, w>>;
  compiled<net, reference> exe;
  std::vector<float> wv(256, 0.25f);
  exe.bind(weight_set{}.add("w", wv, {16, 16}));
  std::vector<float> io(16, 1.f), d(16);
  const std::string m = message_of([&] { exe.run(io, io, d); });
  CHECK(m == "partita: run: output 0 (f32[1, 16]) overlaps input 0 'x' (f32[1, 16]): the model reads the input after it "
             "starts writing the output; pass separate buffers");
  CHECK(io == std::vector<float>(16, 1.f));  // nothing ran
  // Part of a buffer is an overlap too.
  std::vector<float> big(40, 1.f);
  CHECK(contains(message_of([&] {
                   exe.run(std::span<const float>(big.data(), 16), std::span<float>(big.data() + 8, 16), std::span<float>(d));
                 }),
                 "overlaps input 0 'x'"));
  // Two outputs sharing memory are always an error.
  std::vector<float> in(16, 1.f), o(16);
  CHECK(message_of([&] { exe.run(in, o, o); }) ==
        "partita: run: output 0 (f32[1, 16]) and output 1 (f32[1, 16]) overlap: each output needs a buffer of its own");
}

TEST_CASE("outputs overlapping inputs: allowed where the plan proves it harmless") {
  using x = input<"x", f32, 1, 16>;
  SUBCASE("one elementwise step updating the very same buffer") {
    compiled<model<relu<x>>, reference> exe;
    static_assert(detail::alias_rules<decltype(exe)::plan>[0] == alias_rule::same_buffer);
    std::vector<float> io(16);
    for (std::size_t i = 0; i < 16; ++i) io[i] = static_cast<float>(i) - 8.f;
    exe.run(io, io);
    for (std::size_t i = 0; i < 16; ++i) CHECK(io[i] == std::max(0.f, static_cast<float>(i) - 8.f));
    std::vector<float> big(32, 1.f);  // shifted by one element: not the same buffer
    CHECK(contains(message_of([&] { exe.run(std::span<const float>(big.data(), 16), std::span<float>(big.data() + 1, 16)); }),
                   "they may share memory only as the very same buffer"));
  }
  SUBCASE("every read of the input before the output is written") {
    using net = model<relu<dense<x, weight<"w", f32, 16, 16>>>>;
    compiled<net, reference> exe, separate;
    static_assert(detail::alias_rules<decltype(exe)::plan>[0] == alias_rule::any);
    std::vector<float> wv(256);
    for (std::size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<float>(i % 7) * 0.1f - 0.3f;
    weight_set ws;
    ws.add("w", wv, {16, 16});
    exe.bind(ws);
    separate.bind(ws);
    std::vector<float> io(16), want(16);
    for (std::size_t i = 0; i < 16; ++i) io[i] = static_cast<float>(i) * 0.5f;
    separate.run(io, want);
    exe.run(io, io);
    CHECK(io == want);
  }
  SUBCASE("an output that is the input itself") {
    compiled<model<x, relu<x>>, reference> exe;
    std::vector<float> io(16, -1.f), r(16);
    exe.run(io, io, r);
    CHECK(io == std::vector<float>(16, -1.f));
    CHECK(r == std::vector<float>(16, 0.f));
  }
}

TEST_CASE("null and misaligned buffers are errors naming the argument") {
  compiled<model<relu<input<"x", f32, 2, 3>>>, cpu> exe;
  std::vector<float> x(6), y(6);
  CHECK(message_of([&] { exe.run(tensor_view<const float>{nullptr, shape_of<2, 3>}, y); }) ==
        "partita: run: input 0 'x' (f32[2, 3]): the buffer is null");
  CHECK(message_of([&] { exe.run(x, tensor_view<float>{nullptr, shape_of<2, 3>}); }) ==
        "partita: run: output 0 (f32[2, 3]): the buffer is null");
  alignas(16) unsigned char raw[64] = {};
  const auto* odd = reinterpret_cast<const float*>(raw + 1);  // never dereferenced: run refuses it
  CHECK(message_of([&] { exe.run(std::span<const float>(odd, 6), y); }) ==
        "partita: run: input 0 'x' (f32[2, 3]): the buffer is not aligned for float (address % 4 = 1)");
}

TEST_CASE("a moved-from executable is not bound and refuses run and bind") {
  compiled<models::mlp, cpu> a;
  const laws::random_weights<decltype(a)> w(5);
  a.bind(w.set);
  CHECK(a.bound());
  auto b = std::move(a);
  CHECK(b.bound());
  CHECK_FALSE(a.bound());  // NOLINT(bugprone-use-after-move): the moved-from state is what is tested
  CHECK(a.resident_bytes() == 0);  // NOLINT(bugprone-use-after-move)
  std::vector<float> x(784, 0.5f), y(10), z(10);
  const std::string m = message_of([&] { a.run(x, y); });  // NOLINT(bugprone-use-after-move)
  CHECK(m == "partita: run on a moved-from executable: it has no buffers or backend states; assign an executable to it first");
  CHECK(contains(message_of([&] { a.bind(w.set); }), "partita: bind on a moved-from executable"));
  b.run(x, y);
  a = std::move(b);  // assigning brings it back
  CHECK(a.bound());
  a.run(x, z);
  CHECK(y == z);
}

TEST_CASE("a bind that a backend refuses leaves the executable bound to its previous weights") {
  // {add, relu} runs on the graph compiler mock, the dense on cpu, with its weights packed.
  using xin = input<"x", f32, 1, 32>;
  using net = model<dense<relu<add<xin, weight<"offset", f32, 1, 32>>>, weight<"w", f32, 8, 32>>>;
  using exe_t = compiled<net, graph_npu, cpu>;
  static_assert(exe_t::num_steps == 2 && exe_t::step_backend(0) == "gnpu" && exe_t::step_backend(1) == "cpu");
  auto exe = std::make_unique<exe_t>();
  const laws::random_weights<exe_t> first(11), second(12);
  exe->bind(first.set);
  std::vector<float> x(32), before(8), after(8), other(8);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 5) - 2.f;
  exe->run(x, before);

  exe->state<graph_npu>().reject = true;
  CHECK(contains(message_of([&] { exe->bind(second.set); }), "backend 'gnpu' rejected step"));
  CHECK(exe->bound());
  exe->run(x, after);
  CHECK(after == before);  // cpu's packed weights are the first ones still

  exe->state<graph_npu>().reject = false;
  exe->bind(second.set);
  exe->run(x, other);
  CHECK(other != before);
}

TEST_CASE("weights that only packing kernels read are not kept twice") {
  using exe_t = compiled<models::mlp, cpu>;
  static_assert(exe_t::kept_weight_bytes == 0);  // every MLP weight lives only in cpu's panels
  static_assert(compiled<models::mlp, reference>::kept_weight_bytes == compiled<models::mlp, reference>::weight_bytes);
  exe_t exe;
  const laws::random_weights<exe_t> w(2);
  exe.bind(w.set);
  const std::size_t planned = exe_t::arena_bytes + exe_t::weight_bytes;
  CAPTURE(exe.resident_bytes());
  CAPTURE(planned);
  CHECK(exe.resident_bytes() >= exe_t::weight_bytes);
  CHECK(exe.resident_bytes() < planned + planned / 10);  // panels pad a little; no raw copy beside them
}

TEST_CASE("cpu packed weights: zeroed, aligned regions that keep their place, in blocks that grow") {
  detail::cpu::packed_store store;
  CHECK(store.bytes() == 0);
  float* a = store.reserve(0, 10);
  float* b = store.reserve(2, 1000);
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(a) % detail::aligned_buffer::align == 0);
  CHECK(reinterpret_cast<std::uintptr_t>(b) % detail::aligned_buffer::align == 0);
  CHECK(b >= a + 10);  // regions do not overlap
  CHECK(store.bytes() == 64 + 4032);  // each rounded up to whole cache lines
  CHECK(std::all_of(b, b + 1000, [](float v) { return v == 0.f; }));
  std::fill(a, a + 10, 1.f);
  CHECK(store.reserve(0, 10) == a);  // a bind that reserves again gets the same region
  CHECK(store.reserve(0, 4) == a);
  CHECK(store.at(0) == a);
  CHECK(store.at(2) == b);
  // A region larger than what is left of the last block gets a block of its own; the others stay.
  const std::size_t large = (std::size_t{3} << 20) / sizeof(float);
  float* c = store.reserve(1, large);
  CHECK((c + large <= a || c >= b + 1000));
  CHECK(c[0] == 0.f);
  CHECK(c[large - 1] == 0.f);
  CHECK(a[9] == 1.f);
  // From 2 MB on a block starts on a huge page's boundary (`huge_page_bytes`).
  CHECK(reinterpret_cast<std::uintptr_t>(c) % detail::huge_page_bytes == 0);
  // A step that needs more than its region had moves to a new, zeroed one.
  float* d = store.reserve(0, 20);
  CHECK(d != a);
  CHECK(d[9] == 0.f);
  detail::cpu::packed_store moved = std::move(store);
  CHECK(store.bytes() == 0);  // NOLINT(bugprone-use-after-move)
  CHECK(moved.at(1) == c);
}
