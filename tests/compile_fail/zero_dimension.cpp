// expect: static assertion failed
// expect text: partita: every dimension of an input or weight must be positive
// expect text (GNU): leaf_node<partita::op_id::input, partita::fixed_string<2>{"x"}, partita::dtype::f32, 0, 8>
#include <partita/model.hpp>
using namespace partita;
// An input declared with an empty batch dimension.
using x = input<"x", f32, 0, 8>;
constexpr auto& m = module_of<model<relu<x>>>::value;
int main() {}
