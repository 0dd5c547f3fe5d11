// expect: static assertion failed
// expect text: partita: dequantize<Q, Scale, ZeroPoint, Axis>: Q must be u8, i8 or i32 and ZeroPoint of the same dtype (Lhs: Q's dtype, Rhs: ZeroPoint's)
// expect text (GNU): partita::problem::dequantize_dtype, partita::dtype_is<partita::dtype::u8>, partita::dtype_is<partita::dtype::i8> >
#include <partita/model.hpp>
using namespace partita;
// A u8 tensor dequantized with an i8 zero point.
using q = input<"q", u8, 1, 8>;
using y = dequantize<q, scalar<0.5f>, int_scalar<i8, 0>>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
