// expect: static assertion failed
// expect text: partita: run: an output span must be writable (std::span<float>)
// expect text (GNU): as_output(std::span<_Type, 18446744073709551615>) [with T = const float;
#include <span>
#include <vector>
#include <partita/partita.hpp>
using namespace partita;
// The result passed as a read-only span: run cannot write the output into it.
using x = input<"x", f32, 1, 4>;
int main() {
  compiled<model<relu<x>>, reference> exe;
  std::vector<float> in(4), out(4);
  exe.run(in, std::span<const float>(out));
}
