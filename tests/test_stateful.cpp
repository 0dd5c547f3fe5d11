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

// A decoder with a fixed-size KV cache, token by token: its logits at each position equal the
// whole causal forward pass's. One attention block (2 heads of 4, width 8), a vocabulary of 11,
// at most 6 positions. The cache is carried by `stateful`; each step writes its key and value
// at the position given as an input (`where` of a one-hot row) and attends to the positions up
// to it.
namespace kv {
constexpr int T = 6, D = 8, H = 2, DH = 4, V = 11;
using tok = weight<"tok", f32, V, D>;
using pos = weight<"pos", f32, T, D>;
using wq = weight<"wq", f32, D, D>;
using wk = weight<"wk", f32, D, D>;
using wv = weight<"wv", f32, D, D>;
using wo = weight<"wo", f32, D, D>;
using iota_col = literal<dims<T, 1>, 0.f, 1.f, 2.f, 3.f, 4.f, 5.f>;
using iota_row = literal<dims<1, T>, 0.f, 1.f, 2.f, 3.f, 4.f, 5.f>;

// heads of a [rows, D] value: [H, rows, DH]
template <class X, int Rows>
using heads = transpose<reshape<X, Rows, H, DH>, 1, 0, 2>;
template <class X, int Rows>
using merged = reshape<transpose<X, 1, 0, 2>, Rows, D>;

// The whole sequence at once, causal: logits [T, V].
namespace full {
using ids = input<"ids", i64, T>;
using x = add<embedding<tok, ids>, pos>;                                          // [T, D]
using scores = multiply<matmul<heads<dense<x, wq>, T>, heads<dense<x, wk>, T>, {.transpose_b = true}>, scalar<0.5f>>;
using causal = less_equal<iota_row, iota_col>;                                      // [T, T]: j <= i
using att = softmax<where<causal, scores, scalar<-1e9f>>>;                          // [H, T, T]
using y = add<x, dense<merged<matmul<att, heads<dense<x, wv>, T>>, T>, wo>>;
using logits = matmul<y, tok, {.transpose_b = true}>;                               // tied head
using net = model<logits>;
}  // namespace full

// One token at position `at` (an i64 [1]), the caches [T, D] in and out.
namespace step {
using id = input<"id", i64, 1>;
using at = input<"at", i64, 1>;
using cache_k = input<"k", f32, T, D>;
using cache_v = input<"v", f32, T, D>;
using x = add<embedding<tok, id>, embedding<pos, at>>;                              // [1, D]
using here = equal<iota_col, cast<at, f32>>;                                        // [T, 1]: the one-hot row
using k_next = where<here, dense<x, wk>, cache_k>;                                  // [T, D]
using v_next = where<here, dense<x, wv>, cache_v>;
using scores = multiply<matmul<heads<dense<x, wq>, 1>, heads<k_next, T>, {.transpose_b = true}>, scalar<0.5f>>;
using seen = less_equal<iota_row, cast<at, f32>>;                                   // [1, T]
using att = softmax<where<seen, scores, scalar<-1e9f>>>;                            // [H, 1, T]
using y = add<x, dense<merged<matmul<att, heads<v_next, T>>, 1>, wo>>;
using logits = matmul<y, tok, {.transpose_b = true}>;                               // [1, V]
using net = model<output<"logits", logits>, output<"k_next", k_next>, output<"v_next", v_next>>;
}  // namespace step

weight_set weights() {
  static std::vector<std::vector<float>> data;
  data.clear();
  weight_set s;
  const auto add = [&](const char* name, std::int64_t rows, std::int64_t cols, unsigned seed) {
    data.emplace_back(static_cast<std::size_t>(rows * cols));
    unsigned v = seed;
    for (float& f : data.back()) {
      v = v * 1103515245u + 12345u;
      f = static_cast<float>((v >> 16) % 2001) / 1000.f - 1.f;
    }
    s.add(name, data.back(), {rows, cols});
  };
  add("tok", V, D, 1);
  add("pos", T, D, 2);
  add("wq", D, D, 3);
  add("wk", D, D, 4);
  add("wv", D, D, 5);
  add("wo", D, D, 6);
  return s;
}
}  // namespace kv

TEST_CASE_TEMPLATE("a KV cache decode, token by token, equals the whole causal forward pass", B, reference, cpu) {
  const weight_set w = kv::weights();
  const std::vector<std::int64_t> ids{3, 7, 1, 10, 0, 5};
  compiled<kv::full::net, B> whole;
  whole.bind(w);
  std::vector<float> want(kv::T * kv::V);
  whole.run(ids, want);

  stateful<compiled<kv::step::net, B>, carry<"k", "k_next">, carry<"v", "v_next">> decoder;
  decoder.bind(w);
  for (std::int64_t t = 0; t < kv::T; ++t) {
    std::vector<float> logits(kv::V);
    decoder.run(std::vector<std::int64_t>{ids[static_cast<std::size_t>(t)]}, std::vector<std::int64_t>{t}, logits);
    for (int v = 0; v < kv::V; ++v)
      CHECK(logits[static_cast<std::size_t>(v)] ==
            doctest::Approx(want[static_cast<std::size_t>(t * kv::V + v)]).epsilon(1e-5));
  }
  // A new sequence after reset: the first token's logits again.
  decoder.reset();
  std::vector<float> first(kv::V);
  decoder.run(std::vector<std::int64_t>{ids[0]}, std::vector<std::int64_t>{0}, first);
  CHECK(first[0] == doctest::Approx(want[0]).epsilon(1e-5));
}

TEST_CASE("stateful wraps a static_executable too: a running sum over calls") {
  // acc_next = acc + x: the state is the sum of every x so far.
  using x = input<"x", f32, 3>;
  using acc = input<"acc", f32, 3>;
  using net = model<output<"acc_next", add<acc, x>>>;
  stateful<static_executable<net, no_static_weights, cpu>, carry<"acc", "acc_next">> sum;
  static_assert(decltype(sum)::num_inputs == 1 && decltype(sum)::num_outputs == 0);
  for (int k = 1; k <= 4; ++k) sum.run(std::vector<float>{1.f, 2.f, static_cast<float>(k)});
  CHECK(std::vector<float>(sum.state<float>("acc").begin(), sum.state<float>("acc").end()) ==
        std::vector<float>{4.f, 8.f, 10.f});
}
