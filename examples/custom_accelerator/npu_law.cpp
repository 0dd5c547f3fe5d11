// The npu backend obeys Partita's conformance law (tests/laws/conformance.hpp): every model of
// the law's list, run on npu with a host for what it leaves, gives the reference backend's
// results. A backend written outside Partita tests itself the same way: it states what its runs
// need in `laws::conformance_traits`, then names itself.
#include <doctest/doctest.h>

#include <laws/conformance.hpp>

#include "npu_backend.hpp"

using custom::npu;

/// The reference runs what npu leaves (the law checks npu's kernels; main.cpp's host, cpu, would
/// compile more slowly). toy_npu's relu maps NaN to 0 and its convolution skips the zero padding
/// that the reference multiplies (an infinity next to it gives NaN there): npu's law stays on
/// finite inputs.
template <>
struct laws::conformance_traits<npu> : laws::conformance_defaults {
  using host = partita::reference;
  static constexpr bool special_values = false;
};

PARTITA_CONFORMANCE_LAW(npu)
