// Partita's cpu matmul against oneDNN's matmul primitive, in one process, on the same inputs: the
// shapes of attention (4 heads of 128 tokens by 64: the scores Q·Kᵀ, read transposed in place,
// the same product with K stored transposed, and the probabilities times V) and a linear layer
// written as a matmul, [1, 128, 256] · [1024, 256]ᵀ, with the weight a bound weight (packed at bind)
// or an activation. Benchmarks are named `<case>/<implementation>/<threads>`; oneDNN's checks its
// output against Partita's first and reports `ratio` = its time / Partita's. A summary follows,
// from runs of the two alternated in blocks (so that the machine's drift counts for neither):
// GFLOP/s of each and the ratio of the medians.
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
#include <thread>
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

// The median time per call over `blocks` blocks of about 5 ms of each of `runs`, alternated.
// Before each block, a pause: the other library's threads stop spinning (libgomp's after a few
// milliseconds, Partita's after 0.1 ms) and leave the cores to this one, whose first call (not
// timed) wakes its own.
std::vector<double> alternated_medians(const std::vector<std::function<void()>>& runs, int blocks) {
  std::vector<int> calls;
  for (const auto& run : runs) {
    run();
    const double start = now_ns();
    for (int i = 0; i < 5; ++i) run();
    calls.push_back(std::clamp(static_cast<int>(5e6 / ((now_ns() - start) / 5)), 10, 5000));
  }
  std::vector<std::vector<double>> t(runs.size());
  for (int b = 0; b < blocks; ++b)
    for (std::size_t r = 0; r < runs.size(); ++r) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      runs[r]();
      const double start = now_ns();
      for (int i = 0; i < calls[r]; ++i) runs[r]();
      t[r].push_back((now_ns() - start) / calls[r]);
    }
  std::vector<double> medians;
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    medians.push_back(v[v.size() / 2]);
  }
  return medians;
}
#endif

struct summary_row {
  std::string name;
  int threads = 0;
  double flops = 0, partita_ns = 0, peer_ns = 0;
};

// By `<case>/<threads>`, in the order measured.
std::map<std::string, summary_row>& summary() {
  static std::map<std::string, summary_row> rows;
  return rows;
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
  }

  void run_partita() {
    if constexpr (executable::num_inputs == 2) {
      exe->run(a, b, c);
    } else {
      exe->run(a, c);
    }
  }

  void time_loop(benchmark::State& state, const std::function<void()>& run) {
    run();
    const double start = now_ns();
    for (auto _ : state) run();
    const double ns = (now_ns() - start) / static_cast<double>(state.iterations());
    state.counters["us"] = ns / 1e3;
    state.counters["GFLOP/s"] = p.flops / ns;
  }

  void register_all() {
    for (int t : thread_counts) {
      benchmark::RegisterBenchmark((p.name + "/partita/" + std::to_string(t)).c_str(), [this, t](benchmark::State& s) {
        exe->template state<cpu>().set_threads(t);
        time_loop(s, [&] { run_partita(); });
      })->UseRealTime();
#ifdef PARTITA_PEERS_ONEDNN
      benchmark::RegisterBenchmark((p.name + "/onednn/" + std::to_string(t)).c_str(), [this, t](benchmark::State& s) {
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
        time_loop(s, [&] { peer.run(); });
        // Alternated with Partita, for the summary (once: Google Benchmark calls this more than once).
        summary_row& row = summary()[p.name + "/" + std::to_string(t)];
        if (row.threads == 0) {
          exe->template state<cpu>().set_threads(t);
          const std::vector<double> med = alternated_medians({[&] { run_partita(); }, [&] { peer.run(); }}, 11);
          row = {p.name, t, p.flops, med[0], med[1]};
        }
        s.counters["ratio"] = row.peer_ns / row.partita_ns;
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

  if (!summary().empty()) {
    std::printf(
        "\nPartita cpu matmul vs oneDNN matmul (medians of alternated blocks; ratio = oneDNN time / Partita time)\n");
    std::printf("%-16s %7s %16s %16s %8s\n", "case", "threads", "partita GFLOP/s", "oneDNN GFLOP/s", "ratio");
    std::vector<summary_row> rows;
    for (const auto& [key, r] : summary()) rows.push_back(r);
    std::stable_sort(rows.begin(), rows.end(),
                     [](const summary_row& x, const summary_row& y) { return x.threads < y.threads; });
    for (const summary_row& r : rows)
      std::printf("%-16s %7d %16.1f %16.1f %8.2f\n", r.name.c_str(), r.threads, r.flops / r.partita_ns,
                  r.flops / r.peer_ns, r.peer_ns / r.partita_ns);
  }
  return 0;
}
