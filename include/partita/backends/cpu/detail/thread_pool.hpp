#pragma once
/// The cpu backend's thread pool: persistent workers, tasks claimed once per call.
// The cpu backend's thread pool: persistent workers, tasks claimed once per call, spinning that
// backs off to sleeping, and a thread count that respects the process's CPU affinity.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "partita/core/detail/clock.hpp"

#if defined(__linux__)
#include <sched.h>
#endif

namespace partita::detail {

// The builtin rather than <immintrin.h>'s _mm_pause: that header declares every instruction
// set's intrinsics and would be parsed by every file including the cpu backend.
inline void cpu_relax() {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
  __builtin_ia32_pause();
#endif
}

/// The cores this process may run on: its affinity mask where the system has one (a container
/// or `taskset` limits it), else the machine's hardware threads; at least 1.
inline int available_cores() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
#endif
  const unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

/// The processor the calling thread runs on, or -1 where the system does not say.
inline int current_cpu() {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

/// Where a worker of the pool may run: every processor its thread could run on when it
/// started, less the one its caller ran on at the last call (`avoid`), where there are
/// others. Only a change of the caller's processor costs a system call.
class worker_placement {
 public:
  /// Records the calling thread's affinity; `participants` is the pool's size: with more
  /// participants than processors some must share, and nothing is changed.
  explicit worker_placement(int participants) {
#if defined(__linux__)
    CPU_ZERO(&allowed_);
    usable_ = sched_getaffinity(0, sizeof(allowed_), &allowed_) == 0 && CPU_COUNT(&allowed_) >= participants;
#endif
    (void)participants;
  }

  /// Keeps the calling thread off processor `cpu` from now on (and lets it back on the one it
  /// avoided before).
  void avoid(int cpu) {
    if (!usable_ || cpu == avoided_) return;
    avoided_ = cpu;
#if defined(__linux__)
    cpu_set_t mask = allowed_;
    const auto at = static_cast<std::size_t>(cpu);
    if (cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(at, &mask)) CPU_CLR(at, &mask);
    sched_setaffinity(0, sizeof(mask), &mask);
#endif
  }

 private:
  bool usable_ = false;
  int avoided_ = -1;
#if defined(__linux__)
  cpu_set_t allowed_;
#endif
};

/// A small persistent pool: `threads - 1` workers created once, the caller being participant 0. `run(n, f)` calls `f(i)` exactly once for each `i < n` (at most `size()`) and
/// returns when all have returned; dispatch allocates nothing. A task that throws does not stop
/// the others: `run` waits for every one of them, then rethrows the first exception.
///
/// Protocol. Each call gets an even sequence number; the caller writes the call's description
/// (function, context, task count) while the sequence is odd, then publishes the even number.
/// A worker reads the description and re-reads the sequence (a seqlock), so it never mixes two
/// calls. Every task `i` is *claimed* by compare-and-swap of its slot from an older call's
/// number to this one's: worker `i` claims task `i` first (a core sees the same slice of the
/// work on every call), then everyone, the caller included, claims whatever is still unclaimed.
/// So the caller never waits for a worker that has not started (descheduled on a loaded
/// machine: it does that task itself), and a late worker can never run a task twice or run a
/// finished call's task. Waiting (workers for the next call, the caller for claimed tasks)
/// spins briefly, yields, then sleeps on an atomic wait.
///
/// Placement. The caller publishes the processor it runs on with each call, and the workers
/// keep off that one (`worker_placement`): Linux may wake a worker on its waker's processor
/// when the others look busy, and on a virtual machine a halted virtual CPU looks so
/// (preempted by the host); the two threads then share one core for milliseconds, until
/// load balancing separates them, and a call runs at one thread's speed. A worker is never
/// pinned to one processor: it may run on any of the process's but its caller's, and where
/// there are fewer processors than participants nothing is restricted.
class thread_pool {
 public:
  explicit thread_pool(int threads)
      : size_(threads < 1 ? 1 : threads), claims_(std::make_unique<claim_slot[]>(static_cast<std::size_t>(size_))) {
    workers_.reserve(static_cast<std::size_t>(size_ - 1));
    for (int i = 1; i < size_; ++i) workers_.emplace_back([this, i] { work(i); });
  }
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  ~thread_pool() {
    stop_.store(true, std::memory_order_seq_cst);
    const std::uint64_t s = seq_.load(std::memory_order_relaxed);
    seq_.store(s + 2, std::memory_order_seq_cst);
    wake_all();
    for (std::thread& t : workers_) t.join();
  }

  /// The number of participants (workers and the caller).
  int size() const { return size_; }

  /// Stops the workers' spinning at once: another backend is about to use the cores.
  void rest() { rest_.store(true, std::memory_order_relaxed); }

  /// Calls `f(i)` once for each `i < n` (n is capped at `size()`), in parallel, and returns
  /// when every call has returned. If calls threw, the first exception is rethrown then, once no
  /// task is running: a task never outlives `run` (the buffers it writes are the caller's), and
  /// the pool is ready for the next call. One caller at a time (the executable guarantees it).
  template <class F>
  void run(int n, F&& f) {
    if (n <= 1 || size_ == 1) {
      for (int i = 0; i < n; ++i) f(i);
      return;
    }
    if (n > size_) n = size_;
    using fn_t = std::remove_reference_t<F>;
    task_fn fn = [](void* ctx, int i) { (*static_cast<fn_t*>(ctx))(i); };
    void* ctx = const_cast<void*>(static_cast<const void*>(&f));

    // Write the description under an odd sequence number, then publish the even one.
    const std::uint64_t before = seq_.load(std::memory_order_relaxed);
    // Release stores (no fences, which ThreadSanitizer cannot follow): whoever reads a new
    // field also sees the odd number stored before it, and discards what it read.
    seq_.store(before + 1, std::memory_order_relaxed);
    task_.store(fn, std::memory_order_release);
    ctx_.store(ctx, std::memory_order_release);
    tasks_.store(n, std::memory_order_release);
    caller_cpu_.store(current_cpu(), std::memory_order_release);
    done_.store(0, std::memory_order_relaxed);
    rest_.store(false, std::memory_order_relaxed);
    const std::uint64_t call = before + 2;
    seq_.store(call, std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_seq_cst) > 0) wake_all();

    // The caller takes task 0 (the workers' own are 1 .. n-1), then anything a worker has
    // not claimed yet.
    claim_all(0, call, fn, ctx, n);
    wait_done(n);
    // Every task has returned: what a failed one stored is visible (done_'s acquire) and no
    // other thread touches it until the next call.
    if (failed_.load(std::memory_order_relaxed)) {
      std::exception_ptr e = std::exchange(error_, nullptr);
      failed_.store(false, std::memory_order_relaxed);
      std::rethrow_exception(std::move(e));
    }
  }

 private:
  using task_fn = void (*)(void*, int);

  // One slot per task, on its own cache line: the number of the last call that claimed it.
  struct alignas(64) claim_slot {
    std::atomic<std::uint64_t> call{0};
  };

  // Spinning budget before sleeping: long enough to cover the gap between two steps of one
  // run, short enough that an idle pool gives its cores back quickly on a loaded machine.
  static constexpr auto spin_time = std::chrono::microseconds(100);

  bool claim(int i, std::uint64_t call) {
    std::atomic<std::uint64_t>& slot = claims_[static_cast<std::size_t>(i)].call;
    std::uint64_t seen = slot.load(std::memory_order_relaxed);
    while (seen < call)
      if (slot.compare_exchange_weak(seen, call, std::memory_order_acq_rel, std::memory_order_relaxed)) return true;
    return false;
  }

  // Claims and runs task `first`, then every other unclaimed task of this call.
  void claim_all(int first, std::uint64_t call, task_fn fn, void* ctx, int n) {
    for (int k = 0; k < n; ++k) {
      const int i = (first + k) % n;
      if (!claim(i, call)) continue;
      // An exception must not unwind a worker (std::terminate) nor the caller before the
      // workers' tasks have returned: the first one is kept for the caller to rethrow.
      try {
        fn(ctx, i);
      } catch (...) {
        if (!failed_.exchange(true, std::memory_order_relaxed)) error_ = std::current_exception();
      }
      if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == n) done_.notify_one();
    }
  }

  // The caller's wait for tasks that workers claimed and are still running.
  void wait_done(int n) {
    const auto start = std::chrono::steady_clock::now();
    for (int spin = 0;; ++spin) {
      const int d = done_.load(std::memory_order_acquire);
      if (d == n) return;
      if (spin < 256) {
        cpu_relax();
      } else if (std::chrono::steady_clock::now() - start < spin_time) {
        // A worker that was preempted mid-task may share this core: let it run.
        std::this_thread::yield();
      } else {
        done_.wait(d, std::memory_order_acquire);
      }
    }
  }

  void wake_all() {
    wake_.fetch_add(1, std::memory_order_seq_cst);
    wake_.notify_all();
  }

  // Waits until the published sequence differs from `seen`: spins, yields, then sleeps.
  std::uint64_t wait_call(std::uint64_t seen) {
    const auto start = std::chrono::steady_clock::now();
    for (int spin = 0;; ++spin) {
      const std::uint64_t s = seq_.load(std::memory_order_acquire);
      if (s != seen && (s & 1u) == 0) return s;
      if (s != seen) {
        cpu_relax();  // a description is being written: it takes nanoseconds
        continue;
      }
      if (!rest_.load(std::memory_order_relaxed) && spin < 1024) {
        cpu_relax();
      } else if (!rest_.load(std::memory_order_relaxed) && std::chrono::steady_clock::now() - start < spin_time) {
        std::this_thread::yield();  // on a loaded machine, the core goes to whoever needs it
      } else {
        // Sleep. Announce it first, then look again: the caller publishes, then looks for
        // sleepers (both sequentially consistent), so one of the two sees the other.
        const std::uint32_t w = wake_.load(std::memory_order_seq_cst);
        sleeping_.fetch_add(1, std::memory_order_seq_cst);
        if (seq_.load(std::memory_order_seq_cst) == seen) wake_.wait(w, std::memory_order_seq_cst);
        sleeping_.fetch_sub(1, std::memory_order_seq_cst);
      }
    }
  }

  void work(int index) {
    worker_placement place(size_);
    std::uint64_t seen = 0;
    for (;;) {
      const std::uint64_t s = wait_call(seen);
      if (stop_.load(std::memory_order_seq_cst)) return;
      const task_fn fn = task_.load(std::memory_order_acquire);
      void* const ctx = ctx_.load(std::memory_order_acquire);
      const int n = tasks_.load(std::memory_order_acquire);
      const int caller_cpu = caller_cpu_.load(std::memory_order_acquire);
      if (seq_.load(std::memory_order_relaxed) != s) continue;  // a newer call overwrote it: look again
      seen = s;
      if (index >= n) continue;
      place.avoid(caller_cpu);
      claim_all(index, s, fn, ctx, n);
    }
  }

  int size_;
  std::unique_ptr<claim_slot[]> claims_;
  std::vector<std::thread> workers_;
  std::atomic<std::uint64_t> seq_{0};
  std::atomic<task_fn> task_{nullptr};
  std::atomic<void*> ctx_{nullptr};
  std::atomic<int> tasks_{0};
  std::atomic<int> caller_cpu_{-1};
  std::atomic<int> done_{0};
  std::atomic<std::uint32_t> wake_{0};
  std::atomic<int> sleeping_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> rest_{false};
  // The first exception a task of the current call threw, set by the task that made failed_ true.
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
};

}  // namespace partita::detail
