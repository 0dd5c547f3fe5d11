// expect: static assertion failed
// expect text: partita: clip<X, Lo, Hi> needs Lo <= Hi
// expect text (GNU): partita::clip<partita::input<partita::fixed_string<2>{"x"}, partita::dtype::f32, 1, 8>, 6.0e+0f, 0.0f>
#include <partita/model.hpp>
using namespace partita;
// ReLU6 written with its bounds swapped.
using x = input<"x", f32, 1, 8>;
using y = clip<x, 6.f, 0.f>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
