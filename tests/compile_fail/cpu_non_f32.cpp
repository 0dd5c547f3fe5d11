// expect: static assertion failed
// expect text: partita: the cpu backend computes in f32, in integers through quantize and its quantized composites, and in other dtypes through comparisons, logical ops, where, cast, tril/triu and the index ops; this step (Step) has another dtype
// expect text (GNU): partita::cpu::kernel<partita::step_ref<
// expect text (GNU): partita::relu<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::i8, 1, 16> >
#include <partita/partita.hpp>
using namespace partita;
// relu of an i8 tensor: integer values are computed only inside quantized composites.
using x = input<"x", i8, 1, 16>;
using y = relu<x>;
compiled<model<y>, cpu> exe;
int main() {}
