// test_cpu_int8_kernels on the int8 kernels' portable path (no AVX2 micro-kernel or
// requantization), which builds without AVX2 and must give the same outputs.
#define PARTITA_INT8_PORTABLE
#include "test_cpu_int8_kernels.cpp"

static_assert(!PARTITA_INT8_AVX2, "PARTITA_INT8_PORTABLE selects the portable path");
