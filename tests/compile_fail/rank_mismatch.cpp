// expect: static assertion failed
// expect text: partita: rank mismatch: an argument of this op (Node) has the wrong number of dimensions (Lhs: found, Rhs: expected rank as dims)
// expect text (GNU): report<partita::conv2d<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 784>, partita::weight<partita::fixed_string<12>{"conv.weight"}, partita::dtype::f32, 8, 1, 3, 3> >
// expect text (GNU): partita::problem::rank_mismatch, partita::dims<1, 784>, partita::dims<4> >
#include <partita/model.hpp>
using namespace partita;
// A flat MNIST row fed to a convolution: conv2d needs NCHW, so the input lacks a reshape.
using x = input<"x", f32, 1, 784>;
using y = relu<conv2d<x, weight<"conv.weight", f32, 8, 1, 3, 3>>>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
