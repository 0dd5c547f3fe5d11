// expect: static assertion failed
// expect text: partita: shape mismatch in conv_transpose2d<X, W>: channels of X (Lhs, NCHW) must equal W's first dimension (Rhs, Cin, Cout / groups, KH, KW), and groups must divide them
// expect text (GNU): partita::problem::conv_transpose2d_channels, partita::dims<1, 64, 16, 16>, partita::dims<32, 64, 2, 2> >
#include <partita/model.hpp>
using namespace partita;
// A conv2d weight layout (Cout, Cin, KH, KW) given to a transposed convolution, which reads
// PyTorch's (Cin, Cout / groups, KH, KW).
using x = input<"x", f32, 1, 64, 16, 16>;
using y = conv_transpose2d<x, weight<"up.weight", f32, 32, 64, 2, 2>, {.stride = {2, 2}}>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
