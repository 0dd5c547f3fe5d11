// expect: static assertion failed
// expect text: partita: gather_elements<X, Indices, Axis> (Node): Indices must be an i32 or i64 tensor of X's rank, at most X's extent along every other axis (Lhs: X's shape, Rhs: the indices' shape)
// expect text (GNU): partita::problem::gather_elements_indices, partita::dims<4, 8>, partita::dims<8> >
#include <partita/model.hpp>
using namespace partita;
// One index per row, given as a vector: gather_elements wants it shaped [4, 1], as the rows.
using scores = input<"scores", f32, 4, 8>;
using picks = input<"picks", i64, 8>;
using y = gather_elements<scores, picks, 1>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
