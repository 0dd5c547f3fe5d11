// expect: static assertion failed
// expect text: partita: a tuple is used where a tensor is expected (Node); project a field with get<T, I>
// expect text (GNU): report<partita::relu<partita::tuple<partita::dense<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 4>, partita::weight<partita::fixed_string<9>{"a.weight"}
// expect text (GNU): partita::problem::tuple_as_tensor, partita::dims<>, partita::dims<> >
#include <partita/model.hpp>
using namespace partita;
// An activation applied to a pair of results instead of to one field of it.
using x = input<"x", f32, 1, 4>;
using both = tuple<dense<x, weight<"a.weight", f32, 4, 4>>, dense<x, weight<"b.weight", f32, 4, 4>>>;
using y = relu<both>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
