// cpu built with PARTITA_CPU_WINOGRAD=0: the 3×3 convolutions of stride 1 that otherwise run
// Winograd F(2×2, 3×3) (conv_winograd.hpp) take the direct kernels, which then obey the
// conformance law on the groups that hold such convolutions: large ones split across threads,
// channels-last chains and the Winograd group itself.
#include <doctest/doctest.h>

#include <laws/conformance.hpp>

static_assert(PARTITA_CPU_WINOGRAD == 0, "built with -DPARTITA_CPU_WINOGRAD=0");
static_assert(!partita::detail::cpu::winograd_f2([] {
                partita::detail::cpu::conv_geometry g;
                g.c = g.o = 64;
                g.h = g.w = g.oh = g.ow = 56;
                g.kh = g.kw = 3;
                g.ph = g.pw = 1;
                return g;
              }()),
              "ResNet's 3×3 layer of 64 channels runs the direct kernel");

TEST_CASE("cpu without Winograd obeys the conformance law: large, channels-last and Winograd's convolutions") {
  using models =
      laws::model_list<laws::nets::large_conv_models, laws::nets::channels_last_models, laws::nets::winograd_models>;
  laws::conformance<partita::cpu>::check<models>();
}
