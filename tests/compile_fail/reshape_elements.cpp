// expect: static assertion failed
// expect text: partita: reshape changes the number of elements: input Lhs, target Rhs
// expect text (GNU): report<partita::reshape<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 784>, 1, 3, 28, 28>
// expect text (GNU): partita::problem::reshape_elements, partita::dims<1, 784>, partita::dims<1, 3, 28, 28> >
#include <partita/model.hpp>
using namespace partita;
// A grey 28x28 image reshaped as if it had three colour channels.
using x = input<"x", f32, 1, 784>;
using y = reshape<x, 1, 3, 28, 28>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
