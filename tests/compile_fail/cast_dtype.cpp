// expect: static assertion failed
// expect text: partita: cast<X, D> (Node): X and D are f32, i32, i64, i8, u8 or boolean (Lhs: X's dtype, Rhs: D)
// expect text (GNU): partita::problem::cast_dtype, partita::dtype_is<partita::dtype::f16>, partita::dtype_is<partita::dtype::f32> >
#include <partita/model.hpp>
using namespace partita;
// A half-precision input: no kernel reads f16 yet.
using x = input<"x", f16, 2, 8>;
using y = cast<x, f32>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
