// The digits CNN of tests/int8/make_models.py, quantized by ONNX Runtime's quantize_static (QDQ
// form) and in float, both imported at build time by partita_import_onnx (CMakeLists.txt) and
// compiled for the cpu backend. Prints where the quantized model's ops run (the cpu backend fuses
// each dequantize -> op -> quantize region into an integer composite), then classifies the
// held-out digits with both models and compares their top-1 with the labels, with each other and
// with ONNX Runtime's int8 predictions stored beside the digits.
//
//   example_int8 digits_int8.safetensors digits_float.safetensors digits_cnn.test.safetensors
//
// Exits 1 when Partita's int8 accuracy is more than one point below ONNX Runtime's, or when its
// top-1 agrees with the float model's on fewer than 97 % of the digits.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <span>
#include <string>
#include <vector>

#include "digits_float.hpp"  // generated: digits_float::net
#include "digits_int8.hpp"   // generated: digits_int8::net

namespace {

// The tensor `name` of a safetensors file, checked to hold `type`.
const partita::tensor_data& tensor(const partita::safetensors_file& file, const char* name, partita::dtype type) {
  const partita::tensor_data* t = file.find(name);
  if (!t) throw partita::error(std::string("no tensor ") + name);
  if (t->type != type) throw partita::error(std::string("tensor ") + name + " is " + t->dtype_name);
  return *t;
}

// The elements of a tensor, copied out (safetensors data need not be aligned).
template <class T>
std::vector<T> elements(const partita::tensor_data& t) {
  std::vector<T> v(t.bytes.size() / sizeof(T));
  std::memcpy(v.data(), t.bytes.data(), v.size() * sizeof(T));
  return v;
}

// The index of the largest score.
std::int64_t top1(std::span<const float> scores) {
  return std::max_element(scores.begin(), scores.end()) - scores.begin();
}

}  // namespace

int main(int argc, char** argv) try {
  using namespace partita;
  if (argc != 4) {
    std::cerr << "usage: example_int8 digits_int8.safetensors digits_float.safetensors digits_cnn.test.safetensors\n";
    return 2;
  }
  std::cout << "== the int8 model's placement (nodes as in print(module_of<digits_int8::net>{})) ==\n"
            << to_string(explain<digits_int8::net, cpu>()) << "\n";

  compiled<digits_int8::net, cpu> int8_exe;
  compiled<digits_float::net, cpu> float_exe;
  int8_exe.bind(load_safetensors(argv[1]));
  float_exe.bind(load_safetensors(argv[2]));

  // "input" [N, 1, 1, 8, 8] f32, "label", "float_top1" and "int8_top1" (ONNX Runtime's) [N] i64.
  const safetensors_file test = load_safetensors(argv[3]);
  const std::vector<float> images = elements<float>(tensor(test, "input", dtype::f32));
  const std::vector<std::int64_t> labels = elements<std::int64_t>(tensor(test, "label", dtype::i64));
  const std::vector<std::int64_t> ort_int8 = elements<std::int64_t>(tensor(test, "int8_top1", dtype::i64));
  constexpr std::size_t pixels = 64, classes = 10;
  const std::size_t n = labels.size();
  if (images.size() != n * pixels || ort_int8.size() != n) throw error("the test set's tensors disagree in length");

  std::size_t float_right = 0, int8_right = 0, ort_right = 0, agree_float = 0, agree_ort = 0;
  std::vector<float> scores(classes);
  for (std::size_t i = 0; i < n; ++i) {
    const std::span<const float> image(images.data() + i * pixels, pixels);
    float_exe.run(image, scores);
    const std::int64_t f = top1(scores);
    int8_exe.run(image, scores);
    const std::int64_t q = top1(scores);
    float_right += f == labels[i];
    int8_right += q == labels[i];
    ort_right += ort_int8[i] == labels[i];
    agree_float += q == f;
    agree_ort += q == ort_int8[i];
  }
  const auto share = [n](std::size_t k) { return double(k) / double(n); };
  std::cout << std::fixed << std::setprecision(3) << "== top-1 on " << n << " held-out digits ==\n"
            << "float (Partita):           " << share(float_right) << "\n"
            << "int8 (Partita):            " << share(int8_right) << "\n"
            << "int8 (ONNX Runtime):       " << share(ort_right) << "\n"
            << "Partita int8 = float:      " << share(agree_float) << "\n"
            << "Partita int8 = ORT int8:   " << share(agree_ort) << "\n";

  bool ok = true;
  if (share(int8_right) < share(ort_right) - 0.01) {
    std::cerr << "example_int8: int8 accuracy more than 1 point below ONNX Runtime's\n";
    ok = false;
  }
  if (share(agree_float) < 0.97) {
    std::cerr << "example_int8: int8 and float top-1 agree on fewer than 97 % of the digits\n";
    ok = false;
  }
  return ok ? 0 : 1;
} catch (const std::exception& e) {
  std::cerr << "example_int8: " << e.what() << "\n";
  return 1;
}
