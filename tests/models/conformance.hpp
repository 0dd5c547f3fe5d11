#pragma once
// Runs a model on the reference backend and on `cpu` (1 and 2 threads) with the same
// pseudo-random weights and inputs, and returns the worst relative error over every output.
#include <algorithm>
#include <cmath>
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
  double worst() const { return std::max(one_thread, two_threads); }
};

inline double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double d = std::abs(static_cast<double>(got[i]) - want[i]) / std::max(1.0, std::abs(static_cast<double>(want[i])));
    worst = std::max(worst, std::isnan(d) ? 1e30 : d);
  }
  return worst;
}

/// `Net` on `reference` vs on `Backends...` (by default `cpu` alone).
template <class Net, class... Backends>
result compare(unsigned seed = 7) {
  using ref_t = compiled<Net, reference>;
  using cpu_t = compiled<Net, Backends...>;
  static_assert(ref_t::num_inputs == cpu_t::num_inputs && ref_t::num_outputs == cpu_t::num_outputs);
  const random_weights<ref_t> w(seed);
  std::mt19937 gen(seed + 1);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  std::vector<std::vector<float>> ins, want, got;
  std::vector<const float*> in_ptrs;
  std::vector<float*> want_ptrs, got_ptrs;
  for (std::size_t i = 0; i < ref_t::num_inputs; ++i) {
    ins.emplace_back(static_cast<std::size_t>(ref_t::input(i).shp.elements()));
    for (float& v : ins.back()) v = dist(gen);
  }
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
  ref->run_unchecked(in_ptrs.data(), want_ptrs.data());
  result r;
  for (int threads : {1, 2}) {
    exe->template state<cpu>().set_threads(threads);
    for (auto& g : got) std::fill(g.begin(), g.end(), -1.f);
    exe->run_unchecked(in_ptrs.data(), got_ptrs.data());
    exe->run_unchecked(in_ptrs.data(), got_ptrs.data());  // twice: nothing may depend on the previous run
    double e = 0;
    for (std::size_t o = 0; o < got.size(); ++o) e = std::max(e, relative_error(got[o], want[o]));
    (threads == 1 ? r.one_thread : r.two_threads) = e;
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
    CHECK(r.worst() <= conformance::tolerance);               \
  } while (0)
