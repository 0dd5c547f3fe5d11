// expect: static assertion failed
// expect text: partita: logical_not / logical_and / logical_or / logical_xor (Node): the arguments must be boolean (Lhs vs Rhs: their dtypes)
// expect text (GNU): partita::problem::logical_dtype, partita::dtype_is<partita::dtype::boolean>, partita::dtype_is<partita::dtype::f32> >
#include <partita/model.hpp>
using namespace partita;
// A mask combined with a float tensor of ones and zeros.
using mask = input<"mask", boolean, 4, 4>;
using keep = input<"keep", f32, 4, 4>;
using y = logical_and<mask, keep>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
