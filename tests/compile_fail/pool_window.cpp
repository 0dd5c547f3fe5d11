// expect: static assertion failed
// expect text: partita: pooling window (Rhs) is larger than the padded input (Lhs)
// expect text (GNU): report<partita::avg_pool2d<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 512, 4, 4>
// expect text (GNU): partita::problem::pool_window, partita::dims<1, 512, 4, 4>, partita::dims<7, 7> >
#include <partita/model.hpp>
using namespace partita;
// ResNet's 7x7 average pooling kept for 128x128 images, whose last feature map is 4x4.
using x = input<"x", f32, 1, 512, 4, 4>;
using y = avg_pool2d<x, {.size = {7, 7}, .stride = {1, 1}}>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
