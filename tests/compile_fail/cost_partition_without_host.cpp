// expect: static assertion failed
// expect: partita: cost_partition<Model, Backends...> needs a host backend \(such as cpu\), listed last
// expect (GNU): cost_partition_with<partita::cost_config<>, partita::model<partita::relu<partita::input<
#include <partita/partita.hpp>
using namespace partita;
struct npu {
  static constexpr fixed_string name = "npu";
  struct state {};
  static constexpr bool supports(const op_view& v) { return v.is(op_id::relu); }
};
using x = input<"x", f32, 4>;
using parts = cost_partition<model<relu<x>>, npu>;  // no host to run what npu does not
constexpr auto& m = parts::value;
int main() {}
