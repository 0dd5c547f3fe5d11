// The conformance law's oracles (laws/oracle.hpp): conv2d over every shape class, fused, large,
// planar direct and pointwise (the first half of conv_models).
#include <laws/oracle_groups.hpp>

PARTITA_LAW_ORACLES(conv_shape_models)
PARTITA_LAW_ORACLES(fused_conv_models)
PARTITA_LAW_ORACLES(large_conv_models)
PARTITA_LAW_ORACLES(planar_direct_models)
PARTITA_LAW_ORACLES(pointwise_conv_models)
