// Throughput of N executables run by N threads at once (N = 1, 2, 8) on the MLP (W1), each with
// its cpu backend's default threads (one per core of the affinity mask), against the figure of
// one executable on one thread. With more threads than cores the pools must not collapse:
// spinning backs off, and a step never waits for a worker that cannot run.
//
// Reported: runs per second of all threads together, and the ratio to the ideal
// min(N, cores) × (one executable, set_threads(1), one caller). On 2 cores, N = 8 can at best
// reach 2 × the single figure; the target is a ratio of at least 0.8.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <partita/partita.hpp>

#include "weights.hpp"
#include "workloads.hpp"

namespace {

using exe_t = partita::compiled<workloads::w1, partita::cpu>;

std::vector<std::vector<float>> storage;
const partita::weight_set& weights() {
  static const partita::weight_set set = bench::random_weights<exe_t>(storage);
  return set;
}

// One executable per benchmark thread; `threads` is its cpu backend's thread count (0: default).
void run_executables(benchmark::State& state, int threads) {
  auto exe = std::make_unique<exe_t>();
  if (threads > 0) exe->state<partita::cpu>().set_threads(threads);
  exe->bind(weights());
  const std::vector<float> x = bench::random_input<exe_t>(7 + static_cast<std::uint32_t>(state.thread_index()));
  std::vector<float> y(10);
  for (auto _ : state) {
    exe->run(x, y);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["runs_per_s"] = benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void single(benchmark::State& state) { run_executables(state, 1); }
void default_threads(benchmark::State& state) { run_executables(state, 0); }
void one_thread_each(benchmark::State& state) { run_executables(state, 1); }

// Collects each benchmark's runs per second (summed over its threads) beside the console output.
class ratio_reporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> rate;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      const auto it = r.counters.find("runs_per_s");
      if (it != r.counters.end() && r.run_type == Run::RT_Iteration) rate[r.benchmark_name()] = it->second.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace

// UseRealTime: the rate is of wall-clock time, which is what a server sees.
BENCHMARK(single)->Name("concurrency/single")->UseRealTime();
BENCHMARK(default_threads)->Name("concurrency/default_threads")->Threads(1)->Threads(2)->Threads(8)->UseRealTime();
BENCHMARK(one_thread_each)->Name("concurrency/one_thread_each")->Threads(2)->Threads(8)->UseRealTime();

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  ratio_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const auto single_it = reporter.rate.find("concurrency/single/real_time");
  if (single_it == reporter.rate.end() || single_it->second <= 0) return 0;
  const int cores = partita::detail::available_cores();
  std::printf("\nThroughput against min(N, %d cores) x one executable on one thread (%.0f runs/s):\n", cores,
              single_it->second);
  for (const auto& [name, r] : reporter.rate) {
    const auto at = name.find("threads:");
    if (at == std::string::npos) continue;
    const int n = std::stoi(name.substr(at + 8));
    std::printf("  %-48s %10.0f runs/s  ratio %.2f\n", name.c_str(), r, r / (std::min(n, cores) * single_it->second));
  }
  return 0;
}
