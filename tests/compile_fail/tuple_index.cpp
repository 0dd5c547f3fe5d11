// expect: static assertion failed
// expect text: partita: get<T, I>: index I is out of range for the tuple T (Lhs: index, Rhs: tuple size)
// expect text (GNU): report<partita::get<partita::tuple<partita::relu<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 4> >, partita::sigmoid<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 4> > >, 2>
// expect text (GNU): partita::problem::tuple_index, partita::dims<2>, partita::dims<2> >
#include <partita/model.hpp>
using namespace partita;
// A pair of results read at index 2: fields are numbered from 0.
using x = input<"x", f32, 1, 4>;
using both = tuple<relu<x>, sigmoid<x>>;
using y = get<both, 2>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
