// expect: static assertion failed
// expect: partita: unknown op: an argument of this op \(Node, argument number Position\) is not a Partita node
// expect (GNU): require_node<partita::relu<my_layer>, 1, my_layer, false>
#include <partita/model.hpp>
using namespace partita;
struct my_layer {};  // not an op: user code forgot to derive from one
using y = relu<my_layer>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
