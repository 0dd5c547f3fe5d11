// The BERT-style encoder of model.hpp, compiled for the cpu backend, bound to the weights that
// export.py wrote and run on its token ids; with --check, compared with PyTorch's logits.
//
//   transformer weights.safetensors ids.safetensors                     print the logits
//   transformer weights.safetensors ids.safetensors --check logits.safetensors
//   ... --threads 1 --runs 50                                           one thread, 50 timed runs
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model.hpp"

using namespace partita;
using executable = compiled<transformer::net, cpu>;

namespace {

// The elements of tensor `name` in safetensors file `file`, which must be of dtype `dtype_name`
// ("I64", "F32") and shape `dims`.
template <class T>
std::vector<T> read_tensor(const safetensors_file& file, std::string_view name, std::string_view dtype_name,
                           const std::vector<std::int64_t>& dims) {
  const tensor_data* t = file.find(name);
  if (!t) throw partita::error(std::string(file.origin()) + ": no tensor '" + std::string(name) + "'");
  if (t->dtype_name != dtype_name || t->dims != dims)
    throw partita::error(std::string(file.origin()) + ": '" + std::string(name) + "' is " + t->dtype_name + " " +
                         detail::dims_string(t->dims) + ", expected " + std::string(dtype_name) + " " +
                         detail::dims_string(dims));
  std::vector<T> values(t->bytes.size() / sizeof(T));
  std::memcpy(values.data(), t->bytes.data(), values.size() * sizeof(T));  // little-endian, as the host
  return values;
}

int usage() {
  std::cerr << "usage: transformer WEIGHTS IDS [--check EXPECTED] [--threads N] [--runs N]\n"
               "  WEIGHTS, IDS and EXPECTED are the weights.safetensors, ids.safetensors and\n"
               "  logits.safetensors that export.py writes\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) try {
  std::vector<std::string> files;
  std::string expected_path;
  int threads = 0;  // every core
  int runs = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--check" || arg == "--threads" || arg == "--runs") && i + 1 < argc) {
      const std::string value = argv[++i];
      if (arg == "--check") expected_path = value;
      else if (arg == "--threads") threads = std::stoi(value);
      else runs = std::max(1, std::stoi(value));
    } else if (arg.rfind("--", 0) == 0) {
      return usage();
    } else {
      files.push_back(arg);
    }
  }
  if (files.size() != 2) return usage();

  std::cout << "transformer: " << executable::num_steps << " steps (" << executable::num_kernels
            << " kernels) on cpu (" << detail::simd::arch_name() << "), arena " << executable::arena_bytes / 1024
            << " KiB, weights " << executable::weight_bytes / 1024 << " KiB\n";

  auto exe = std::make_unique<executable>();
  exe->bind(load_safetensors(files[0]));
  exe->state<cpu>().set_threads(threads);
  const std::vector<std::int64_t> ids =
      read_tensor<std::int64_t>(load_safetensors(files[1]), "ids", "I64", {1, transformer::seq});

  std::vector<float> logits(transformer::classes);
  exe->run(ids, logits);
  std::cout << "logits:";
  for (float v : logits) std::cout << ' ' << v;
  std::cout << '\n';

  // Informative only: the mean of `runs` calls after the first.
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) exe->run(ids, logits);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / runs;
  std::cout << "time per inference on " << exe->state<cpu>().threads() << " thread(s): " << ms << " ms (mean of "
            << runs << " runs)\n";

  if (expected_path.empty()) return 0;
  const std::vector<float> expected =
      read_tensor<float>(load_safetensors(expected_path), "logits", "F32", {1, transformer::classes});
  double worst = 0;
  bool close = true;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const double diff = std::abs(static_cast<double>(logits[i]) - expected[i]);
    close = close && diff <= 1e-4;  // false for NaN too
    worst = std::isnan(diff) ? diff : std::max(worst, diff);
  }
  std::cout << "max abs diff vs PyTorch: " << worst << (close ? " (within 1e-4)\n" : " (more than 1e-4: FAILED)\n");
  return close ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "transformer: " << e.what() << "\n";
  return 1;
}
