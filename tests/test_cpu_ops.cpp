// cpu: the dense composites it fuses are formed; it obeys the conformance law on every op alone
// and fused, and on the law's small networks (the convolutions: test_cpu_conv.cpp).
#include <doctest/doctest.h>

#include <laws/conformance.hpp>

using namespace partita;
namespace nets = laws::nets;

static_assert(count_functions<compiled<nets::dense_bias_relu, cpu>::module, "cpu.dense_bias_act"> == 1);
static_assert(count_functions<compiled<nets::dense_bias, cpu>::module, "cpu.dense_bias"> == 1);
static_assert(count_functions<compiled<nets::dense_bias_add_tanh, cpu>::module, "cpu.dense_bias_add_act"> == 1);
static_assert(count_functions<compiled<nets::dense_bias_add, cpu>::module, "cpu.dense_bias_add"> == 1);
static_assert(compiled<nets::dense_bias_add, cpu>::num_steps == 1);
static_assert(compiled<nets::mlp, cpu>::num_steps == 3, "the MLP: three fused steps");

PARTITA_CONFORMANCE_LAW_PART(cpu, op_models)
PARTITA_CONFORMANCE_LAW_PART(cpu, network_models)
