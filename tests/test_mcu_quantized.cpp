// The mcu backend's int8 kernels (backends/mcu/detail/q*.hpp, quantize.hpp): the conformance law
// on the quantized models, and the cpu backend's integer results bit for bit, on the law's models
// and on shapes the law leaves out (groups, dilation, u8 weights with a zero point, an f32 bias,
// quantize and dequantize of whole tensors).
// On the host the DSP extension's instructions are emulated by plain integer code
// (detail/dsp.hpp); the firmware tests run the same kernels with them.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <memory>

#include <laws/conformance.hpp>
#include <laws/conformance_quantized.hpp>

using namespace partita;
namespace qnets = laws::nets::quantized_net;

// Every quantized model runs as the mcu backend's integer composites.
static_assert(count_functions<compiled<model<qnets::conv_tensor>, mcu>::module, "mcu.qconv2d_bias_act"> == 1);
static_assert(count_functions<compiled<model<qnets::depthwise>, mcu>::module, "mcu.qconv2d_bias_act"> == 1);
static_assert(compiled<model<qnets::residual>, mcu>::step_name(1) == "mcu.qadd");
static_assert(count_functions<compiled<model<qnets::dense_u8>, mcu>::module, "mcu.qdense_bias_act"> == 1);
static_assert(count_functions<compiled<model<qnets::matmul_i8>, mcu>::module, "mcu.qmatmul"> == 1);
static_assert(count_functions<compiled<model<qnets::relu6_i8>, mcu>::module, "mcu.qclamp"> == 1);
static_assert(count_functions<compiled<model<qnets::max_pool>, mcu>::module, "mcu.qpool2d"> == 1);
static_assert(count_functions<compiled<model<qnets::concat>, mcu>::module, "mcu.qconcat"> == 1);

namespace nets {
using qnets::dq;
using qnets::q;
/// 8 -> 6 channels in 2 groups, 3x3, dilation 2, stride 2, padded; u8 weights per tensor with
/// their zero point at 128; an f32 bias; ReLU6.
using grouped_dilated =
    q<clip<bias_add<conv2d<dq<input<"x", u8, 2, 8, 13, 11>, 0.02f, u8, 17>,
                           dequantize<weight<"w", u8, 6, 4, 3, 3>, scalar<0.004f>, int_scalar<u8, 128>>,
                           {.stride = {2, 2}, .padding = {2, 1}, .dilation = {2, 2}, .groups = 2}>,
                    weight<"b", f32, 6>>,
           0.f, 6.f>,
      0.03f, u8, 3>;
/// A 5x3 window over one channel into 9 (a stem's shape): depths not a multiple of four.
using narrow_stem = q<relu<bias_add<conv2d<dq<input<"x", i8, 1, 1, 15, 7>, 0.05f, i8, 0>, qnets::channel_w<9, 1, 5>,
                                           {.stride = {2, 1}, .padding = {2, 2}}>,
                                    qnets::bias_q<9>>>,
                      0.04f, i8, -128>;
/// A pointwise convolution over an odd number of positions (5 × 5) and of channels.
using pointwise_odd =
    q<conv2d<dq<input<"x", i8, 1, 13, 5, 5>, 0.03f, i8, -7>, qnets::channel_w<11, 13, 1>>, 0.05f, i8, 4>;
/// Dense with u8 weights of zero point 7, a depth of 30 (a tail of two) and five units.
using dense_tail = q<dense<dq<input<"x", i8, 2, 30>, 0.02f, i8, 9>,
                           dequantize<weight<"w", u8, 5, 30>, scalar<0.01f>, int_scalar<u8, 7>>>,
                     0.06f, u8, 120>;
/// A clip narrower than one step of the output (its quantized bounds cross: every result is the
/// upper one), and an 8-bit bias quantized per channel.
using crossing_clip =
    q<clip<bias_add<conv2d<dq<input<"x", u8, 1, 3, 6, 6>, 0.02f, u8, 9>, qnets::channel_w<4, 3, 3>>,
                    dequantize<weight<"b", i8, 4>, weight<"b.scale", f32, 4>, weight<"b.zp", i8, 4>, 0>>,
           3.f, 3.004f>,
      0.01f, u8, 0>;
/// What the predicate leaves to the float kernels: a matmul that broadcasts a's batch against
/// b's, an i32 weight, a per-channel constant added, a dense layer of more than 16384 values per
/// output (on mcu).
using matmul_broadcast = q<matmul<dq<input<"a", i8, 3, 4, 5>, 0.05f, i8, 0>, dq<input<"b", i8, 2, 3, 5, 6>, 0.05f, i8, 0>>,
                           0.2f, i8, 0>;
using i32_weight = q<conv2d<dq<input<"x", i8, 1, 3, 5, 5>, 0.05f, i8, 0>,
                            dequantize<weight<"w", i32, 4, 3, 1, 1>, scalar<0.01f>, int_scalar<i32, 0>>>,
                     0.1f, i8, 0>;
using channel_constant = q<add<dq<input<"x", i8, 1, 4>, 0.05f, i8, 0>,
                               dequantize<weight<"c", i8, 4>, weight<"c.scale", f32, 4>, weight<"c.zp", i8, 4>, 0>>,
                           0.1f, i8, 0>;
using deep_dense = q<dense<dq<input<"x", i8, 1, 16400>, 0.05f, i8, 0>,
                           dequantize<weight<"w", i8, 2, 16400>, scalar<0.001f>, int_scalar<i8, 0>>>,
                     0.5f, i8, 0>;

/// A float tensor quantized to u8 and dequantized back, and one quantized to i8 (the integers
/// are the output): the firmware's input and output.
using round_trip_u8 = dequantize<quantize<input<"x", f32, 2, 3, 7, 5>, scalar<0.05f>, int_scalar<u8, 100>>, scalar<0.05f>,
                                 int_scalar<u8, 100>>;
using quantize_i8 = quantize<input<"x", f32, 3, 41>, scalar<0.02f>, int_scalar<i8, -5>>;
}  // namespace nets

static_assert(count_functions<compiled<model<nets::grouped_dilated>, mcu>::module, "mcu.qconv2d_bias_act"> == 1);
static_assert(count_functions<compiled<model<nets::crossing_clip>, mcu>::module, "mcu.qconv2d_bias_act"> == 1);
static_assert(count_functions<compiled<model<nets::matmul_broadcast>, mcu>::module, "mcu.qmatmul"> == 0);
static_assert(count_functions<compiled<model<nets::matmul_broadcast>, cpu>::module, "cpu.qmatmul"> == 0);
static_assert(count_functions<compiled<model<nets::i32_weight>, mcu>::module, "mcu.qconv2d_bias_act"> == 0);
static_assert(count_functions<compiled<model<nets::channel_constant>, mcu>::module, "mcu.qadd"> == 0);
static_assert(count_functions<compiled<model<nets::deep_dense>, mcu>::module, "mcu.qdense_bias_act"> == 0);
static_assert(count_functions<compiled<model<nets::dense_tail>, mcu>::module, "mcu.qdense_bias_act"> == 1);

struct mcu_shapes : laws::model_group<"int8 shapes the law leaves out: groups, dilation, u8 weights, tails",
                                      model<nets::grouped_dilated>, model<nets::narrow_stem>,
                                      model<nets::pointwise_odd>, model<nets::dense_tail>,
                                      model<nets::round_trip_u8>, model<nets::quantize_i8>,
                                      model<nets::crossing_clip>, model<nets::matmul_broadcast>> {};
using mcu_models = laws::model_list<laws::nets::quantized_conv_models, laws::nets::quantized_layer_models, mcu_shapes>;

TEST_CASE("mcu obeys the conformance law: quantized_models") { laws::conformance<mcu>::check<mcu_models>(); }

namespace {
template <class... Nets>
struct nets_tag {};

/// `Net`'s oracle on the cpu backend's integer kernels, its weights seeded by `seed`.
template <class Net>
laws::oracle cpu_oracle(unsigned seed) {
  using cpu_t = compiled<Net, cpu>;
  laws::oracle o = laws::make_oracle<Net>(seed);
  auto exe = std::make_shared<cpu_t>();
  if (o.weights) exe->bind(o.weights->set);
  o.run = &laws::detail::run_thunk<cpu_t>;
  o.exe = std::move(exe);
  return o;
}

template <class... Nets>
void same_as_cpu(nets_tag<Nets...>) {
  int index = 0;
  (
      [&] {
        const laws::result r = laws::conformance<mcu>::against<Nets>(cpu_oracle<Nets>(11), 11);
        INFO("model ", index, ": ", r.summary());
        CHECK(r.integer_outputs);
        CHECK(r.integer_error == 0);
        ++index;
      }(),
      ...);
}
}  // namespace

TEST_CASE("mcu's int8 kernels give the cpu backend's integers, bit for bit") {
  same_as_cpu(nets_tag<model<qnets::conv_tensor>, model<qnets::conv_channel>, model<qnets::conv_pointwise_relu6>,
                       model<qnets::depthwise>, model<qnets::saturating_conv>, model<qnets::residual>,
                       model<qnets::dense_u8>, model<qnets::dense_i8>, model<qnets::matmul_u8>, model<qnets::matmul_i8>,
                       model<qnets::add_u8>, model<qnets::add_i8>, model<qnets::relu_u8>, model<qnets::relu6_i8>,
                       model<qnets::avg_pool>, model<qnets::global_pool>, model<qnets::max_pool>, model<qnets::concat>,
                       model<nets::grouped_dilated>, model<nets::narrow_stem>, model<nets::pointwise_odd>,
                       model<nets::dense_tail>, model<nets::quantize_i8>, model<nets::crossing_clip>>{});
}

TEST_CASE("the DSP helpers' portable forms compute SMLAD, SXTB16, UXTB16 and SSUB16") {
  using namespace partita::detail::mcu;
  const std::uint32_t word = 0x80ff7f01u;  // bytes 0x01, 0x7f, 0xff, 0x80
  CHECK(widen_even<std::int8_t>(word) == lanes(1, -1));
  CHECK(widen_odd<std::int8_t>(word) == lanes(127, -128));
  CHECK(widen_even<std::uint8_t>(word) == lanes(1, 255));
  CHECK(widen_odd<std::uint8_t>(word) == lanes(127, 128));
  CHECK(sub_lanes(lanes(-255, 255), lanes(0, -255)) == lanes(-255, 510));
  CHECK(dual_mac(lanes(-255, 255), lanes(-255, 255), 7) == 7 + 2 * 255 * 255);
  CHECK(dual_mac(lanes(-255, 255), lanes(255, 255), std::numeric_limits<std::int32_t>::min() / 2) ==
        std::numeric_limits<std::int32_t>::min() / 2);
  // The im2col column's order: depths r, r + 2 in one word, r + 1, r + 3 in the next.
  CHECK(column_index<10>(0) == 0);
  CHECK(column_index<10>(1) == 2);
  CHECK(column_index<10>(2) == 1);
  CHECK(column_index<10>(3) == 3);
  CHECK(column_index<10>(6) == 5);
  CHECK(column_index<10>(8) == 8);
  CHECK(column_index<10>(9) == 9);
  // integer_bias_float, which the mcu backend uses, gives integer_bias's integers: ties, values
  // past 2^22 and 2^23 where float rounding changes step, and past int32's range.
  for (float b : {0.f, 0.5f, 1.5f, -2.5f, 3.49999f, 4194304.5f, -4194305.5f, 8388607.5f, 8388609.f, 1e9f, 3e9f, -3e9f,
                  123.456f, -0.0001f})
    for (float sw : {1.f, 0.37f, 1e-4f}) CHECK(detail::quant::integer_bias_float(b, 1.f, sw) == detail::quant::integer_bias(b, 1.f, sw));
  // round_small is round half to even, as std::nearbyint in the default rounding mode.
  for (float v : {-255.5f, -2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 254.5f, 3.49999f, -3.50001f})
    CHECK(detail::quant::round_small(v) == std::nearbyint(v));
}
