// The conformance law's oracles (laws/oracle.hpp): the layer ops alone and fused (layer_op_models)
// and the small networks (network_models).
#include <laws/oracle_groups.hpp>

PARTITA_LAW_ORACLES(dense_models)
PARTITA_LAW_ORACLES(fused_dense_models)
PARTITA_LAW_ORACLES(elementwise_models)
PARTITA_LAW_ORACLES(channel_models)
PARTITA_LAW_ORACLES(pooling_models)
PARTITA_LAW_ORACLES(layout_models)
PARTITA_LAW_ORACLES(small_networks)
PARTITA_LAW_ORACLES(aliasing_outputs)
