// expect: static assertion failed
// expect text: partita: shape mismatch in matmul<A, B>: the batch dimensions (all but the last two) of A (Lhs) and B (Rhs) cannot be broadcast together
// expect text (GNU): report<partita::matmul<partita::input<partita::fixed_string<2>{"a"}, partita::dtype::f32, 2, 5, 7>, partita::input<partita::fixed_string<2>{"b"}, partita::dtype::f32, 3, 7, 4> >
// expect text (GNU): partita::problem::matmul_batch, partita::dims<2, 5, 7>, partita::dims<3, 7, 4> >
#include <partita/model.hpp>
using namespace partita;
// Batches of 2 and 3 matrices: neither is 1, so they do not broadcast.
using a = input<"a", f32, 2, 5, 7>;
using b = input<"b", f32, 3, 7, 4>;
constexpr auto& m = module_of<model<matmul<a, b>>>::value;
int main() {}
