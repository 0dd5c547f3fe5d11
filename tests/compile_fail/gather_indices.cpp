// expect: static assertion failed
// expect text: partita: gather<Table, Indices, Axis>: Indices must be an i32 or i64 tensor (Rhs: its dtype) and Axis an axis of Table (Lhs)
// expect text (GNU): report<partita::gather<partita::weight<partita::fixed_string<4>{"tok"}, partita::dtype::f32, 1000, 64>, partita::input<partita::fixed_string<4>{"ids"}, partita::dtype::f32, 1, 9>, 0>
// expect text (GNU): partita::problem::gather_indices, partita::dims<1000, 64>, partita::dtype_is<partita::dtype::f32> >
#include <partita/model.hpp>
using namespace partita;
// Token ids declared as f32: an embedding looks rows up by integer indices.
using ids = input<"ids", f32, 1, 9>;
using e = embedding<weight<"tok", f32, 1000, 64>, ids>;
constexpr auto& m = module_of<model<e>>::value;
int main() {}
