// A consumer's program built on an ONNX model that partita_import_onnx imported at build time:
// tiny.onnx is relu(x · w + b) with w = 0.1 · [0, 1, ..., 11] (4 x 3) − 0.5 and b = {0.1, −10, 0.2}.
// With CONSUMER_WEIGHTS_FILE defined it reads the weights from that file, else from the copy
// compiled in (EMBED_WEIGHTS).
#include <cmath>
#include <cstdio>
#include <vector>

#include "tiny.hpp"

int main() {
  partita::compiled<tiny::net, partita::cpu> exe;
#ifdef CONSUMER_WEIGHTS_FILE
  exe.bind(partita::load_safetensors(CONSUMER_WEIGHTS_FILE));
#else
  exe.bind(tiny::weights());
#endif
  std::vector<float> x{1, 2, 3, 4}, y(3);
  exe.run(x, y);
  const float want[] = {1.1f, 0.f, 3.2f};
  for (int i = 0; i < 3; ++i) {
    if (std::fabs(y[i] - want[i]) > 1e-5f) {
      std::printf("tiny: y[%d] = %g, expected %g\n", i, y[i], want[i]);
      return 1;
    }
  }
  return 0;
}
