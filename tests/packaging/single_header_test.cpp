// Built with single_include/ only on the include path (see partita_add_single_header_test).
#include <partita/partita.hpp>

#include <doctest/doctest.h>

TEST_CASE("the single header provides the core value types") {
  static_assert(partita::shape_of<1, 784>.elements() == 784);
  CHECK(partita::size_of(partita::f32) == 4);
}
