// cpu: the conv2d composites it fuses are formed (batch norm folded, a broadcast residual left
// alone); it obeys the conformance law on conv2d over shapes that exercise every tail: odd sizes,
// strides, padding, dilation, groups, batches, rectangular windows, two threads, small images.
#include <doctest/doctest.h>

#include <laws/conformance.hpp>

using namespace partita;
namespace nets = laws::nets;

static_assert(count_functions<compiled<nets::conv_bias_relu, cpu>::module, "cpu.conv2d_bias_act"> == 1);
static_assert(compiled<nets::conv_bias_relu, cpu>::num_steps == 1);
static_assert(count_functions<compiled<nets::conv_bias_add_relu, cpu>::module, "cpu.conv2d_bias_add_act"> == 1);
static_assert(count_functions<compiled<nets::residual_first, cpu>::module, "cpu.conv2d_bias_add"> == 1);
static_assert(count_functions<compiled<nets::conv_bn_relu, cpu>::module, "cpu.conv2d_bias_act"> == 1,
              "batch norm folded into the weights at bind");
static_assert(count_functions<compiled<nets::broadcast_add, cpu>::module, "cpu.conv2d_bias_add"> == 0,
              "a broadcast add after conv2d is not fused");

PARTITA_CONFORMANCE_LAW_PART(cpu, conv_models)
