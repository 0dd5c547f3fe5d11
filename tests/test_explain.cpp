// The placement report (explain<Model, Backends...>): where each op runs, how, in which
// partition, and why every other backend does not run it, for each reason the flow can have.
#include <doctest/doctest.h>

#include <string>

#include <partita/partita.hpp>

using namespace partita;

namespace {

// An accelerator with one composite (conv2d → relu) that also runs conv2d, relu and add alone.
struct npu : reference {
  static constexpr fixed_string name = "npu";
  static constexpr bool host = false;
  static constexpr bool supports(const op_view& v) { return v.is(op_id::conv2d) || v.is(op_id::relu) || v.is(op_id::add); }
  using patterns = pattern_table<composite<"npu.conv_relu", relu_p<conv2d_p<any, constant>>>>;
};
using img = input<"img", f32, 1, 2, 5, 5>;
using conv = conv2d<img, weight<"k", f32, 2, 2, 3, 3>, {.padding = {1, 1}}>;

// conv → relu is npu's composite; softmax only the host runs; the add is npu's alone, but its
// region cannot join the composite's: the softmax between them would close a cycle.
using net = model<add<softmax<relu<conv>, 1>, relu<conv>>>;
constexpr auto basic = explain<net, npu, reference>();
static_assert(basic.ops.size() == 4 && basic.backends[0] == "npu" && basic.backends[1] == "reference");
static_assert(basic.first(op_id::conv2d).how == placement::composite && basic.first(op_id::conv2d).pattern == "npu.conv_relu");
static_assert(basic.first(op_id::conv2d).backend == "npu" && basic.first(op_id::conv2d).partition.name() == "npu_main_0");
static_assert(basic.first(op_id::relu).root == basic.first(op_id::relu).node);  // the composite's root
static_assert(basic.why_not(basic.first(op_id::conv2d), "reference").why == refusal::host_only_rest);
static_assert(basic.first(op_id::softmax).how == placement::host && basic.first(op_id::softmax).backend == "reference");
static_assert(basic.why_not(basic.first(op_id::softmax), "npu").why == refusal::unsupported);
static_assert(basic.first(op_id::add).how == placement::supports && basic.first(op_id::add).partition.name() == "npu_main_1");
static_assert(basic.first(op_id::add).merge_blocked_with == basic.first(op_id::relu).node);
static_assert(basic.first(op_id::add).merge_blocked_through == basic.first(op_id::softmax).node);

// An interior value used outside: npu2 has the composite but runs only adds alone, so the conv,
// whose value the add also reads, stays on the host, and the report says which use escaped.
struct npu2 : npu {
  static constexpr fixed_string name = "npu2";
  static constexpr bool supports(const op_view& v) { return v.is(op_id::add); }
};
using escaping = model<add<relu<conv>, conv>>;
constexpr auto esc = explain<escaping, npu2, reference>();
static_assert(esc.first(op_id::conv2d).backend == "reference");
static_assert(esc.why_not(esc.first(op_id::conv2d), "npu2").why == refusal::escapes);
static_assert(esc.why_not(esc.first(op_id::conv2d), "npu2").node == esc.first(op_id::conv2d).node);
static_assert(esc.why_not(esc.first(op_id::conv2d), "npu2").user == esc.first(op_id::add).node);
static_assert(esc.why_not(esc.first(op_id::conv2d), "npu2").root == esc.first(op_id::relu).node);

// A predicate that refuses: the pattern matched, and the report names it.
struct never {
  static constexpr bool check(const match_view&) { return false; }
};
struct picky : npu2 {
  static constexpr fixed_string name = "picky";
  using patterns = pattern_table<composite<"picky.conv_relu", relu_p<conv2d_p<any, constant>>, never>>;
};
constexpr auto pick = explain<model<relu<conv>>, picky, reference>();
static_assert(pick.why_not(pick.first(op_id::relu), "picky").why == refusal::predicate);
static_assert(pick.why_not(pick.first(op_id::relu), "picky").pattern == "picky.conv_relu");

// Priority: two backends that both run add alone; a composite of one takes an op the other supports.
struct adder : reference {
  static constexpr fixed_string name = "adder";
  static constexpr bool host = false;
  static constexpr bool supports(const op_view& v) { return v.is(op_id::add) || v.is(op_id::conv2d); }
};
constexpr auto prio = explain<model<add<relu<conv>, img>>, npu, adder, reference>();
static_assert(prio.first(op_id::add).backend == "npu");
static_assert(prio.why_not(prio.first(op_id::add), "adder").why == refusal::earlier_backend);
static_assert(prio.why_not(prio.first(op_id::conv2d), "adder").why == refusal::composite_first);
static_assert(prio.why_not(prio.first(op_id::conv2d), "adder").pattern == "npu.conv_relu");

// Pinned: on<reference, ...> keeps the relu on the host; npu's composite cannot take it.
constexpr auto pinned = explain<model<on<reference, relu<conv>>>, npu, reference>();
static_assert(pinned.first(op_id::relu).how == placement::pinned && pinned.first(op_id::relu).backend == "reference");
static_assert(pinned.why_not(pinned.first(op_id::relu), "npu").why == refusal::pinned_elsewhere);
static_assert(pinned.first(op_id::conv2d).backend == "npu" && pinned.first(op_id::conv2d).how == placement::supports);

// Given back: npu prunes partitions without a conv2d or dense; a host fallback refuses those
// with one.
struct pruning : npu {
  using post_partition = pass_list<passes::prune_partitions<"npu">>;
};
constexpr auto pruned = explain<net, pruning, reference>();
static_assert(pruned.first(op_id::add).how == placement::given_back && pruned.first(op_id::add).backend == "reference");
static_assert(pruned.why_not(pruned.first(op_id::add), "npu").why == refusal::given_back);
static_assert(pruned.why_not(pruned.first(op_id::add), "npu").pass == "prune_partitions");
static_assert(pruned.first(op_id::conv2d).how == placement::composite && pruned.first(op_id::add).partition.name().empty());
struct single_ops_only : npu {
  static constexpr bool accepts(const partition_view& p) { return p.heavy_ops() == 0; }
  using post_partition = pass_list<passes::host_fallback<single_ops_only>>;
};
constexpr auto fallback = explain<net, single_ops_only, reference>();
static_assert(fallback.why_not(fallback.first(op_id::conv2d), "npu").pass == "host_fallback");
static_assert(fallback.first(op_id::add).backend == "npu");

}  // namespace

TEST_CASE("the placement report prints each op, where it runs, and why not elsewhere") {
  const std::string text = to_string(basic);
  CHECK(text.find("%2 conv2d -> npu (composite npu.conv_relu at %3, in npu_main_0)") != std::string::npos);
  CHECK(text.find("%4 softmax -> reference (host)\n    not npu: no pattern matched it, and supports() refused it") != std::string::npos);
  CHECK(text.find("not merged with %3's region: %4 runs elsewhere between them (a cycle)") != std::string::npos);
  const std::string e = to_string(esc);
  CHECK(e.find("not npu2: pattern npu.conv_relu matched at %3, but the value of %2 is used by %4 outside it") != std::string::npos);
  CHECK(to_string(pruned).find("not npu: its partition was given back to the host by prune_partitions") != std::string::npos);
}

namespace {

// A quantized convolution whose activations are quantized per channel: cpu's integer composite
// matches it but its predicate refuses, so it runs in float, and the report says why.
using qx = input<"x", u8, 1, 3, 9, 9>;
using qw = dequantize<weight<"w", i8, 8, 3, 3, 3>, scalar<0.1f>, int_scalar<i8, 0>>;
template <class X>
using qconv = quantize<relu<conv2d<X, qw>>, scalar<0.2f>, int_scalar<u8, 0>>;
using per_channel_x = dequantize<qx, weight<"xs", f32, 3>, weight<"xz", u8, 3>>;
constexpr auto refused_q = explain<model<qconv<per_channel_x>>, cpu>();
static_assert(refused_q.first(op_id::conv2d).how == placement::host);
static_assert(refused_q.first(op_id::conv2d).unfused.why == refusal::predicate);
// A dequantize read by two composites is copied into each, as MergeComposite does.
using shared_x = dequantize<qx, scalar<0.1f>, int_scalar<u8, 3>>;
constexpr auto shared_q =
    explain<model<qconv<shared_x>, quantize<max_pool2d<shared_x, {.size = {3, 3}}>, scalar<0.1f>, int_scalar<u8, 3>>>, cpu>();
static_assert(shared_q.first(op_id::conv2d).pattern == "cpu.qconv2d_bias_act");
static_assert(shared_q.first(op_id::max_pool2d).pattern == "cpu.qpool2d");

}  // namespace

TEST_CASE("the placement report says why a matched pattern did not fuse an op") {
  const std::string text = to_string(refused_q);
  CHECK(text.find("conv2d -> cpu (host)\n    not fused: pattern cpu.qconv2d_bias_act matched at %") != std::string::npos);
  CHECK(text.find(", but its predicate refused") != std::string::npos);
}
