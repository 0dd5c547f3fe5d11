#pragma once
// A BERT-style encoder as Partita types: token ids "ids" i64[1, 128] in, 10 logits out. Weight
// names are the state_dict names of export.py's PyTorch model, so its weights bind unchanged:
// token and learned position embeddings, LayerNorm, two torch.nn.TransformerEncoderLayer
// (post-norm, 4 heads, exact GELU), a tanh pooler on the first token and a linear classifier.
#include <cstddef>
#include <cstdint>

#include <partita/partita.hpp>

namespace transformer {
using namespace partita;

inline constexpr std::int64_t vocab = 1000, seq = 128, d_model = 256, heads = 4, head_dim = d_model / heads,
                              d_ff = 1024, classes = 10;

/// torch.nn.Linear named P on the last axis of X: `P.weight` is [Out, In], `P.bias` is [Out].
template <class X, fixed_string P, std::int64_t Out, std::int64_t In>
using linear = bias_add<dense<X, weight<cat(P, ".weight"), f32, Out, In>>, weight<cat(P, ".bias"), f32, Out>, -1>;

/// torch.nn.LayerNorm(d_model) named P.
template <class X, fixed_string P, float Eps = 1e-5f>
using norm = layer_norm<X, weight<cat(P, ".weight"), f32, d_model>, weight<cat(P, ".bias"), f32, d_model>, -1, Eps>;

/// [1, seq, d_model] -> [1, heads, seq, head_dim], and back.
template <class X>
using split_heads = transpose<reshape<X, 1, seq, heads, head_dim>, 0, 2, 1, 3>;
template <class X>
using merge_heads = reshape<transpose<X, 0, 2, 1, 3>, 1, seq, d_model>;

/// torch.nn.TransformerEncoderLayer named P (post-norm, exact GELU, no dropout) on X, which is
/// [1, seq, d_model]; `out` is its result.
template <class X, fixed_string P>
struct encoder_layer {
  // PyTorch packs the q, k and v projections into one [3 d_model, d_model] weight
  // (`in_proj_weight`): one dense, then split along the features.
  struct qkv : split<bias_add<dense<X, weight<cat(P, ".self_attn.in_proj_weight"), f32, 3 * d_model, d_model>>,
                              weight<cat(P, ".self_attn.in_proj_bias"), f32, 3 * d_model>, -1>,
                     -1, d_model, d_model, d_model> {};
  using q = split_heads<get<qkv, 0>>;
  using k = split_heads<get<qkv, 1>>;
  using v = split_heads<get<qkv, 2>>;
  // softmax(q kᵀ / sqrt(head_dim)) per head: [1, heads, seq, seq].
  struct probs : softmax<multiply<matmul<q, k, matmul_attrs{.transpose_b = true}>, scalar<0.125f>>> {};
  struct attention : linear<merge_heads<matmul<probs, v>>, cat(P, ".self_attn.out_proj"), d_model, d_model> {};
  struct x1 : norm<add<X, attention>, cat(P, ".norm1")> {};
  struct feed_forward : linear<gelu<linear<x1, cat(P, ".linear1"), d_ff, d_model>>, cat(P, ".linear2"), d_model, d_ff> {};
  struct out : norm<add<x1, feed_forward>, cat(P, ".norm2")> {};
};

using ids = input<"ids", i64, 1, seq>;

// Named nodes keep symbols and diagnostics short and check the model layer by layer.
// The positions are 0..seq-1, so the position table is added whole (broadcast over the batch).
struct embeddings : norm<add<embedding<weight<"tok_emb.weight", f32, vocab, d_model>, ids>,
                             weight<"pos_emb.weight", f32, seq, d_model>>,
                         "emb_norm", 1e-12f> {};
struct layer0 : encoder_layer<embeddings, "layers.0">::out {};
struct layer1 : encoder_layer<layer0, "layers.1">::out {};
// The pooler reads the first token: x[:, 0] is slice [0, 1) of the sequence axis, squeezed.
struct pooled : tanh_<linear<squeeze<slice<layer1, 1, 0, 1>, 1>, "pooler", d_model, d_model>> {};
struct logits : linear<pooled, "classifier", classes, d_model> {};

using net = model<logits>;

static_assert(embeddings::desc.out == shape_of<1, seq, d_model>);
static_assert(encoder_layer<embeddings, "layers.0">::probs::desc.out == shape_of<1, heads, seq, seq>);
static_assert(layer1::desc.out == shape_of<1, seq, d_model>);
static_assert(logits::desc.out == shape_of<1, classes>);

}  // namespace transformer
