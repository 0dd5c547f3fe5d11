// ab.py's driver: calls two builds of one workload in turn, each round in the opposite order, and
// prints each build's median time and the median and quartiles of the per-round ratios b / a.
// Both builds see the same machine state within a round, so the ratios are steadier than two
// timed loops one after the other (this guest's speed moves by 10-30 % within seconds).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" double partita_ab_a(int threads, int calls, float* first);
extern "C" double partita_ab_b(int threads, int calls, float* first);

namespace {
double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s THREADS CALLS ROUNDS\n", argv[0]);
    return 2;
  }
  const int threads = std::atoi(argv[1]), calls = std::atoi(argv[2]), rounds = std::atoi(argv[3]);
  std::vector<double> a, b, ratio;
  float fa = 0, fb = 0;
  for (int r = 0; r < rounds; ++r) {
    double ta, tb;
    if (r % 2 == 0) {
      ta = partita_ab_a(threads, calls, &fa);
      tb = partita_ab_b(threads, calls, &fb);
    } else {
      tb = partita_ab_b(threads, calls, &fb);
      ta = partita_ab_a(threads, calls, &fa);
    }
    a.push_back(ta);
    b.push_back(tb);
    ratio.push_back(tb / ta);
  }
  std::printf("a %.2f us  b %.2f us  b/a median %.3f  quartiles %.3f-%.3f  (%d rounds of %d calls, %d threads; "
              "first outputs %g and %g)\n",
              quantile(a, 0.5), quantile(b, 0.5), quantile(ratio, 0.5), quantile(ratio, 0.25), quantile(ratio, 0.75),
              rounds, calls, threads, static_cast<double>(fa), static_cast<double>(fb));
  // Two builds may round differently, not compute differently.
  return std::fabs(fa - fb) > 1e-4f * std::max(1.f, std::fabs(fa)) ? 1 : 0;
}
