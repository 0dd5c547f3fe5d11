// expect: static assertion failed
// expect text: partita: shape mismatch in conv1d<X, W>: channels of X (Lhs, NCL) must equal W's input channels times groups (Rhs, O, C / groups, K), and groups must divide both channel counts
// expect text (GNU): report<partita::conv1d<partita::input<partita::fixed_string<6>{"audio"}, partita::dtype::f32, 1, 80, 3000>, partita::weight<partita::fixed_string<13>{"conv1.weight"}, partita::dtype::f32, 384, 40, 3>
// expect text (GNU): partita::problem::conv1d_channels, partita::dims<1, 80, 3000>, partita::dims<384, 40, 3> >
#include <partita/model.hpp>
using namespace partita;
// A weight for 40 input channels on 80 mel bins: the groups = 2 it was exported with is missing.
using x = input<"audio", f32, 1, 80, 3000>;
using y = conv1d<x, weight<"conv1.weight", f32, 384, 40, 3>, {.padding = 1}>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
