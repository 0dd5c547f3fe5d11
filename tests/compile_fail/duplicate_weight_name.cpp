// expect: static assertion failed
// expect text: partita: two different inputs or weights share one name (Node: the name) with different shapes or dtypes (Lhs, Rhs)
// expect (GNU): partita::detail::name_is<partita::fixed_string<10>\{"fc.weight"\}>
// expect (GNU): partita::dims<10, 20>, partita::dims<10, 30>
#include <partita/model.hpp>
using namespace partita;
using a = dense<input<"a", f32, 1, 20>, weight<"fc.weight", f32, 10, 20>>;
using b = dense<input<"b", f32, 1, 30>, weight<"fc.weight", f32, 10, 30>>;
constexpr auto& m = module_of<model<add<a, b>>>::value;
int main() {}
