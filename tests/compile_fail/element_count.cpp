// expect: static assertion failed
// expect text: partita: shape too large: a tensor of this node (Node) has more elements (Lhs: its shape) than a tensor may have (Rhs: the limit, 2^48 elements)
// expect text (GNU): partita::problem::element_count, partita::dims<1073741824, 1073741824, 1073741824>, partita::dims<281474976710656> >
// expect no text: overflow in constant expression
#include <partita/partita.hpp>
using namespace partita;
// A volume of 2^30 × 2^30 × 2^30 voxels: 2^90 elements, beyond what 64-bit sizes count.
constexpr std::int64_t side = std::int64_t{1} << 30;
using x = input<"x", f32, side, side, side>;
using exe_t = compiled<model<relu<x>>, reference>;
constexpr std::size_t arena = exe_t::arena_bytes;
int main() {}
