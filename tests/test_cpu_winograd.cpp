// cpu Winograd F(2×2, 3×3) (conv_winograd.hpp) against a direct sum in double: either input
// layout and either result layout, padding 0 to 2, partial tiles, channel tails, one and two
// threads (blocks or panels of output channels split between them), and inputs holding +Inf,
// -Inf and NaN next to zero weights, whose outputs must be exactly the direct sum's: ±Inf where
// one infinity meets weights of one sign, NaN where it meets a zero weight or both signs, and
// finite values beside them. (The conformance law reaches this kernel through whole models,
// whose later layers mix an infinity's outputs into NaN whichever way it came out.)
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <partita/partita.hpp>
#include <partita/backends/cpu/detail/conv/conv_winograd.hpp>

namespace {
namespace cpu = partita::detail::cpu;

constexpr cpu::conv_geometry geometry(int batch, int c, int h, int w, int o, int pad) {
  cpu::conv_geometry g;
  g.batch = batch;
  g.c = c;
  g.h = h;
  g.w = w;
  g.o = o;
  g.kh = g.kw = 3;
  g.ph = g.pw = pad;
  g.oh = h + 2 * pad - 2;
  g.ow = w + 2 * pad - 2;
  g.cg = c;
  g.og = o;
  g.k = 9 * c;
  return g;
}

constexpr float inf = std::numeric_limits<float>::infinity();

/// A value planted in the input: channel, row, column.
struct planted {
  int c, y, x;
  float value;
};

template <cpu::conv_geometry G, bool NhwcIn, bool NhwcOut>
void check(int threads, const std::vector<planted>& specials, const char* about) {
  constexpr cpu::conv_geometry g = G;
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  const std::size_t in_image = static_cast<std::size_t>(g.c) * g.h * g.w;
  const std::size_t out_image = static_cast<std::size_t>(g.o) * g.oh * g.ow;
  std::vector<float> x(in_image * g.batch), w(static_cast<std::size_t>(g.o) * g.c * 9), bias(g.o + 64, 0.f),
      residual(out_image * g.batch), y(out_image * g.batch, -7.f);
  for (float& v : x) v = dist(gen);
  // Every fifth weight zero: an infinity times it is NaN.
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = i % 5 == 0 ? 0.f : dist(gen) / std::sqrt(9.f * g.c);
  for (int o = 0; o < g.o; ++o) bias[static_cast<std::size_t>(o)] = dist(gen);
  for (float& v : residual) v = dist(gen);
  const auto in_at = [&](int b, int c, int iy, int ix) {
    return b * in_image + (NhwcIn ? (static_cast<std::size_t>(iy) * g.w + ix) * g.c + c
                                  : (static_cast<std::size_t>(c) * g.h + iy) * g.w + ix);
  };
  const auto out_at = [&](int b, int o, int oy, int ox) {
    return b * out_image + (NhwcOut ? (static_cast<std::size_t>(oy) * g.ow + ox) * g.o + o
                                    : (static_cast<std::size_t>(o) * g.oh + oy) * g.ow + ox);
  };
  for (const planted& p : specials) x[in_at(g.batch - 1, p.c, p.y, p.x)] = p.value;
  // The special values sit in the last image: in the first, nothing may come out non-finite.
  // What a padded convolution's direct sum gives, in double (whose NaN and infinities behave as
  // float's), then the bias and the residual.
  std::vector<double> want(y.size());
  for (int b = 0; b < g.batch; ++b)
    for (int o = 0; o < g.o; ++o)
      for (int oy = 0; oy < g.oh; ++oy)
        for (int ox = 0; ox < g.ow; ++ox) {
          double s = 0;
          for (int c = 0; c < g.c; ++c)
            for (int i = 0; i < 3; ++i)
              for (int j = 0; j < 3; ++j) {
                const int iy = oy - g.ph + i, ix = ox - g.pw + j;
                if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
                s += static_cast<double>(w[(static_cast<std::size_t>(o) * g.c + c) * 9 + i * 3 + j]) * x[in_at(b, c, iy, ix)];
              }
          want[out_at(b, o, oy, ox)] = s + bias[static_cast<std::size_t>(o)] + residual[out_at(b, o, oy, ox)];
        }

  std::vector<float> packed(cpu::winograd_taps_floats(g));
  cpu::pack_winograd(g, w.data(), packed.data());
  cpu::state st;
  st.set_threads(threads);
  st.need_scratch(0, cpu::winograd_scratch<G, NhwcIn>());
  cpu::epilogue e;
  e.bias = bias.data();
  cpu::winograd_conv<G, NhwcIn, NhwcOut, cpu::activation::none>(st, x.data(), packed.data(), residual.data(), e,
                                                                y.data());

  int wrong = 0, specials_out = 0;
  double worst = 0;
  std::string first;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double got = y[i], expected = want[i];
    bool ok = true;
    if (std::isnan(expected)) {
      ok = std::isnan(got);
    } else if (std::isinf(expected)) {
      ok = got == expected;
    } else {
      const double d = std::abs(got - expected) / std::max(1.0, std::abs(expected));
      worst = std::max(worst, std::isfinite(d) ? d : 1e30);
      ok = d <= 2e-6;
    }
    specials_out += std::isfinite(expected) ? 0 : 1;
    if (!ok && wrong++ == 0) first = "element " + std::to_string(i) + ": " + std::to_string(got) + " for " + std::to_string(expected);
  }
  INFO(std::string(about) << ", " << threads << " thread(s): " << wrong << " wrong, the first " << first << "; worst finite error "
             << worst);
  CHECK(wrong == 0);
  // Each planted value reaches outputs (a test whose specials fell outside every window would
  // prove nothing).
  CHECK(specials_out >= static_cast<int>(specials.size()));
}

// 20 → 36 channels (tails of a vector and a panel) on 11×13: 6 × 7 tiles in blocks of four tile
// rows and two; the last tile row and column cut by the image.
constexpr cpu::conv_geometry odd = geometry(2, 20, 11, 13, 36, 1);
// 72 → 120 on 5×7, two images: one block each, split by panels on two threads.
constexpr cpu::conv_geometry panels = geometry(2, 72, 5, 7, 120, 1);
constexpr cpu::conv_geometry unpadded = geometry(1, 16, 9, 12, 17, 0);
constexpr cpu::conv_geometry wide_pad = geometry(1, 17, 7, 9, 16, 2);

const std::vector<planted> specials = {
    {3, 0, 0, inf},                                       // a corner
    {0, 5, 6, -inf},                                      // inside
    {5, 10, 7, std::numeric_limits<float>::quiet_NaN()},  // the last row
    {19, 4, 12, inf},                                     // the last column, the last channel
    {7, 8, 3, -inf},  // the last row of the first block's windows (its outputs end at row 7)
};
const std::vector<planted> few = {{1, 2, 3, inf}, {2, 4, 4, -inf}, {0, 0, 6, std::numeric_limits<float>::quiet_NaN()}};
}  // namespace

static_assert(cpu::winograd_f2(odd) && cpu::winograd_f2(panels) && cpu::winograd_f2(unpadded) &&
              cpu::winograd_f2(wide_pad));
static_assert(!cpu::winograd_f2(geometry(1, 15, 8, 8, 16, 1)) && !cpu::winograd_f2(geometry(1, 16, 8, 8, 15, 1)),
              "fewer than 16 channels in or out: the direct kernels");
// ResNet-18's 3×3s on 7×7 (16 tiles) and on 14×14 (49) have over 1 MB of transformed weights:
// the direct kernel in depth passes instead, but with AVX on 14×14, still Winograd.
constexpr cpu::conv_geometry resnet7 = geometry(1, 512, 7, 7, 512, 1), resnet14 = geometry(1, 256, 14, 14, 256, 1);
static_assert(!cpu::winograd_f2(resnet7) && cpu::wide_depth_passes<resnet7>() &&
              cpu::winograd_f2(resnet14) == (cpu::W < 16) && cpu::wide_depth_passes<resnet14>());
static_assert(cpu::winograd_tiles(odd).blocks == 2 && cpu::winograd_tiles(panels).blocks == 1);
static_assert(cpu::winograd_by_panels<panels, true>(2) && !cpu::winograd_by_panels<panels, false>(2));

TEST_CASE("cpu Winograd F(2x2, 3x3) computes the direct sum, NaN and infinities included") {
  for (int threads : {1, 2}) {
    check<odd, true, true>(threads, specials, "NHWC to NHWC");
    check<odd, false, true>(threads, specials, "planar to NHWC");
    check<odd, true, false>(threads, specials, "NHWC to planar");
    check<panels, true, true>(threads, few, "split by panels");
    check<unpadded, true, true>(threads, few, "no padding");
    check<wide_pad, false, false>(threads, few, "padding 2, planar");
  }
}
