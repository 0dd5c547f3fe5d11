// expect: static assertion failed
// expect text: partita: conv_transpose2d<X, W>: no output (Lhs: X, Rhs: W): the padding removes every row or column, or a stride or dilation is not positive, or output_padding is not smaller than the stride or the dilation
// expect text (GNU): partita::problem::conv_transpose2d_output, partita::dims<1, 8, 5, 5>, partita::dims<8, 8, 3, 3> >
#include <partita/model.hpp>
using namespace partita;
// output_padding of 2 with a stride of 2: the extra rows must be fewer than the stride.
using x = input<"x", f32, 1, 8, 5, 5>;
using y = conv_transpose2d<x, weight<"w", f32, 8, 8, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}, .output_padding = {2, 2}}>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
