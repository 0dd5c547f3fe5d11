// Checks the benchmark's peers against Partita's reference backend: for each workload, the same
// random weights and input, and the largest relative error |a - b| / max(1, |b|) of each peer's
// output, which must stay within 1e-4. Each peer runs twice (its second run must not depend on
// the first) and with 1 and 2 threads.
//
//   check_peers        the table and the exit status (nonzero on a mismatch)
//   check_peers -v     also the layouts and kernels oneDNN chose
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include <partita/partita.hpp>

#include "peers/weight_lookup.hpp"
#include "weights.hpp"
#include "workloads.hpp"
#ifdef PARTITA_PEERS_ONEDNN
#include "peers/onednn_peer.hpp"
#endif
#ifdef PARTITA_PEERS_EIGEN
#include "peers/eigen_peer.hpp"
#endif

namespace {

constexpr double tolerance = 1e-4;
bool verbose = false;
int failures = 0;

double max_relative_error(std::span<const float> got, std::span<const float> want) {
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double a = got[i], b = want[i];
    const double e = std::abs(a - b) / std::max(1.0, std::abs(b));
    if (!(e <= worst)) worst = e;  // NaN wins
  }
  return worst;
}

// A workload's weights and input, and its output on the reference backend.
// The input is f32, or token ids below `id_bound` (W6).
template <class Net>
struct workload {
  using executable = partita::compiled<Net, partita::reference>;
  using input_type = std::conditional_t<executable::input(0).type == partita::dtype::i64, std::int64_t, float>;

  const char* name;
  std::int64_t id_bound;
  std::vector<std::vector<float>> storage;
  partita::weight_set weights = bench::random_weights<executable>(storage);
  std::vector<input_type> input = make_input();
  std::vector<float> expected = std::vector<float>(static_cast<std::size_t>(executable::output(0).shp.elements()));
  double reference_ms = 0;

  std::vector<input_type> make_input() const {
    if constexpr (std::is_same_v<input_type, std::int64_t>) return bench::random_ids<executable>(id_bound);
    else return bench::random_input<executable>();
  }

  explicit workload(const char* n, std::int64_t ids_below = 0) : name(n), id_bound(ids_below) {
    executable exe;
    exe.bind(weights);
    const auto start = std::chrono::steady_clock::now();
    exe.run(input, expected);
    reference_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    double largest = 0;
    for (float v : expected) largest = std::max(largest, static_cast<double>(std::abs(v)));
    std::printf("%s: reference %.1f ms, %zu outputs, max |y| %.3g\n", name, reference_ms, expected.size(), largest);
  }

  template <class Peer>
  void check(const char* peer_name, Peer& peer) const {
    if (peer.input_elements() != static_cast<std::int64_t>(input.size()) ||
        peer.output_elements() != static_cast<std::int64_t>(expected.size())) {
      std::printf("  %-7s threads %d  FAIL: sizes differ from the model's\n", peer_name, peer.threads());
      ++failures;
      return;
    }
    std::vector<float> first(expected.size(), std::numeric_limits<float>::quiet_NaN());
    std::vector<float> second = first;
    peer.run(input.data(), first.data());
    peer.run(input.data(), second.data());
    const double err = std::max(max_relative_error(first, expected), max_relative_error(second, expected));
    const bool repeatable = std::memcmp(first.data(), second.data(), first.size() * sizeof(float)) == 0;
    const bool ok = err <= tolerance && repeatable;
    std::printf("  %-7s threads %d  max rel err %.2e%s  %s\n", peer_name, peer.threads(), err,
                repeatable ? "" : " (second run differs)", ok ? "ok" : "FAIL");
    if (!ok) ++failures;
  }
};

#ifdef PARTITA_PEERS_ONEDNN
peers::onednn_net onednn_for(int workload, const peers::weight_lookup& w, int threads) {
  switch (workload) {
    case 1: return peers::onednn_mlp(1, w, threads);
    case 2: return peers::onednn_mlp(64, w, threads);
    case 3: return peers::onednn_basic_block(w, threads);
    case 4: return peers::onednn_lenet(w, threads);
    case 5: return peers::onednn_resnet18(w, threads);
    default: return peers::onednn_mobilenet_v2(w, threads);
  }
}
#endif

// Workload `n` (1 to 7): the reference run, then each peer available for it.
template <class Net>
void check_workload(int n, const char* name, std::int64_t id_bound = 0) {
#if !defined(PARTITA_PEERS_ONEDNN)
  if (n > 2) {
    std::printf("%s: no peer built for it\n", name);
    return;
  }
#endif
  const workload<Net> w(name, id_bound);
  [[maybe_unused]] const peers::weight_lookup lookup = peers::lookup_in(w.weights);
  for (int threads : {1, 2}) {
#ifdef PARTITA_PEERS_ONEDNN
    if constexpr (std::is_same_v<typename workload<Net>::input_type, std::int64_t>) {
      peers::onednn_encoder net = peers::onednn_transformer({}, lookup, threads);
      if (verbose && threads == 1) std::printf("%s", net.describe().c_str());
      w.check("onednn", net);
    } else {
      peers::onednn_net net = onednn_for(n, lookup, threads);
      if (verbose && threads == 1) std::printf("%s", net.describe().c_str());
      w.check("onednn", net);
    }
#endif
#ifdef PARTITA_PEERS_EIGEN
    if constexpr (std::is_same_v<typename workload<Net>::input_type, float>) {
      if (n <= 2) {
        peers::eigen_mlp mlp(n == 1 ? 1 : 64, lookup, threads);
        w.check("eigen", mlp);
      }
    }
#endif
  }
}

}  // namespace

int main(int argc, char** argv) try {
  verbose = argc > 1 && std::strcmp(argv[1], "-v") == 0;
  check_workload<workloads::w1>(1, "w1 mlp batch 1");
  check_workload<workloads::w2>(2, "w2 mlp batch 64");
  check_workload<workloads::w3>(3, "w3 basic block");
  check_workload<workloads::w4>(4, "w4 lenet-5");
  check_workload<workloads::w5>(5, "w5 resnet-18");
  check_workload<workloads::w6>(6, "w6 transformer encoder", workloads::w6_vocab);
  check_workload<workloads::w7>(7, "w7 mobilenet-v2");
  std::printf(failures ? "%d mismatches\n" : "all peers agree with the reference\n", failures);
  return failures ? 1 : 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "check_peers: %s\n", e.what());
  return 2;
}
