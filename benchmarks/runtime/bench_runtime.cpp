// Partita's cpu backend against oneDNN and Eigen, side by side in one process, on the same
// weights and inputs (workloads.hpp, weights.hpp). Benchmarks are named
// `<workload>/<implementation>/<threads>` (W3/partita/1, W3/onednn/2, W1/eigen/1,
// W3/partita_onednn/1 for Partita with its oneDNN backend); each peer
// checks its output against Partita's before it is timed and reports `ratio` = its time /
// Partita's (same workload and thread count, measured earlier in the same run). Every timing also
// reports `GFLOP/s` (fma_peak.hpp, model_flops.hpp: 2 × the multiply-adds of the model's
// convolutions, dense layers and matmuls, per second) and `pct_peak`, that rate as a percentage
// of the threads' measured FMA peak (one core's, times the threads). A summary table follows
// Google Benchmark's output.
//
//   bench_runtime                                   everything
//   bench_runtime --benchmark_filter='W3/'          one workload
//   bench_runtime --benchmark_format=json           for scripts
//   bench_runtime --dump_weights=DIR                writes W6's and W7's weights, input and output
//                                                   for bench_torch.py, then exits
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <benchmark/benchmark.h>

#include <partita/partita.hpp>

#include "fma_peak.hpp"
#include "model_flops.hpp"
#include "peers/weight_lookup.hpp"
#include "weights.hpp"
#include "workloads.hpp"
#ifdef PARTITA_PEERS_ONEDNN
#include "peers/onednn_peer.hpp"
// The oneDNN encoder's default sizes are W6's.
static_assert(peers::encoder_config{}.vocab == transformer::vocab && peers::encoder_config{}.seq == transformer::seq &&
              peers::encoder_config{}.d_model == transformer::d_model &&
              peers::encoder_config{}.heads == transformer::heads && peers::encoder_config{}.d_ff == transformer::d_ff &&
              peers::encoder_config{}.classes == transformer::classes);
#endif
#ifdef PARTITA_PEERS_EIGEN
#include "peers/eigen_peer.hpp"
#endif
#ifdef PARTITA_BENCH_DNNL_BACKEND
#include <partita/backends/onednn/onednn.hpp>
#endif

namespace {

constexpr int thread_counts[] = {1, 2};
constexpr double tolerance = 1e-4;

// Nanoseconds per run of each benchmark, by name, as measured in this process.
std::map<std::string, double>& timings() {
  static std::map<std::string, double> t;
  return t;
}

// Partita-with-oneDNN over raw oneDNN, medians of alternated runs, by benchmark name.
std::map<std::string, double>& interleaved() {
  static std::map<std::string, double> t;
  return t;
}

// A peer's time over Partita's, medians of alternated runs, by the peer's benchmark name.
std::map<std::string, double>& alternated() {
  static std::map<std::string, double> t;
  return t;
}

// The median of `peer()`'s time over `ours()`'s, the two called in turn (at least 11 pairs,
// then until half a second has passed, at most 201): a guest whose speed moves by 10-30 %
// within seconds moves both sides of each pair alike, where two timed loops, one after the
// other, can each catch a different speed. Each call finds the caches as the other left them,
// so the ratio is that of two models taking turns, not of two hot loops. `before_peer` runs
// untimed before each peer call.
double alternated_ratio(const std::function<void()>& ours, const std::function<void()>& peer,
                        const std::function<void()>& before_peer) {
  const auto timed = [](const std::function<void()>& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::vector<double> a, b;
  const auto start = std::chrono::steady_clock::now();
  while (a.size() < 201 && (a.size() < 11 || std::chrono::steady_clock::now() - start < std::chrono::milliseconds(500))) {
    a.push_back(timed(ours));
    before_peer();
    b.push_back(timed(peer));
  }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return b[b.size() / 2] / a[a.size() / 2];
}

std::string name_of(const std::string& workload, const std::string& impl, int threads) {
  return workload + "/" + impl + "/" + std::to_string(threads);
}

double max_relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double e = std::abs(static_cast<double>(got[i]) - want[i]) / std::max(1.0, std::abs(static_cast<double>(want[i])));
    if (!(e <= worst)) worst = e;
  }
  return worst;
}

// Each workload's arithmetic (model_flops.hpp), by workload name.
std::map<std::string, double>& workload_flops() {
  static std::map<std::string, double> f;
  return f;
}

// GFLOP/s of `flops` in `ns`, and that as a percentage of `threads` cores' FMA peak.
void report_rate(benchmark::State& state, double flops, double ns, int threads) {
  state.counters["GFLOP/s"] = flops / ns;
  state.counters["pct_peak"] = 100.0 * flops / ns / (threads * bench::fma_peak_gflops());
}

// Times `run` and records ns per call; `ratio` against Partita for peers.
void time_loop(benchmark::State& state, const std::string& name, const std::string& partita_name,
               const std::function<void()>& run, double flops, int threads) {
  run();  // warm-up: caches, thread pools, lazily created primitives
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) run();
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
                    static_cast<double>(state.iterations());
  timings()[name] = ns;
  state.counters["us"] = ns / 1e3;
  if (name != partita_name) {
    const auto p = timings().find(partita_name);
    if (p != timings().end()) state.counters["ratio"] = ns / p->second;
  }
  report_rate(state, flops, ns, threads);
}

// One workload: Partita's executable (bound once) and its output, which every peer must match.
// The input is f32, or token ids (i64, below `id_bound`) for a model that starts with an
// embedding; peers' `run` take a pointer to the same type.
template <class Net>
struct workload {
  using executable = partita::compiled<Net, partita::cpu>;
  using input_type = std::conditional_t<executable::input(0).type == partita::dtype::i64, std::int64_t, float>;
  static constexpr double flops = bench::multiply_add_flops<Net>();
  std::string name;
  std::int64_t id_bound;
  std::vector<std::vector<float>> storage;
  partita::weight_set weights = bench::random_weights<executable>(storage);
  std::vector<input_type> input = make_input();
  std::vector<float> output = std::vector<float>(static_cast<std::size_t>(executable::output(0).shp.elements()));
  std::vector<float> expected = output;
  std::unique_ptr<executable> exe = std::make_unique<executable>();

  explicit workload(std::string n, std::int64_t ids_below = 0) : name(std::move(n)), id_bound(ids_below) {
    workload_flops()[name] = flops;
    exe->bind(weights);
    exe->run(input, expected);
  }

  std::vector<input_type> make_input() const {
    if constexpr (std::is_same_v<input_type, std::int64_t>) return bench::random_ids<executable>(id_bound);
    else return bench::random_input<executable>();
  }

  // For bench_torch.py: `dir/NAME.safetensors` holds the weights under the model's names,
  // `dir/NAME.io.safetensors` the input ("input") and Partita's output ("output").
  void dump(const std::string& dir) const {
    std::filesystem::create_directories(dir);
    std::vector<partita::tensor_data> named;  // literals are in the program, not in the state_dict
    for (std::size_t i = 0; i < executable::plan.weights.size(); ++i)
      if (!executable::weight(i).literal) named.push_back(*weights.find(executable::weight(i).name));
    partita::save_safetensors(dir + "/" + name + ".safetensors", named);
    const auto dims = [](const partita::tensor_slot& s) {
      return std::vector<std::int64_t>(s.shp.dims.begin(), s.shp.dims.begin() + s.shp.rank);
    };
    partita::weight_set io;
    io.add("input", std::is_same_v<input_type, float> ? partita::dtype::f32 : partita::dtype::i64,
           std::as_bytes(std::span(input)), dims(executable::input(0)));
    io.add("output", expected, dims(executable::output(0)));
    partita::save_safetensors(dir + "/" + name + ".io.safetensors", io.tensors());
    std::printf("%s: %zu weights, input and Partita's output written to %s\n", name.c_str(), named.size(), dir.c_str());
  }

  void register_partita() {
    for (int t : thread_counts) {
      const std::string bench_name = name_of(name, "partita", t);
      benchmark::RegisterBenchmark(bench_name.c_str(), [this, t, bench_name](benchmark::State& state) {
        exe->template state<partita::cpu>().set_threads(t);
        time_loop(state, bench_name, bench_name, [&] { exe->run(input, output); }, flops, t);
      })->UseRealTime();
    }
  }

  // `make(threads)` builds the peer (outside the timed loop); its output is checked first.
  template <class Make>
  void register_peer(const std::string& impl, Make make) {
    for (int t : thread_counts) {
      const std::string bench_name = name_of(name, impl, t);
      const std::string partita_name = name_of(name, "partita", t);
      benchmark::RegisterBenchmark(bench_name.c_str(), [this, t, make, bench_name, partita_name](benchmark::State& state) {
        auto peer = make(t);
        std::vector<float> got(expected.size());
        peer.run(input.data(), got.data());
        const double err = max_relative_error(got, expected);
        state.counters["max_rel_err"] = err;
        if (!(err <= tolerance)) {
          state.SkipWithError(("output differs from Partita's (max relative error " + std::to_string(err) + ")").c_str());
          return;
        }
        time_loop(state, bench_name, partita_name, [&] { peer.run(input.data(), got.data()); }, flops, t);
        // The same ratio from alternated calls, on one thread only: on two, a peer's OpenMP
        // worker keeps spinning after its call (its wait policy) while Partita's two threads
        // need both cores, which measured Partita at 0.6-0.9 of its own timed loop.
        if (t == 1) {
          auto& cpu_state = exe->template state<partita::cpu>();
          cpu_state.set_threads(1);
          std::vector<float> ours(expected.size());
          const double r = alternated_ratio([&] { exe->run(input, ours); },
                                            [&] { peer.run(input.data(), got.data()); }, [&] { cpu_state.rest(); });
          state.counters["alt_ratio"] = r;
          alternated()[bench_name] = r;
        }
      })->UseRealTime();
    }
  }

  peers::weight_lookup lookup() const { return peers::lookup_in(weights); }

#ifdef PARTITA_BENCH_DNNL_BACKEND
  // `W/partita_onednn/T`: the model through Partita with the oneDNN backend (on T threads) and cpu
  // for the rest. `vs_onednn` is its time over raw oneDNN's (the cost of going through Partita):
  // both are run alternately, one call each, and the ratio of the medians is reported, so that
  // the machine's drift does not count as overhead.
  template <int T, class MakePeer>
  void register_partita_onednn(MakePeer make_peer) {
    using exe_t = partita::compiled<Net, partita::onednn_backend<partita::onednn_options{.threads = T}>, partita::cpu>;
    const std::string bench_name = name_of(name, "partita_onednn", T);
    const std::string partita_name = name_of(name, "partita", T);
    benchmark::RegisterBenchmark(bench_name.c_str(), [this, bench_name, partita_name, make_peer](benchmark::State& state) {
      auto exe = std::make_unique<exe_t>();
      exe->bind(weights);
      exe->template state<partita::cpu>().set_threads(T);
      std::vector<float> got(expected.size());
      exe->run(input, got);
      const double err = max_relative_error(got, expected);
      state.counters["max_rel_err"] = err;
      if (!(err <= tolerance)) {
        state.SkipWithError(("output differs from Partita's (max relative error " + std::to_string(err) + ")").c_str());
        return;
      }
      time_loop(state, bench_name, partita_name, [&] { exe->run(input, got); }, flops, T);
      auto peer = make_peer(T);
      const double vs = 1.0 / alternated_ratio([&] { exe->run(input, got); },
                                               [&] { peer.run(input.data(), got.data()); }, [] {});
      state.counters["vs_onednn"] = vs;
      interleaved()[bench_name] = vs;
    })->UseRealTime();
  }
#endif
};

void print_summary() {
  std::printf("\n%-4s %-8s %12s %12s %8s %10s %12s %8s %14s %8s %14s\n", "", "threads", "partita us", "onednn us",
              "ratio", "alt ratio", "eigen us", "ratio", "partita GF/s", "% peak", "onednn GF/s");
  for (const char* w : {"W1", "W2", "W3", "W4", "W5", "W6", "W7"})
    for (int t : thread_counts) {
      const auto& tm = timings();
      const auto p = tm.find(name_of(w, "partita", t));
      if (p == tm.end()) continue;
      const double flops = workload_flops()[w];
      std::printf("%-4s %-8d %12.1f", w, t, p->second / 1e3);
      for (const char* impl : {"onednn", "eigen"}) {
        const auto q = tm.find(name_of(w, impl, t));
        if (q == tm.end()) {
          std::printf(" %12s %8s", "-", "-");
        } else {
          std::printf(" %12.1f %8.2f", q->second / 1e3, q->second / p->second);
        }
        if (std::string_view(impl) == "onednn") {
          const auto alt = alternated().find(name_of(w, impl, t));
          if (alt == alternated().end()) std::printf(" %10s", "-");
          else std::printf(" %10.2f", alt->second);
        }
      }
      std::printf(" %14.1f %8.1f", flops / p->second, 100.0 * flops / p->second / (t * bench::fma_peak_gflops()));
      const auto o = tm.find(name_of(w, "onednn", t));
      if (o == tm.end()) std::printf(" %14s\n", "-");
      else std::printf(" %14.1f\n", flops / o->second);
    }
  std::printf("one core's measured FMA peak: %.1f GFLOP/s (%% peak: of the threads' cores)\n", bench::fma_peak_gflops());
  std::printf("ratio = peer time / Partita time (above 1: Partita is faster); alt ratio = the same from alternated "
              "calls (medians, one thread); cpu backend built for %s\n",
              partita::detail::simd::arch_name());
  bool header = false;
  for (const char* w : {"W1", "W2", "W3", "W4", "W5", "W6", "W7"})
    for (int t : thread_counts) {
      const auto& tm = timings();
      const auto d = tm.find(name_of(w, "partita_onednn", t));
      const auto o = tm.find(name_of(w, "onednn", t));
      const auto a = interleaved().find(name_of(w, "partita_onednn", t));
      if (d == tm.end() || o == tm.end() || a == interleaved().end()) continue;
      if (!header)
        std::printf("\n%-4s %-8s %16s %12s %10s %22s\n", "", "threads", "partita_onednn us", "onednn us", "ratio", "alternated median ratio");
      header = true;
      std::printf("%-4s %-8d %16.1f %12.1f %10.3f %22.3f\n", w, t, d->second / 1e3, o->second / 1e3, d->second / o->second,
                  a->second);
    }
}

}  // namespace

int main(int argc, char** argv) {
  // --dump_weights=DIR is ours: taken out before Google Benchmark reads the rest.
  std::string dump_dir;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a.starts_with("--dump_weights=")) dump_dir = a.substr(a.find('=') + 1);
    else argv[kept++] = argv[i];
  }
  argc = kept;
  if (!dump_dir.empty()) {
    workload<workloads::w6>("W6", workloads::w6_vocab).dump(dump_dir);
    workload<workloads::w7>("W7").dump(dump_dir);
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  workload<workloads::w1> w1("W1");
  workload<workloads::w2> w2("W2");
  workload<workloads::w3> w3("W3");
  workload<workloads::w4> w4("W4");
  workload<workloads::w5> w5("W5");
  workload<workloads::w6> w6("W6", workloads::w6_vocab);
  workload<workloads::w7> w7("W7");

  // The ceiling the workloads' `pct_peak` refers to, first, in the JSON as `peak/fma/1`.
  benchmark::RegisterBenchmark("peak/fma/1", [](benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(bench::fma_peak_gflops());
    state.counters["GFLOP/s"] = bench::fma_peak_gflops();
  });

  // Each workload: Partita first (the peers' ratios refer to it), then its peers.
  w1.register_partita();
#ifdef PARTITA_PEERS_ONEDNN
  w1.register_peer("onednn", [&](int t) { return peers::onednn_mlp(1, w1.lookup(), t); });
#endif
#ifdef PARTITA_PEERS_EIGEN
  w1.register_peer("eigen", [&](int t) { return peers::eigen_mlp(1, w1.lookup(), t); });
#endif
  w2.register_partita();
#ifdef PARTITA_PEERS_ONEDNN
  w2.register_peer("onednn", [&](int t) { return peers::onednn_mlp(64, w2.lookup(), t); });
#endif
#ifdef PARTITA_PEERS_EIGEN
  w2.register_peer("eigen", [&](int t) { return peers::eigen_mlp(64, w2.lookup(), t); });
#endif
  w3.register_partita();
#ifdef PARTITA_PEERS_ONEDNN
  w3.register_peer("onednn", [&](int t) { return peers::onednn_basic_block(w3.lookup(), t); });
#endif
#ifdef PARTITA_BENCH_DNNL_BACKEND
  w3.register_partita_onednn<1>([&](int t) { return peers::onednn_basic_block(w3.lookup(), t); });
  w3.register_partita_onednn<2>([&](int t) { return peers::onednn_basic_block(w3.lookup(), t); });
#endif
  w4.register_partita();
#ifdef PARTITA_PEERS_ONEDNN
  w4.register_peer("onednn", [&](int t) { return peers::onednn_lenet(w4.lookup(), t); });
#endif
  w5.register_partita();
#ifdef PARTITA_PEERS_ONEDNN
  w5.register_peer("onednn", [&](int t) { return peers::onednn_resnet18(w5.lookup(), t); });
#endif
#ifdef PARTITA_BENCH_DNNL_BACKEND
  w5.register_partita_onednn<1>([&](int t) { return peers::onednn_resnet18(w5.lookup(), t); });
  w5.register_partita_onednn<2>([&](int t) { return peers::onednn_resnet18(w5.lookup(), t); });
#endif

  w6.register_partita();
#ifdef PARTITA_PEERS_ONEDNN
  w6.register_peer("onednn", [&](int t) { return peers::onednn_transformer({}, w6.lookup(), t); });
#endif
  w7.register_partita();
#ifdef PARTITA_PEERS_ONEDNN
  w7.register_peer("onednn", [&](int t) { return peers::onednn_mobilenet_v2(w7.lookup(), t); });
#endif

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  print_summary();
  return 0;
}
