// expect: static assertion failed
// expect text: partita: lstm / gru / rnn (Node): X is [seq, batch, input] ([batch, seq, input] with batch_first), W [dirs, gates * hidden, input], R [dirs, gates * hidden, hidden], B [dirs, 2 * gates * hidden] and the initial states [dirs, batch, hidden], all f32, with dirs 2 for bidirectional and 1 otherwise and gates 4 (lstm), 3 (gru) or 1 (rnn) (Lhs: X's shape; Rhs: the argument that does not fit, its position last)
// expect text (GNU): partita::problem::recurrent_shapes, partita::dims<49, 1, 10>, partita::dims<1, 192, 64, 2> >
#include <partita/model.hpp>
using namespace partita;
// R of 64 columns for W's 4 gates of 48 units: R must be [1, 4 · 48, 48], its hidden state
// being 48 wide.
using frames = input<"x", f32, 49, 1, 10>;
using layer = lstm<frames, weight<"w", f32, 1, 192, 10>, weight<"r", f32, 1, 192, 64>, weight<"b", f32, 1, 384>>;
constexpr auto& m = module_of<model<get<layer, 0>>>::value;
int main() {}
