// cpu with its threads from OpenMP instead of its own pool (-DPARTITA_CPU_OPENMP, the mode
// bench_runtime_openmp compares with the pool): the law's networks and its convolutions large
// enough to be split, on one thread and on two.
#include <doctest/doctest.h>

#include <laws/conformance.hpp>

TEST_CASE("cpu with OpenMP's threads obeys the conformance law: networks and split convolutions") {
  using models = laws::model_list<laws::nets::small_networks, laws::nets::large_conv_models>;
  laws::conformance<partita::cpu>::check<models>();
}
