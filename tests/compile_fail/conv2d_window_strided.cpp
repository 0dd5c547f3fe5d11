// expect: static assertion failed
// expect text: partita: conv2d<X, W>: the dilated kernel (Rhs) is larger than the padded input (Lhs)
// expect text (GNU): partita::problem::conv2d_window, partita::dims<1, 8, 3, 3>, partita::dims<8, 8, 5, 5> >
#include <partita/model.hpp>
using namespace partita;
// A 5x5 kernel with stride 4 over a 3x3 input: the kernel does not fit, although truncating
// division would make the output 1x1.
using x = input<"x", f32, 1, 8, 3, 3>;
using y = conv2d<x, weight<"w", f32, 8, 8, 5, 5>, {.stride = {4, 4}}>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
