// expect: static assertion failed
// expect text: partita: dtype mismatch: the arguments of this op (Node) have different element types (Lhs vs Rhs)
// expect (GNU): report<partita::multiply<partita::input<partita::fixed_string<2>\{"a"\}, partita::dtype::f32, 4>, partita::input<partita::fixed_string<2>\{"q"\}, partita::dtype::i8, 4> >
// expect (GNU): partita::dtype_is<partita::dtype::f32>, partita::dtype_is<partita::dtype::i8>
#include <partita/model.hpp>
using namespace partita;
using y = multiply<input<"a", f32, 4>, input<"q", i8, 4>>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
