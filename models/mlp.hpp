#pragma once
// The 784-512-512-10 MLP used by several tests.
#include <partita/partita.hpp>

namespace test_models {
using namespace partita;
using x = input<"x", f32, 1, 784>;
using fc1 = relu<bias_add<dense<x, weight<"fc1.weight", f32, 512, 784>>, weight<"fc1.bias", f32, 512>>>;
using fc2 = relu<bias_add<dense<fc1, weight<"fc2.weight", f32, 512, 512>>, weight<"fc2.bias", f32, 512>>>;
using logits = bias_add<dense<fc2, weight<"fc3.weight", f32, 10, 512>>, weight<"fc3.bias", f32, 10>>;
using mlp = model<logits>;
}  // namespace test_models
