// expect: static assertion failed
// expect text: partita: model<...>: two outputs have the same name (shown as Name above)
// expect (GNU): Name = partita::fixed_string<6>\{"probs"\}
// expect (Clang): output_name_is_unique<fixed_string<6UL>\{"probs"\}>
#include <partita/model.hpp>
using namespace partita;
// Two outputs of one model named alike: `run` could not tell their buffers apart.
using x = input<"x", f32, 1, 4>;
constexpr auto& m = module_of<model<output<"probs", relu<x>>, output<"probs", sigmoid<x>>>>::value;
int main() {}
