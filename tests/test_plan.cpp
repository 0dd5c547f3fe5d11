// Lowering and the static memory plan: steps, storage of each value, arena offsets, lifetimes.
#include <doctest/doctest.h>

#include <partita/partita.hpp>

#include <models/mlp.hpp>

using namespace partita;

namespace {

constexpr const auto& mlp = plan_of<module_of<models::mlp>, reference>::value;
static_assert(mlp.steps.size() == 8);  // 3 dense, 3 bias_add, 2 relu
static_assert(mlp.inputs.size() == 1 && mlp.inputs[0].name == "x");
static_assert(mlp.weights.size() == 6 && mlp.weights[0].name == "fc1.weight" && mlp.weights[1].name == "fc1.bias");
static_assert(mlp.weights[1].offset == 512 * 784 * 4);
static_assert(mlp.weight_bytes == detail::align_up(512 * 784 * 4) + 2048 + 512 * 512 * 4 + 2048 + 10 * 512 * 4 + 64);
// The last step writes the caller's output buffer; nothing is copied afterwards.
static_assert(mlp.steps[7].out.kind == storage::output && mlp.copies.empty());
// bias_add and relu overwrite their argument in place: one buffer per dense, and the chain needs
// only two 2 KiB slots (fc3's result reuses fc1's slot).
static_assert(mlp.buffers.size() == 3);
static_assert(mlp.arena_bytes == 2 * 2048);
static_assert(mlp.steps[1].out.offset == mlp.steps[0].out.offset && mlp.steps[2].out.offset == mlp.steps[0].out.offset);
static_assert(mlp.steps[6].out.offset == mlp.steps[0].out.offset);
static_assert(detail::arena_is_valid(mlp.buffers, mlp.arena_bytes));

// Views share storage: flatten of a step result is not a step, and an output seen through a view
// is written directly.
using img = input<"img", f32, 1, 2, 4, 4>;
using conv = relu<conv2d<img, weight<"k", f32, 3, 2, 3, 3>, {.padding = {1, 1}}>>;
constexpr const auto& fl = plan_of<module_of<model<flatten<conv>>>, reference>::value;
static_assert(fl.steps.size() == 2 && fl.copies.empty());
static_assert(fl.steps[1].out.kind == storage::output && fl.outputs[0].shp == shape_of<1, 48>);

// An input returned as an output, and one value returned twice, are copied after the last step.
constexpr const auto& cp = plan_of<module_of<model<conv, img, conv>>, reference>::value;
static_assert(cp.outputs.size() == 3 && cp.copies.size() == 2);
static_assert(cp.copies[0].from.kind == storage::input && cp.copies[0].output == 1);
static_assert(cp.copies[1].from.kind == storage::output && cp.copies[1].from.index == 0 && cp.copies[1].output == 2);

// A residual diamond keeps the shared value alive until the join.
using a = relu<img>;
using b = conv2d<a, weight<"k1", f32, 2, 2, 1, 1>>;
using c = relu<b>;
using join = add<c, a>;
constexpr const auto& dm = plan_of<module_of<model<join>>, reference>::value;
static_assert(dm.steps.size() == 4 && dm.buffers.size() == 2);       // relu<b> overwrites b in place
static_assert(dm.buffers[0].first == 0 && dm.buffers[0].last == 3);  // relu<img> read by add
static_assert(dm.arena_bytes == 2 * 128);

// No in-place write when the argument is still needed later, or is an input.
using keep = add<relu<a>, a>;
constexpr const auto& kp = plan_of<module_of<model<keep>>, reference>::value;
static_assert(kp.buffers.size() == 2 && kp.steps[1].out.offset != kp.steps[0].out.offset);
constexpr const auto& ri = plan_of<module_of<model<relu<relu<img>>>>, reference>::value;
static_assert(ri.buffers.size() == 1 && ri.steps[0].out.kind == storage::arena);  // never over an input

// Tuple projections resolve to the projected field's storage.
using tp = tuple<c, a>;
constexpr const auto& gp = plan_of<module_of<model<add<get<tp, 0>, get<get<tuple<tp>, 0>, 1>>>>, reference>::value;
static_assert(gp.steps.size() == 4);
static_assert(gp.ins[static_cast<std::size_t>(gp.steps[3].first_in)].offset == dm.ins[static_cast<std::size_t>(dm.steps[3].first_in)].offset);

// A contiguous slice starting on an alignment boundary is a view: the fields of a split along
// the channels of one image read the input where they lie (offsets 0 and 2 · 16 floats).
using chans = input<"x", f32, 1, 6, 4, 4>;
using halves = split<chans, 1, 2, 4>;
constexpr const auto& sv = plan_of<module_of<model<relu<get<halves, 0>>, relu<get<halves, 1>>>>, reference>::value;
static_assert(sv.steps.size() == 2);
static_assert(sv.ins[static_cast<std::size_t>(sv.steps[0].first_in)].kind == storage::input &&
              sv.ins[static_cast<std::size_t>(sv.steps[0].first_in)].offset == 0);
static_assert(sv.ins[static_cast<std::size_t>(sv.steps[1].first_in)].offset == 2 * 16 * 4);
static_assert(detail::slice_view_offset(shape_of<1, 6, 4, 4>, slice<chans, 1, 5, 6>::desc.at, dtype::f32) == 5 * 64);
// Not views: a start off the alignment (1 · 5 floats), an axis after one of extent 2, a step of 2.
static_assert(detail::slice_view_offset(shape_of<1, 3, 5>, slice<input<"x", f32, 1, 3, 5>, 1, 1, 3>::desc.at, dtype::f32) == -1);
static_assert(detail::slice_view_offset(shape_of<2, 16>, slice<input<"x", f32, 2, 16>, 1, 0, 16>::desc.at, dtype::f32) == -1);
static_assert(detail::slice_view_offset(shape_of<1, 8, 16>, slice<input<"x", f32, 1, 8, 16>, 1, 0, 8, 2>::desc.at, dtype::f32) == -1);
constexpr const auto& sc = plan_of<module_of<model<relu<slice<input<"x", f32, 1, 3, 5>, 1, 1, 3>>>>, reference>::value;
static_assert(sc.steps.size() == 2 && sc.steps[0].out.kind == storage::arena);  // the slice copies
// A slice of a result returned as an output: the result keeps its arena buffer (the caller's
// buffer holds only the slice) and the slice is copied out of it.
constexpr const auto& so = plan_of<module_of<model<slice<relu<chans>, 1, 2, 6>>>, reference>::value;
static_assert(so.steps.size() == 1 && so.steps[0].out.kind == storage::arena && so.copies.size() == 1);
static_assert(so.copies[0].from.kind == storage::arena && so.copies[0].from.offset == so.steps[0].out.offset + 2 * 64);

}  // namespace

TEST_CASE("greedy-by-size placement reuses memory and never overlaps live buffers") {
  std::vector<buffer_lifetime> chain;
  for (int i = 0; i < 10; ++i) chain.push_back({256, i, i + 1, 0});
  CHECK(detail::assign_offsets(chain) == 512);
  CHECK(detail::arena_is_valid(chain, 512));

  std::vector<buffer_lifetime> mixed{{1000, 0, 3, 0}, {64, 1, 1, 0}, {500, 2, 4, 0}, {2000, 4, 5, 0}, {64, 3, 5, 0}};
  const std::size_t arena = detail::assign_offsets(mixed);
  CHECK(detail::arena_is_valid(mixed, arena));
  CHECK(arena <= 1024 + 2048 + 64);
  for (const auto& x : mixed) CHECK(x.offset % alignment == 0);
}

TEST_CASE("the no-overlap check rejects overlapping, misaligned and out-of-arena buffers") {
  const std::vector<buffer_lifetime> overlapping{{128, 0, 2, 0}, {128, 1, 3, 64}};
  CHECK_FALSE(detail::arena_is_valid(overlapping, 256));
  const std::vector<buffer_lifetime> disjoint_in_time{{128, 0, 1, 0}, {128, 2, 3, 64}};
  CHECK(detail::arena_is_valid(disjoint_in_time, 256));
  const std::vector<buffer_lifetime> misaligned{{128, 0, 1, 32}};
  CHECK_FALSE(detail::arena_is_valid(misaligned, 256));
  const std::vector<buffer_lifetime> outside{{128, 0, 1, 192}};
  CHECK_FALSE(detail::arena_is_valid(outside, 256));
}
