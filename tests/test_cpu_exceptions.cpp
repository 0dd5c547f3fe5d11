// A kernel that throws inside the cpu state's `parallel` (a user backend reusing `cpu::state`):
// the exception reaches the caller of `run` only after every task has returned, and the pool and
// the executable run correctly afterwards. A throw on the caller's task and on a worker's; with
// the pool, and with OpenMP's threads where the file is built with PARTITA_CPU_OPENMP. The
// stress suite builds it with ThreadSanitizer and with AddressSanitizer (tests/stress).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include <partita/partita.hpp>

using namespace partita;

namespace {

enum class thrower { none, caller, worker };

// What the test arms before a run, and what the kernel's tasks report.
std::atomic<thrower> armed{thrower::none};
std::thread::id caller_id;
std::atomic<int> in_flight{0};

constexpr int tasks = 4;

// relu split over `tasks` tasks of the cpu state. When armed, the first task on the chosen kind
// of thread (the caller's, or a worker's) throws at once, while the others sleep before writing
// their slice of the output: a `run` that returned early would leave them writing into a buffer
// the caller has freed.
struct throwing_backend {
  static constexpr fixed_string name = "throwing";
  static constexpr bool host = true;
  static constexpr bool supports(const op_view&) { return true; }
  using state = cpu::state;

  template <class Step>
  struct kernel {
    static void run(state& st, const float* const* in, float* out) {
      constexpr std::int64_t n = Step::node.out.elements();
      std::atomic<bool> thrown{false};
      st.parallel(tasks, [&](int t) {
        in_flight.fetch_add(1);
        const bool on_caller = std::this_thread::get_id() == caller_id;
        const thrower kind = armed.load();
        const bool mine = (kind == thrower::caller && on_caller) || (kind == thrower::worker && !on_caller);
        if (mine && !thrown.exchange(true)) {
          in_flight.fetch_sub(1);
          throw std::runtime_error("kernel failed");
        }
        if (kind != thrower::none) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        for (std::int64_t i = n * t / tasks; i < n * (t + 1) / tasks; ++i) out[i] = in[0][i] < 0 ? 0.0f : in[0][i];
        in_flight.fetch_sub(1);
      });
    }
  };
};

using x = input<"x", f32, 1, 64>;
using net = model<relu<x>>;
using exe_t = compiled<net, throwing_backend>;

std::vector<float> ramp() {
  std::vector<float> v(64);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) - 31.5f;
  return v;
}

void check_relu(const std::vector<float>& in, const std::vector<float>& out) {
  for (std::size_t i = 0; i < out.size(); ++i) CHECK(out[i] == (in[i] < 0 ? 0.0f : in[i]));
}

// Arms `kind`, runs into a buffer freed right after, and checks what the caller of run sees.
void throw_then_run(thrower kind) {
  exe_t exe;
  exe.state<throwing_backend>().set_threads(tasks);
  const std::vector<float> in = ramp();
  caller_id = std::this_thread::get_id();
  // Workers take their tasks only when they are awake: a few attempts until one ran a task.
  bool saw_kind = false;
  for (int attempt = 0; attempt < 50 && !saw_kind; ++attempt) {
    armed.store(kind);
    bool caught = false;
    {
      std::vector<float> out(64);
      try {
        exe.run(in, out);
      } catch (const std::runtime_error& e) {
        caught = true;
        CHECK(std::string_view(e.what()) == "kernel failed");
        // No task is still running: none writes into `out` once this scope frees it.
        CHECK(in_flight.load() == 0);
      }
      if (!caught) check_relu(in, out);  // the chosen kind of thread ran no task
      saw_kind = caught;
    }
    CHECK(in_flight.load() == 0);
  }
  CHECK(saw_kind);
  armed.store(thrower::none);
  // The executable is not left busy, the pool still runs every task, and the result is right.
  for (int again = 0; again < 3; ++again) {
    std::vector<float> out(64, -1.0f);
    exe.run(in, out);
    check_relu(in, out);
  }
}

}  // namespace

TEST_CASE("a kernel that throws on the caller's task: run rethrows after every task returned") {
  throw_then_run(thrower::caller);
}

TEST_CASE("a kernel that throws on a worker's task: run rethrows it after every task returned") {
  throw_then_run(thrower::worker);
}
