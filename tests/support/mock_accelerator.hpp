#pragma once
// A call-recording accelerator: it claims small f32 adds and relus, fuses conv2d+bias+relu into
// one kernel, and records every call it receives, so tests can check where each step ran.
#include <string_view>
#include <vector>

#include <partita/partita.hpp>

namespace test_backends {
using namespace partita;

struct mock {
  static constexpr fixed_string name = "mock";

  /// Every call, in order: the op or composite name.
  struct state {
    std::vector<std::string_view> calls;
  };

  /// Whether the "device" is present: tests unplug it to see executables fall back.
  static inline bool plugged_in = true;
  static bool available(state&) { return plugged_in; }

  using patterns = pattern_table<composite<"mock.conv2d_bias_relu", relu_p<bias_add_p<conv2d_p<any, constant>, constant>>, only_f32>>;

  /// Small f32 adds and relus only (the "device" has little memory).
  static constexpr bool supports(const op_view& v) {
    return (v.is(op_id::add) || v.is(op_id::relu)) && v.dtype() == f32 && v.shape().elements() <= 4096;
  }
  static constexpr bool fuses(std::string_view composite) { return composite == "mock.conv2d_bias_relu"; }

  template <class Step>
  struct kernel {
    static void run(state& s, const float* const* in, float* out) {
      if constexpr (Step::op == op_id::call) {
        s.calls.push_back(Step::composite);
        // conv2d into the output, then bias and relu in place: in = {x, conv weight, bias}
        constexpr const graph_node& conv = Step::body(Step::find(op_id::conv2d));
        constexpr shape w_shape = Step::arg(Step::num_params).out;
        reference_kernels::conv2d(in[0], Step::arg(0).out, in[1], w_shape, out, Step::node.out, *conv.at);
        reference_kernels::bias_add(out, Step::node.out, in[2], 1, out);
        reference_kernels::unary(op_id::relu, out, Step::node.out.elements(), out, attrs{});
      } else {
        s.calls.push_back(name_of(Step::op));
        reference::state none;
        reference::kernel<Step>::run(none, in, out);
      }
    }
  };
};

}  // namespace test_backends
