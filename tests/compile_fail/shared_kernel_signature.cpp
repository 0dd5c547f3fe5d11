// expect: static assertion failed
// expect text: partita: a kernel shared between steps (B has `shares_kernels`, its `run` takes the step) needs `prepare(state&, const float* const* in, int step)`
// expect text (GNU): kernel_call<npu
#include <partita/partita.hpp>
using namespace partita;
// A backend that shares kernels, whose run takes the step's index but whose prepare does not.
struct npu {
  static constexpr fixed_string name = "npu";
  static constexpr bool host = true;
  static constexpr bool shares_kernels = true;
  struct state {};
  template <class Step>
  struct kernel {
    static void prepare(state&, const float* const*) {}
    static void run(state&, const float* const*, float*, int) {}
  };
};
using x = input<"x", f32, 4>;
compiled<model<relu<x>>, npu> exe;
int main() {}
