// The cpu backend's transcendental functions (simd_math.hpp) against their scalar references:
// each function computed in double with <cmath>, by the formula its doc comment gives, and
// rounded to float. Over a sweep of the whole float range and dense samples where the values
// matter, the largest error must stay within the documented bound; NaN, ±Inf, ±0 and the
// overflow and underflow edges must come out as the reference's.
#include "partita/backends/cpu/detail/simd/simd_math.hpp"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

namespace simd = partita::detail::simd;

namespace {

struct function {
  const char* name;
  simd::vec (*vector)(const simd::vec&);
  double (*reference)(double);
  std::int64_t max_ulp;  // as documented in simd_math.hpp
};

double gelu_tanh_reference(double x) {
  const double u = std::sqrt(2 / std::numbers::pi) * (x + 0.044715 * x * x * x);
  return x / (1 + std::exp(-2 * u));
}

const function functions[] = {
    {"exp", simd::exp, [](double x) { return std::exp(x); }, 1},
    {"log", simd::log, [](double x) { return std::log(x); }, 1},
    {"erf", simd::erf, [](double x) { return std::erf(x); }, 1},
    {"tanh", simd::tanh, [](double x) { return std::tanh(x); }, 1},
    {"sigmoid", simd::sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }, 2},
    {"silu", simd::silu, [](double x) { return x / (1 + std::exp(-x)); }, 3},
    {"gelu", simd::gelu, [](double x) { return 0.5 * x * std::erfc(-x / std::numbers::sqrt2); }, 5},
    {"gelu_tanh", simd::gelu_tanh, gelu_tanh_reference, 3},
    {"sqrt", simd::sqrt, [](double x) { return std::sqrt(x); }, 0},
    {"rsqrt", simd::rsqrt, [](double x) { return 1 / std::sqrt(x); }, 1},
};

// The two-float steps (gelu_tanh's argument, the exact x² of gelu and erf) need a fused
// multiply-add; without one the bounds do not hold, and only the special values are checked.
#if defined(__FMA__) || defined(__AVX512F__) || defined(__aarch64__)
constexpr bool fused_multiply_add = true;
#else
constexpr bool fused_multiply_add = false;
#endif

float from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// Position in the order of floats (-0 and +0 both at 0), so that the distance is in ulps.
std::int64_t order(float f) {
  std::int32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b >= 0 ? b : -static_cast<std::int64_t>(b & 0x7fffffff);
}

struct worst {
  std::int64_t ulp = 0;
  float x = 0, got = 0, want = 0;
  int specials_wrong = 0;
  float special_x = 0;
};

// NaN must meet NaN, an infinity the same infinity, a zero a zero of the same sign; other
// results are measured in ulps.
void compare(const function& f, const std::vector<float>& xs, worst& w) {
  constexpr int n = simd::width;
  alignas(64) float in[n], out[n];
  for (std::size_t at = 0; at < xs.size(); at += n) {
    const int m = static_cast<int>(std::min<std::size_t>(n, xs.size() - at));
    for (int i = 0; i < n; ++i) in[i] = i < m ? xs[at + static_cast<std::size_t>(i)] : 0.f;
    simd::store(out, f.vector(simd::load(in)));
    for (int i = 0; i < m; ++i) {
      const float want = static_cast<float>(f.reference(static_cast<double>(in[i])));
      const float got = out[i];
      bool special_ok = true;
      if (std::isnan(want) || std::isnan(got)) {
        special_ok = std::isnan(want) && std::isnan(got);
      } else if (std::isinf(want) || std::isinf(got) || want == 0.f) {
        special_ok = want == got && std::signbit(want) == std::signbit(got);
      } else {
        const std::int64_t d = std::llabs(order(got) - order(want));
        if (d > w.ulp) w = {d, in[i], got, want, w.specials_wrong, w.special_x};
      }
      if (!special_ok && w.specials_wrong++ == 0) w.special_x = in[i];
    }
  }
}

// Every 4093rd bit pattern (all exponents, varied mantissas), plus dense samples in [-10, 10]
// and around the edges: exp's overflow and underflow, the subnormal tails of sigmoid, silu,
// gelu and gelu_tanh.
std::vector<float> sweep() {
  std::vector<float> xs;
  for (std::uint64_t b = 0; b <= 0xffffffffu; b += 4093) xs.push_back(from_bits(static_cast<std::uint32_t>(b)));
  const auto dense = [&](float lo, float hi, int count) {
    for (int i = 0; i < count; ++i)
      xs.push_back(lo + (hi - lo) * (static_cast<float>(i) + 0.5f) / static_cast<float>(count));
  };
  dense(-10.f, 10.f, 1 << 20);
  dense(-1e-3f, 1e-3f, 1 << 14);
  dense(-20.f, -10.f, 1 << 16);
  dense(-110.f, -80.f, 1 << 16);
  dense(80.f, 90.f, 1 << 16);
  return xs;
}

std::vector<float> specials() {
  using lim = std::numeric_limits<float>;
  std::vector<float> xs;
  for (float x :
       {lim::quiet_NaN(), lim::infinity(), 0.f, lim::max(), lim::min(), lim::denorm_min(), 1.f, 20.f, 100.f, 1e20f}) {
    xs.push_back(x);
    xs.push_back(-x);
  }
  // exp's overflow and underflow edges, the last subnormal results of sigmoid and gelu
  for (float x : {88.72283f, 88.72284f, -87.33655f, -103.97208f, -103.97209f, -104.f, -14.2f, -14.5f, -14.6f})
    xs.push_back(x);
  return xs;
}

}  // namespace

TEST_CASE("simd_math: each function within its documented ulps of the double reference") {
  const std::vector<float> xs = sweep();
  for (const function& f : functions) {
    worst w;
    compare(f, xs, w);
    INFO(std::string(f.name) << ": max " << w.ulp << " ulp at x = " << w.x << " (got " << w.got << ", reference "
                             << w.want << "); first wrong special value at x = " << w.special_x);
    CHECK(w.specials_wrong == 0);
    if (fused_multiply_add) CHECK(w.ulp <= f.max_ulp);
  }
}

TEST_CASE("simd_math: NaN, infinities, zeros and the edges match the reference") {
  for (const function& f : functions) {
    worst w;
    compare(f, specials(), w);
    INFO(std::string(f.name) << ": first wrong special value at x = " << w.special_x << "; max " << w.ulp << " ulp");
    CHECK(w.specials_wrong == 0);
    if (fused_multiply_add) CHECK(w.ulp <= f.max_ulp);
  }
}

TEST_CASE("simd_math: the limits, spelled out") {
  const float inf = std::numeric_limits<float>::infinity();
  const auto at = [](simd::vec (*f)(const simd::vec&), float x) {
    alignas(64) float out[simd::width];
    simd::store(out, f(simd::splat(x)));
    return out[0];
  };
  CHECK(at(simd::exp, 100.f) == inf);
  CHECK(at(simd::exp, -inf) == 0.f);
  CHECK(at(simd::exp, inf) == inf);
  CHECK(at(simd::exp, -100.f) > 0.f);  // 3.7e-44: subnormal, not flushed
  CHECK(at(simd::exp, -100.f) < std::numeric_limits<float>::min());
  CHECK(at(simd::exp, -105.f) == 0.f);
  CHECK(at(simd::log, 0.f) == -inf);
  CHECK(std::isnan(at(simd::log, -1.f)));
  CHECK(at(simd::log, inf) == inf);
  CHECK(at(simd::erf, inf) == 1.f);
  CHECK(at(simd::erf, -inf) == -1.f);
  CHECK(at(simd::tanh, 20.f) == 1.f);
  CHECK(at(simd::tanh, -20.f) == -1.f);
  CHECK(at(simd::sigmoid, inf) == 1.f);
  CHECK(at(simd::sigmoid, -inf) == 0.f);
  CHECK(at(simd::silu, inf) == inf);
  CHECK(std::isnan(at(simd::silu, -inf)));  // -inf / (1 + e^inf)
  CHECK(at(simd::gelu, inf) == inf);
  CHECK(std::isnan(at(simd::gelu, -inf)));  // -inf · erfc(inf) = -inf · 0
  CHECK(at(simd::gelu, -20.f) == 0.f);
  CHECK(std::signbit(at(simd::gelu, -20.f)));
  CHECK(at(simd::gelu_tanh, inf) == inf);
  CHECK(std::isnan(at(simd::gelu_tanh, -inf)));  // -inf / (1 + e^inf)
  CHECK(at(simd::rsqrt, 0.f) == inf);
  CHECK(at(simd::rsqrt, -0.f) == -inf);
  CHECK(at(simd::rsqrt, inf) == 0.f);
  CHECK(std::isnan(at(simd::sqrt, -1.f)));
  for (simd::vec (*f)(const simd::vec&) : {simd::exp, simd::log, simd::erf, simd::tanh, simd::sigmoid, simd::silu,
                                           simd::gelu, simd::gelu_tanh, simd::sqrt, simd::rsqrt})
    CHECK(std::isnan(at(f, std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("simd_math: gelu on |x| < 3.9375, the range its AVX-512 table covers") {
  // Whole vectors of the range take the table (2 ulp); a vector with one lane outside it, the
  // general path (5 ulp) for every lane.
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  constexpr std::int64_t bound = 2;
#else
  constexpr std::int64_t bound = 5;
#endif
  const function& gelu = functions[6];
  REQUIRE(std::string(gelu.name) == "gelu");
  std::vector<float> xs;
  const std::uint32_t top = std::bit_cast<std::uint32_t>(3.9375f);
  for (std::uint32_t b = 0; b < top; b += 251) {
    xs.push_back(from_bits(b));
    xs.push_back(-from_bits(b));
  }
  for (float x : {-3.9374998f, 3.9374998f, -0.f, 0.0625f, -0.0625f, 3.8125f, -3.8125f}) xs.push_back(x);
  worst w;
  compare(gelu, xs, w);
  INFO("max " << w.ulp << " ulp at x = " << w.x << " (got " << w.got << ", reference " << w.want << ")");
  CHECK(w.specials_wrong == 0);
  if (fused_multiply_add) CHECK(w.ulp <= bound);

  // one lane past the range, or NaN: every lane as the reference says (lane 5, or the last of a
  // narrower vector)
  for (float odd : {3.9375f, -4.f, -30.f, std::numeric_limits<float>::quiet_NaN()}) {
    std::vector<float> mixed(simd::width);
    for (int i = 0; i < simd::width; ++i) mixed[static_cast<std::size_t>(i)] = -2.f + 0.25f * static_cast<float>(i);
    mixed[static_cast<std::size_t>(simd::width > 5 ? 5 : simd::width - 1)] = odd;
    worst m;
    compare(gelu, mixed, m);
    INFO("a vector with " << odd << ": max " << m.ulp << " ulp at x = " << m.x);
    CHECK(m.specials_wrong == 0);
    if (fused_multiply_add) CHECK(m.ulp <= 5);
  }
}
