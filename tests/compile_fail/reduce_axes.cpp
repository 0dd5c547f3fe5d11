// expect: static assertion failed
// expect text: partita: reduction over bad axes: each axis must be in range for X (Lhs) and appear once (Rhs: the axes as dims)
// expect text (GNU): report<partita::reduce_mean<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 16, 7, 7>, partita::axes<3, 4> >
// expect text (GNU): partita::problem::reduce_axes, partita::dims<1, 16, 7, 7>, partita::dims<3, 4> >
#include <partita/model.hpp>
using namespace partita;
// The mean over H and W of an NCHW tensor, written with axes 3 and 4 (W is axis 3).
using x = input<"x", f32, 1, 16, 7, 7>;
using y = reduce_mean<x, axes<3, 4>>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
