// One build of one workload for ab.py: compiled once per tree, with the library's namespaces
// renamed on the command line (-Dpartita=partita_a ...), so that two trees' builds link into one
// driver without sharing a single inline function. The entry point's name is PARTITA_AB_ENTRY.
#include <chrono>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include <benchmarks/runtime/weights.hpp>
#include <benchmarks/runtime/workloads.hpp>

namespace {

#if !(PARTITA_AB_WORKLOAD >= 1 && PARTITA_AB_WORKLOAD <= 7)
#error "PARTITA_AB_WORKLOAD must be 1 to 7"
#endif
// workloads::w1 ... w7, named from the number (expanded first, then pasted).
#define PARTITA_AB_NET(n) PARTITA_AB_NET_PASTE(n)
#define PARTITA_AB_NET_PASTE(n) workloads::w##n
using net = PARTITA_AB_NET(PARTITA_AB_WORKLOAD);

using executable = partita::compiled<net, partita::cpu>;
constexpr bool ids = executable::input(0).type == partita::dtype::i64;

struct bound {
  std::vector<std::vector<float>> storage;
  std::unique_ptr<executable> exe = std::make_unique<executable>();
  std::vector<float> x;
  std::vector<std::int64_t> token_ids;
  std::vector<float> y = std::vector<float>(static_cast<std::size_t>(executable::output(0).shp.elements()));
  explicit bound(int threads) {
    exe->bind(bench::random_weights<executable>(storage));
    exe->template state<partita::cpu>().set_threads(threads);
    if constexpr (ids) token_ids = bench::random_ids<executable>(workloads::w6_vocab);
    else x = bench::random_input<executable>();
  }
  void run() {
    if constexpr (ids) exe->run(token_ids, y);
    else exe->run(x, y);
  }
};

}  // namespace

/// Runs the workload `calls` times on `threads` threads (bound on the first call) after two
/// warm-up runs and returns the mean time of one run in µs; then rests the pool's workers, so
/// that the other build's threads get the cores at once. `*first` receives the output's first
/// value, which both builds must agree on.
extern "C" double PARTITA_AB_ENTRY(int threads, int calls, float* first) {
  static bound b(threads);
  b.run();
  b.run();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) b.run();
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls;
  b.exe->template state<partita::cpu>().rest();
  *first = b.y[0];
  return us;
}
