// expect: static assertion failed
// expect text: partita: shape mismatch in concatenate: the inputs (Lhs, Rhs) must agree on every dimension but the axis
// expect text (GNU): report<partita::concatenate<1, partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 8, 16, 16>, partita::max_pool2d<
// expect text (GNU): partita::problem::concatenate_dimensions, partita::dims<1, 8, 16, 16>, partita::dims<1, 8, 8, 8> >
#include <partita/model.hpp>
using namespace partita;
// A skip connection joined along the channels after its other branch was pooled (16x16 vs 8x8).
using x = input<"x", f32, 1, 8, 16, 16>;
using pooled = max_pool2d<x, {.size = {2, 2}}>;
using y = concatenate<1, x, pooled>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
