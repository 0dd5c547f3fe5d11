// The conformance law's oracles (laws/oracle.hpp): depthwise, channels-last, Winograd and pooled
// convolutions (the second half of conv_models).
#include <laws/oracle_groups.hpp>

PARTITA_LAW_ORACLES(depthwise_conv_models)
PARTITA_LAW_ORACLES(flat_depthwise_models)
PARTITA_LAW_ORACLES(expand_depthwise_models)
PARTITA_LAW_ORACLES(depthwise_project_models)
PARTITA_LAW_ORACLES(channels_last_models)
PARTITA_LAW_ORACLES(winograd_models)
PARTITA_LAW_ORACLES(pooled_conv_models)
