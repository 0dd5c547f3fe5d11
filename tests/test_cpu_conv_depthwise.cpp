// cpu obeys the conformance law on the second part of the conv2d models: depthwise convolutions
// alone and fused with their expansion or projection, channels-last chains, Winograd's 3×3s and
// convolutions fused with their pooling (the first part, and which composites form:
// test_cpu_conv.cpp). Two files, so that the law's heaviest list compiles on two cores.
#include <doctest/doctest.h>

#include <laws/conformance.hpp>

using partita::cpu;

PARTITA_CONFORMANCE_LAW_PART(cpu, conv_depthwise_part)
