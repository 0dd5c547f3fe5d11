// Where a workload's time goes: each step's mean wall time per run on the cpu backend, from an
// executable built with PARTITA_PROFILE (the timed comparison is bench_runtime's; these times
// include the two clock reads per step, some 40 ns).
//
//   profile_steps                 W1 to W7 on 1 thread
//   profile_steps W7 2            one workload, on 2 threads
//   profile_steps W7 1 5          ... and only the 5 slowest steps after the table
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <partita/partita.hpp>

#include "weights.hpp"
#include "workloads.hpp"

static_assert(partita::profiling, "profile_steps is built with PARTITA_PROFILE");

namespace {

template <class Net>
void profile(const char* name, int threads, std::size_t top, std::int64_t id_bound = 0) {
  using executable = partita::compiled<Net, partita::cpu>;
  using input_type = std::conditional_t<executable::input(0).type == partita::dtype::i64, std::int64_t, float>;
  std::vector<std::vector<float>> storage;
  const partita::weight_set weights = bench::random_weights<executable>(storage);
  std::vector<input_type> input;
  if constexpr (std::is_same_v<input_type, std::int64_t>) input = bench::random_ids<executable>(id_bound);
  else input = bench::random_input<executable>();
  std::vector<float> output(static_cast<std::size_t>(executable::output(0).shp.elements()));
  auto exe = std::make_unique<executable>();
  exe->bind(weights);
  exe->template state<partita::cpu>().set_threads(threads);
  // Warm up (caches, the pool, lazily touched scratch), then time runs for about a second.
  for (int i = 0; i < 10; ++i) exe->run(input, output);
  exe->reset_profile();
  const auto start = std::chrono::steady_clock::now();
  do {
    exe->run(input, output);
  } while (std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  std::printf("%s on %d thread%s\n%s\n", name, threads, threads == 1 ? "" : "s", partita::print_profile(*exe, top).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view only = argc > 1 ? argv[1] : "";
  const int threads = argc > 2 ? std::atoi(argv[2]) : 1;
  const std::size_t top = argc > 3 ? static_cast<std::size_t>(std::atoi(argv[3])) : 10;
  const auto want = [&](std::string_view w) { return only.empty() || only == w; };
  if (want("W1")) profile<workloads::w1>("W1", threads, top);
  if (want("W2")) profile<workloads::w2>("W2", threads, top);
  if (want("W3")) profile<workloads::w3>("W3", threads, top);
  if (want("W4")) profile<workloads::w4>("W4", threads, top);
  if (want("W5")) profile<workloads::w5>("W5", threads, top);
  if (want("W6")) profile<workloads::w6>("W6", threads, top, workloads::w6_vocab);
  if (want("W7")) profile<workloads::w7>("W7", threads, top);
  return 0;
}
