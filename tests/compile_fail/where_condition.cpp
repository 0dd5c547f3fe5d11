// expect: static assertion failed
// expect text: partita: where<Cond, A, B> (Node): Cond must be boolean (Lhs: its dtype; Rhs: A's); compare first (greater<mask, scalar<0.f>>) or convert (cast<mask, boolean>)
// expect text (GNU): partita::problem::where_condition, partita::dtype_is<partita::dtype::f32>, partita::dtype_is<partita::dtype::f32> >
#include <partita/model.hpp>
using namespace partita;
// A float mask of ones and zeros given to where as its condition, as PyTorch's masked_fill
// never would.
using scores = input<"s", f32, 1, 4, 4>;
using mask = input<"mask", f32, 4, 4>;
using y = where<mask, scores, scalar<-1e9f>>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
