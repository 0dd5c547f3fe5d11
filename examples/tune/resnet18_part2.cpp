#include "resnet18_parts.hpp"

template void tune_resnet18_part<2>(std::vector<tune_result>&, int);
