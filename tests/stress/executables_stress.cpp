// Executables on the cpu backend under concurrency, built with ThreadSanitizer: N executables in
// N threads (more threads than cores, pools of 3, 4 and 8 workers), and steps that use fewer
// tasks than the pool has workers. Every result must equal the single-threaded one.
#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include <partita/partita.hpp>

#include <laws/conformance.hpp>

using namespace partita;

namespace {

// A small conv (split into fewer tasks than workers) and a dense layer large enough to split.
using img = input<"img", f32, 1, 8, 12, 12>;
using conv = relu<bias_add<conv2d<img, weight<"k", f32, 16, 8, 3, 3>, {.padding = {1, 1}}>, weight<"kb", f32, 16>>>;
using pooled = max_pool2d<conv, {.size = {2, 2}}>;
using net = model<bias_add<dense<flatten<pooled>, weight<"fc", f32, 64, 576>>, weight<"fcb", f32, 64>>>;
using exe_t = compiled<net, cpu>;

std::vector<float> image(unsigned seed) {
  std::vector<float> v(8 * 12 * 12);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 2654435761u + seed) % 97) / 48.f - 1.f;
  return v;
}

}  // namespace

TEST_CASE("N executables in N threads, pools of 3, 4 and 8 workers, agree with one thread") {
  const laws::random_weights<exe_t> w(21);
  exe_t single;
  single.state<cpu>().set_threads(1);
  single.bind(w.set);
  std::vector<std::vector<float>> inputs, want;
  for (unsigned s = 0; s < 4; ++s) {
    inputs.push_back(image(s));
    want.emplace_back(64);
    single.run(inputs.back(), want.back());
  }
  for (int workers : {3, 4, 8}) {
    CAPTURE(workers);
    constexpr int n = 4;
    std::vector<std::unique_ptr<exe_t>> exes;
    for (int i = 0; i < n; ++i) {
      exes.push_back(std::make_unique<exe_t>());
      exes.back()->state<cpu>().set_threads(workers);
      exes.back()->bind(w.set);
    }
    std::vector<int> wrong(n, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < n; ++t)
      threads.emplace_back([&, t] {
        std::vector<float> y(64);
        for (int i = 0; i < 60; ++i) {
          const std::size_t k = static_cast<std::size_t>((t + i) % 4);
          exes[static_cast<std::size_t>(t)]->run(inputs[k], y);
          if (y != want[k]) ++wrong[static_cast<std::size_t>(t)];
        }
      });
    for (auto& t : threads) t.join();
    CHECK(wrong == std::vector<int>(n, 0));
  }
}

TEST_CASE("one executable shared by threads: calls complete correctly or are refused as busy") {
  exe_t exe;
  exe.state<cpu>().set_threads(4);
  const laws::random_weights<exe_t> w(22);
  exe.bind(w.set);
  const auto x = image(9);
  std::vector<float> want(64);
  exe.run(x, want);
  std::atomic<int> wrong{0}, done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&] {
      std::vector<float> y(64);
      for (int i = 0; i < 100; ++i) {
        try {
          exe.run(x, y);
          if (y != want) ++wrong;
          ++done;
        } catch (const error&) {
        }
      }
    });
  for (auto& t : threads) t.join();
  CHECK(wrong.load() == 0);
  CHECK(done.load() > 0);
}
