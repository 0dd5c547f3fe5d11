// expect: static assertion failed
// expect text: partita: quantize / dequantize (Node): Scale must be an f32 tensor (Rhs: its dtype)
// expect text (GNU): partita::problem::quantization_scale, partita::dims<1, 8>, partita::dtype_is<partita::dtype::i32> >
#include <partita/model.hpp>
using namespace partita;
// A scale given as an integer tensor.
using q = input<"q", i8, 1, 8>;
using y = dequantize<q, weight<"s", i32>, int_scalar<i8, 0>>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
