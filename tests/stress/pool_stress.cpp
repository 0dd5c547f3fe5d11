// The cpu backend's thread pool under load, built with ThreadSanitizer: every task of every call
// runs exactly once, with pools of 3, 4 and 8 threads (more than this machine's cores), calls of
// fewer tasks than workers, and tasks of uneven length, so that late workers meet the next call.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <partita/backends/cpu/detail/thread_pool.hpp>

namespace {

// Runs `calls` calls of 1 .. size tasks on `pool`; each task bumps its own plain counter
// (ThreadSanitizer reports a task run twice at once) and an atomic total.
void hammer(partita::detail::thread_pool& pool, int calls, unsigned seed) {
  const int size = pool.size();
  std::vector<long> runs(static_cast<std::size_t>(size), 0);
  std::vector<long> expected(static_cast<std::size_t>(size), 0);
  std::atomic<long> total{0};
  long want_total = 0;
  unsigned r = seed;
  for (int c = 0; c < calls; ++c) {
    r = r * 1664525u + 1013904223u;
    const int n = 1 + static_cast<int>((r >> 8) % static_cast<unsigned>(size));
    const unsigned slow = (r >> 16) % 8;  // now and then one task is much longer than the rest
    pool.run(n, [&](int i) {
      runs[static_cast<std::size_t>(i)] += 1;
      total.fetch_add(1, std::memory_order_relaxed);
      if (slow == 0 && i == n - 1) std::this_thread::sleep_for(std::chrono::microseconds(20));
      if (slow == 1 && i == 0) std::this_thread::yield();
    });
    for (int i = 0; i < n; ++i) expected[static_cast<std::size_t>(i)] += 1;
    want_total += n;
    // Everything a task wrote is visible once run returns.
    REQUIRE(total.load(std::memory_order_relaxed) == want_total);
  }
  CHECK(runs == expected);
}

}  // namespace

TEST_CASE("every task runs exactly once: pools of 3, 4 and 8 threads, calls of fewer tasks than workers") {
  for (int threads : {3, 4, 8}) {
    CAPTURE(threads);
    partita::detail::thread_pool pool(threads);
    hammer(pool, 4000, static_cast<unsigned>(threads));
  }
}

TEST_CASE("calls after the workers went to sleep, and after rest()") {
  partita::detail::thread_pool pool(4);
  for (int round = 0; round < 20; ++round) {
    if (round % 2) pool.rest();
    else std::this_thread::sleep_for(std::chrono::microseconds(300));  // past the spinning budget
    hammer(pool, 50, static_cast<unsigned>(round));
  }
}

TEST_CASE("several pools at once, more threads than cores (no hang)") {
  std::vector<std::thread> users;
  for (int u = 0; u < 4; ++u)
    users.emplace_back([u] {
      partita::detail::thread_pool pool(3 + u % 2);
      hammer(pool, 1500, static_cast<unsigned>(100 + u));
    });
  for (auto& t : users) t.join();
}

TEST_CASE("a pool is destroyed right after a call, and with sleeping workers") {
  for (int i = 0; i < 200; ++i) {
    partita::detail::thread_pool pool(3);
    std::atomic<int> sum{0};
    pool.run(2, [&](int t) { sum.fetch_add(t + 1); });
    CHECK(sum.load() == 3);
  }
  partita::detail::thread_pool idle(4);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
}
