// Partita's cpu matmul against oneDNN's matmul primitive, in one process, on the same inputs: the
// shapes of attention (4 heads of 128 tokens by 64: the scores Q·Kᵀ, read transposed in place,
// the same product with K stored transposed, and the probabilities times V) and a linear layer
// written as a matmul, [1, 128, 256] · [1024, 256]ᵀ, with the weight a bound weight (packed at bind)
// or an activation. Benchmarks are named `<case>/<implementation>/<threads>`; oneDNN's checks its
// output against Partita's first and reports `ratio` = its time / Partita's (same case and thread
// count, measured just before). A summary of GFLOP/s and ratios follows. On a machine shared
// with other work, run it when the cores are idle: oneDNN's OpenMP threads collapse when one of
// them is descheduled, Partita's pool less so.
//
//   bench_matmul                                   everything
//   bench_matmul --benchmark_filter='scores/'      one case
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include <partita/partita.hpp>

#include <models/random_weights.hpp>

#ifdef PARTITA_PEERS_ONEDNN
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace {

using namespace partita;

constexpr int thread_counts[] = {1, 2};

template <std::int64_t... D>
using a_in = input<"a", f32, D...>;
template <std::int64_t... D>
using b_in = input<"b", f32, D...>;
constexpr matmul_attrs tb{.transpose_b = true};

using scores = model<matmul<a_in<1, 4, 128, 64>, b_in<1, 4, 128, 64>, tb>>;   // Q·Kᵀ
using scores_kt = model<matmul<a_in<1, 4, 128, 64>, b_in<1, 4, 64, 128>>>;   // Q·(Kᵀ stored)
using context = model<matmul<a_in<1, 4, 128, 128>, b_in<1, 4, 128, 64>>>;   // P·V
using linear_w = model<matmul<a_in<1, 128, 256>, weight<"w", f32, 1024, 256>, tb>>;
using linear_x = model<matmul<a_in<1, 128, 256>, b_in<1024, 256>, tb>>;

double now_ns() {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One matmul: A and B as stored, and the flags, for the peer; the flops of a run.
struct problem {
  std::string name;
  shape a, b;
  bool ta = false, tb = false, b_weight = false;
  double flops = 0;
};

#ifdef PARTITA_PEERS_ONEDNN
constexpr double tolerance = 1e-4;

double max_relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double e =
        std::abs(static_cast<double>(got[i]) - want[i]) / std::max(1.0, std::abs(static_cast<double>(want[i])));
    if (!(e <= worst)) worst = e;
  }
  return worst;
}

// oneDNN's matmul primitive on the same problem: op(A) and op(B) described by strides over the
// buffers as stored (nothing transposed), B with batch dims of 1 prepended to A's rank (oneDNN
// broadcasts them), C plain. The primitive is created once; `run` executes it.
class onednn_matmul {
 public:
  onednn_matmul(const problem& p, const float* a, const float* b, float* c, int threads) : threads_(threads) {
    using dnnl::memory;
    omp_set_num_threads(threads);
    const int rank = std::max(p.a.rank, p.b.rank);
    const memory::desc ad = operand(p.a, p.ta, rank), bd = operand(p.b, p.tb, rank);
    memory::dims cd = ad.dims();
    cd.back() = bd.dims().back();
    for (int i = 0; i + 2 < rank; ++i)
      cd[static_cast<std::size_t>(i)] =
          std::max(ad.dims()[static_cast<std::size_t>(i)], bd.dims()[static_cast<std::size_t>(i)]);
    const memory::desc cdesc(cd, memory::data_type::f32, plain_strides(cd));
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(ad, bd, cdesc), engine_);
    impl_ = pd.impl_info_str();
    prim_ = dnnl::matmul(pd);
    a_ = memory(ad, engine_, const_cast<float*>(a));
    b_ = memory(bd, engine_, const_cast<float*>(b));
    c_ = memory(cdesc, engine_, c);
  }
  void run() {
    omp_set_num_threads(threads_);
    prim_.execute(stream_, {{DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, c_}});
    stream_.wait();
  }
  const std::string& impl() const { return impl_; }

 private:
  static dnnl::memory::dims plain_strides(const dnnl::memory::dims& d) {
    dnnl::memory::dims s(d.size());
    dnnl::memory::dim step = 1;
    for (std::size_t i = d.size(); i-- > 0;) {
      s[i] = step;
      step *= d[i];
    }
    return s;
  }
  // op(X) of rank `rank`: X's dims (ones prepended) with the last two swapped when transposed.
  static dnnl::memory::desc operand(const shape& x, bool transposed, int rank) {
    dnnl::memory::dims d(static_cast<std::size_t>(rank), 1);
    for (int i = 0; i < x.rank; ++i) d[static_cast<std::size_t>(rank - x.rank + i)] = x[i];
    dnnl::memory::dims s = plain_strides(d);
    if (transposed) {
      std::swap(d[d.size() - 1], d[d.size() - 2]);
      std::swap(s[s.size() - 1], s[s.size() - 2]);
    }
    return {d, dnnl::memory::data_type::f32, s};
  }
  int threads_;
  dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream_{engine_};
  dnnl::matmul prim_;
  dnnl::memory a_, b_, c_;
  std::string impl_;
};
#endif

// Nanoseconds per call of each benchmark, by name, as measured in this process; and the
// flops of each case, by name.
std::map<std::string, double>& timings() {
  static std::map<std::string, double> t;
  return t;
}
std::map<std::string, double>& case_flops() {
  static std::map<std::string, double> f;
  return f;
}

// One case: Partita's executable (bound once) and its output, which oneDNN must match.
template <class Net>
struct bench_case {
  using executable = compiled<Net, cpu>;
  problem p;
  std::vector<float> a, b, c, expected;
  weight_set weights;  // B, when it is the model's weight
  std::unique_ptr<executable> exe = std::make_unique<executable>();

  explicit bench_case(problem pr) : p(std::move(pr)) {
    static_assert(executable::num_outputs == 1);
    a = models::pseudo_random(static_cast<std::size_t>(p.a.elements()), 7, -1.f, 1.f);
    b = models::pseudo_random(static_cast<std::size_t>(p.b.elements()), 8, -1.f, 1.f);
    c.assign(static_cast<std::size_t>(executable::output(0).shp.elements()), 0.f);
    if (p.b_weight) {
      weights.add("w", b, std::span(p.b.dims.data(), static_cast<std::size_t>(p.b.rank)));
      exe->bind(weights);
    }
    run_partita();
    expected = c;
    const shape y = executable::output(0).shp;
    const std::int64_t m = y.elements() / y.back(0), n = y.back(0), k = p.ta ? p.a.back(1) : p.a.back(0);
    p.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    case_flops()[p.name] = p.flops;
  }

  void run_partita() {
    if constexpr (executable::num_inputs == 2) {
      exe->run(a, b, c);
    } else {
      exe->run(a, c);
    }
  }

  // Times `run`, records its ns per call under `name`; a peer gets `ratio` against Partita's.
  void time_loop(benchmark::State& state, const std::string& name, const std::function<void()>& run) {
    run();
    const double start = now_ns();
    for (auto _ : state) run();
    const double ns = (now_ns() - start) / static_cast<double>(state.iterations());
    timings()[name] = ns;
    state.counters["us"] = ns / 1e3;
    state.counters["GFLOP/s"] = p.flops / ns;
    const std::string partita = p.name + "/partita/" + name.substr(name.rfind('/') + 1);
    if (name != partita && timings().count(partita)) state.counters["ratio"] = ns / timings()[partita];
  }

  void register_all() {
    for (int t : thread_counts) {
      const std::string partita = p.name + "/partita/" + std::to_string(t);
      benchmark::RegisterBenchmark(partita.c_str(), [this, t, partita](benchmark::State& s) {
        exe->template state<cpu>().set_threads(t);
        time_loop(s, partita, [&] { run_partita(); });
      })->UseRealTime();
#ifdef PARTITA_PEERS_ONEDNN
      const std::string onednn = p.name + "/onednn/" + std::to_string(t);
      benchmark::RegisterBenchmark(onednn.c_str(), [this, t, onednn](benchmark::State& s) {
        std::vector<float> got(expected.size());
        onednn_matmul peer(p, a.data(), b.data(), got.data(), t);
        peer.run();
        const double err = max_relative_error(got, expected);
        s.counters["max_rel_err"] = err;
        if (!(err <= tolerance)) {
          s.SkipWithError(("output differs from Partita's (max relative error " + std::to_string(err) + ")").c_str());
          return;
        }
        s.SetLabel(peer.impl());
        time_loop(s, onednn, [&] { peer.run(); });
      })->UseRealTime();
#endif
    }
  }
};

// Registers a case's benchmarks; `keep` holds it while they run.
template <class Net>
void register_case(std::vector<std::shared_ptr<void>>& keep, problem p) {
  auto c = std::make_shared<bench_case<Net>>(std::move(p));
  c->register_all();
  keep.push_back(std::move(c));
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::shared_ptr<void>> keep;
  register_case<scores>(keep, {"scores", shape_of<1, 4, 128, 64>, shape_of<1, 4, 128, 64>, false, true, false});
  register_case<scores_kt>(keep, {"scores_kt", shape_of<1, 4, 128, 64>, shape_of<1, 4, 64, 128>, false, false, false});
  register_case<context>(keep, {"context", shape_of<1, 4, 128, 128>, shape_of<1, 4, 128, 64>, false, false, false});
  register_case<linear_w>(keep, {"linear_weight", shape_of<1, 128, 256>, shape_of<1024, 256>, false, true, true});
  register_case<linear_x>(keep, {"linear_act", shape_of<1, 128, 256>, shape_of<1024, 256>, false, true, false});

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();

  // The summary: each case and thread count that both ran.
  bool header = false;
  for (int t : thread_counts)
    for (const auto& [name, flops] : case_flops()) {
      const auto mine = timings().find(name + "/partita/" + std::to_string(t));
      const auto peer = timings().find(name + "/onednn/" + std::to_string(t));
      if (mine == timings().end() || peer == timings().end()) continue;
      if (!header) {
        std::printf(
            "\nPartita cpu matmul vs oneDNN matmul (ratio = oneDNN time / Partita time: above 1, Partita is faster)\n");
        std::printf("%-16s %7s %16s %16s %8s\n", "case", "threads", "partita GFLOP/s", "oneDNN GFLOP/s", "ratio");
        header = true;
      }
      std::printf("%-16s %7d %16.1f %16.1f %8.2f\n", name.c_str(), t, flops / mine->second, flops / peer->second,
                  peer->second / mine->second);
    }
  return 0;
}
