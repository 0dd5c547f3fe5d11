// expect: static assertion failed
// expect text: partita: shape mismatch in an elementwise op (Node): the shapes Lhs and Rhs cannot be broadcast together
// expect (GNU): report<partita::add<
// expect (GNU): partita::dims<1, 8, 4, 4>, partita::dims<1, 8, 2, 2>
#include <partita/partita.hpp>
using namespace partita;
using a = input<"a", f32, 1, 8, 4, 4>;
using b = max_pool2d<a, {.size = {2, 2}}>;
using residual = add<a, b>;
compiled<model<residual>, reference> exe;
int main() {}
