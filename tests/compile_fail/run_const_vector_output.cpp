// expect: static assertion failed
// expect text: partita: run: an output vector must be writable and outlive the call (a std::vector<float> the caller keeps, not a const one or a temporary)
#include <vector>
#include <partita/partita.hpp>
using namespace partita;
// The result vector declared const: run cannot write the output into it.
using x = input<"x", f32, 1, 4>;
int main() {
  compiled<model<relu<x>>, reference> exe;
  const std::vector<float> in(4), out(4);
  exe.run(in, out);
}
