// expect: static assertion failed
// expect text: partita: stateful: a carry<In, Out> names an input or an output the model does not declare
#include <partita/partita.hpp>
using namespace partita;
// The state's input is "h", not "h0".
using x = input<"x", f32, 1, 4>;
using h = input<"h", f32, 1, 4>;
using net = model<output<"y", add<x, h>>, output<"h_next", relu<add<x, h>>>>;
using streaming = stateful<compiled<net, reference>, carry<"h0", "h_next">>;
int main() {
  streaming s;
}
