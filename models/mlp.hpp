#pragma once
// The 784-512-512-10 MLP (weights fc{1,2,3}.{weight,bias}, torch.nn.Linear's layout), at any batch.
#include <cstdint>

#include <partita/partita.hpp>

namespace models {
using namespace partita;

/// The MLP's layers at batch `N`: `mlp_batch<64>::logits`, `model<mlp_batch<64>::logits>`.
template <std::int64_t N>
struct mlp_batch {
  using x = input<"x", f32, N, 784>;
  using fc1 = relu<bias_add<dense<x, weight<"fc1.weight", f32, 512, 784>>, weight<"fc1.bias", f32, 512>>>;
  using fc2 = relu<bias_add<dense<fc1, weight<"fc2.weight", f32, 512, 512>>, weight<"fc2.bias", f32, 512>>>;
  using logits = bias_add<dense<fc2, weight<"fc3.weight", f32, 10, 512>>, weight<"fc3.bias", f32, 10>>;
};

/// The MLP on one image: input "x" f32[1, 784], output the 10 logits.
using mlp = model<mlp_batch<1>::logits>;

}  // namespace models
