#pragma once
// A Partita backend for the toy NPU: conv2d + bias + relu runs on the device, from weights
// uploaded at bind; everything else is left to the host backend.
#include <algorithm>
#include <map>
#include <string_view>

#include <partita/partita.hpp>
#include "device.hpp"

namespace custom {
using namespace partita;

/// What the device takes: f32, a bias along the channels, a convolution within toy_npu's limits
/// (stride 1, no dilation or groups, the same padding before and after each axis).
struct fits_device {
  static constexpr bool check(const match_view& m) {
    const op_view bias = m.root().arg(0), conv = bias.arg(0);  // relu(bias_add(conv2d(x, w), b))
    const attrs& a = conv.attributes();
    const bool symmetric = end_padding(a, 0) == a.padding[0] && end_padding(a, 1) == a.padding[1];
    return only_f32::check(m) && (bias.attributes().axis + 4) % 4 == 1 && a.stride == std::array{1, 1} &&
           a.dilation == std::array{1, 1} && a.groups == 1 && symmetric &&
           std::max(conv.shape()[1], conv.arg(0).shape()[1]) <= toy_npu::max_channels;
  }
};

struct npu {
  static constexpr fixed_string name = "npu";
  /// Composites only (no `supports`): the device, and each fused step's weights by step index.
  struct state { toy_npu::session device; std::map<int, toy_npu::handle> weights; };
  using patterns = pattern_table<composite<"npu.conv2d_bias_relu", relu_p<bias_add_p<conv2d_p<any, constant>, constant>>, fits_device>>;
  static constexpr bool fuses(std::string_view composite) { return composite == "npu.conv2d_bias_relu"; }

  template <class Step>
  struct kernel {
    static constexpr int conv = Step::find(op_id::conv2d), bias = Step::find(op_id::bias_add);
    static constexpr shape x = Step::arg(0).out, w = Step::body(Step::body_arg(conv, 1)).out;
    static constexpr std::array<int, 2> pad = Step::body(conv).at->padding;
    // Where the weight and the bias arrive among the kernel's inputs.
    static constexpr int w_in = Step::input_of(Step::body_node(Step::body_arg(conv, 1)));
    static constexpr int b_in = Step::input_of(Step::body_node(Step::body_arg(bias, 1)));

    static void prepare(state& s, const float* const* in) {
      toy_npu::handle& h = s.weights.try_emplace(Step::index, -1).first->second;
      h = toy_npu::upload_weights(s.device, h, w[0], w[1], w[2], w[3], in[w_in], in[b_in]);
      if (h < 0) throw error("npu: the device refused a convolution's weights");
    }
    static void run(state& s, const float* const* in, float* out) {
      toy_npu::conv_bias_relu(s.device, s.weights.at(Step::index), in[0], out, x[0], x[2], x[3], pad[0], pad[1]);
    }
  };
};

}  // namespace custom
