// expect: static assertion failed
// expect text: partita: get<T, I>: T is a tensor, not a tuple
// expect text (GNU): report<partita::get<partita::relu<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 4> >, 0>
// expect text (GNU): partita::problem::not_a_tuple, partita::dims<1, 4>, partita::dims<> >
#include <partita/model.hpp>
using namespace partita;
// get<T, I> applied to a tensor, as if relu returned several results.
using x = input<"x", f32, 1, 4>;
using y = get<relu<x>, 0>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
