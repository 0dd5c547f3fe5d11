// expect: static assertion failed
// expect text: partita: shape mismatch in matmul<A, B>: the columns of A must equal the rows of B, after the transposes (Lhs: A, Rhs: B)
// expect text (GNU): report<partita::matmul<partita::input<partita::fixed_string<2>{"q"}, partita::dtype::f32, 2, 3, 17, 8>, partita::input<partita::fixed_string<2>{"k"}, partita::dtype::f32, 2, 3, 9, 8> >
// expect text (GNU): partita::problem::matmul_inner_dimension, partita::dims<2, 3, 17, 8>, partita::dims<2, 3, 9, 8> >
#include <partita/model.hpp>
using namespace partita;
// Q·Kᵀ written without the transpose: [.., 17, 8] by [.., 9, 8] multiplies 8 columns by 9 rows.
using q = input<"q", f32, 2, 3, 17, 8>;
using k = input<"k", f32, 2, 3, 9, 8>;
using scores = matmul<q, k>;
constexpr auto& m = module_of<model<scores>>::value;
int main() {}
