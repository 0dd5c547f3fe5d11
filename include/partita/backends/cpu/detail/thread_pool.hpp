#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace partita::detail {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

/// A small persistent pool: `threads - 1` workers created once, the caller being worker 0.
/// `run(n, f)` calls `f(i)` for each `i < n` (at most `size()`), worker `i` always taking task
/// `i`, so a static split of the work gives each core the same slice on every call. Workers spin
/// briefly after a task, then sleep on an atomic wait (at once after `rest()`); dispatch
/// allocates nothing.
class thread_pool {
 public:
  explicit thread_pool(int threads) : size_(threads < 1 ? 1 : threads) {
    workers_.reserve(static_cast<std::size_t>(size_ - 1));
    for (int i = 1; i < size_; ++i) workers_.emplace_back([this, i] { work(i); });
  }
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  ~thread_pool() {
    stop_.store(true, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  int size() const { return size_; }

  /// Stops the workers' spinning at once: another backend is about to use the cores.
  void rest() { rest_.store(true, std::memory_order_relaxed); }

  template <class F>
  void run(int n, F&& f) {
    if (n <= 1 || size_ == 1) {
      for (int i = 0; i < n; ++i) f(i);
      return;
    }
    if (n > size_) n = size_;
    using fn_t = std::remove_reference_t<F>;
    task_ = [](void* ctx, int i) { (*static_cast<fn_t*>(ctx))(i); };
    ctx_ = const_cast<void*>(static_cast<const void*>(&f));
    tasks_ = n;
    rest_.store(false, std::memory_order_relaxed);
    pending_.store(n - 1, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    if (sleeping_.load(std::memory_order_acquire) > 0) generation_.notify_all();
    f(0);
    while (pending_.load(std::memory_order_acquire) != 0) cpu_relax();
  }

 private:
  void work(int index) {
    std::uint64_t seen = 0;
    for (;;) {
      std::uint64_t g = generation_.load(std::memory_order_acquire);
      for (int spin = 0; g == seen && spin < spin_limit && !rest_.load(std::memory_order_relaxed); ++spin) {
        cpu_relax();
        g = generation_.load(std::memory_order_acquire);
      }
      if (g == seen) {
        sleeping_.fetch_add(1, std::memory_order_acq_rel);
        generation_.wait(seen, std::memory_order_acquire);
        sleeping_.fetch_sub(1, std::memory_order_acq_rel);
        continue;
      }
      seen = g;
      if (stop_.load(std::memory_order_relaxed)) return;
      if (index < tasks_) {
        task_(ctx_, index);
        pending_.fetch_sub(1, std::memory_order_acq_rel);
      }
    }
  }

  static constexpr int spin_limit = 1 << 16;
  int size_;
  std::vector<std::thread> workers_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<int> sleeping_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> rest_{false};
  void (*task_)(void*, int) = nullptr;
  void* ctx_ = nullptr;
  int tasks_ = 0;
};

}  // namespace partita::detail
