#include <partita/partita.hpp>

static_assert(partita::shape_of<1, 784>.elements() == 784);

int main() { return partita::size_of(partita::f32) == 4 ? 0 : 1; }
