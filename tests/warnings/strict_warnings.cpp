// The index policy, enforced: Partita's headers compile without a warning under
// -Wall -Wextra -Wsign-conversion -Wshadow (CMake builds this file with -Werror). Graph
// indices are `int` (with -1 for "none"), extents `std::int64_t`, element offsets in kernels
// `std::ptrdiff_t`; `std::size_t` appears only where the standard library wants it (container
// sizes and subscripts, byte counts), and every conversion between them is written out.
//
// Templates warn only where they are instantiated, so this file instantiates every kernel of the
// reference and cpu backends (large and small convolutions, grouped ones, dense, the fused
// composites, channels-last chains, pooling, normalization, shape ops, tuples) and every pass and
// flow, and runs them once, checking cpu against the reference; and the mcu backend's float and
// int8 kernels, the int8 ones on a small QDQ network against cpu's, bit for bit.
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include <partita/partita.hpp>

#include <models/tiny/layers.hpp>
#include <models/tiny/seeded.hpp>

namespace strict {
using namespace partita;

using img = input<"img", f32, 1, 8, 16, 16>;
using c1 = relu<add<batch_norm<conv2d<img, weight<"c1.w", f32, 16, 8, 3, 3>, {.padding = {1, 1}}>, weight<"bn.g", f32, 16>,
                               weight<"bn.b", f32, 16>, weight<"bn.m", f32, 16>, weight<"bn.v", f32, 16>>,
                    conv2d<img, weight<"sc.w", f32, 16, 8, 1, 1>>>>;
using c2 = clip<conv2d<c1, weight<"c2.w", f32, 16, 1, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}, .groups = 16}>, 0.f, 6.f>;
using p1 = max_pool2d<c2, {.size = {2, 2}}>;
// conv_transpose2d, depth_to_space, space_to_depth, conv1d and end padding, back to [1, 16, 4, 4].
using up = conv_transpose2d<p1, weight<"t.w", f32, 16, 4, 2, 2>, {.stride = {2, 2}}>;
using p1x = add<p1, space_to_depth<space_to_depth<depth_to_space<up, 2, depth_to_space_mode::crd>, 2>, 2>>;
using p1y = add<reshape<conv1d<reshape<p1x, 1, 16, 16>, weight<"c1d.w", f32, 16, 16, 3>, {.padding = 1}>, 1, 16, 4, 4>,
                conv2d<p1x, weight<"ce.w", f32, 16, 16, 2, 2>, {.padding_end = {1, 1}}>>;
using c3 = sigmoid<bias_add<conv2d<p1y, weight<"c3.w", f32, 32, 16, 3, 3>, {.padding = {1, 1}}>, weight<"c3.b", f32, 32>>>;
using p2 = avg_pool2d<c3, {.size = {2, 2}, .padding = {1, 1}}>;
using gap = flatten<global_avg_pool2d<tanh_<p2>>>;
using cat = concatenate<1, gap, reshape<gap, 1, 32>>;
using fc = dense<cat, weight<"fc.w", f32, 10, 64>>;
using out = softmax<bias_add<fc, weight<"fc.b", f32, 10>>>;
// A chain the cpu plan keeps channels-last: a 1×1 from the planar image, a strided depthwise, a
// 1×1 reading NHWC, the pooling reading NHWC.
using e1 = clip<conv2d<img, weight<"e1.w", f32, 24, 8, 1, 1>>, 0.f, 6.f>;
using d1 = conv2d<e1, weight<"d1.w", f32, 24, 1, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}, .groups = 24}>;
using gap2 = flatten<global_avg_pool2d<relu<conv2d<d1, weight<"q1.w", f32, 32, 24, 1, 1>>>>>;
// Channels-last from a first layer: the image seen as two images of four channels, a direct
// convolution writing NHWC, a fused 1×1 expansion (1 MiB per image) and depthwise convolution.
using f1 = relu<conv2d<reshape<img, 2, 4, 16, 16>, weight<"f1.w", f32, 4, 4, 3, 3>, {.padding = {1, 1}}>>;
using fe = bias_add<conv2d<f1, weight<"fe.w", f32, 1024, 4, 1, 1>>, weight<"fe.b", f32, 1024>>;
using fd = bias_add<conv2d<fe, weight<"fd.w", f32, 1024, 1, 3, 3>, {.padding = {1, 1}, .groups = 1024}>,
                    weight<"fd.b", f32, 1024>>;
// A planar first layer of two channels (the direct kernel for a few input channels).
using pd = relu<conv2d<reshape<img, 1, 2, 32, 32>, weight<"pd.w", f32, 3, 2, 5, 5>, {.padding = {2, 2}}>>;
// Depthwise convolutions fused with the projection reading them: on the first layer's NHWC
// result with a residual, and on the planar image.
using dq = add<bias_add<conv2d<relu<bias_add<conv2d<f1, weight<"dq.d", f32, 4, 1, 3, 3>, {.padding = {1, 1}, .groups = 4}>,
                                             weight<"dq.db", f32, 4>>>,
                               weight<"dq.p", f32, 4, 4, 1, 1>>,
                        weight<"dq.pb", f32, 4>>,
               f1>;
using dr = bias_add<conv2d<bias_add<conv2d<img, weight<"dr.d", f32, 8, 1, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}, .groups = 8}>,
                                    weight<"dr.db", f32, 8>>,
                           weight<"dr.p", f32, 5, 8, 1, 1>>,
                    weight<"dr.pb", f32, 5>>;
using g3 = add<add<dense<reshape<flatten<global_avg_pool2d<fd>>, 1, 2048>, weight<"g3.w", f32, 8, 2048>>,
                   dense<flatten<max_pool2d<pd, {.size = {32, 32}}>>, weight<"pd.fc", f32, 8, 3>>>,
               add<dense<reshape<flatten<global_avg_pool2d<dq>>, 1, 8>, weight<"dq.fc", f32, 8, 8>>,
                   dense<flatten<global_avg_pool2d<dr>>, weight<"dr.fc", f32, 8, 5>>>>;
using net = model<out, subtract<gap, multiply<gap, gap2>>, g3>;
// Both chains run channels-last on every instruction set: e1, d1, q1, f1, the fused pair and
// the fused projection after f1 (the one on the planar image stays planar).
static_assert([] {
  int n = 0;
  for (const plan_step& s : compiled<net, cpu>::plan.steps) n += s.out.layout == tensor_layout::channels_last ? 1 : 0;
  return n;
}() == 6);
static_assert(count_functions<compiled<net, cpu>::module, "cpu.conv2d_depthwise_project"> == 1 &&
              count_functions<compiled<net, cpu>::module, "cpu.conv2d_depthwise_project_add"> == 1);

// The sum of each output (the softmax's weighted).
template <class Exe>
std::array<double, 3> run_once(unsigned seed) {
  auto exe = std::make_unique<Exe>();
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(0.25f, 1.f);
  std::vector<std::vector<float>> data;
  weight_set w;
  for (std::size_t i = 0; i < Exe::plan.weights.size(); ++i) {
    const tensor_slot& s = Exe::weight(i);
    data.emplace_back(static_cast<std::size_t>(s.shp.elements()));
    for (float& v : data.back()) v = dist(gen);
    w.add(std::string(s.name), data.back(), std::span(s.shp.dims.data(), static_cast<std::size_t>(s.shp.rank)));
  }
  exe->bind(w);
  std::vector<float> x(8 * 16 * 16), y(10), z(32), u(8);
  for (float& v : x) v = dist(gen);
  exe->run(x, y, z, u);
  std::array<double, 3> sums{};
  // The softmax sums to 1 whatever its input: each probability is weighted by its index.
  for (std::size_t i = 0; i < y.size(); ++i) sums[0] += static_cast<double>(i + 1) * y[i];
  for (float v : z) sums[1] += v;
  for (float v : u) sums[2] += v;
  return sums;
}

// A small int8 network in QDQ form (models/tiny's int8 layers): a strided convolution, a
// depthwise-separable block, pooling, a dense layer; on mcu in place, on cpu through bind.
namespace qnet_layers {
namespace t = models::tiny;
using L = t::int8_layers;
using x = t::in<L, input<"qimg", f32, 1, 3, 10, 9>>;
using c = t::conv_relu<L, x, "q1", 8, 3, 3, 2, 1>;
using s = t::separable<L, c, "q2", 8, 12, 1>;
using logits = t::fc<L, t::flat<L, t::global_pool<L, s>>, "q3", 5, 12>;
}  // namespace qnet_layers
using qnet = model<models::tiny::out<models::tiny::int8_layers, qnet_layers::logits>>;

bool int8_agrees() {
  using table = models::tiny::seeded_weights<qnet>;
  static static_executable<qnet, table, mcu> on_mcu;
  compiled<qnet, cpu> on_cpu;
  on_cpu.bind(weight_set::of(table::tensors));
  std::array<float, 3 * 10 * 9> x{};
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 11) * 0.2f - 1.f;
  std::array<float, 5> a{}, b{};
  on_mcu.run(x, a);
  on_cpu.run(std::span<const float>(x), std::span<float>(b));
  std::printf("int8: mcu %.4f %.4f, cpu %.4f %.4f\n", static_cast<double>(a[0]), static_cast<double>(a[1]),
              static_cast<double>(b[0]), static_cast<double>(b[1]));
  return a == b;
}

// Booleans, index ops and a recurrent stream: a GRU over blocks of frames whose state a
// `stateful` wrapper carries, masked, its frames ranked, on cpu and mcu against the reference.
namespace stream_layers {
using frames = input<"frames", f32, 6, 1, 5>;
using state = input<"state", f32, 1, 1, 8>;
using layer = gru<frames, weight<"gw", f32, 1, 24, 5>, weight<"gr", f32, 1, 24, 8>, weight<"gb", f32, 1, 48>,
                  {.linear_before_reset = true}, state>;
using y = reshape<get<layer, 0>, 6, 8>;
using loud = greater<y, scalar<0.5f>>;
using kept = where<logical_and<loud, tril<loud>>, y, scalar<0.f>>;
using best = cast<get<topk<cumsum<kept, 1>, 2>, 1>, f32>;
using net = model<output<"kept", kept>, output<"best", best>, output<"peak", cast<argmax<y, 1>, f32>>,
                  output<"next", get<layer, 1>>>;
}  // namespace stream_layers

template <class Exe>
double stream_sum() {
  stateful<Exe, carry<"state", "next">> s;
  std::vector<float> w(24 * 5), r(24 * 8), b(48);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) * 0.1f - 0.3f;
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<float>(i % 5) * 0.1f - 0.2f;
  weight_set ws;
  ws.add("gw", w, {1, 24, 5}).add("gr", r, {1, 24, 8}).add("gb", b, {1, 48});
  s.bind(ws);
  std::vector<float> x(30), kept(48), best(12), peak(6);
  double sum = 0;
  for (int block = 0; block < 3; ++block) {
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i + static_cast<std::size_t>(block)) % 9) * 0.2f;
    s.run(x, kept, best, peak);
    for (float v : kept) sum += static_cast<double>(v);
    for (float v : best) sum += static_cast<double>(v);
    for (float v : peak) sum += static_cast<double>(v);
  }
  return sum;
}

}  // namespace strict

int main() {
  using namespace strict;
  const std::array<double, 3> want = run_once<compiled<net, reference>>(7);
  const std::array<double, 3> eager = run_once<compiled<net, cpu>>(7);
  const std::array<double, 3> costed = run_once<compiled<cost_partition<net, cpu>, cpu>>(7);
  const std::array<double, 3> portable = run_once<compiled<net, mcu>>(7);
  bool ok = true;
  for (std::size_t k = 0; k < want.size(); ++k) {
    std::printf("output %zu: reference %.6f, cpu %.6f, cpu after cost_partition %.6f, mcu %.6f\n", k, want[k],
                eager[k], costed[k], portable[k]);
    ok = ok && std::abs(eager[k] - want[k]) <= 1e-4 * std::abs(want[k]) &&
         std::abs(costed[k] - want[k]) <= 1e-4 * std::abs(want[k]) &&
         std::abs(portable[k] - want[k]) <= 1e-4 * std::abs(want[k]);
  }
  ok = int8_agrees() && ok;
  const double stream_ref = stream_sum<compiled<stream_layers::net, reference>>();
  const double stream_cpu = stream_sum<compiled<stream_layers::net, cpu>>();
  const double stream_mcu = stream_sum<compiled<stream_layers::net, mcu>>();
  std::printf("stream: reference %.6f, cpu %.6f, mcu %.6f\n", stream_ref, stream_cpu, stream_mcu);
  ok = ok && std::abs(stream_cpu - stream_ref) <= 1e-4 * std::abs(stream_ref) &&
       std::abs(stream_mcu - stream_ref) <= 1e-4 * std::abs(stream_ref);
  return ok ? 0 : 1;
}
