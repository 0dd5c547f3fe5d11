// expect: static assertion failed
// expect text: partita: split<X, Axis, Sizes...>: the sizes (Rhs) must be positive and add up to X's extent along the axis (Lhs: input shape)
// expect text (GNU): report<partita::split<partita::input<partita::fixed_string<4>{"qkv"}, partita::dtype::f32, 1, 9, 512>, -1, 256, 256, 256>
// expect text (GNU): partita::problem::split_sizes, partita::dims<1, 9, 512>, partita::dims<256, 256, 256> >
#include <partita/model.hpp>
using namespace partita;
// Q, K and V of 256 each from a projection of 512: the sizes add up to 768.
using qkv = input<"qkv", f32, 1, 9, 512>;
using k = get<split<qkv, -1, 256, 256, 256>, 1>;
constexpr auto& m = module_of<model<k>>::value;
int main() {}
