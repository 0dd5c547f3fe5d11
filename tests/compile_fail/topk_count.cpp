// expect: static assertion failed
// expect text: partita: topk<X, K, Axis> (Node): X must be an f32 or integer tensor and K between 1 and X's extent along Axis (Lhs: X's shape; Rhs: K, Axis)
// expect text (GNU): partita::problem::topk_count, partita::dims<1, 10>, partita::dims<20, -1> >
#include <partita/model.hpp>
using namespace partita;
// The 20 best of 10 classes.
using scores = input<"scores", f32, 1, 10>;
using best = topk<scores, 20>;
constexpr auto& m = module_of<model<get<best, 0>>>::value;
int main() {}
