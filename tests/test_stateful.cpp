// State carried across runs (`stateful`, runtime/stateful.hpp): a GRU run block by block equals
// the whole-sequence run; reset, reading and writing a state; bad arguments leave it as it was.
#include <cmath>
#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

#include <partita/partita.hpp>

using namespace partita;

namespace {
// A GRU "denoiser": per frame of 3 features, a GRU of 5 units and a sigmoid mask of the frame.
using w = weight<"w", f32, 1, 15, 3>;
using r = weight<"r", f32, 1, 15, 5>;
using b = weight<"b", f32, 1, 30>;
using mask_w = weight<"m", f32, 3, 5>;
constexpr recurrent_attrs torch_gru{.linear_before_reset = true};

template <int Frames, class... State>
struct denoiser {
  using x = input<"x", f32, Frames, 1, 3>;
  using layer = gru<x, w, r, b, torch_gru, State...>;
  using gains = sigmoid<dense<reshape<get<layer, 0>, Frames, 5>, mask_w>>;  // [frames, 3]
  using clean = multiply<reshape<x, Frames, 3>, gains>;
};
using block = denoiser<4, input<"h", f32, 1, 1, 5>>;
using streaming_net = model<output<"y", block::clean>, output<"h_next", get<block::layer, 1>>>;
using whole_net = model<denoiser<12>::clean>;

weight_set weights() {
  static std::vector<float> wv(45), rv(75), bv(30), mv(15);
  for (int i = 0; i < 45; ++i) wv[i] = 0.1f * static_cast<float>((i * 7) % 11 - 5);
  for (int i = 0; i < 75; ++i) rv[i] = 0.05f * static_cast<float>((i * 5) % 13 - 6);
  for (int i = 0; i < 30; ++i) bv[i] = 0.02f * static_cast<float>(i % 7 - 3);
  for (int i = 0; i < 15; ++i) mv[i] = 0.2f * static_cast<float>(i % 5 - 2);
  weight_set s;
  s.add("w", wv, {1, 15, 3}).add("r", rv, {1, 15, 5}).add("b", bv, {1, 30}).add("m", mv, {3, 5});
  return s;
}

std::vector<float> frames() {
  std::vector<float> x(36);
  for (int i = 0; i < 36; ++i) x[static_cast<std::size_t>(i)] = 0.3f * static_cast<float>((i * 3) % 7 - 3);
  return x;
}

template <class B>
using streaming = stateful<compiled<streaming_net, B>, carry<"h", "h_next">>;

// The stream in blocks of 4 frames, through `s`.
template <class S>
std::vector<float> in_blocks(S& s, const std::vector<float>& x) {
  std::vector<float> all;
  for (std::size_t k = 0; k < x.size(); k += 12) {
    std::vector<float> y(12);
    s.run(std::vector<float>(x.begin() + static_cast<std::ptrdiff_t>(k), x.begin() + static_cast<std::ptrdiff_t>(k + 12)), y);
    all.insert(all.end(), y.begin(), y.end());
  }
  return all;
}
}  // namespace

static_assert(streaming<cpu>::num_inputs == 1 && streaming<cpu>::num_outputs == 1);
static_assert(streaming<cpu>::input(0).name == "x" && streaming<cpu>::output(0).name == "y");
static_assert(streaming<cpu>::state_bytes == 64);  // 5 floats, aligned

TEST_CASE_TEMPLATE("a stream run block by block equals the whole sequence run at once", B, reference, cpu) {
  compiled<whole_net, B> whole;
  whole.bind(weights());
  std::vector<float> want(36);
  whole.run(frames(), want);
  streaming<B> s;
  s.bind(weights());
  const std::vector<float> got = in_blocks(s, frames());
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
  // reset: the next stream starts from zeros again, and gives the same output.
  s.reset();
  CHECK(in_blocks(s, frames()) == got);
}

TEST_CASE("the state can be read and set; a run that fails leaves it as it was") {
  streaming<cpu> s;
  s.bind(weights());
  const std::vector<float> x = frames();
  std::vector<float> y(12);
  s.run(std::vector<float>(x.begin(), x.begin() + 12), y);
  const std::vector<float> after_one(s.state<float>("h").begin(), s.state<float>("h").end());
  CHECK(std::any_of(after_one.begin(), after_one.end(), [](float v) { return v != 0.f; }));
  // A buffer of the wrong size: the error names the input, and the state did not move.
  std::vector<float> short_block(11);
  CHECK_THROWS_WITH_AS(s.run(short_block, y), doctest::Contains("input 0 'x'"), error);
  CHECK(std::vector<float>(s.state<float>("h").begin(), s.state<float>("h").end()) == after_one);
  CHECK_THROWS_WITH_AS(s.state<float>("y"), doctest::Contains("no carry reads the input 'y'"), error);
  CHECK_THROWS_WITH_AS(s.state<std::int64_t>("h"), doctest::Contains("holds f32 elements"), error);
  // Setting a state: a second wrapper continues the first one's stream.
  streaming<cpu> t;
  t.bind(weights());
  std::copy(after_one.begin(), after_one.end(), t.state<float>("h").begin());
  std::vector<float> ys(12), yt(12);
  const std::vector<float> second(x.begin() + 12, x.begin() + 24);
  s.run(second, ys);
  t.run(second, yt);
  CHECK(ys == yt);
}
