#pragma once
/// Per-step wall times of an executable (`compiled::profile()`, built with `-DPARTITA_PROFILE`)
/// and their printed table (`print_profile`).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <string>
#include <string_view>

#include "partita/core/detail/clock.hpp"
#include "partita/ir/layout.hpp"

namespace partita {

/// True where the program is built with `-DPARTITA_PROFILE`: every `run` then reads the clock
/// around each step (two `steady_clock` reads a step, some 40 ns). Off, the executable keeps
/// its (zero) table and reads no clock. Build every translation unit of a program alike.
#if defined(PARTITA_PROFILE)
inline constexpr bool profiling = true;
#else
inline constexpr bool profiling = false;
#endif

/// The wall time of each step of one executable, summed over the runs since it was created or
/// its `reset_profile()`, and of the output copies after the last step; all zero unless
/// `profiling`. A step split across threads counts once, from its start to its last thread's end.
template <std::size_t Steps>
struct step_profile {
  std::array<std::uint64_t, Steps> ns{};
  std::uint64_t copies_ns = 0;
  std::uint64_t runs = 0;

  /// Mean microseconds of step `s` per run.
  double mean_us(std::size_t s) const { return runs ? static_cast<double>(ns[s]) / 1e3 / static_cast<double>(runs) : 0; }
  /// Mean microseconds of a whole run: every step and the copies.
  double total_us() const {
    const std::uint64_t all = std::accumulate(ns.begin(), ns.end(), copies_ns);
    return runs ? static_cast<double>(all) / 1e3 / static_cast<double>(runs) : 0;
  }
};

namespace detail {
/// Nanoseconds since `start`, for the executable's step loop.
inline std::uint64_t ns_since(std::chrono::steady_clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}
}  // namespace detail

/// The profile of `exe` as a table: one line per step (index, backend, what it runs, its output
/// shape, marked `nhwc` where it lies channels-last, mean µs per run, share of the run), then the output copies, then the `top` slowest
/// steps. Explains itself when the program is built without `PARTITA_PROFILE` or has not run.
template <class Exe>
std::string print_profile(const Exe& exe, std::size_t top = 10) {
  if constexpr (!profiling) {
    return "no profile: build with -DPARTITA_PROFILE to time each step\n";
  } else {
    const auto& p = exe.profile();
    if (p.runs == 0) return "no profile: the executable has not run since its profile was reset\n";
    const double total = p.total_us();
    std::string out;
    char line[256];
    std::snprintf(line, sizeof line, "profile: %llu runs, %.1f us per run\n", static_cast<unsigned long long>(p.runs),
                  total);
    out += line;
    out += "  step backend  what                                    shape                       us      %\n";
    const auto row = [&](std::size_t s) {
      // A channels-last result is marked as `print(plan)` marks its buffer.
      const std::string shape = to_string(Exe::plan.nodes[static_cast<std::size_t>(Exe::plan.steps[s].node)].out) +
                                (Exe::plan.steps[s].out.layout == tensor_layout::channels_last ? " nhwc" : "");
      const std::string_view name = Exe::step_name(s), backend = Exe::step_backend(s);
      std::snprintf(line, sizeof line, "  %4zu %-8.*s %-39.*s %-25s %8.1f %6.2f\n", s, static_cast<int>(backend.size()),
                    backend.data(), static_cast<int>(name.size()), name.data(), shape.c_str(), p.mean_us(s),
                    total > 0 ? 100.0 * p.mean_us(s) / total : 0.0);
      out += line;
    };
    for (std::size_t s = 0; s < Exe::num_steps; ++s) row(s);
    const double copies = static_cast<double>(p.copies_ns) / 1e3 / static_cast<double>(p.runs);
    std::snprintf(line, sizeof line, "       output copies %68.1f %6.2f\n", copies, total > 0 ? 100.0 * copies / total : 0.0);
    out += line;
    std::array<std::size_t, Exe::num_steps> order{};
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return p.ns[a] != p.ns[b] ? p.ns[a] > p.ns[b] : a < b; });
    const std::size_t shown = std::min(top, order.size());
    if (shown > 0) {
      std::snprintf(line, sizeof line, "slowest %zu:\n", shown);
      out += line;
      for (std::size_t i = 0; i < shown; ++i) row(order[i]);
    }
    return out;
  }
}

}  // namespace partita
