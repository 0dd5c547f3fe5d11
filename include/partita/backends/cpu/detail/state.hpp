#pragma once
/// The cpu backend's per-executable state: packed weights, scratch memory and the thread pool.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

#include "partita/backends/cpu/detail/packed_store.hpp"
#include "partita/backends/cpu/detail/thread_pool.hpp"
#include "partita/core/detail/aligned_buffer.hpp"

#if defined(PARTITA_CPU_OPENMP)
#include <omp.h>
#endif

namespace partita::detail::cpu {

/// Work below this many flops per extra thread runs on one thread: waking a core costs more.
inline constexpr double min_flops_per_task = 4.0e5;

inline int tasks_for(double flops, int threads, int units) {
  int t = static_cast<int>(flops / min_flops_per_task);
  t = std::min({t, threads, units});
  return t < 1 ? 1 : t;
}

/// What splitting a step across threads weighs, in the flops of `tasks_for` (which gives a
/// thread at least 4e5 of them): per element, a float moved (read and written), one through exp
/// or a function of its cost, one through erf or GELU, each as the GEMM flops it takes as long
/// as. A thread then gets enough work to pay for waking it.
inline constexpr double moved_cost = 10, exp_cost = 50, erf_cost = 150;

/// Packed weights, scratch memory and the thread pool of one executable.
class state {
 public:
  /// Starts the pool's workers (one thread per core this process may use, see
  /// `detail::available_cores`): they sleep until the first parallel step.
  state() : threads_(default_threads()) { start_pool(); }

  /// Number of threads used by `run` (0: every core the process may use). Takes effect at
  /// once; call it outside `run`.
  void set_threads(int n) {
    threads_ = n > 0 ? n : default_threads();
    pool_.reset();
    start_pool();
    grow_scratch(per_thread_floats_);
  }
  int threads() const { return threads_; }

  /// A state with this one's threads (the same pool) and nothing prepared: `bind` prepares
  /// into it and keeps it only if every step accepts its weights.
  state fork() const {
    state s(threads_, pool_);
    return s;
  }

  /// Bytes this state holds: packed weights and scratch.
  std::size_t resident_bytes() const {
    std::size_t n = shared_.size() + packed_.bytes();
    for (const auto& p : scratch_) n += p.size();
    return n;
  }

  /// Called by the executable before another backend's step: the pool's workers stop
  /// spinning, leaving the cores to it (oneDNN's OpenMP threads, a device driver).
  void rest() {
    if (pool_) pool_->rest();
  }

  // Used by the kernels.
  float* reserve(int step, std::size_t n) { return packed_.reserve(step, n); }
  float* packed(int step) const { return packed_.at(step); }
  void need_scratch(std::size_t shared, std::size_t per_thread) {
    if (shared_.size() < shared * sizeof(float))
      shared_ = detail::aligned_buffer(shared * sizeof(float), "the cpu backend's shared scratch");
    per_thread_floats_ = std::max(per_thread_floats_, per_thread);
    grow_scratch(per_thread_floats_);
  }
  /// Makes room, at bind, for step `step`'s order flag (`reverse_order`).
  void need_order_flag(int step) {
    if (order_flags_.size() <= static_cast<std::size_t>(step)) order_flags_.resize(static_cast<std::size_t>(step) + 1);
  }
  /// False, then true, then false... on successive calls for step `step` (after
  /// `need_order_flag(step)`): a step that streams more weights than the caches hold reads them
  /// in the opposite order every other run, so that it starts on the weights it read last,
  /// which are still in L2 (see dense's `dense_panels`).
  bool reverse_order(int step) {
    unsigned char& f = order_flags_[static_cast<std::size_t>(step)];
    f ^= 1u;
    return f == 0;
  }
  float* shared_scratch() const { return shared_.floats(); }
  float* thread_scratch(int t) const { return scratch_[static_cast<std::size_t>(t)].floats(); }
  /// Calls `f(t)` for each task `t < min(tasks, workers())`, in parallel, and returns when all
  /// have returned. A task that throws does not stop the others: once every task has returned,
  /// the first exception is rethrown, and the state runs later calls as before.
  template <class F>
  void parallel(int tasks, F&& f) {
#if defined(PARTITA_CPU_OPENMP)
    // The alternative to the pool, kept for comparison (benchmarks/runtime: bench_runtime_openmp).
    if (threads_ > 1 && tasks > 1) {
      const int n = std::min(tasks, threads_);
      // An exception leaving an OpenMP region is std::terminate: keep the first, rethrow it after.
      std::exception_ptr first;
#pragma omp parallel num_threads(n)
      {
        try {
          f(omp_get_thread_num());
        } catch (...) {
#pragma omp critical(partita_cpu_parallel_error)
          if (!first) first = std::current_exception();
        }
      }
      if (first) std::rethrow_exception(first);
      return;
    }
#endif
    if (pool_ && tasks > 1) {
      pool_->run(std::min(tasks, pool_->size()), f);
    } else {
      f(0);
    }
  }
  int workers() const {
#if defined(PARTITA_CPU_OPENMP)
    return threads_;
#else
    return pool_ ? pool_->size() : 1;
#endif
  }

 private:
#if defined(PARTITA_CPU_OPENMP)
  static constexpr bool use_pool = false;
#else
  static constexpr bool use_pool = true;
#endif
  state(int threads, std::shared_ptr<detail::thread_pool> pool) : threads_(threads), pool_(std::move(pool)) {}
  static int default_threads() { return detail::available_cores(); }
  void start_pool() {
    if (use_pool && threads_ > 1) pool_ = std::make_shared<detail::thread_pool>(threads_);
  }
  void grow_scratch(std::size_t n) {
    const std::size_t want = static_cast<std::size_t>(std::max(threads_, 1));
    if (scratch_.size() < want) scratch_.resize(want);
    for (auto& s : scratch_)
      if (s.size() < n * sizeof(float)) s = detail::aligned_buffer(n * sizeof(float), "the cpu backend's scratch");
  }
  int threads_;
  packed_store packed_;
  detail::aligned_buffer shared_;
  std::vector<detail::aligned_buffer> scratch_;
  std::size_t per_thread_floats_ = 0;
  std::vector<unsigned char> order_flags_;  // `reverse_order`'s, one per step that asked
  // Shared with the states `fork` makes for a bind; used by one of them at a time.
  std::shared_ptr<detail::thread_pool> pool_;
};

/// f(u0, u1) on ranges of [0, units) over the threads, when the work (units · unit_cost, in
/// the flops of `tasks_for`) pays for them; else f(0, units) on the calling thread.
template <class F>
void split_units(state& st, std::int64_t units, double unit_cost, F&& f) {
  const int most = static_cast<int>(std::min<std::int64_t>(units, 1 << 20));
  const int tasks = tasks_for(unit_cost * static_cast<double>(units), st.workers(), most);
  if (tasks <= 1) {
    f(std::int64_t{0}, units);
    return;
  }
  st.parallel(tasks, [&](int t) { f(units * t / tasks, units * (t + 1) / tasks); });
}

}  // namespace partita::detail::cpu
