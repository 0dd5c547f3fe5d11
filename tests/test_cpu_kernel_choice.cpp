// cpu: one decision per op family names the kernel a step runs and why (gemm_choice.hpp,
// matmul_choice.hpp, pool_choice.hpp, conv_choice.hpp, attention_choice.hpp), the kernel
// dispatches on it, and print(plan) shows it beside the step.
#include <string>
#include <string_view>

#include <doctest/doctest.h>

#include <partita/partita.hpp>

#include <laws/conformance_models.hpp>

using namespace partita;
using detail::cpu::choose_conv_kernel;
using detail::cpu::conv_desc;
using detail::cpu::gemm_kernel_id;

namespace {

// An NCHW conv2d of one image: c → o channels, a k×k window, stride s, padding p, g groups.
constexpr conv_desc conv(int c, int o, int hw, int k, int s, int p, int g, bool nhwc_in, bool nhwc_out) {
  attrs a;
  a.stride = {s, s};
  a.padding = {p, p};
  a.groups = g;
  const int out = (hw + 2 * p - k) / s + 1;
  const shape x{4, {1, c, hw, hw}}, w{4, {o, c / g, k, k}}, y{4, {1, o, out, out}};
  return {detail::cpu::make_conv_geometry(x, w, y, a), nhwc_in, nhwc_out, false, false};
}

constexpr gemm_kernel_id kernel_of(const conv_desc& d) { return choose_conv_kernel(d).kernel; }

}  // namespace

// Channels-last steps, as MobileNetV2's and ResNet-18's chains have them.
static_assert(kernel_of(conv(32, 32, 56, 3, 1, 1, 32, true, true)) == gemm_kernel_id::depthwise_nhwc);
static_assert(kernel_of(conv(32, 192, 28, 1, 1, 0, 1, true, true)) == gemm_kernel_id::pointwise_nhwc);
static_assert(kernel_of(conv(64, 128, 56, 1, 2, 0, 1, true, true)) == gemm_kernel_id::pointwise_nhwc_strided);
static_assert(kernel_of(conv(2048, 512, 7, 1, 1, 0, 1, true, true)) == gemm_kernel_id::pointwise_nhwc);
static_assert(kernel_of(conv(4096, 512, 7, 1, 1, 0, 1, true, true)) == gemm_kernel_id::gemm_nhwc);
static_assert(kernel_of(conv(3, 32, 224, 3, 2, 1, 1, false, true)) == gemm_kernel_id::direct_nhwc);
static_assert(kernel_of(conv(64, 64, 56, 3, 1, 1, 1, true, true)) == gemm_kernel_id::winograd_f2);
static_assert(kernel_of(conv(64, 128, 56, 3, 2, 1, 1, true, true)) == gemm_kernel_id::wide_nhwc);
static_assert(kernel_of(conv(1024, 1024, 7, 3, 1, 1, 32, true, true)) == gemm_kernel_id::wide_nhwc);  // ResNeXt's
// Planar steps.
static_assert(kernel_of(conv(64, 64, 7, 3, 1, 1, 1, true, false)) == gemm_kernel_id::winograd_f2);
static_assert(kernel_of(conv(64, 128, 14, 3, 2, 1, 1, true, false)) == gemm_kernel_id::wide_planar);
static_assert(kernel_of(conv(3, 16, 32, 3, 1, 1, 1, false, false)) == gemm_kernel_id::planar_direct);
static_assert(kernel_of(conv(32, 32, 28, 3, 1, 1, 32, false, false)) == gemm_kernel_id::depthwise_planar);
static_assert(kernel_of(conv(320, 1280, 7, 1, 1, 0, 1, false, false)) == gemm_kernel_id::pointwise_planar);
static_assert(kernel_of(conv(16, 96, 112, 1, 1, 0, 1, false, false)) == gemm_kernel_id::in_place);
static_assert(kernel_of(conv(64, 64, 224, 3, 2, 1, 2, false, false)) == gemm_kernel_id::phase_planes);

TEST_CASE("each conv2d kernel comes with the reason it was chosen") {
  const auto winograd = choose_conv_kernel(conv(64, 64, 56, 3, 1, 1, 1, true, true));
  CHECK(detail::cpu::name_of(winograd.kernel) == "winograd_f2");
  CHECK(winograd.reason == "3x3 of stride 1 writing NHWC: Winograd F(2x2,3x3)");
  const auto pointwise = choose_conv_kernel(conv(320, 1280, 7, 1, 1, 0, 1, false, false));
  CHECK(pointwise.reason == "1x1 of stride 1, depth 96+, 64+ outputs: matmul on packed weights");
  CHECK(detail::cpu::choose_dense_kernel().kernel == gemm_kernel_id::dense_panels);
}

TEST_CASE("a pooled wide conv2d with no residual pools its own sums") {
  conv_desc d = conv(6, 16, 14, 5, 1, 0, 1, false, false);
  CHECK(kernel_of(d) == gemm_kernel_id::wide_planar);
  d.pooled = true;
  CHECK(kernel_of(d) == gemm_kernel_id::wide_pooled);
  d.residual = true;
  CHECK(kernel_of(d) == gemm_kernel_id::wide_planar);
}

using first_layer = conv2d<input<"x", f32, 1, 3, 32, 32>, weight<"w", f32, 16, 3, 3, 3>, {.padding = {1, 1}}>;
using grouped = conv2d<relu<first_layer>, weight<"g", f32, 16, 8, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}, .groups = 2}>;

TEST_CASE("print(plan) shows each cpu conv2d step's kernel and reason, the one its kernel runs") {
  using exe = compiled<model<grouped>, cpu>;
  const std::string text = print(exe::plan);
  INFO(text);
  REQUIRE(exe::num_steps == 2);
  for (const plan_step& s : exe::plan.steps) {
    REQUIRE_FALSE(s.note.kernel.empty());
    const std::string shown = "  [" + std::string(s.note.kernel) + ": " + std::string(s.note.reason) + "]\n";
    CHECK(text.find(shown) != std::string::npos);
  }
  // The kernel a step runs is the one its note names.
  CHECK(detail::cpu::name_of(cpu::kernel<step_ref<exe::module::value, exe::plan, 0>>::chosen) ==
        exe::plan.steps[0].note.kernel);
  CHECK(detail::cpu::name_of(cpu::kernel<step_ref<exe::module::value, exe::plan, 1>>::chosen) ==
        exe::plan.steps[1].note.kernel);
  MESSAGE(text);
}

// The law's channels-last models for the deep 1×1, the grouped convolutions and the
// squeeze-and-excite scaling (tests/laws/conformance_models.hpp) run the kernels and layouts
// they are there to check, so that the law cannot pass without them.
namespace {
// Whether a step of `Exe` noted with `kernel` writes a value of shape `out` in `layout`.
template <class Exe>
constexpr bool has_step(std::string_view kernel, const shape& out, tensor_layout layout) {
  for (const plan_step& s : Exe::plan.steps)
    if (Exe::plan.nodes[static_cast<std::size_t>(s.node)].out == out && s.out.layout == layout &&
        s.note.kernel == kernel)
      return true;
  return false;
}
// Whether a multiply step of `Exe` writes a value of shape `out` channels-last.
template <class Exe>
constexpr bool multiplies_channels_last(const shape& out) {
  for (const plan_step& s : Exe::plan.steps) {
    const graph_node& n = Exe::plan.nodes[static_cast<std::size_t>(s.node)];
    if (n.op == op_id::multiply && n.out == out && s.out.layout == tensor_layout::channels_last) return true;
  }
  return false;
}
template <class Net>
using law_exe = compiled<model<Net>, cpu>;
}  // namespace

static_assert(has_step<law_exe<laws::nets::nhwc::hk>>("pointwise_nhwc", {4, {1, 40, 3, 3}}, tensor_layout::channels_last));
static_assert(has_step<law_exe<laws::nets::nhwc::hgw>>("wide_nhwc", {4, {1, 64, 10, 10}}, tensor_layout::channels_last));
static_assert(has_step<law_exe<laws::nets::nhwc::hgx>>("wide_nhwc", {4, {2, 96, 5, 6}}, tensor_layout::channels_last));
static_assert(multiplies_channels_last<law_exe<laws::nets::nhwc::hse>>({4, {1, 32, 9, 7}}));

// matmul: B packed at bind when it is a bound weight, per depth pass otherwise; one product, or
// one per matrix of the batch (a B shared by the batch folds it into A's rows).
namespace {
using detail::cpu::choose_matmul_kernel;
using detail::cpu::matmul_kernel_id;

constexpr matmul_kernel_id matmul_of(const shape& a, const shape& b, bool ta, bool tb, bool b_weight) {
  return choose_matmul_kernel(detail::cpu::make_matmul_geometry(a, b, ta, tb), b_weight, a.rank > 2 || b.rank > 2)
      .kernel;
}
}  // namespace

static_assert(matmul_of({2, {64, 128}}, {2, {128, 32}}, false, false, true) == matmul_kernel_id::packed_b);
static_assert(matmul_of({3, {4, 64, 128}}, {2, {128, 32}}, false, false, true) == matmul_kernel_id::packed_b);
static_assert(matmul_of({3, {4, 128, 64}}, {2, {128, 32}}, true, false, true) == matmul_kernel_id::packed_b_batched);
static_assert(matmul_of({3, {4, 64, 128}}, {3, {4, 128, 32}}, false, false, true) == matmul_kernel_id::packed_b_batched);
static_assert(matmul_of({2, {64, 128}}, {2, {32, 128}}, false, true, false) == matmul_kernel_id::packing_b);
static_assert(matmul_of({2, {128, 64}}, {2, {128, 32}}, true, false, false) == matmul_kernel_id::packing_b);
static_assert(matmul_of({4, {1, 4, 128, 64}}, {4, {1, 4, 128, 64}}, false, true, false) ==
              matmul_kernel_id::packing_b_batched);

TEST_CASE("each matmul kernel comes with the reason it was chosen") {
  using detail::cpu::make_matmul_geometry;
  const auto folded = choose_matmul_kernel(make_matmul_geometry({3, {4, 64, 128}}, {2, {128, 32}}, false, false), true, true);
  CHECK(detail::cpu::name_of(folded.kernel) == "packed_b");
  CHECK(folded.reason == "B a bound weight shared by the batch: packed at bind, the batch in A's rows");
  const auto transposed = choose_matmul_kernel(make_matmul_geometry({2, {128, 64}}, {2, {128, 32}}, true, false), false, false);
  CHECK(transposed.reason == "B computed at run: packed per depth pass; A transposed into row blocks");
}

// Pooling: NHWC windows, the 2x2 max of stride 2 with no row buffers, row buffers, and the
// reference kernel for rows too wide for them.
namespace {
using detail::cpu::choose_pool_kernel;
using detail::cpu::pool_kernel_id;

constexpr pool_kernel_id pool_of(int hw, int k, int s, int p, bool max, bool nhwc) {
  attrs a;
  a.window = {k, k};
  a.stride = {s, s};
  a.padding = {p, p};
  const int out = (hw + 2 * p - k) / s + 1;
  const detail::cpu::pool_geometry g =
      detail::cpu::make_pool_geometry(shape{4, {1, 8, hw, hw}}, shape{4, {1, 8, out, out}}, a);
  return choose_pool_kernel({g, max, false, nhwc}).kernel;
}
}  // namespace

static_assert(pool_of(112, 3, 2, 1, true, true) == pool_kernel_id::nhwc_windows);
static_assert(pool_of(28, 2, 2, 0, true, false) == pool_kernel_id::max_2x2);
static_assert(pool_of(28, 2, 2, 0, false, false) == pool_kernel_id::row_buffers);
static_assert(pool_of(112, 3, 2, 1, true, false) == pool_kernel_id::row_buffers);
static_assert(pool_of(8192, 3, 1, 1, true, false) == pool_kernel_id::reference_rows);
static_assert(pool_of(8192, 2, 2, 0, true, false) == pool_kernel_id::max_2x2);
static_assert(choose_pool_kernel({{}, false, true, true}).kernel == pool_kernel_id::channel_means_nhwc);
static_assert(choose_pool_kernel({{}, false, true, false}).kernel == pool_kernel_id::plane_means);

using pooled = max_pool2d<input<"x", f32, 1, 3, 16, 16>, {.size = {2, 2}}>;
using averaged = avg_pool2d<pooled, {.size = {3, 3}, .stride = {1, 1}, .padding = {1, 1}}>;
using projected = matmul<global_avg_pool2d<averaged>, weight<"p", f32, 1, 5>>;

TEST_CASE("print(plan) shows each cpu matmul and pooling step's kernel, the one its kernel runs") {
  using exe = compiled<model<projected>, cpu>;
  const std::string text = print(exe::plan);
  INFO(text);
  REQUIRE(exe::num_steps == 4);
  constexpr std::string_view expected[] = {"max_2x2", "row_buffers", "plane_means", "packed_b"};
  for (std::size_t i = 0; i < 4; ++i) {
    const plan_step& s = exe::plan.steps[i];
    CHECK(s.note.kernel == expected[i]);
    const std::string shown = "  [" + std::string(s.note.kernel) + ": " + std::string(s.note.reason) + "]\n";
    CHECK(text.find(shown) != std::string::npos);
  }
  CHECK(detail::cpu::name_of(cpu::kernel<step_ref<exe::module::value, exe::plan, 1>>::choice().kernel) ==
        exe::plan.steps[1].note.kernel);
  CHECK(detail::cpu::name_of(cpu::kernel<step_ref<exe::module::value, exe::plan, 3>>::chosen) ==
        exe::plan.steps[3].note.kernel);
}

// conv_transpose2d: weights packed at bind or every run; the fused pairs of convolutions: the
// layout the plan chose for the step.
static_assert(detail::cpu::choose_conv_transpose_kernel(true).kernel == detail::cpu::conv_kernel_id::transpose_packed);
static_assert(detail::cpu::choose_conv_transpose_kernel(false).kernel == detail::cpu::conv_kernel_id::transpose_packing);
static_assert(detail::cpu::choose_expand_depthwise_kernel(true).kernel ==
              detail::cpu::conv_kernel_id::expand_depthwise_rows);
static_assert(detail::cpu::choose_depthwise_project_kernel(false).kernel ==
              detail::cpu::conv_kernel_id::depthwise_project_ring);

using transposed = conv_transpose2d<input<"x", f32, 1, 4, 5, 5>, weight<"w", f32, 4, 3, 2, 2>, {.stride = {2, 2}}>;

TEST_CASE("print(plan) shows the kernel of conv_transpose2d steps and of the fused pairs of convolutions") {
  namespace nets = laws::nets;
  const auto shows = [](const std::string& text, std::string_view kernel) {
    INFO(text);
    CHECK(text.find("  [" + std::string(kernel) + ": ") != std::string::npos);
  };
  shows(print(compiled<model<transposed>, cpu>::plan), "transpose_packed");
  shows(print(compiled<model<nets::expand::d>, cpu>::plan), "expand_depthwise_panels");
  shows(print(compiled<model<nets::nhwc::he>, cpu>::plan), "expand_depthwise_rows");
  shows(print(compiled<model<nets::dwp::plain>, cpu>::plan), "depthwise_project_ring");
  shows(print(compiled<model<nets::dwp::head>, cpu>::plan), "depthwise_project_bands");
}

// The softmax composites: attention where the softmax reads Q.K and is multiplied by V.
static_assert(detail::cpu::choose_attention_kernel(true).kernel == detail::cpu::attention_kernel_id::attention_blocks);
static_assert(detail::cpu::choose_attention_kernel(false).kernel == detail::cpu::attention_kernel_id::softmax_rows);

using attended = matmul<softmax<multiply<matmul<input<"q", f32, 1, 2, 8, 4>, input<"k", f32, 1, 2, 8, 4>,
                                                {.transpose_b = true}>,
                                         scalar<0.5f>>>,
                        input<"v", f32, 1, 2, 8, 4>>;
using scaled = softmax<multiply<input<"x", f32, 3, 37>, scalar<0.125f>>>;

TEST_CASE("print(plan) shows the kernel of the softmax composites") {
  const std::string attention = print(compiled<model<attended>, cpu>::plan);
  INFO(attention);
  CHECK(attention.find("  [attention_blocks: ") != std::string::npos);
  const std::string softmax = print(compiled<model<scaled>, cpu>::plan);
  INFO(softmax);
  CHECK(softmax.find("  [softmax_rows: ") != std::string::npos);
}

TEST_CASE("the reference backend notes nothing") {
  const std::string text = print(compiled<model<first_layer>, reference>::plan);
  CHECK(text.find("]  [") == std::string::npos);
}
