// expect: static assertion failed
// expect text: partita: onednn: a partition holds an op with no oneDNN translation (pinned with on<onednn, ...>?); the next error names it in no_onednn_translation_for<...>
// expect text (GNU): no_onednn_translation_for<partita::op_id::concatenate>
#include <partita/partita.hpp>
#include <partita/backends/onednn/onednn.hpp>
using namespace partita;
// A concatenation pinned to oneDNN, which has no translation for it.
using x = input<"x", f32, 1, 4, 8, 8>;
using c = relu<conv2d<x, weight<"c.weight", f32, 4, 4, 3, 3>, {.padding = {1, 1}}>>;
using y = on<onednn, concatenate<1, c, x>>;
compiled<model<y>, onednn, cpu> exe;
int main() {}
