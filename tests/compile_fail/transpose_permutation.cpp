// expect: static assertion failed
// expect text: partita: transpose<X, Perm...>: Perm must name every axis of X (Lhs) exactly once (Rhs: the permutation as dims)
// expect text (GNU): report<partita::transpose<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 2, 17, 8>, 0, 1, 1>
// expect text (GNU): partita::problem::transpose_permutation, partita::dims<2, 17, 8>, partita::dims<0, 1, 1> >
#include <partita/model.hpp>
using namespace partita;
// Axis 1 named twice and axis 2 never: not a permutation of [B, S, D].
using x = input<"x", f32, 2, 17, 8>;
constexpr auto& m = module_of<model<transpose<x, 0, 1, 1>>>::value;
int main() {}
