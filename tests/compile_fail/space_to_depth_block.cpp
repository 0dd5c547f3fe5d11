// expect: static assertion failed
// expect text: partita: space_to_depth<X, Block>: the height and width of X (Lhs, NCHW) must be multiples of Block (Rhs)
// expect text (GNU): partita::problem::space_to_depth_block, partita::dims<1, 3, 416, 415>, partita::dims<2> >
#include <partita/model.hpp>
using namespace partita;
// YOLO's focus layer on an image one pixel too narrow.
using x = input<"x", f32, 1, 3, 416, 415>;
using y = space_to_depth<x, 2>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
