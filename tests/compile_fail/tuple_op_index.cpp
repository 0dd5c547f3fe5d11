// expect: static assertion failed
// expect text: partita: get<T, I>: index I is out of range for the tuple T (Lhs: index, Rhs: tuple size)
// expect text (GNU): partita::problem::tuple_index, partita::dims<2>, partita::dims<2> >
#include <partita/model.hpp>
using namespace partita;
// topk has two fields, values and indices: there is no third.
using scores = input<"scores", f32, 1, 10>;
using y = get<topk<scores, 3>, 2>;
constexpr auto& m = module_of<model<y>>::value;
int main() {}
