// cpu: the kernels of the transformer and mobile op set against the reference, path by path:
// each unary op (and power's exponent classes), each broadcast class of the binary ops and its
// fallback, layer_norm / rms_norm, softmax on the last and on other axes, the reduction layouts,
// transpose as row copies and as tiles, slice, pad, concatenate and gather. Shapes with tails,
// and shapes large enough to be split across two threads; one and two threads, then NaN and
// ±inf planted (laws::conformance<cpu>::run). A benchmark is kept as a skipped test case:
// `test_cpu_new_ops -tc='bench*' --no-skip`.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <laws/conformance.hpp>

using namespace partita;

namespace {

constexpr double tolerance = 1e-5;

template <class... Nets>
void check_all(const char* about) {
  int index = 0;
  const auto one = [&](const laws::result& r) {
    // (INFO is evaluated lazily: the name is made first.)
    const std::string name = std::string(about) + ": model " + std::to_string(index++);
    INFO(name);
    INFO(r.summary());
    CHECK(r.worst() <= tolerance);
    if (std::getenv("PARTITA_SHOW_ERRORS")) MESSAGE(name << ": " << r.summary());
  };
  (one(laws::conformance<cpu>::run<Nets>()), ...);
}

using x357 = input<"x", f32, 3, 5, 7>;
using x2537 = input<"x", f32, 2, 5, 3, 7>;
using big = input<"x", f32, 1, 128, 1024>;  // large enough for two threads (simple_kernel's costs)
using tokens = input<"x", f32, 1, 128, 256>;
constexpr float inf = std::numeric_limits<float>::infinity();

// The paths the models below take, read off the same compile-time plans the kernels use.
namespace k = partita::detail::cpu;
using bp = k::broadcast_plan;
constexpr shape s357 = shape_of<3, 5, 7>, s2537 = shape_of<2, 5, 3, 7>;
static_assert(k::plan_broadcast(s357, s357, shape_of<1, 1, 1>).kind == bp::scalar);
static_assert(k::plan_broadcast(s357, shape{}, s357).kind == bp::scalar && k::plan_broadcast(s357, shape{}, s357).swap);
static_assert(k::plan_broadcast(s357, s357, shape_of<7>).kind == bp::rows);
static_assert(k::plan_broadcast(s357, s357, shape_of<5, 7>).kind == bp::rows);
static_assert(k::plan_broadcast(s2537, s2537, shape_of<5, 1, 1>).kind == bp::per_channel);
static_assert(k::plan_broadcast(s2537, shape_of<2, 5, 1, 1>, s2537).kind == bp::per_channel);
static_assert(k::plan_broadcast(s357, s357, shape_of<3, 1, 7>).kind == bp::other);
static_assert(k::plan_broadcast(shape_of<3, 4>, shape_of<3, 1>, shape_of<1, 4>).kind == bp::other);
static_assert(k::plan_transpose(shape_of<1, 128, 4, 64>, {0, 2, 1, 3}).rows);
static_assert(k::plan_transpose(shape_of<1, 128, 4, 64>, {0, 2, 1, 3}).copy.row == 64);
static_assert(!k::plan_transpose(s2537, {0, 2, 3, 1}).rows);
static_assert(k::plan_transpose(s357, {0, 1, 2}).copy.levels == 0, "the identity is one copy");
static_assert(k::plan_slice(shape_of<1, 128, 768>, 2, 256, 512, 1).row == 256);
static_assert(k::plan_slice(s357, 2, 0, 7, 2).row == 1, "a strided run");
static_assert(k::plan_reduce(s2537, 1 << 3).inner_reduced && !k::plan_reduce(s2537, 1 << 1).inner_reduced);
static_assert(k::power_vectorized(-2.f) && k::power_vectorized(0.5f) && !k::power_vectorized(1.5f));

}  // namespace

TEST_CASE("unary ops: every op over a tail, the math ones split across threads") {
  check_all<model<power<x357, 2.f>>, model<power<x357, 3.f>>, model<power<x357, -1.f>>, model<power<x357, -2.f>>,
            model<power<x357, 0.f>>, model<power<x357, 0.5f>>, model<power<x357, -0.5f>>, model<power<x357, 7.f>>,
            model<power<x357, 1.5f>>,  // not vectorized: std::pow
            model<sqrt_<x357>>, model<rsqrt<x357>>, model<exp_<x357>>, model<log_<x357>>,
            model<erf_<x357>>, model<abs_<x357>>, model<neg<x357>>>("math");
  check_all<model<gelu<x357>>, model<gelu_tanh<x357>>, model<silu<x357>>, model<hardswish<x357>>,
            model<hardsigmoid<x357>>, model<hardsigmoid<x357, 0.2f, 0.5f>>, model<leaky_relu<x357>>,
            model<leaky_relu<x357, 0.2f>>, model<relu<x357>>, model<clip<x357, -0.5f, 1.5f>>, model<sigmoid<x357>>,
            model<tanh_<x357>>>("activations");
  check_all<model<gelu<big>>, model<gelu_tanh<big>>, model<silu<big>>, model<exp_<big>>, model<hardswish<big>>,
            model<rsqrt<input<"x", f32, 1, 3, 100001>>>>("large");
}

TEST_CASE("binary ops: same shape, scalar, rows, channels, swapped operands, the fallback; bias_add") {
  using y357 = input<"y", f32, 3, 5, 7>;
  check_all<model<divide<x357, y357>>, model<maximum<x357, y357>>, model<minimum<x357, y357>>, model<prelu<x357, y357>>,
            model<add<x357, y357>>, model<subtract<x357, y357>>, model<multiply<x357, y357>>,
            model<add<input<"x", f32, 1, 5, 7>, input<"y", f32, 5, 7>>>>("same shape");  // same elements, another rank
  check_all<model<multiply<x357, scalar<0.125f>>>, model<divide<scalar<2.f>, x357>>,
            model<subtract<input<"s", f32, 1, 1, 1>, x357>>, model<maximum<x357, input<"s", f32, 1>>>,
            model<multiply<input<"x", f32, 1, 4, 128, 128>, scalar<0.125f>>>>("scalar");
  check_all<model<add<x357, input<"r", f32, 7>>>, model<subtract<input<"r", f32, 7>, x357>>,
            model<divide<x357, input<"r", f32, 5, 7>>>, model<minimum<input<"r", f32, 1, 5, 7>, x357>>,
            model<add<tokens, input<"pos", f32, 128, 256>>>, model<prelu<x357, input<"r", f32, 7>>>,
            model<add<input<"x", f32, 1, 512, 256>, input<"pos", f32, 512, 256>>>>("rows");
  check_all<model<multiply<x2537, input<"c", f32, 5, 1, 1>>>, model<divide<input<"c", f32, 1, 5, 1, 1>, x2537>>,
            model<prelu<x2537, weight<"slope", f32, 5, 1, 1>>>, model<add<x2537, input<"c", f32, 2, 5, 1, 1>>>,
            model<maximum<x357, input<"c", f32, 5, 1>>>,
            model<multiply<input<"x", f32, 1, 96, 56, 56>, input<"se", f32, 1, 96, 1, 1>>>>("channels");
  check_all<model<add<x357, input<"c", f32, 3, 1, 7>>>, model<multiply<input<"a", f32, 3, 1>, input<"b", f32, 1, 4>>>>(
      "the reference's");
  check_all<model<bias_add<x2537, weight<"b", f32, 5>>>,
            model<bias_add<input<"x", f32, 3, 37>, weight<"b", f32, 37>, -1>>,
            model<bias_add<input<"x", f32, 1, 512, 256>, weight<"b", f32, 256>, -1>>,
            model<bias_add<input<"x", f32, 1, 96, 56, 56>, weight<"b", f32, 96>>>>("bias_add as a broadcast add");
}

TEST_CASE("layer_norm and rms_norm: rows with tails, several axes, rows split across threads") {
  using g256 = weight<"g", f32, 256>;
  using b256 = weight<"b", f32, 256>;
  check_all<model<layer_norm<tokens, g256, b256>>, model<rms_norm<tokens, g256>>,
            model<layer_norm<input<"x", f32, 3, 37>, weight<"g", f32, 37>, weight<"b", f32, 37>, -1, 1e-3f>>,
            model<rms_norm<input<"x", f32, 3, 37>, weight<"g", f32, 37>>>,
            model<layer_norm<x2537, weight<"g", f32, 3, 7>, weight<"b", f32, 3, 7>, -2>>,
            model<rms_norm<x2537, weight<"g", f32, 5, 3, 7>, 1>>,
            model<layer_norm<input<"x", f32, 2, 5000>, weight<"g", f32, 5000>, weight<"b", f32, 5000>>>,
            model<layer_norm<input<"x", f32, 4, 3>, weight<"g", f32, 3>, weight<"b", f32, 3>>>>("norms");
}

namespace {

// `Net` (one input, one output) on cpu with `threads` and on the reference, with the law's
// weights, on `x`: the largest relative error where the reference's result is finite, 1e30 where
// cpu's is not.
template <class Net>
double error_on(const std::vector<float>& x, int threads) {
  using exe_t = compiled<Net, cpu>;
  using ref_t = compiled<Net, reference>;
  exe_t exe;
  ref_t ref;
  exe.template state<cpu>().set_threads(threads);
  const laws::random_weights<ref_t> w(3);
  if constexpr (!ref_t::literals_only) {
    exe.bind(w.set);
    ref.bind(w.set);
  }
  std::vector<float> got(static_cast<std::size_t>(exe_t::output(0).shp.elements())), want(got.size());
  exe.run(x, got);
  ref.run(x, want);
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!std::isfinite(want[i])) continue;
    const double d = std::isfinite(got[i]) ? std::abs(double(got[i]) - want[i]) / std::max(1.0, std::abs(double(want[i]))) : 1e30;
    worst = std::max(worst, d);
  }
  return worst;
}

}  // namespace

TEST_CASE("layer_norm, rms_norm and reduce_mean of rows of large finite values are finite, as on the reference") {
  constexpr std::int64_t rows = 6, len = 37;
  constexpr float big = 3e38f;
  std::vector<float> x(static_cast<std::size_t>(rows * len));
  for (std::int64_t c = 0; c < len; ++c) {
    const auto at = [&](std::int64_t r) -> float& { return x[static_cast<std::size_t>(r * len + c)]; };
    at(0) = big;                                                  // a constant row
    at(1) = c % 2 ? big : -big;                                   // ±3e38: its mean is small
    at(2) = big * static_cast<float>(c + 1) / static_cast<float>(len);  // a ramp up to the limit
    at(3) = c == 5 ? big : static_cast<float>(c) * 0.25f - 4.f;   // one large value among small ones
    at(4) = c % 3 ? 2e19f : -1e20f;                               // squares beyond float's range
    at(5) = static_cast<float>(c) * 0.5f - 9.f;                   // an ordinary row
  }
  using xs = input<"x", f32, rows, len>;
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    CHECK(error_on<model<layer_norm<xs, weight<"g", f32, len>, weight<"b", f32, len>>>>(x, threads) <= 1e-5);
    CHECK(error_on<model<rms_norm<xs, weight<"g", f32, len>>>>(x, threads) <= 1e-5);
    CHECK(error_on<model<reduce_mean<xs, axes<-1>>>>(x, threads) <= 1e-5);
  }
}

TEST_CASE("softmax along the last axis and along others") {
  check_all<model<softmax<input<"x", f32, 1, 4, 128, 128>>>, model<softmax<input<"x", f32, 3, 37>>>,
            model<softmax<input<"x", f32, 5, 3>>>, model<softmax<input<"x", f32, 2, 5, 3>, 1>>,
            model<softmax<input<"x", f32, 2, 19, 37>, 1>>, model<softmax<input<"x", f32, 7, 300>, 0>>,
            model<softmax<input<"x", f32, 2, 64, 8, 40>, 1>>>("softmax");
}

TEST_CASE("reductions: the contiguous axis reduced or kept, all axes, long sums") {
  check_all<model<reduce_mean<x2537, axes<-1>>>, model<reduce_sum<x2537, axes<1>>>,
            model<reduce_max<x2537, axes<1, 3>>>, model<reduce_sum<x2537, axes<0, 2>, true>>,
            model<reduce_mean<x2537, axes<0, 1, 2, 3>>>, model<reduce_max<x2537, axes<0, 1, 2, 3>, true>>,
            model<reduce_max<x2537, axes<2>>>, model<reduce_mean<input<"x", f32, 2, 1, 3, 1, 5>, axes<1, 3>>>>("small");
  check_all<model<reduce_mean<input<"x", f32, 1, 96, 56, 56>, axes<2, 3>, true>>,
            model<reduce_sum<input<"x", f32, 3000, 9>, axes<0>>>, model<reduce_sum<input<"x", f32, 1, 20000>, axes<1>>>,
            model<reduce_max<tokens, axes<1>>>, model<reduce_mean<tokens, axes<-1>>>,
            model<reduce_sum<input<"x", f32, 64, 4096>, axes<0>>>,
            model<reduce_max<input<"x", f32, 64, 4096>, axes<0>>>>("large");
}

TEST_CASE("transpose: row copies, tiles with tails, axes of one, split across threads") {
  check_all<model<transpose<input<"x", f32, 1, 128, 4, 64>, 0, 2, 1, 3>>,
            model<transpose<input<"x", f32, 1, 4, 128, 64>, 0, 2, 1, 3>>, model<transpose<x2537, 0, 2, 3, 1>>,
            model<transpose<x357, 2, 1, 0>>, model<transpose<input<"x", f32, 37, 19>, 1, 0>>,
            model<transpose<input<"x", f32, 2, 1, 5, 7>, 1, 0, 3, 2>>, model<transpose<x357, 0, 1, 2>>,
            model<transpose<x2537, 1, 0, 2, 3>>, model<transpose<input<"x", f32, 1, 32, 56, 56>, 0, 2, 3, 1>>,
            model<transpose<input<"x", f32, 1, 3136, 32>, 0, 2, 1>>,
            model<transpose<input<"x", f32, 1, 512, 4, 64>, 0, 2, 1, 3>>,
            model<transpose<input<"x", f32, 2, 7, 3, 32>, 0, 2, 1, 3>>,  // the unrolled rows of 32 and 128
            model<transpose<input<"x", f32, 1, 5, 2, 128>, 0, 2, 1, 3>>>("transpose");
}

TEST_CASE("slice and pad: runs, strided and reversed selections, borders") {
  check_all<model<slice<x357, 1, 1, 4>>, model<slice<x357, -1, 0, 7, 2>>, model<slice<x357, 2, 6, -100, -2>>,
            model<slice<x357, 0, -1, 3>>, model<slice<input<"x", f32, 1, 128, 768>, -1, 256, 512>>,
            model<slice<tokens, 1, 0, 1>>, model<slice<x2537, 1, 4, 0, -3>>,
            model<slice<input<"x", f32, 1, 512, 768>, -1, 256, 512>>,
            model<slice<input<"x", f32, 300, 1000>, 1, 1, 1000, 3>>>("slice");
  check_all<model<pad<input<"x", f32, 1, 3, 13, 38>, dims<0, 0, 1, 2>, dims<0, 0, 2, 1>>>,
            model<pad<input<"x", f32, 2, 5, 7>, dims<1, 0, 0>, dims<0, 0, 0>, -1.5f>>,
            model<pad<x357, dims<0, 0, 0>, dims<0, 0, 0>>>, model<pad<x357, dims<1, 0, 3>, dims<0, 2, 0>, inf>>,
            model<pad<input<"x", f32, 1, 32, 56, 56>, dims<0, 0, 1, 1>, dims<0, 0, 1, 1>>>>("pad");
}

TEST_CASE("concatenate: runs per input along any axis") {
  check_all<model<concatenate<1, x357, input<"y", f32, 3, 2, 7>>>,
            model<concatenate<-1, x357, input<"y", f32, 3, 5, 1>, x357>>,
            model<concatenate<0, x357, input<"y", f32, 1, 5, 7>>>,
            model<concatenate<1, input<"a", f32, 1, 512, 256>, input<"b", f32, 1, 512, 256>>>,
            model<concatenate<2, input<"a", f32, 64, 30, 40>, input<"b", f32, 64, 30, 24>>>>("concatenate");
}

namespace {

// gather's indices are integers, which the law does not make: both backends on the same table
// and indices, with one thread and two; a pure copy, so the results are equal bit for bit.
template <class Net, class Index>
void check_gather(const std::vector<Index>& ids) {
  using ref_t = compiled<Net, reference>;
  using cpu_t = compiled<Net, cpu>;
  std::vector<float> table(static_cast<std::size_t>(ref_t::input(0).shp.elements()));
  std::iota(table.begin(), table.end(), 0.5f);
  table[3] = std::numeric_limits<float>::quiet_NaN();
  const std::size_t out = static_cast<std::size_t>(ref_t::output(0).shp.elements());
  std::vector<float> want(out), got(out);
  auto ref = std::make_unique<ref_t>();
  auto exe = std::make_unique<cpu_t>();
  ref->run(table, ids, want);
  for (int threads = 1; threads <= 2; ++threads) {
    exe->template state<cpu>().set_threads(threads);
    std::fill(got.begin(), got.end(), -1.f);
    exe->run(table, ids, got);
    CHECK(laws::relative_error(got, want) == 0);
  }
}

}  // namespace

TEST_CASE("gather: rows of the inner extent, i32 and i64 indices, negative ones, out-of-range ones") {
  using emb = model<embedding<input<"t", f32, 1000, 256>, input<"ids", i64, 1, 128>>>;
  std::vector<std::int64_t> ids(128);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>((i * 37) % 1000);
  ids[5] = -1;
  check_gather<emb>(ids);
  using batch = model<embedding<input<"t", f32, 1000, 256>, input<"ids", i32, 4, 128>>>;  // split across threads
  std::vector<std::int32_t> many(512);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<std::int32_t>((i * 7) % 1000) - 500;
  check_gather<batch>(many);
  using mid = model<gather<input<"t", f32, 3, 10, 7>, input<"i", i32, 2, 2>, 1>>;
  check_gather<mid>(std::vector<std::int32_t>{9, 0, -10, 4});
  using last = model<gather<input<"t", f32, 5, 9>, input<"i", i32, 2, 3>, -1>>;
  check_gather<last>(std::vector<std::int32_t>{8, 1, 1, -2, 0, 3});

  // Out of range: the reference's error, word for word.
  const auto message = [](auto& exe, const std::vector<std::int32_t>& i) {
    std::vector<float> table(30, 1.f), y(6);
    try {
      exe.run(table, i, y);
    } catch (const error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  using small = model<gather<input<"t", f32, 10, 3>, input<"i", i32, 2>>>;
  compiled<small, reference> ref;
  compiled<small, cpu> exe;
  for (const auto& bad : {std::vector<std::int32_t>{3, 10}, std::vector<std::int32_t>{-11, 0}}) {
    const std::string want = message(ref, bad);
    CHECK(want.find("out of range") != std::string::npos);
    CHECK(message(exe, bad) == want);
  }
}

namespace {

// Nanoseconds per run of Net on backend B with `threads` threads: the best of 7 batches of
// runs lasting about 20 ms each (inputs random in [-2, 2), weights from the law).
template <class Net, class B>
double ns_per_run(int threads) {
  using exe_t = compiled<Net, B>;
  auto exe = std::make_unique<exe_t>();
  const laws::random_weights<exe_t> w(3);
  if constexpr (!exe_t::plan.weights.empty()) exe->bind(w.set);
  if constexpr (std::is_same_v<B, cpu>) exe->template state<cpu>().set_threads(threads);
  std::vector<std::vector<float>> ins, outs;
  std::vector<const float*> in;
  std::vector<float*> out;
  for (std::size_t i = 0; i < exe_t::num_inputs; ++i) {
    ins.emplace_back(static_cast<std::size_t>(exe_t::input(i).shp.elements()));
    for (std::size_t k = 0; k < ins.back().size(); ++k)
      ins.back()[k] = static_cast<float>((k * 7919) % 4001) / 1000.f - 2.f;
  }
  for (std::size_t o = 0; o < exe_t::num_outputs; ++o)
    outs.emplace_back(static_cast<std::size_t>(exe_t::output(o).shp.elements()));
  for (auto& v : ins) in.push_back(v.data());
  for (auto& v : outs) out.push_back(v.data());
  using clock = std::chrono::steady_clock;
  const auto once = [&] { exe->run_unchecked(in.data(), out.data()); };
  once();
  int reps = 1;
  for (auto t0 = clock::now(); clock::now() - t0 < std::chrono::milliseconds(20); ++reps) once();
  double best = 1e300;
  for (int b = 0; b < 7; ++b) {
    const auto t0 = clock::now();
    for (int r = 0; r < reps; ++r) once();
    best = std::min(best, std::chrono::duration<double, std::nano>(clock::now() - t0).count() / reps);
  }
  return best;
}

template <class Net>
void bench(const char* what) {
  std::printf("%-44s cpu 1 thread %9.0f ns, 2 threads %9.0f ns; reference %10.0f ns\n", what, ns_per_run<Net, cpu>(1),
              ns_per_run<Net, cpu>(2), ns_per_run<Net, reference>(1));
}

}  // namespace

TEST_CASE("bench: the transformer's and MobileNet's ops, ns per run" * doctest::skip()) {
  std::printf("simd: %s\n", detail::simd::arch_name());
  bench<model<layer_norm<tokens, weight<"g", f32, 256>, weight<"b", f32, 256>>>>("layer_norm [1,128,256]");
  bench<model<gelu<big>>>("gelu [1,128,1024]");
  bench<model<transpose<input<"x", f32, 1, 128, 4, 64>, 0, 2, 1, 3>>>("transpose [1,128,4,64] 0,2,1,3");
  bench<model<softmax<input<"x", f32, 1, 4, 128, 128>>>>("softmax [1,4,128,128]");
  bench<model<add<tokens, input<"pos", f32, 128, 256>>>>("add [1,128,256] + [128,256]");
  bench<model<multiply<input<"x", f32, 1, 4, 128, 128>, scalar<0.125f>>>>("multiply [1,4,128,128] by a scalar");
  bench<model<slice<input<"x", f32, 1, 128, 768>, -1, 256, 512>>>("slice [1,128,768] -> [1,128,256]");
  bench<model<hardswish<input<"x", f32, 1, 96, 56, 56>>>>("hardswish [1,96,56,56]");
  bench<model<multiply<input<"x", f32, 1, 96, 56, 56>, input<"se", f32, 1, 96, 1, 1>>>>(
      "multiply [1,96,56,56] by [1,96,1,1]");
  bench<model<reduce_mean<input<"x", f32, 1, 96, 56, 56>, axes<2, 3>, true>>>("reduce_mean [1,96,56,56] over 2,3");
  bench<model<transpose<input<"x", f32, 1, 32, 56, 56>, 0, 2, 3, 1>>>("transpose [1,32,56,56] 0,2,3,1");
  bench<model<pad<input<"x", f32, 1, 32, 56, 56>, dims<0, 0, 1, 1>, dims<0, 0, 1, 1>>>>("pad [1,32,56,56] by 1");
}
