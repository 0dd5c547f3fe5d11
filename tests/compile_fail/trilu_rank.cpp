// expect: static assertion failed
// expect text: partita: tril / triu (Node): X must have at least two dimensions (Lhs: its shape)
// expect text (GNU): partita::problem::trilu_rank, partita::dims<8>, partita::dims<2> >
#include <partita/model.hpp>
using namespace partita;
// A vector has no diagonal.
using x = input<"x", f32, 8>;
using y = tril<x>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
