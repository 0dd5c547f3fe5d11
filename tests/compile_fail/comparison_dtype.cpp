// expect: static assertion failed
// expect text: partita: equal / less / greater (Node): both arguments must have one dtype, f32 or an integer one (Lhs vs Rhs); the result is boolean
// expect text (GNU): partita::problem::comparison_dtype, partita::dtype_is<partita::dtype::i64>, partita::dtype_is<partita::dtype::f32> >
#include <partita/model.hpp>
using namespace partita;
// Token ids compared with a float scalar: cast one of them first.
using ids = input<"ids", i64, 1, 8>;
using y = equal<ids, scalar<0.f>>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
