// expect: static assertion failed
// expect text: partita: shape mismatch in bias_add<X, B>: B (Rhs) must have as many elements as X (Lhs) has along the bias axis
// expect text (GNU): report<partita::bias_add<partita::dense<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 128>, partita::weight<partita::fixed_string<10>{"fc.weight"}, partita::dtype::f32, 10, 128> >, partita::weight<partita::fixed_string<8>{"fc.bias"}, partita::dtype::f32, 128> >
// expect text (GNU): partita::problem::bias_size, partita::dims<1, 10>, partita::dims<128> >
#include <partita/model.hpp>
using namespace partita;
// The bias of a 10-unit layer declared with the layer's input size.
using x = input<"x", f32, 1, 128>;
using y = bias_add<dense<x, weight<"fc.weight", f32, 10, 128>>, weight<"fc.bias", f32, 128>>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
