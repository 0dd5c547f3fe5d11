// expect: static assertion failed
// expect text: partita: conv2d<X, W>: the dilated kernel (Rhs) is larger than the padded input (Lhs)
// expect text (GNU): report<partita::conv2d<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 16, 3, 3>, partita::weight<partita::fixed_string<12>{"head.weight"}, partita::dtype::f32, 16, 16, 5, 5> >
// expect text (GNU): partita::problem::conv2d_window, partita::dims<1, 16, 3, 3>, partita::dims<16, 16, 5, 5> >
#include <partita/model.hpp>
using namespace partita;
// A 5x5 kernel on a 3x3 feature map without padding: no output position remains.
using x = input<"x", f32, 1, 16, 3, 3>;
using y = conv2d<x, weight<"head.weight", f32, 16, 16, 5, 5>>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
