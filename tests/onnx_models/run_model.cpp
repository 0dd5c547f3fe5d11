// Runs an imported model on cpu: the driver of the ONNX model tests, compiled once per model
// with the importer's output directory on the include path.
//
//   run_model DIR      reads DIR/imported.safetensors (unless compiled with
//                      -DRUN_MODEL_EMBEDDED_WEIGHTS: the copy compiled in) and DIR/input.NAME.bin
//                      (one per graph input, raw f32 or i64), writes DIR/output.bin (raw f32)
#include <cstdint>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "imported.hpp"

namespace {

using executable = partita::compiled<imported::net, partita::cpu>;
static_assert(executable::num_outputs == 1, "the model tests compare one output");

template <class T>
std::vector<T> read(const std::string& path, std::size_t n) {
  std::vector<T> v(n);
  std::ifstream in(path, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(T))))
    throw partita::error("cannot read " + path);
  return v;
}

// The inputs, read by name in the order run takes them.
template <std::size_t... I>
auto read_inputs(const std::string& dir, std::index_sequence<I...>) {
  return std::make_tuple(
      read<std::conditional_t<executable::input(I).type == partita::dtype::i64, std::int64_t, float>>(
          dir + "/input." + std::string(executable::input(I).name) + ".bin",
          static_cast<std::size_t>(executable::input(I).shp.elements()))...);
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 2) {
    std::cerr << "usage: run_model DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  auto exe = std::make_unique<executable>();
#ifdef RUN_MODEL_EMBEDDED_WEIGHTS  // imported with --embed-weights
  exe->bind(imported::weights());
#else
  exe->bind(partita::load_safetensors(dir + "/imported.safetensors"));
#endif
  auto inputs = read_inputs(dir, std::make_index_sequence<executable::num_inputs>{});
  std::vector<float> out(static_cast<std::size_t>(executable::output(0).shp.elements()));
  std::apply([&](auto&... in) { exe->run(in..., out); }, inputs);
  std::ofstream(dir + "/output.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size() * sizeof(float)));
  std::cout << "run_model: " << executable::num_steps << " steps, arena " << executable::arena_bytes / 1024
            << " KiB, weights " << executable::weight_bytes / 1024 << " KiB\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "run_model: " << e.what() << "\n";
  return 1;
}
