// expect: static assertion failed
// expect text: partita: pad<X, Before, After, Value>: the amounts must not be negative (Lhs: X; Rhs: the first axis with a negative amount, then its amounts before and after)
// expect text (GNU): report<partita::pad<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 3, 8, 8>, partita::dims<0, 0, 1, 1>, partita::dims<0, 0, -1, -1> >
// expect text (GNU): partita::problem::pad_amount, partita::dims<1, 3, 8, 8>, partita::dims<2, 1, -1> >
#include <partita/model.hpp>
using namespace partita;
// A crop written as a pad: negative amounts are not padding.
using x = input<"x", f32, 1, 3, 8, 8>;
using y = pad<x, dims<0, 0, 1, 1>, dims<0, 0, -1, -1>>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
