// expect: static assertion failed
// expect text: partita: shape mismatch in layer_norm / rms_norm: gamma and beta (Rhs) must have the shape of X's normalized axes, from Axis to the last (Lhs: X)
// expect text (GNU): report<partita::layer_norm<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 9, 768>, partita::weight<partita::fixed_string<10>{"ln.weight"}, partita::dtype::f32, 512>
// expect text (GNU): partita::problem::normalization_parameter, partita::dims<1, 9, 768>, partita::dims<512> >
#include <partita/model.hpp>
using namespace partita;
// LayerNorm over the last axis of 768 features, with the parameters of a 512-wide model.
using x = input<"x", f32, 1, 9, 768>;
using y = layer_norm<x, weight<"ln.weight", f32, 512>, weight<"ln.bias", f32, 512>>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
