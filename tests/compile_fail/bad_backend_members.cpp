// expect: static assertion failed
// expect: partita: backend \(Backend\): its `patterns` must be a pattern_table<composite<...>...>
// expect (GNU): partita: backend \(Backend\): its `pre_partition` / `post_partition` must be a pass_list<...> of passes
// expect (GNU): check_backend<npu>
// (Clang stops at the first failed check of a backend, so it names only the first mistake.)
#include <partita/partita.hpp>
using namespace partita;
struct npu {
  static constexpr fixed_string name = "npu";
  struct state {};
  static constexpr bool supports(const op_view&) { return false; }
  using patterns = composite<"npu.relu", relu_p<any>>;  // a composite, not a table
  using post_partition = passes::merge_regions;        // fine: a pass has run()
  using pre_partition = int;                           // not a pass
};
using x = input<"x", f32, 4>;
compiled<partition<model<relu<x>>, npu, reference>, npu, reference> exe;
int main() {}
