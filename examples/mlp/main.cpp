// The 784-512-512-10 MLP, declared as types, compiled for the cpu backend
// (each dense+bias(+relu) fused into one kernel), weights bound from a safetensors file (written
// here, deterministically, if none is given), then run.
//
//   example_mlp                  writes mlp.safetensors into its build directory and uses it
//   example_mlp weights.st       uses the given file (names fc{1,2,3}.{weight,bias})
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <vector>

#include <partita/partita.hpp>

using namespace partita;

// One image in, three dense + bias layers (torch.nn.Linear's weight layout), relu between.
using x = input<"x", f32, 1, 784>;
using fc1 = relu<bias_add<dense<x, weight<"fc1.weight", f32, 512, 784>>, weight<"fc1.bias", f32, 512>>>;
using fc2 = relu<bias_add<dense<fc1, weight<"fc2.weight", f32, 512, 512>>, weight<"fc2.bias", f32, 512>>>;
using logits = bias_add<dense<fc2, weight<"fc3.weight", f32, 10, 512>>, weight<"fc3.bias", f32, 10>>;
using net = model<logits>;

using executable = compiled<net, cpu>;
static_assert(executable::arena_bytes <= 2 * 512 * sizeof(float), "two [1, 512] activations at most");

namespace {

// Deterministic pseudo-random values in [-scale, scale): the same file on every machine.
std::vector<float> pseudo_random(std::size_t n, std::uint32_t seed, float scale) {
  std::vector<float> v(n);
  std::uint32_t s = seed;
  for (float& f : v) {
    s = s * 1664525u + 1013904223u;
    f = (static_cast<float>(s >> 8) / 16777216.0f * 2.0f - 1.0f) * scale;
  }
  return v;
}

void write_weights(const std::filesystem::path& path) {
  std::vector<std::vector<float>> data;
  weight_set set;
  std::uint32_t seed = 1;
  for (std::size_t i = 0; i < executable::plan.weights.size(); ++i) {
    const tensor_slot& w = executable::weight(i);
    const float fan_in = w.shp.rank == 2 ? static_cast<float>(w.shp[1]) : 1.0f;
    data.push_back(pseudo_random(static_cast<std::size_t>(w.shp.elements()), seed++, 1.0f / std::sqrt(fan_in)));
    set.add(std::string(w.name), data.back(), std::span(w.shp.dims.data(), static_cast<std::size_t>(w.shp.rank)));
  }
  save_safetensors(path, set.tensors(), {{"model", "partita example mlp"}});
}

}  // namespace

// The build directory, from CMake: run from anywhere (the README runs it from the repository
// root), the example never writes into the source tree.
#ifndef PARTITA_EXAMPLE_OUTPUT_DIR
#define PARTITA_EXAMPLE_OUTPUT_DIR "."
#endif

int main(int argc, char** argv) try {
  const std::filesystem::path path =
      argc > 1 ? std::filesystem::path(argv[1]) : std::filesystem::path(PARTITA_EXAMPLE_OUTPUT_DIR) / "mlp.safetensors";
  if (argc <= 1) {
    write_weights(path);
    std::cout << "wrote " << path.string() << "\n";
  }

  executable exe;
  exe.bind(load_safetensors(path));

  std::cout << print(executable::module{}) << "\n";
  std::cout << "arena: " << executable::arena_bytes << " bytes, weights: " << executable::weight_bytes << " bytes, "
            << executable::num_steps << " steps\n";

  // A deterministic "image": a diagonal stroke on a 28x28 canvas.
  std::vector<float> image(784, 0.0f);
  for (int i = 0; i < 28; ++i) image[static_cast<std::size_t>(i * 28 + i)] = 1.0f;
  std::vector<float> scores(10);
  exe.run(image, scores);

  std::cout << "logits:";
  for (float s : scores) std::cout << ' ' << s;
  std::cout << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "example_mlp: " << e.what() << "\n";
  return 1;
}
