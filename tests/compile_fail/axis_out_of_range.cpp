// expect: static assertion failed
// expect text: partita: axis out of range for this op (Lhs: input shape, Rhs: axis as dims)
// expect text (GNU): report<partita::softmax<partita::dense<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 10>, partita::weight<partita::fixed_string<10>{"fc.weight"}, partita::dtype::f32, 10, 10> >, 2>
// expect text (GNU): partita::problem::axis_out_of_range, partita::dims<1, 10>, partita::dims<2> >
#include <partita/model.hpp>
using namespace partita;
// Softmax over axis 2 of [batch, classes] logits: the axis of the classes is 1 (or -1).
using x = input<"x", f32, 1, 10>;
using y = softmax<dense<x, weight<"fc.weight", f32, 10, 10>>, 2>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
