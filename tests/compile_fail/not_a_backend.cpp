// expect: static assertion failed
// expect: partita: not a backend \(Backend\): it needs a `struct state \{\};`
// expect (GNU): partita: backend \(Backend\): a backend that is not a host needs `static constexpr bool supports\(const op_view&\)`
// expect (GNU): check_backend<my_npu>
// (Clang stops at the first failed check of a backend, so it names only the first mistake.)
#include <partita/partita.hpp>
using namespace partita;
struct my_npu {  // forgot its state and its supports predicate
  static constexpr fixed_string name = "npu";
};
using x = input<"x", f32, 4>;
using parts = partition<model<relu<x>>, my_npu, reference>;
constexpr auto& m = parts::value;
int main() {}
