#pragma once
// Runs a model on the reference backend and on `cpu` (1 and 2 threads) with the same
// pseudo-random weights and inputs, finite and then with NaN and ±Inf planted in them, and
// returns the worst relative error over every output.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <string_view>
#include <vector>

#include <partita/partita.hpp>

namespace conformance {
using namespace partita;

/// Deterministic weights: batch-norm variances positive, everything else in [-1, 1) scaled by
/// 1/sqrt(fan-in) so that outputs stay O(1).
template <class Exe>
struct random_weights {
  std::vector<std::vector<float>> data;
  weight_set set;
  explicit random_weights(unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    data.reserve(Exe::plan.weights.size());
    for (std::size_t i = 0; i < Exe::plan.weights.size(); ++i) {
      const tensor_slot& w = Exe::weight(i);
      const std::int64_t fan_in = w.shp.rank >= 2 ? w.shp.elements() / w.shp[0] : 1;
      const float scale = 1.f / std::sqrt(static_cast<float>(fan_in));
      const bool variance = std::string_view(w.name).ends_with("var");
      data.emplace_back(static_cast<std::size_t>(w.shp.elements()));
      for (float& v : data.back()) v = variance ? 0.5f + 0.5f * (dist(gen) + 1.f) : dist(gen) * scale;
      set.add(std::string(w.name), data.back(), std::span(w.shp.dims.data(), static_cast<std::size_t>(w.shp.rank)));
    }
  }
};

struct result {
  double one_thread = 0, two_threads = 0;
  // Rounds with special inputs: one NaN, one +Inf, one -Inf, a mix of them.
  std::array<double, 4> specials{};
  double worst() const { return std::max({one_thread, two_threads, specials[0], specials[1], specials[2], specials[3]}); }
};

/// How far `got` is from `want`: the worst relative error (absolute below 1) over the finite
/// expected values; a NaN or infinity expected must come out exactly (any NaN for NaN), and an
/// unexpected one counts as 1e30.
inline double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    double d = 0;
    if (std::isnan(w)) {
      d = std::isnan(g) ? 0 : 1e30;
    } else if (std::isinf(w)) {
      d = g == w ? 0 : 1e30;
    } else {
      d = std::abs(g - w) / std::max(1.0, std::abs(w));
      if (!std::isfinite(d)) d = 1e30;
    }
    worst = std::max(worst, d);
  }
  return worst;
}

/// The special values every backend must propagate as the reference does: rounds with one NaN,
/// one +Inf, one -Inf at a pseudo-random place in every input, then one with about 5 % of the
/// elements replaced by a mix of the three.
inline void plant_specials(std::vector<std::vector<float>>& ins, int round, unsigned seed) {
  constexpr float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity()};
  std::mt19937 gen(seed * 31u + static_cast<unsigned>(round));
  for (auto& v : ins) {
    if (v.empty()) continue;
    if (round < 3) {
      v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(gen)] = specials[round];
    } else {
      for (float& x : v)
        if (gen() % 20 == 0) x = specials[gen() % 3];
    }
  }
}

/// `Net` on `reference` vs on `Backends...` (by default `cpu` alone), on cpu with 1 and 2
/// threads, with finite inputs and then with NaN and ±Inf planted in them.
template <class Net, class... Backends>
result compare(unsigned seed = 7) {
  using ref_t = compiled<Net, reference>;
  using cpu_t = compiled<Net, Backends...>;
  static_assert(ref_t::num_inputs == cpu_t::num_inputs && ref_t::num_outputs == cpu_t::num_outputs);
  const random_weights<ref_t> w(seed);
  std::mt19937 gen(seed + 1);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  std::vector<std::vector<float>> base, ins, want, got;
  std::vector<const float*> in_ptrs;
  std::vector<float*> want_ptrs, got_ptrs;
  for (std::size_t i = 0; i < ref_t::num_inputs; ++i) {
    base.emplace_back(static_cast<std::size_t>(ref_t::input(i).shp.elements()));
    for (float& v : base.back()) v = dist(gen);
  }
  ins = base;
  for (std::size_t o = 0; o < ref_t::num_outputs; ++o) {
    want.emplace_back(static_cast<std::size_t>(ref_t::output(o).shp.elements()));
    got.emplace_back(want.back().size(), -1.f);
  }
  for (auto& v : ins) in_ptrs.push_back(v.data());
  for (auto& v : want) want_ptrs.push_back(v.data());
  for (auto& v : got) got_ptrs.push_back(v.data());

  auto ref = std::make_unique<ref_t>();
  auto exe = std::make_unique<cpu_t>();
  if constexpr (!ref_t::plan.weights.empty()) {
    ref->bind(w.set);
    exe->bind(w.set);
  }
  constexpr bool has_cpu = (std::is_same_v<Backends, cpu> || ...);
  const auto error_with = [&](int threads) {
    if constexpr (has_cpu) exe->template state<cpu>().set_threads(threads);
    for (auto& g : got) std::fill(g.begin(), g.end(), -1.f);
    exe->run_unchecked(in_ptrs.data(), got_ptrs.data());
    exe->run_unchecked(in_ptrs.data(), got_ptrs.data());  // twice: nothing may depend on the previous run
    double e = 0;
    for (std::size_t o = 0; o < got.size(); ++o) e = std::max(e, relative_error(got[o], want[o]));
    return e;
  };
  result r;
  ref->run_unchecked(in_ptrs.data(), want_ptrs.data());
  r.one_thread = error_with(1);
  r.two_threads = error_with(2);
  for (int round = 0; round < 4; ++round) {
    for (std::size_t i = 0; i < ins.size(); ++i) std::copy(base[i].begin(), base[i].end(), ins[i].begin());
    plant_specials(ins, round, seed);
    ref->run_unchecked(in_ptrs.data(), want_ptrs.data());
    r.specials[static_cast<std::size_t>(round)] = std::max(error_with(1), error_with(2));
  }
  return r;
}

/// The limit every cpu kernel meets against the reference (fp32).
inline constexpr double tolerance = 1e-5;

}  // namespace conformance

/// Checks that `model` (a type) on `cpu` matches the reference within the tolerance, reporting
/// both errors on failure.
#define CHECK_CONFORMS(...)                                   \
  do {                                                        \
    const auto r = conformance::compare<__VA_ARGS__, cpu>();  \
    CAPTURE(r.one_thread);                                    \
    CAPTURE(r.two_threads);                                   \
    CAPTURE(r.specials[0]); /* one NaN */                     \
    CAPTURE(r.specials[1]); /* one +Inf */                    \
    CAPTURE(r.specials[2]); /* one -Inf */                    \
    CAPTURE(r.specials[3]); /* a mix */                       \
    CHECK(r.worst() <= conformance::tolerance);               \
  } while (0)
