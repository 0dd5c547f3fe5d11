// The conformance law's oracles (laws/oracle.hpp): the tensor ops (tensor_op_models).
#include <laws/oracle_groups.hpp>

PARTITA_LAW_ORACLES(matmul_models)
PARTITA_LAW_ORACLES(movement_models)
PARTITA_LAW_ORACLES(slicing_models)
PARTITA_LAW_ORACLES(resampling_models)
PARTITA_LAW_ORACLES(asymmetric_padding_models)
PARTITA_LAW_ORACLES(convolution_models)
PARTITA_LAW_ORACLES(depth_space_models)
PARTITA_LAW_ORACLES(gather_models)
PARTITA_LAW_ORACLES(sum_models)
PARTITA_LAW_ORACLES(normalized_models)
PARTITA_LAW_ORACLES(exact_elementwise_models)
PARTITA_LAW_ORACLES(math_models)
PARTITA_LAW_ORACLES(literal_models)
PARTITA_LAW_ORACLES(boolean_models)
PARTITA_LAW_ORACLES(recurrent_models)
PARTITA_LAW_ORACLES(transformer_models)
