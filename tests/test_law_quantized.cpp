// The conformance law on the quantized models (laws/conformance_quantized.hpp): the reference
// against itself, bit for bit, and cpu, whose integer composites claim every model, within 1 in
// the last place of the reference's QDQ evaluation. Their own translation unit: the models
// instantiate the integer kernels, which the other laws' files do not need.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include <laws/conformance.hpp>
#include <laws/conformance_quantized.hpp>

using namespace partita;
namespace qnets = laws::nets::quantized_net;

// Every model runs as integer composites on cpu, not as its float fallback.
static_assert(count_functions<compiled<model<qnets::conv_tensor>, cpu>::module, "cpu.qconv2d_bias_act"> == 1);
static_assert(count_functions<compiled<model<qnets::conv_channel>, cpu>::module, "cpu.qconv2d_bias_act"> == 1);
static_assert(count_functions<compiled<model<qnets::depthwise>, cpu>::module, "cpu.qconv2d_bias_act"> == 1);
static_assert(compiled<model<qnets::residual>, cpu>::num_steps == 2, "the residual block: a qconv and a qadd");
static_assert(count_functions<compiled<model<qnets::dense_u8>, cpu>::module, "cpu.qdense_bias_act"> == 1);
static_assert(count_functions<compiled<model<qnets::matmul_i8>, cpu>::module, "cpu.qmatmul"> == 1);
static_assert(count_functions<compiled<model<qnets::add_i8>, cpu>::module, "cpu.qadd"> == 1);
static_assert(count_functions<compiled<model<qnets::relu6_i8>, cpu>::module, "cpu.qclamp"> == 1);
static_assert(count_functions<compiled<model<qnets::global_pool>, cpu>::module, "cpu.qpool2d"> == 1);
static_assert(count_functions<compiled<model<qnets::concat>, cpu>::module, "cpu.qconcat"> == 1);

TEST_CASE("reference obeys the conformance law: quantized_models") {
  laws::conformance<reference>::check<laws::quantized_models>();
}

TEST_CASE("cpu obeys the conformance law: quantized_models") { laws::conformance<cpu>::check<laws::quantized_models>(); }

namespace {
// Whether the reference's results of `Net` on the law's weights and integer inputs drawn over
// their range reach both ends of the output dtype's range (the saturation the law must see).
template <class Net>
bool saturates_both_ends() {
  const laws::oracle o = laws::make_oracle<model<Net>>(7);
  std::mt19937 gen(1);
  std::vector<std::vector<std::int8_t>> ins;
  std::vector<const float*> in_ptrs;
  for (const laws::input_spec& s : o.inputs) {
    std::uniform_int_distribution<int> value(static_cast<int>(lowest_of(s.type)), static_cast<int>(highest_of(s.type)));
    ins.emplace_back(s.elements);
    for (std::int8_t& v : ins.back()) v = static_cast<std::int8_t>(value(gen));
    in_ptrs.push_back(reinterpret_cast<const float*>(ins.back().data()));
  }
  const laws::output_spec out = o.outputs[0];
  std::vector<float> y((out.elements + sizeof(float) - 1) / sizeof(float));
  float* out_ptr = y.data();
  o.run(o.exe.get(), in_ptrs.data(), &out_ptr);
  bool low = false, high = false;
  for (std::size_t i = 0; i < out.elements; ++i) {
    const std::int64_t v = laws::detail::integer_at(y.data(), i, out.type);
    low = low || v == lowest_of(out.type);
    high = high || v == highest_of(out.type);
  }
  return low && high;
}
}  // namespace

TEST_CASE("the quantized models meant to saturate reach both ends of their range") {
  CHECK(saturates_both_ends<qnets::conv_channel>());
  CHECK(saturates_both_ends<qnets::saturating_conv>());
  CHECK(saturates_both_ends<qnets::dense_i8>());
  CHECK(saturates_both_ends<qnets::add_i8>());
  CHECK(saturates_both_ends<qnets::matmul_u8>());
  CHECK(saturates_both_ends<qnets::global_pool>());
}
