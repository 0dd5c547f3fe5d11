// expect: static assertion failed
// expect text: partita: quantize / dequantize (Node): Scale and ZeroPoint must have one shape, of rank 0 or 1, with one element (per tensor) or as many as the tensor has along Axis (Lhs: the tensor's shape; Rhs: the axis, the scale's elements, the zero point's elements)
// expect text (GNU): partita::problem::quantization_parameters, partita::dims<1, 3, 4, 4>, partita::dims<1, 4, 4>
#include <partita/model.hpp>
using namespace partita;
// Per-channel parameters with four values for three channels.
using x = input<"x", f32, 1, 3, 4, 4>;
using q = quantize<x, weight<"s", f32, 4>, weight<"zp", u8, 4>>;
constexpr auto& m = module_of<model<q>>::value;
int main() {}
