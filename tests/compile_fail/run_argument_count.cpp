// expect: static assertion failed
// expect: partita: run\(inputs..., outputs...\) takes one argument per model input and per model output
#include <vector>
#include <partita/partita.hpp>
using namespace partita;
using x = input<"x", f32, 4>;
int main() {
  compiled<model<relu<x>>, reference> exe;
  std::vector<float> in(4);
  exe.run(in);  // the output is missing
}
