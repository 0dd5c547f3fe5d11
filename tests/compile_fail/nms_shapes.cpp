// expect: static assertion failed
// expect text: partita: non_max_suppression<Boxes, Scores, MaxPerClass, ...> (Node): Boxes must be f32 [batch, boxes, 4], Scores f32 [batch, classes, boxes], and MaxPerClass at least 1 (Lhs: Boxes' shape, Rhs: Scores' shape)
// expect text (GNU): partita::problem::nms_shapes, partita::dims<1, 100, 4>, partita::dims<1, 100, 3> >
#include <partita/model.hpp>
using namespace partita;
// Scores laid out [batch, boxes, classes], as a detector head writes them: ONNX's order is
// [batch, classes, boxes] (transpose them first).
using boxes = input<"boxes", f32, 1, 100, 4>;
using scores = input<"scores", f32, 1, 100, 3>;
using kept = non_max_suppression<boxes, scores, 10>;
constexpr auto& m = module_of<model<get<kept, 1>>>::value;
int main() {}
