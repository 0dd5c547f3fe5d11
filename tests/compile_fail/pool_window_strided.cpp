// expect: static assertion failed
// expect text: partita: pooling window (Rhs) is larger than the padded input (Lhs)
// expect text (GNU): partita::problem::pool_window, partita::dims<1, 1, 2, 2>, partita::dims<4, 4> >
#include <partita/model.hpp>
using namespace partita;
// A 4x4 window over a 2x2 input with the default stride (the window's size): the window does not
// fit, although truncating division would make the output 1x1.
using x = input<"x", f32, 1, 1, 2, 2>;
using y = max_pool2d<x, {.size = {4, 4}}>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
