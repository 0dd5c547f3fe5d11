// expect: static assertion failed
// expect text: partita: bad groups in conv2d<X, W>: groups must divide both the input channels (Lhs) and the output channels (Rhs)
// expect text (GNU): report<partita::conv2d<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 32, 16, 16>, partita::weight<partita::fixed_string<12>{"conv.weight"}, partita::dtype::f32, 64, 10, 3, 3>
// expect text (GNU): partita::problem::conv2d_groups, partita::dims<1, 32, 16, 16>, partita::dims<64, 10, 3, 3> >
#include <partita/model.hpp>
using namespace partita;
// Grouped convolution whose groups (3) divide neither the 32 input nor the 64 output channels.
using x = input<"x", f32, 1, 32, 16, 16>;
using y = conv2d<x, weight<"conv.weight", f32, 64, 10, 3, 3>, {.padding = {1, 1}, .groups = 3}>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
