#include "resnet18_parts.hpp"

template void tune_resnet18_part<0>(std::vector<tune_result>&, int);
