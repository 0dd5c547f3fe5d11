// A PyTorch model exported to ONNX, imported at build time by partita_import_onnx (CMakeLists.txt)
// and compiled for the cpu backend; its scores are compared with PyTorch's.
//
//   example_onnx small_cnn.safetensors io.safetensors
#include <cmath>
#include <cstring>
#include <iostream>
#include <vector>

#include "small_cnn.hpp"  // generated: small_cnn::net

// A float tensor of a safetensors file, copied out.
std::vector<float> floats(const partita::safetensors_file& file, const char* name) {
  const partita::tensor_data* t = file.find(name);
  if (!t) throw partita::error(std::string("no tensor ") + name);
  std::vector<float> v(t->bytes.size() / sizeof(float));
  std::memcpy(v.data(), t->bytes.data(), t->bytes.size());
  return v;
}

int main(int argc, char** argv) try {
  if (argc != 3) {
    std::cerr << "usage: example_onnx small_cnn.safetensors io.safetensors\n";
    return 2;
  }
  partita::compiled<small_cnn::net, partita::cpu> exe;
  exe.bind(partita::load_safetensors(argv[1]));  // the weights the importer wrote

  const auto io = partita::load_safetensors(argv[2]);
  const std::vector<float> image = floats(io, "image"), expected = floats(io, "scores");
  std::vector<float> scores(10);
  exe.run(image, scores);

  float err = 0;
  for (std::size_t i = 0; i < scores.size(); ++i) err = std::fmax(err, std::fabs(scores[i] - expected[i]));
  std::cout << "example_onnx: " << decltype(exe)::num_steps << " steps; max abs error vs PyTorch " << err << "\n";
  return err <= 1e-4f ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "example_onnx: " << e.what() << "\n";
  return 1;
}
