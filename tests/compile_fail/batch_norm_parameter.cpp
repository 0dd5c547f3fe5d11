// expect: static assertion failed
// expect text: partita: shape mismatch in batch_norm: gamma, beta, mean and var (Rhs) must each have as many elements as X (Lhs) has channels
// expect text (GNU): report<partita::batch_norm<partita::conv2d<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 32, 8, 8>
// expect text (GNU): partita::weight<partita::fixed_string<9>{"bn.gamma"}, partita::dtype::f32, 32>
// expect text (GNU): partita::problem::batch_norm_parameter, partita::dims<1, 64, 8, 8>, partita::dims<32> >
#include <partita/model.hpp>
using namespace partita;
// The batch norm after a 64-channel convolution, declared with the previous layer's 32 channels.
using x = input<"x", f32, 1, 32, 8, 8>;
using c = conv2d<x, weight<"conv.weight", f32, 64, 32, 3, 3>, {.padding = {1, 1}}>;
using y = batch_norm<c, weight<"bn.gamma", f32, 32>, weight<"bn.beta", f32, 32>, weight<"bn.mean", f32, 32>,
                     weight<"bn.var", f32, 32>>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
