// The conformance law (laws/conformance.hpp), obeyed by the reference backend against itself and
// by the test backends: the mock accelerator (small adds and relus, a fused conv2d + bias + relu)
// and the graph compiler (whole partitions), each with the reference as its host. cpu and oneDNN
// run it in their own tests (test_cpu_*.cpp, test_onednn_backend.cpp), npu in
// examples/custom_accelerator. One translation unit: the reference executables that every
// backend is compared with are compiled once for all three.
#include <doctest/doctest.h>

#include <laws/conformance.hpp>
#include <support/graph_compiler.hpp>
#include <support/mock_accelerator.hpp>

using namespace partita;
using test_backends::graph_npu;
using test_backends::mock;

/// Both run the reference kernels: NaN and ±Inf propagate as on the reference.
template <>
struct laws::conformance_traits<mock> : laws::conformance_defaults {
  using host = reference;
};
template <>
struct laws::conformance_traits<graph_npu> : laws::conformance_defaults {
  using host = reference;
};

PARTITA_CONFORMANCE_LAW(reference)
PARTITA_CONFORMANCE_LAW(mock)
PARTITA_CONFORMANCE_LAW(graph_npu)
