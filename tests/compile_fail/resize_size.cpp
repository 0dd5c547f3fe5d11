// expect: static assertion failed
// expect text: partita: resize<X, OH, OW>: the output size (Rhs: OH, OW) must be positive (Lhs: X)
// expect text (GNU): partita::problem::resize_size, partita::dims<1, 3, 8, 8>, partita::dims<0, 0> >
#include <partita/model.hpp>
using namespace partita;
// An output size computed as a fraction of the input's, rounded down to nothing.
using x = input<"x", f32, 1, 3, 8, 8>;
using y = resize<x, 8 / 16, 8 / 16>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
