// expect text: partita: match_view::var: the pattern declares no variable of this name
#include <partita/partita.hpp>
using namespace partita;
// A predicate asks for a pattern variable by a name the pattern does not declare ("conv", not
// "c"): the typo stops the compilation instead of silently reading the match's root.
struct stride_one {
  static constexpr bool check(const match_view& m) { return m.var("conv").attributes().stride[0] == 1; }
};
using x = input<"x", f32, 1, 2, 5, 5>;
using net = model<relu<conv2d<x, weight<"k", f32, 4, 2, 3, 3>>>>;
using table = pattern_table<composite<"t.conv_relu", relu_p<var<"c", conv2d_p<any, constant>>>, stride_one>>;
constexpr int n = count_functions<merge_composite<module_of<net>, table>, "t.conv_relu">;
int main() {}
