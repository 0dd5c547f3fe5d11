#pragma once
/// The kernels of the cpu backend's quantized composites (pattern/qdq.hpp): each reads
/// its QDQ body at compile time and runs the integer kernel it describes.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <type_traits>
#include <vector>

#include "partita/backends/cpu/detail/int8/qbody.hpp"
#include "partita/backends/cpu/detail/int8/qconv.hpp"
#include "partita/backends/cpu/detail/int8/qdense.hpp"
#include "partita/backends/cpu/detail/int8/qeltwise.hpp"
#include "partita/backends/cpu/detail/int8/qpool.hpp"
#include "partita/backends/cpu/detail/int8/requantize.hpp"
#include "partita/backends/cpu/detail/state.hpp"
#include "partita/backends/reference/quantize_kernels.hpp"
#include "partita/core/detail/concat.hpp"
#include "partita/core/error.hpp"
#include "partita/runtime/plan_records.hpp"

namespace partita::detail::cpu::int8 {

/// `cpu.qconv2d_bias_act`: quantize(act(conv2d(dequantize(x), dequantize(w)) + bias)).
template <class S>
struct qconv_kernel {
  static constexpr int conv = S::find(op_id::conv2d);
  static constexpr qnode x = qnode_of<S>(S::body_arg(conv, 0));
  static constexpr qnode w = qnode_of<S>(S::body_arg(conv, 1));
  static constexpr qnode y = qnode_of<S>(S::find(op_id::quantize));
  static constexpr int bias = bias_of<S>(conv);
  static constexpr act_bounds act = act_bounds_of<S>();
  static constexpr qconv_geometry geo = [] {
    const shape xs = S::body(S::body_arg(conv, 0)).out, ws = S::body(S::body_arg(conv, 1)).out, ys = S::body(conv).out;
    const attrs& a = *S::body(conv).at;
    return qconv_geometry{static_cast<int>(xs[0]), static_cast<int>(xs[1]), static_cast<int>(xs[2]),
                          static_cast<int>(xs[3]), static_cast<int>(ws[0]), static_cast<int>(ws[2]),
                          static_cast<int>(ws[3]), static_cast<int>(ys[2]), static_cast<int>(ys[3]),
                          a.stride[0], a.stride[1], a.padding[0], a.padding[1], a.dilation[0], a.dilation[1],
                          a.groups, x.type, w.type, y.type};
  }();
  static constexpr std::size_t packed_bytes = qconv_packed_bytes(geo);

  static void prepare(state& st, const float* const* in, int step) {
    float* packed = st.reserve(step, scratch_floats(packed_bytes));
    st.need_scratch(0, scratch_floats(qconv_scratch_bytes(geo)));
    if (!in[w.value]) return;  // planned before bind: the weights come later
    layer_storage keep;
    qconv_prepare(geo, in[w.value], layer_params<S>(in, x, w, y, bias, geo.o, act, keep), packed);
  }

  static void run(state& st, const float* const* in, float* out, int step) {
    qconv_run(st, geo, st.packed(step), in[x.value], out);
  }

  static constexpr kernel_note note() {
    return {qconv_is_depthwise(geo) ? "qconv_depthwise" : qconv_is_pointwise(geo) ? "qconv_pointwise" : "qconv_im2col",
            "u8/s8 products on 16-bit lanes, int32 sums, requantized in float"};
  }
};

/// `cpu.qdense_bias_act`: quantize(act(dense(dequantize(x), dequantize(w)) + bias)).
template <class S>
struct qdense_kernel {
  static constexpr int gemm = S::find(op_id::dense);
  static constexpr qnode x = qnode_of<S>(S::body_arg(gemm, 0));
  static constexpr qnode w = qnode_of<S>(S::body_arg(gemm, 1));
  static constexpr qnode y = qnode_of<S>(S::find(op_id::quantize));
  static constexpr int bias = bias_of<S>(gemm);
  static constexpr act_bounds act = act_bounds_of<S>();
  static constexpr qdense_geometry geo = [] {
    const shape ws = S::body(S::body_arg(gemm, 1)).out, ys = S::body(gemm).out;
    return qdense_geometry{static_cast<int>(ys.elements() / ws[0]), static_cast<int>(ws[1]), static_cast<int>(ws[0]),
                           x.type, w.type, y.type};
  }();

  static void prepare(state& st, const float* const* in, int step) {
    float* packed = st.reserve(step, scratch_floats(qdense_packed_bytes(geo)));
    st.need_scratch(0, scratch_floats(qdense_scratch_bytes(geo)));
    if (!in[w.value]) return;  // planned before bind: the weights come later
    layer_storage keep;
    qdense_prepare(geo, in[w.value], layer_params<S>(in, x, w, y, bias, geo.n, act, keep), packed);
  }
  static void run(state& st, const float* const* in, float* out, int step) {
    qdense_run(st, geo, st.packed(step), in[x.value], out);
  }
  static constexpr kernel_note note() { return {"qdense", "u8/s8 products on 16-bit lanes, int32 sums, requantized in float"}; }
};

/// `cpu.qmatmul`: quantize(act(matmul(dequantize(a), dequantize(b)))), both operands activations.
template <class S>
struct qmatmul_kernel {
  static constexpr int mm = S::find(op_id::matmul);
  static constexpr qnode a = qnode_of<S>(S::body_arg(mm, 0)), b = qnode_of<S>(S::body_arg(mm, 1));
  static constexpr qnode y = qnode_of<S>(S::find(op_id::quantize));
  static constexpr act_bounds act = act_bounds_of<S>();
  static constexpr qmatmul_geometry geo = [] {
    const shape as = S::body(S::body_arg(mm, 0)).out, bs = S::body(S::body_arg(mm, 1)).out;
    const int m = static_cast<int>(as[as.rank - 2]), k = static_cast<int>(as[as.rank - 1]);
    const int n = static_cast<int>(bs[bs.rank - 1]);
    return qmatmul_geometry{static_cast<int>(as.elements() / (m * k)), m, k, n, bs.elements() != k * n,
                            a.type, b.type, y.type};
  }();

  static void prepare(state& st, const float* const*, int) { st.need_scratch(0, scratch_floats(qmatmul_scratch_bytes(geo))); }
  static void run(state& st, const float* const* in, float* out, int) {
    const qmatmul_params p{scale_at(in, a), zp_at(in, a), scale_at(in, b), zp_at(in, b), scale_at(in, y),
                           zp_at(in, y), act.lo, act.hi};
    qmatmul_run(st, geo, p, in[a.value], in[b.value], out);
  }
  static constexpr kernel_note note() { return {"qmatmul", "both operands packed as they are read, int32 sums"}; }
};

/// `cpu.qadd`: quantize(act(dequantize(a) + dequantize(b))), both of the result's dtype and shape.
template <class S>
struct qadd_kernel {
  static constexpr int add = S::find(op_id::add);
  static constexpr qnode a = qnode_of<S>(S::body_arg(add, 0)), b = qnode_of<S>(S::body_arg(add, 1));
  static constexpr qnode y = qnode_of<S>(S::find(op_id::quantize));
  static constexpr act_bounds act = act_bounds_of<S>();
  static constexpr std::int64_t n = S::node.out.elements();
  static_assert(a.type == y.type && b.type == y.type, "partita: cpu.qadd takes operands of its result's dtype");

  static void run(state&, const float* const* in, float* out, int) {
    const qparams qy = qparams_at(in, y);
    const clamp_bounds c = output_bounds(y.type, qy.scale, qy.zp, act.lo, act.hi);
    qadd(in[a.value], qparams_at(in, a), in[b.value], qparams_at(in, b), out, qy, y.type, n, c.lo, c.hi);
  }
  static constexpr kernel_note note() { return {"qadd", "integer operands, the sum requantized in float"}; }
};

/// Requantizes `n` 8-bit values of dtype `t` in place from `from` to `to` (a no-op when equal).
inline void requantize_in_place(void* v, dtype t, std::int64_t n, qparams from, qparams to) {
  if (from.scale == to.scale && from.zp == to.zp) return;
  const void* src[] = {v};
  const std::int64_t len[] = {n};
  qconcat(src, &from, len, 1, v, to, t, 1, 1);
}

/// `cpu.qpool2d`: quantize(avg_pool2d, global_avg_pool2d or max_pool2d(dequantize(x))).
template <class S>
struct qpool_kernel {
  static constexpr int pool = S::body_arg(S::find(op_id::quantize), 0);
  static constexpr op_id op = S::body(pool).op;
  static constexpr qnode x = qnode_of<S>(S::body_arg(pool, 0));
  static constexpr qnode y = qnode_of<S>(S::find(op_id::quantize));
  static constexpr shape xs = S::body(S::body_arg(pool, 0)).out, ys = S::body(pool).out;
  static_assert(x.type == y.type, "partita: cpu.qpool2d keeps its input's dtype");

  static void run(state&, const float* const* in, float* out, int) {
    const qparams qx = qparams_at(in, x), qy = qparams_at(in, y);
    if constexpr (op == op_id::global_avg_pool2d) {
      qglobal_avg_pool2d(in[x.value], qx, out, qy, x.type, xs[0] * xs[1], xs[2] * xs[3]);
    } else {
      static constexpr attrs at = *S::body(pool).at;
      static constexpr pool_geometry g = make_pool_geometry(xs, ys, at);
      if constexpr (op == op_id::avg_pool2d) {
        qavg_pool2d(in[x.value], qx, out, qy, x.type, g);
      } else {
        // The maximum of the integers, then requantized: max commutes with quantize's
        // monotonic map.
        qmax_pool2d(in[x.value], out, x.type, g);
        requantize_in_place(out, y.type, ys.elements(), qx, qy);
      }
    }
  }
  static constexpr kernel_note note() {
    return {op == op_id::max_pool2d ? "qmax_pool" : "qavg_pool", "integer sums or maxima, requantized in float"};
  }
};

/// `cpu.qconcat`: quantize(concatenate(dequantize(a), dequantize(b), ...)).
template <class S>
struct qconcat_kernel {
  static constexpr int cat = S::body_arg(S::find(op_id::quantize), 0);
  static constexpr int count = S::body(cat).nargs;
  static constexpr qnode y = qnode_of<S>(S::find(op_id::quantize));
  static constexpr shape ys = S::body(cat).out;
  static constexpr int axis = normalize_axis(S::body(cat).at->axis, ys.rank);
  static constexpr std::array<qnode, 4> parts = [] {
    std::array<qnode, 4> p{};
    for (int i = 0; i < count; ++i) p[static_cast<std::size_t>(i)] = qnode_of<S>(S::body_arg(cat, i));
    return p;
  }();
  static constexpr std::array<std::int64_t, 4> lens = [] {
    std::array<std::int64_t, 4> l{};
    for (int i = 0; i < count; ++i) l[static_cast<std::size_t>(i)] = S::body(S::body_arg(cat, i)).out[axis];
    return l;
  }();
  static constexpr std::int64_t outer = [] {
    std::int64_t o = 1;
    for (int i = 0; i < axis; ++i) o *= ys[i];
    return o;
  }();
  static constexpr std::int64_t inner = ys.elements() / outer / ys[axis];

  static void run(state&, const float* const* in, float* out, int) {
    std::array<const void*, 4> src{};
    std::array<qparams, 4> q{};
    for (int i = 0; i < count; ++i) {
      src[static_cast<std::size_t>(i)] = in[parts[static_cast<std::size_t>(i)].value];
      q[static_cast<std::size_t>(i)] = qparams_at(in, parts[static_cast<std::size_t>(i)]);
    }
    qconcat(src.data(), q.data(), lens.data(), count, out, qparams_at(in, y), y.type, outer, inner);
  }
  static constexpr kernel_note note() { return {"qconcat", "each input requantized to the result's scale"}; }
};

/// `cpu.qclamp`, quantize(relu or clip(dequantize(x))), and `cpu.qreshape`,
/// quantize(flatten or reshape(dequantize(x))): the values copied, requantized when the two
/// quantizations differ, and clamped in integers when there is a clamp.
template <class S>
struct qunary_kernel {
  static constexpr qnode x = qnode_of<S>(S::body_arg(S::body_arg(S::find(op_id::quantize), 0), 0));
  static constexpr qnode y = qnode_of<S>(S::find(op_id::quantize));
  static constexpr act_bounds act = act_bounds_of<S>();
  static constexpr bool clamps = act.lo > -std::numeric_limits<float>::infinity() ||
                                 act.hi < std::numeric_limits<float>::infinity();
  static constexpr std::int64_t n = S::node.out.elements();
  static_assert(x.type == y.type, "partita: cpu.qclamp and cpu.qreshape keep their input's dtype");

  static void run(state&, const float* const* in, float* out, int) {
    const qparams qx = qparams_at(in, x), qy = qparams_at(in, y);
    const void* src[] = {in[x.value]};
    qconcat(src, &qx, &n, 1, out, qy, y.type, 1, 1);
    if constexpr (clamps) {
      const clamp_bounds c = output_bounds(y.type, qy.scale, qy.zp, act.lo, act.hi);
      with_byte_type(y.type, [&](auto t) {
        using T = decltype(t);
        T* v = reinterpret_cast<T*>(out);
        for (std::int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(std::clamp<std::int32_t>(v[i], c.lo, c.hi));
      });
    }
  }
  static constexpr kernel_note note() {
    return clamps ? kernel_note{"qclamp", "an integer clamp"} : kernel_note{"qreshape", "a copy, requantized if need be"};
  }
};

/// The kernel of quantized composite step S, by the composite's name (as a type tag).
template <class S>
constexpr auto quantized_kernel_tag() {
  constexpr std::string_view c = S::composite;
  if constexpr (c == "cpu.qdense_bias_act") return std::type_identity<qdense_kernel<S>>{};
  else if constexpr (c == "cpu.qmatmul") return std::type_identity<qmatmul_kernel<S>>{};
  else if constexpr (c == "cpu.qadd") return std::type_identity<qadd_kernel<S>>{};
  else if constexpr (c == "cpu.qpool2d") return std::type_identity<qpool_kernel<S>>{};
  else if constexpr (c == "cpu.qconcat") return std::type_identity<qconcat_kernel<S>>{};
  else if constexpr (c == "cpu.qclamp" || c == "cpu.qreshape") return std::type_identity<qunary_kernel<S>>{};
  else {
    static_assert(c == "cpu.qconv2d_bias_act", "partita: no integer kernel for this quantized composite (S)");
    return std::type_identity<qconv_kernel<S>>{};
  }
}
template <class S>
using quantized_kernel = typename decltype(quantized_kernel_tag<S>())::type;

}  // namespace partita::detail::cpu::int8
