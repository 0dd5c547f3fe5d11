// cpu attention and scaled softmax: the composites `cpu.attention` (softmax(Q·op(K) · scale +
// mask)·op(V) in one kernel, the scores never in memory) and `cpu.softmax_scaled` (softmax of a
// scaled and/or masked value in one pass) claim the forms exporters write and leave the rest to
// single ops; every fused model agrees with the reference backend (the conformance law: one and
// two threads, NaN and ±Inf) over tails of rows, keys and depths, blocks of query rows, masks
// broadcast along every axis, and scales multiplied, divided, literal or bound.
#include <doctest/doctest.h>

#include <cstdint>

#include <laws/conformance.hpp>

using namespace partita;

namespace attention_nets {
template <std::int64_t... D>
using q = input<"q", f32, D...>;
template <std::int64_t... D>
using k = input<"k", f32, D...>;
template <std::int64_t... D>
using v = input<"v", f32, D...>;
template <std::int64_t... D>
using mask = input<"mask", f32, D...>;
constexpr matmul_attrs tb{.transpose_b = true};

// The encoder's form: heads of 64, Kᵀ read in place, a literal scale.
using encoder = model<matmul<softmax<multiply<matmul<q<1, 4, 128, 64>, k<1, 4, 128, 64>, tb>, scalar<0.125f>>>,
                             v<1, 4, 128, 64>>>;
// Rows, keys and depths off every tile; divided by the scale; a padding mask per batch and key.
using tails = model<matmul<softmax<add<divide<matmul<q<2, 3, 17, 16>, k<2, 3, 19, 16>, tb>, scalar<4.f>>,
                                       mask<2, 1, 1, 19>>>,
                           v<2, 3, 19, 9>>>;
// K stored [depth, keys], V transposed; a mask per query and key shared by the batch.
using transposes = model<matmul<softmax<add<multiply<matmul<q<3, 10, 8>, k<3, 8, 13>>, scalar<0.3f>>, mask<10, 13>>>,
                                v<3, 5, 13>, tb>>;
// No scale, or neither scale nor mask; one matrix; a mask of one value.
using mask_only = model<matmul<softmax<add<matmul<q<2, 7, 5>, k<2, 11, 5>, tb>, mask<2, 7, 11>>>, v<2, 11, 6>>>;
using bare = model<matmul<softmax<matmul<q<33, 12>, k<40, 12>, tb>>, v<40, 20>>>;
using one_value_mask =
    model<matmul<softmax<add<multiply<matmul<q<1, 9, 4>, k<1, 6, 4>, tb>, scalar<0.5f>>, mask<1>>>, v<1, 6, 3>>>;
// Keys enough that a block holds only a few query rows: many blocks per matrix.
using long_keys = model<matmul<softmax<multiply<matmul<q<1, 40, 8>, k<1, 9000, 8>, tb>, scalar<0.35f>>>, v<1, 9000, 3>>>;
// The scale a bound one-element weight, the mask a weight of the scores' shape.
using bound_scale = model<matmul<softmax<add<multiply<matmul<q<2, 2, 6, 8>, k<2, 2, 6, 8>, tb>, weight<"scale", f32, 1>>,
                                             weight<"bias", f32, 2, 2, 6, 6>>>,
                                 v<2, 2, 6, 8>>>;

// Heads read where they lie: Q, K and V split from one projection along its features, each
// reshaped to heads and transposed (a BERT encoder's form), the result's heads merged back by
// a transpose: one step that copies none of them. Sequence and head depth off every tile.
template <class X, std::int64_t B, std::int64_t S, std::int64_t H, std::int64_t D>
using split_heads = transpose<reshape<X, B, S, H, D>, 0, 2, 1, 3>;
using qkv = split<input<"x", f32, 2, 13, 3 * 4 * 6>, -1, 4 * 6, 4 * 6, 4 * 6>;
template <int I>
using head = split_heads<get<qkv, I>, 2, 13, 4, 6>;
using heads = model<
    reshape<transpose<matmul<softmax<multiply<matmul<head<0>, head<1>, tb>, scalar<0.4f>>>, head<2>>, 0, 2, 1, 3>, 2, 13, 24>>;
// Separate Q, K and V inputs split into heads, K stored [depth, keys] per head, V's heads of
// another depth, a mask; the result left per head.
using k_columns = transpose<reshape<k<1, 7, 3 * 5>, 1, 7, 3, 5>, 0, 2, 3, 1>;  // [1, 3, 5, 7]
using heads_separate = model<matmul<softmax<add<matmul<split_heads<q<1, 9, 3 * 5>, 1, 9, 3, 5>, k_columns>, mask<1, 1, 1, 7>>>,
                                    split_heads<v<1, 7, 3 * 11>, 1, 7, 3, 11>>>;

// Softmax alone, scaled and/or masked: rows of tails and of whole vectors.
using softmax_scaled = model<softmax<multiply<input<"x", f32, 3, 37>, scalar<0.125f>>>>;
using softmax_divided_masked = model<softmax<add<divide<input<"x", f32, 2, 4, 23>, scalar<3.f>>, mask<2, 1, 23>>>>;
using softmax_masked = model<softmax<add<input<"x", f32, 5, 64>, mask<5, 1>>>>;
using softmax_short = model<softmax<multiply<input<"x", f32, 6, 3>, scalar<-2.f>>>>;
}  // namespace attention_nets

template <class Net>
using cpu_module = compiled<Net, cpu>::module;

// Each attention form is one step of the attention composite.
static_assert(count_functions<cpu_module<attention_nets::encoder>, "cpu.attention"> == 1);
static_assert(compiled<attention_nets::encoder, cpu>::num_steps == 1);
static_assert(compiled<attention_nets::tails, cpu>::num_steps == 1);
static_assert(compiled<attention_nets::transposes, cpu>::num_steps == 1);
static_assert(compiled<attention_nets::mask_only, cpu>::num_steps == 1);
static_assert(compiled<attention_nets::bare, cpu>::num_steps == 1);
static_assert(compiled<attention_nets::bound_scale, cpu>::num_steps == 1);
static_assert(compiled<attention_nets::heads, cpu>::num_steps == 1);
static_assert(compiled<attention_nets::heads_separate, cpu>::num_steps == 1);
static_assert(count_functions<cpu_module<attention_nets::softmax_divided_masked>, "cpu.softmax_scaled"> == 1);
static_assert(compiled<attention_nets::softmax_divided_masked, cpu>::num_steps == 1);

namespace {
using namespace attention_nets;
// What the kernels cannot take stays single ops: a softmax over another axis, a scale of more
// than one value, Q transposed, K broadcast over the heads, a mask of another score's shape.
using other_axis = model<softmax<multiply<input<"x", f32, 4, 6>, scalar<2.f>>, 0>>;
using vector_scale = model<softmax<multiply<input<"x", f32, 4, 6>, weight<"s", f32, 6>>>>;
using q_transposed = model<matmul<softmax<matmul<q<1, 8, 5>, k<1, 8, 7>, matmul_attrs{.transpose_a = true}>>, v<1, 7, 3>>>;
using k_broadcast = model<matmul<softmax<matmul<q<2, 5, 8>, k<1, 6, 8>, tb>>, v<2, 6, 3>>>;
static_assert(count_functions<cpu_module<other_axis>, "cpu.softmax_scaled"> == 0);
static_assert(count_functions<cpu_module<vector_scale>, "cpu.softmax_scaled"> == 0);
static_assert(count_functions<cpu_module<q_transposed>, "cpu.attention"> == 0);
static_assert(count_functions<cpu_module<k_broadcast>, "cpu.attention"> == 0);

using attention_models = laws::model_list<
    laws::model_group<"attention fused", encoder, tails, transposes, mask_only, bare, one_value_mask, long_keys,
                      bound_scale, heads, heads_separate>,
    laws::model_group<"softmax fused with its scale and mask", softmax_scaled, softmax_divided_masked, softmax_masked,
                      softmax_short>,
    laws::model_group<"attention and softmax forms left to single ops", other_axis, vector_scale, q_transposed,
                      k_broadcast>>;
}  // namespace

TEST_CASE("cpu attention and scaled softmax agree with the reference backend, on one and two threads, with NaN and ±Inf") {
  laws::conformance<cpu>::check<attention_models>();
}
