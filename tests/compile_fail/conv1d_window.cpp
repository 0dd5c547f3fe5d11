// expect: static assertion failed
// expect text: partita: conv1d<X, W>: the dilated kernel (Rhs) is larger than the padded input (Lhs), or a stride or dilation is not positive
// expect text (GNU): partita::problem::conv1d_window, partita::dims<1, 16, 8>, partita::dims<16, 16, 5> >
#include <partita/model.hpp>
using namespace partita;
// A kernel of 5 dilated by 2 spans 9 samples: more than the 8 there are.
using x = input<"x", f32, 1, 16, 8>;
using y = conv1d<x, weight<"w", f32, 16, 16, 5>, {.dilation = 2}>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
