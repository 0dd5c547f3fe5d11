// The models of PyTorch's quantization-aware training (make_models.py's torch_qat_cnn and
// torch_qat_mobilenet_v2: fake quantization exported as QDQ at opset 13), imported at build time
// and compiled for cpu in this one translation unit. Runs each on DIR_IN/NAME.safetensors and
// writes its outputs, plan and placement report under DIR_OUT; compare_torch_qat.py compares the
// outputs with ONNX Runtime's.
//
//   int8_torch_qat_models IMPORT_DIR DIR_IN DIR_OUT
#include <exception>
#include <iostream>

#include "run_model.hpp"
#include "torch_qat_cnn.hpp"           // generated: torch_qat_cnn::net
#include "torch_qat_mobilenet_v2.hpp"  // generated: torch_qat_mobilenet_v2::net

int main(int argc, char** argv) try {
  using namespace partita;
  if (argc != 4) {
    std::cerr << "usage: int8_torch_qat_models IMPORT_DIR DIR_IN DIR_OUT\n";
    return 2;
  }
  const int8_tests::paths where{argv[1], argv[2], argv[3]};
  int8_tests::run_model<torch_qat_cnn::net>("torch_qat_cnn", where);
  int8_tests::run_model<torch_qat_mobilenet_v2::net>("torch_qat_mobilenet_v2", where);
  int8_tests::write_text(where.out + "/torch_qat_cnn.explain.txt", to_string(explain<torch_qat_cnn::net, cpu>()));
  int8_tests::write_text(where.out + "/torch_qat_mobilenet_v2.explain.txt",
                         to_string(explain<torch_qat_mobilenet_v2::net, cpu>()));
  return 0;
} catch (const std::exception& e) {
  std::cerr << "int8_torch_qat_models: " << e.what() << "\n";
  return 1;
}
