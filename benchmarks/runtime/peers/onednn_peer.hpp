#pragma once
// The oneDNN peer: the benchmark's workloads as oneDNN primitives, built once.
//
// A network is a list of layers. At construction it becomes primitives with `format_tag::any`
// for conv and dense operands (oneDNN picks blocked layouts), weights reordered once, batch norm
// folded into the preceding conv, relu and residual sums fused as post-ops (the residual added
// in place), and reorders only at the network's input and output (`describe()` lists them all).
// `run` allocates no tensor memory and builds nothing; oneDNN's execute itself makes a few small
// allocations per primitive (its argument map).
//
// Threads: this oneDNN uses OpenMP and sizes each primitive's work for omp_get_max_threads() when
// the primitive is created, so `onednn_net` calls omp_set_num_threads(threads) before creating
// them and again before each run. On a loaded machine, more threads than free cores makes every
// OpenMP barrier wait for a scheduler time slice.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "weight_lookup.hpp"

namespace peers {

/// One layer. `src` and `residual` name earlier layers by index; `network_input` is the input.
struct layer {
  static constexpr int network_input = -1;
  static constexpr int none = -2;
  enum class op { conv, dense, max_pool, global_avg_pool, flatten };

  op kind = op::conv;
  int src = network_input;
  std::vector<float> weight;    // conv: OIHW; dense: [units, in_features] (after flatten: C·H·W)
  std::vector<float> bias;      // empty: no bias
  std::int64_t channels = 0;    // conv output channels, dense units
  int kernel = 1, stride = 1, padding = 0;  // conv and max_pool, square
  int residual = none;          // conv: a layer added to the result before the relu
  bool relu = false;
  float relu_cap = 0;           // relu: when above 0, the result is also capped there (ReLU6: 6)
  int groups = 1;               // conv: weight is [channels, C_in / groups, k, k]; depthwise: groups = C_in
};

/// Folds inference batch norm into conv layer `l`: w' = w·γ/√(var+ε), b' = β + (b − mean)·γ/√(var+ε).
void fold_batch_norm(layer& l, std::span<const float> gamma, std::span<const float> beta,
                     std::span<const float> mean, std::span<const float> var, float eps = 1e-5f);

/// A network of `layer`s on an f32 input of `input_dims` (NCHW or [N, features]), as oneDNN
/// primitives. The output is the last layer's, in plain row-major (NCHW or [N, units]) layout.
class onednn_net {
 public:
  onednn_net(std::vector<std::int64_t> input_dims, std::vector<layer> layers, int threads = 1);
  onednn_net(onednn_net&&) noexcept;
  onednn_net& operator=(onednn_net&&) noexcept;
  ~onednn_net();

  /// Runs the network on `input` into `output`, both plain row-major f32.
  void run(const float* input, float* output);

  std::int64_t input_elements() const;
  std::int64_t output_elements() const;
  int threads() const;
  /// One line per primitive with the memory formats oneDNN chose, for reports.
  std::string describe() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// The sizes of an encoder; the defaults are W6's (examples/transformer/model.hpp).
struct encoder_config {
  std::int64_t vocab = 1000, seq = 128, d_model = 256, heads = 4, d_ff = 1024, layers = 2, classes = 10;
  float embedding_eps = 1e-12f, eps = 1e-5f;
};

/// W6, the BERT-style encoder, as oneDNN primitives on one sequence: token + position embeddings
/// (a gather written here: oneDNN has none), layer normalization, and per layer a matmul for the
/// packed q/k/v projection, batched matmuls over the heads for q·kᵀ (scaled) and probs·v that
/// read and write the heads in place through strides (no transposes), softmax, the output
/// projection with the residual added as a sum post-op, layer normalization, the feed-forward
/// matmuls with GELU (erf) as a post-op and again a sum; then the tanh pooler on the first token
/// and the classifier. Weights are reordered once, at construction; `run` builds nothing.
class onednn_encoder {
 public:
  onednn_encoder(const encoder_config& config, const weight_lookup& w, int threads = 1);
  onednn_encoder(onednn_encoder&&) noexcept;
  onednn_encoder& operator=(onednn_encoder&&) noexcept;
  ~onednn_encoder();

  /// Runs the encoder on `ids` [1, seq] (each in [0, vocab), else it throws) into `logits` [1, classes].
  void run(const std::int64_t* ids, float* logits);

  std::int64_t input_elements() const;
  std::int64_t output_elements() const;
  int threads() const;
  /// One line per primitive with the implementation oneDNN chose.
  std::string describe() const;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// W1/W2: the 784-512-512-10 MLP at batch `batch` (weights fc{1,2,3}.{weight,bias}).
onednn_net onednn_mlp(std::int64_t batch, const weight_lookup& w, int threads = 1);
/// W3: the ResNet basic block on 1×64×56×56 (conv{1,2}.{weight,bias}).
onednn_net onednn_basic_block(const weight_lookup& w, int threads = 1);
/// W4: LeNet-5 on 1×1×28×28 (conv{1,2}, fc{1,2,3}).
onednn_net onednn_lenet(const weight_lookup& w, int threads = 1);
/// W5: ResNet-18 on 1×3×224×224 (torchvision names).
onednn_net onednn_resnet18(const weight_lookup& w, int threads = 1);
/// W6: the encoder of examples/transformer (its state_dict names: tok_emb, layers.0.self_attn, ...).
onednn_encoder onednn_transformer(const encoder_config& config, const weight_lookup& w, int threads = 1);
/// W7: MobileNetV2 on 1×3×224×224 (torchvision names; depthwise convs as grouped convs).
onednn_net onednn_mobilenet_v2(const weight_lookup& w, int threads = 1);

}  // namespace peers
