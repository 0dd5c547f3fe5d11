// expect: static assertion failed
// expect text: partita: slice<X, Axis, Begin, End, Step>: bad axis, a step of 0, or an empty result (Lhs: input shape, Rhs: axis, begin, end, step)
// expect text (GNU): report<partita::slice<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 3, 17>, 1, 20, 30>
// expect text (GNU): partita::problem::slice_range, partita::dims<3, 17>, partita::dims<1, 20, 30, 1> >
#include <partita/model.hpp>
using namespace partita;
// Elements 20 to 30 of an axis of 17: clamped to [17, 17), nothing is left.
using x = input<"x", f32, 3, 17>;
constexpr auto& m = module_of<model<slice<x, 1, 20, 30>>>::value;
int main() {}
