// expect: static assertion failed
// expect text: partita: shape mismatch in dense<X, W>: the last dimension of X (Lhs) must equal the second dimension of W (Rhs); W is [units, in_features]
// expect (GNU): report<partita::dense<partita::input<partita::fixed_string<2>\{"x"\}, partita::dtype::f32, 1, 784>, partita::weight<partita::fixed_string<11>\{"fc1.weight"\}, partita::dtype::f32, 512, 700> >
// expect (GNU): partita::dims<1, 784>, partita::dims<512, 700>
#include <partita/model.hpp>
using namespace partita;
using x = input<"x", f32, 1, 784>;
using h = relu<dense<x, weight<"fc1.weight", f32, 512, 700>>>;
constexpr auto& m = module_of<model<h>>::value;
int main() {}
