// expect: static assertion failed
// expect text: partita: quantize<X, Scale, ZeroPoint, Axis>: X must be f32 and ZeroPoint u8, i8 or i32, the dtype of the result (Lhs: X's dtype, Rhs: ZeroPoint's)
// expect text (GNU): partita::problem::quantize_dtype, partita::dtype_is<partita::dtype::f32>, partita::dtype_is<partita::dtype::f32> >
#include <partita/model.hpp>
using namespace partita;
// A zero point declared f32: the zero point's dtype is the quantized result's.
using x = input<"x", f32, 1, 8>;
using q = quantize<x, scalar<0.5f>, weight<"zp", f32>>;
constexpr auto& m = module_of<model<q>>::value;
int main() {}
