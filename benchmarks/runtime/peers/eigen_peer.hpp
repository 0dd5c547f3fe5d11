#pragma once
// The Eigen peer for the MLP workloads (W1, W2): y = x · Wᵀ + b with row-major maps over the
// weights as stored, relu in place.
//
// Threads: Eigen parallelises its matrix products with OpenMP, so more than one thread needs the
// peer compiled with -fopenmp; `run` calls Eigen::setNbThreads(threads) (a global setting).
#include <cstdint>
#include <span>

#include <Eigen/Core>

#include "weight_lookup.hpp"

namespace peers {

/// The 784-512-512-10 MLP at batch `batch`, weights fc{1,2,3}.{weight,bias} [units, in].
class eigen_mlp {
 public:
  using matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

  eigen_mlp(std::int64_t batch, const weight_lookup& w, int threads = 1)
      : threads_(threads),
        w1_(copy(w, "fc1.weight", 512, 784)), w2_(copy(w, "fc2.weight", 512, 512)), w3_(copy(w, "fc3.weight", 10, 512)),
        b1_(copy(w, "fc1.bias", 1, 512)), b2_(copy(w, "fc2.bias", 1, 512)), b3_(copy(w, "fc3.bias", 1, 10)),
        h1_(batch, 512), h2_(batch, 512) {}

  /// Runs on `input` [batch, 784] into `output` [batch, 10].
  void run(const float* input, float* output) {
    Eigen::setNbThreads(threads_);
    const Eigen::Map<const matrix> x(input, h1_.rows(), 784);
    Eigen::Map<matrix> y(output, h1_.rows(), 10);
    layer(x, w1_, b1_, h1_, true);
    layer(h1_, w2_, b2_, h2_, true);
    layer(h2_, w3_, b3_, y, false);
  }

  std::int64_t input_elements() const { return h1_.rows() * 784; }
  std::int64_t output_elements() const { return h1_.rows() * 10; }
  int threads() const { return threads_; }

 private:
  static matrix copy(const weight_lookup& w, const char* name, Eigen::Index rows, Eigen::Index cols) {
    const std::span<const float> s = fetch(w, name, static_cast<std::size_t>(rows * cols));
    return Eigen::Map<const matrix>(s.data(), rows, cols);
  }

  // noalias: the product is written straight into `y`, without a temporary.
  template <class X, class Y>
  static void layer(const X& x, const matrix& w, const matrix& b, Y& y, bool relu) {
    y.noalias() = x * w.transpose();
    y.rowwise() += b.row(0);
    if (relu) y = y.cwiseMax(0.0f);
  }

  int threads_;
  matrix w1_, w2_, w3_, b1_, b2_, b3_, h1_, h2_;
};

}  // namespace peers
