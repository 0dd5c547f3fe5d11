// expect: static assertion failed
// expect text: partita: shape mismatch in conv2d<X, W>: channels of X (Lhs, NCHW) must equal W's input channels times groups (Rhs, OIHW)
// expect (GNU): report<partita::conv2d<partita::input<partita::fixed_string<4>\{"img"\}
// expect (GNU): partita::dims<1, 3, 32, 32>, partita::dims<16, 4, 3, 3>
#include <partita/model.hpp>
using namespace partita;
using img = input<"img", f32, 1, 3, 32, 32>;
struct stem : relu<conv2d<img, weight<"stem.weight", f32, 16, 4, 3, 3>, {.padding = {1, 1}}>> {};
int main() { return static_cast<int>(stem::desc.out.rank); }
