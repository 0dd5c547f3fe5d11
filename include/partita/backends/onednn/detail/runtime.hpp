#pragma once
/// The oneDNN engine, stream and per-step networks of one executable.
#include <omp.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "partita/backends/onednn/detail/network.hpp"
#include "partita/backends/onednn/detail/program.hpp"
#include "partita/core/detail/concat.hpp"

namespace partita::detail::onednn {

/// What the oneDNN backend keeps per executable: the engine and stream, and one network per
/// partition step, built at bind.
///
/// Threads: this oneDNN runs on OpenMP and sizes each primitive's work for omp_get_max_threads()
/// when the primitive is created, so the thread count is set before building and again before
/// each run (OpenMP's setting is per calling thread, and other code may change it in between).
class runtime {
 public:
  explicit runtime(int threads) : threads_(threads > 0 ? threads : omp_get_num_procs()) {}

  /// The number of OpenMP threads oneDNN runs on.
  int threads() const { return threads_; }

  /// The primitives of partition step `step` with the layouts oneDNN chose, one per line
  /// (empty before bind).
  std::string describe(int step) const {
    const network* n = at(step);
    return n ? n->describe() : std::string{};
  }
  /// All of them, each partition under its name.
  std::string describe() const {
    std::string r;
    for (std::size_t i = 0; i < nets_.size(); ++i)
      if (nets_[i]) r += concat("step ", std::to_string(i), " (", names_[i], "):\n", nets_[i]->describe());
    return r;
  }
  /// The number of primitives partition step `step` runs (0 before bind).
  std::size_t num_primitives(int step) const {
    const network* n = at(step);
    return n ? n->num_primitives() : 0;
  }

  /// For the kernels: builds partition step `step` from its layers and weights (`in`).
  void build(int step, std::string_view name, std::span<const layer> layers, std::span<const result> results,
             const float* const* in) {
    omp_set_num_threads(threads_);
    if (!engine_) {
      engine_ = ::dnnl::engine(::dnnl::engine::kind::cpu, 0);
      stream_ = ::dnnl::stream(engine_);
    }
    const auto s = static_cast<std::size_t>(step);
    if (nets_.size() <= s) {
      nets_.resize(s + 1);
      names_.resize(s + 1);
    }
    nets_[s].reset();  // a rebind replaces the network
    nets_[s] = std::make_unique<network>(engine_, stream_, layers, results, in);
    names_[s] = name;
  }

  /// For the kernels: runs partition step `step`.
  void run(int step, const float* const* in, float* out) {
    omp_set_num_threads(threads_);
    nets_[static_cast<std::size_t>(step)]->run(in, out);
  }

 private:
  const network* at(int step) const {
    const auto s = static_cast<std::size_t>(step);
    return step >= 0 && s < nets_.size() ? nets_[s].get() : nullptr;
  }

  int threads_;
  ::dnnl::engine engine_;
  ::dnnl::stream stream_;
  std::vector<std::unique_ptr<network>> nets_;
  std::vector<std::string_view> names_;
};

}  // namespace partita::detail::onednn
