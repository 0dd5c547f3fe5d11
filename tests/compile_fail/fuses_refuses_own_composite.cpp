// expect: static assertion failed: partita: a step runs on backend \(Backend\), whose `supports` refuses its op
// expect: check_step_backend<npu, false>
// expect: check `fuses`
#include <partita/partita.hpp>
using namespace partita;
struct npu {  // takes conv2d+relu composites only, but its `fuses` misspells the name
  static constexpr fixed_string name = "npu";
  struct state {};
  using patterns = pattern_table<composite<"npu.conv2d_relu", relu_p<conv2d_p<any, constant>>>>;
  static constexpr bool fuses(std::string_view c) { return c == "npu.conv_relu"; }
  template <class Step>
  struct kernel {
    static void run(state&, const float* const*, float*) {}
  };
};
using x = input<"x", f32, 1, 2, 5, 5>;
using net = model<relu<conv2d<x, weight<"w", f32, 3, 2, 3, 3>>>>;
int main() {
  compiled<net, npu, cpu> exe;
  std::vector<float> in(50), out(27);
  exe.run(in, out);
}
