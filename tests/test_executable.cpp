// compiled<Model, Backends...>: binding, running, argument checks, error messages, allocation.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <vector>

#include <partita/partita.hpp>

#include <models/mlp.hpp>

// Counts every allocation made through the global operator new, to prove `run` makes none.
// GCC cannot see that the replaced operator delete pairs with the replaced operator new.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
std::atomic<long> allocations{0};
}
void* operator new(std::size_t n) {
  ++allocations;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

using namespace partita;

namespace {

std::vector<float> random_vector(std::size_t n, unsigned seed, float scale = 0.1f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

// The MLP's weights, and the MLP computed with plain loops in double precision.
struct mlp_weights {
  std::vector<float> w1 = random_vector(512 * 784, 1), b1 = random_vector(512, 2), w2 = random_vector(512 * 512, 3),
                     b2 = random_vector(512, 4), w3 = random_vector(10 * 512, 5), b3 = random_vector(10, 6);

  weight_set set() const {
    weight_set s;
    s.add("fc1.weight", w1, {512, 784}).add("fc1.bias", b1, {512});
    s.add("fc2.weight", w2, {512, 512}).add("fc2.bias", b2, {512});
    s.add("fc3.weight", w3, {10, 512}).add("fc3.bias", b3, {10});
    return s;
  }

  static std::vector<double> layer(const std::vector<double>& x, const std::vector<float>& w, const std::vector<float>& b,
                                   bool relu) {
    std::vector<double> y(b.size());
    for (std::size_t o = 0; o < b.size(); ++o) {
      double s = b[o];
      for (std::size_t i = 0; i < x.size(); ++i) s += x[i] * w[o * x.size() + i];
      y[o] = relu && s < 0 ? 0 : s;
    }
    return y;
  }

  std::vector<double> expected(const std::vector<float>& x) const {
    std::vector<double> h(x.begin(), x.end());
    return layer(layer(layer(h, w1, b1, true), w2, b2, true), w3, b3, false);
  }
};

using mlp_exe = compiled<models::mlp, reference>;
static_assert(mlp_exe::arena_bytes == 4096);
static_assert(mlp_exe::num_inputs == 1 && mlp_exe::num_outputs == 1 && mlp_exe::num_steps == 8);
static_assert(mlp_exe::input(0).name == "x" && mlp_exe::output(0).shp == shape_of<1, 10>);

}  // namespace

TEST_CASE("the MLP matches a plain double-precision computation") {
  const mlp_weights w;
  mlp_exe exe;
  exe.bind(w.set());
  const auto x = random_vector(784, 7, 1.0f);
  std::vector<float> y(10);
  exe.run(x, y);
  const auto ref = w.expected(x);
  for (std::size_t i = 0; i < 10; ++i) CHECK(y[i] == doctest::Approx(ref[i]).epsilon(1e-5));
}

TEST_CASE("run accepts spans, vectors and tensor views, and allocates nothing") {
  const mlp_weights w;
  mlp_exe exe;
  exe.bind(w.set());
  const auto x = random_vector(784, 8, 1.0f);
  std::vector<float> a(10), b(10), c(10);
  exe.run(x, a);  // warm-up outside the counted region
  const long before = allocations.load();
  exe.run(std::span<const float>(x), std::span<float>(a));
  exe.run(x, b);
  exe.run(tensor_view{x.data(), shape_of<1, 784>}, tensor_view{c.data(), shape_of<1, 10>});
  CHECK(allocations.load() == before);
  CHECK(a == b);
  CHECK(a == c);
}

TEST_CASE("on the cpu backend, with its thread pool, run allocates nothing either") {
  using cnn = model<relu<add<bias_add<conv2d<input<"img", f32, 1, 16, 20, 20>, weight<"k", f32, 32, 16, 3, 3>,
                                              {.padding = {1, 1}}>,
                                      weight<"kb", f32, 32>>,
                             input<"skip", f32, 1, 32, 20, 20>>>>;
  const mlp_weights w;
  compiled<models::mlp, cpu> exe;
  exe.bind(w.set());
  std::vector<float> k(32 * 16 * 9, 0.01f), kb(32, 0.1f), img(16 * 400, 0.5f), skip(32 * 400, 1.f), out(32 * 400);
  compiled<cnn, cpu> conv;
  conv.bind(weight_set{}.add("k", k, {32, 16, 3, 3}).add("kb", kb, {32}));
  const auto x = random_vector(784, 8, 1.0f);
  std::vector<float> y(10);
  for (int threads : {1, 2}) {
    exe.state<cpu>().set_threads(threads);
    conv.state<cpu>().set_threads(threads);
    exe.run(x, y);  // warm-up outside the counted region
    conv.run(img, skip, out);
    const long before = allocations.load();
    exe.run(x, y);
    conv.run(img, skip, out);
    CHECK(allocations.load() == before);
  }
  CHECK(out[0] == doctest::Approx(1.f + 0.1f + 0.01f * 0.5f * 16 * 4));  // a corner: 2x2 of the 3x3 window
}

TEST_CASE("run checks every argument and names the tensor") {
  const mlp_weights w;
  mlp_exe exe;
  exe.bind(w.set());
  std::vector<float> x(784), y(10), short_x(783), long_y(11);
  CHECK_THROWS_WITH_AS(exe.run(short_x, y), "partita: run: input 0 'x' (f32[1, 784]): the buffer has 783 elements, expected 784",
                       error);
  CHECK_THROWS_WITH_AS(exe.run(x, long_y), "partita: run: output 0 (f32[1, 10]): the buffer has 11 elements, expected 10", error);
  CHECK_THROWS_WITH_AS(exe.run(tensor_view{x.data(), shape_of<784, 1>}, y),
                       "partita: run: input 0 'x' (f32[1, 784]): the view has shape [784, 1], expected [1, 784]", error);
}

TEST_CASE("run before bind is an error") {
  mlp_exe exe;
  std::vector<float> x(784), y(10);
  CHECK_FALSE(exe.bound());
  CHECK_THROWS_WITH_AS(exe.run(x, y), "partita: run called before bind: the weights are not loaded", error);
}

TEST_CASE("bind reports every bad weight, expected vs actual, and changes nothing") {
  const mlp_weights w;
  mlp_exe exe;
  exe.bind(w.set());
  const auto x = random_vector(784, 9, 1.0f);
  std::vector<float> before(10), after(10);
  exe.run(x, before);

  std::vector<float> transposed(784 * 512), zeros(512);
  std::vector<std::int32_t> ints(512);
  weight_set bad;
  bad.add("fc1.weight", transposed, {784, 512});
  bad.add("fc1.bias", dtype::i32, std::as_bytes(std::span(ints)), {512});
  bad.add("fc2.weight", w.w2, {512, 512}).add("fc2.bias", zeros, {512});
  bad.add("fc3.weight", w.w3, {10, 512});
  try {
    exe.bind(bad);
    FAIL("bind accepted bad weights");
  } catch (const error& e) {
    const std::string m = e.what();
    CHECK(m.find("weight 'fc1.weight' (f32[512, 784]): shape is [784, 512] in in-memory weight set, expected [512, 784]") !=
          std::string::npos);
    CHECK(m.find("weight 'fc1.bias' (f32[512]): dtype is I32 in in-memory weight set, expected F32") != std::string::npos);
    CHECK(m.find("weight 'fc3.bias' (f32[10]): not found in in-memory weight set") != std::string::npos);
    CHECK(m.find("fc2") == std::string::npos);
  }
  exe.run(x, after);
  CHECK(before == after);  // the failed bind left the previous weights in place
}

TEST_CASE("weights bind from a safetensors file") {
  const mlp_weights w;
  const auto bytes = to_safetensors(w.set().tensors());
  const safetensors_file file = parse_safetensors(bytes, "mlp.safetensors");
  mlp_exe from_file, from_memory;
  from_file.bind(file);
  from_memory.bind(w.set());
  const auto x = random_vector(784, 10, 1.0f);
  std::vector<float> a(10), b(10);
  from_file.run(x, a);
  from_memory.run(x, b);
  CHECK(a == b);
}

TEST_CASE("several inputs and outputs, in model order, with copies for inputs returned as outputs") {
  using p = input<"p", f32, 2, 3>;
  using q = input<"q", f32, 3>;
  using s = add<p, q>;
  using net = model<multiply<s, q>, s, q>;
  compiled<net, reference> exe;
  static_assert(decltype(exe)::num_inputs == 2 && decltype(exe)::num_outputs == 3);
  static_assert(decltype(exe)::weight_bytes == 0);
  const std::vector<float> pv{1, 2, 3, 4, 5, 6}, qv{10, 20, 30};
  std::vector<float> prod(6), sum(6), qcopy(3);
  exe.run(pv, qv, prod, sum, qcopy);  // a model without weights needs no bind
  CHECK(sum == std::vector<float>{11, 22, 33, 14, 25, 36});
  CHECK(prod == std::vector<float>{110, 440, 990, 140, 500, 1080});
  CHECK(qcopy == qv);
}

TEST_CASE("an executable can be moved") {
  const mlp_weights w;
  mlp_exe a;
  a.bind(w.set());
  mlp_exe b = std::move(a);
  const auto x = random_vector(784, 11, 1.0f);
  std::vector<float> y(10);
  b.run(x, y);
  const auto ref = w.expected(x);
  CHECK(y[3] == doctest::Approx(ref[3]).epsilon(1e-5));
}

TEST_CASE("run_unchecked takes raw pointers and computes what run does") {
  const mlp_weights w;
  mlp_exe exe;
  exe.bind(w.set());
  const auto x = random_vector(784, 12, 1.0f);
  std::vector<float> checked(10), unchecked(10);
  exe.run(x, checked);
  const float* in[] = {x.data()};
  float* out[] = {unchecked.data()};
  exe.run_unchecked(in, out);
  CHECK(checked == unchecked);
}

namespace {
struct not_a_backend {};
struct stateless {
  static constexpr fixed_string name = "stateless";
};
static_assert(backend<reference>);
static_assert(!backend<not_a_backend> && !backend<stateless>);
static_assert(is_host_backend<reference>);
}  // namespace

TEST_CASE("built without PARTITA_PROFILE, an executable reads no clock and says how to get a profile") {
  static_assert(!profiling);
  mlp_exe exe;
  exe.bind(mlp_weights{}.set());
  std::vector<float> x(784, 0.5f), y(10);
  exe.run(x, y);
  CHECK(exe.profile().runs == 0);
  CHECK(exe.profile().ns[0] == 0);
  CHECK(print_profile(exe).find("-DPARTITA_PROFILE") != std::string::npos);
}

TEST_CASE("an arena no machine holds: a partita::error with the bytes and what they were for, not std::bad_alloc") {
  // Two intermediate results of 2^46 floats (256 TiB) each: more than a process's address space
  // (128 TiB with 48-bit addresses), so the allocation fails even where memory is overcommitted.
  constexpr std::int64_t side = std::int64_t{1} << 23;
  using x = input<"x", f32, side, side>;
  using exe_t = compiled<model<add<relu<x>, neg<x>>>, reference>;
  static_assert(exe_t::arena_bytes >= std::size_t{1} << 49);
  const std::string bytes = std::to_string(exe_t::arena_bytes);
  try {
    exe_t exe;
    FAIL("the arena was allocated");
  } catch (const partita::error& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find(bytes + " bytes") != std::string::npos);
    CHECK(what.find("arena") != std::string::npos);
  } catch (const std::bad_alloc&) {
    FAIL("std::bad_alloc, which says neither how much nor what for");
  }
}
