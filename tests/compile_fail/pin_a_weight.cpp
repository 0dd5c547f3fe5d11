// expect: static assertion failed
// expect text: partita: on<Backend, Expr>: inputs and weights cannot be pinned; pin an op
// expect text (GNU): partita::on<partita::cpu, partita::weight<partita::fixed_string<10>{"fc.weight"}, partita::dtype::f32, 4, 8> >
#include <partita/partita.hpp>
using namespace partita;
// A weight pinned to a backend: only ops run somewhere, so only ops can be pinned.
using x = input<"x", f32, 1, 8>;
using y = dense<x, on<cpu, weight<"fc.weight", f32, 4, 8>>>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
