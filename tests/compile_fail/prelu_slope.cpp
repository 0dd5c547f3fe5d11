// expect: static assertion failed
// expect text: partita: shape mismatch in prelu<X, Slope>: Slope (Rhs) must broadcast into X (Lhs) without growing it
// expect text (GNU): report<partita::prelu<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 16, 8, 8>, partita::weight<partita::fixed_string<6>{"slope"}, partita::dtype::f32, 16> >
// expect text (GNU): partita::problem::prelu_slope, partita::dims<1, 16, 8, 8>, partita::dims<16> >
#include <partita/model.hpp>
using namespace partita;
// A per-channel slope of 16 given as [16] on NCHW: it lines up with W (8), not with the channels.
using x = input<"x", f32, 1, 16, 8, 8>;
using y = prelu<x, weight<"slope", f32, 16>>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
