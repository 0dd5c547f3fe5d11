// expect: static assertion failed
// expect text: partita: the cpu backend has f32 kernels only; this step (Step) has another dtype
// expect text (GNU): partita::cpu::kernel<partita::step_ref<
// expect text (GNU): partita::relu<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::i8, 1, 16> >
#include <partita/partita.hpp>
using namespace partita;
// A quantized layer compiled for cpu, whose kernels are f32 only.
using x = input<"x", i8, 1, 16>;
using y = relu<x>;
compiled<model<y>, cpu> exe;
int main() {}
