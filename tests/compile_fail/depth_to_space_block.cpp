// expect: static assertion failed
// expect text: partita: depth_to_space<X, Block>: the channels of X (Lhs, NCHW) must be a multiple of Block squared (Rhs: Block)
// expect text (GNU): partita::problem::depth_to_space_block, partita::dims<1, 12, 8, 8>, partita::dims<3> >
#include <partita/model.hpp>
using namespace partita;
// 3× sub-pixel upsampling needs 9 channels per output channel: 12 is not a multiple of 9.
using x = input<"x", f32, 1, 12, 8, 8>;
using y = depth_to_space<x, 3>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
