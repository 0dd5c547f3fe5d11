// The conformance law (laws/conformance.hpp), obeyed by the reference backend against itself and
// by the mock accelerator (small adds and relus, a fused conv2d + bias + relu) with the reference
// as its host. cpu and oneDNN run it in their own tests (test_cpu_*.cpp, test_onednn_backend.cpp),
// npu in examples/custom_accelerator. One translation unit for both: the reference executables
// every backend is compared with are compiled once for the two.
#include <doctest/doctest.h>

#include <laws/conformance.hpp>
#include <support/mock_accelerator.hpp>

using namespace partita;
using test_backends::mock;

/// The mock runs the reference kernels: NaN and ±Inf propagate as on the reference.
template <>
struct laws::conformance_traits<mock> : laws::conformance_defaults {
  using host = reference;
};

PARTITA_CONFORMANCE_LAW(reference)
PARTITA_CONFORMANCE_LAW(mock)
