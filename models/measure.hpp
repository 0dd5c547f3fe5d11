#pragma once
// Timing and comparing executables of one model, shared by the examples that run several.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace models {

/// `runs` timed calls of `exe` after one warm-up call, in milliseconds, sorted (the median is
/// in the middle, the best first).
template <class Exe>
std::vector<double> timed_ms(Exe& exe, const std::vector<float>& image, std::vector<float>& logits, int runs) {
  exe.run(image, logits);
  std::vector<double> ms;
  for (int i = 0; i < std::max(runs, 1); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    exe.run(image, logits);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

/// The median of `runs` timed calls of `exe`, in milliseconds.
template <class Exe>
double median_ms(Exe& exe, const std::vector<float>& image, std::vector<float>& logits, int runs) {
  const std::vector<double> ms = timed_ms(exe, image, logits, runs);
  return ms[ms.size() / 2];
}

/// The largest difference between `a` and `b`, relative to `b`'s magnitude (at least 1).
inline double max_relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]) / std::max(1.0, std::abs(static_cast<double>(b[i]))));
  return worst;
}

}  // namespace models
