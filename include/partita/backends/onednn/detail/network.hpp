#pragma once
/// The oneDNN primitives of one partition, built at bind and run by `run`.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "partita/backends/onednn/detail/layout_name.hpp"
#include "partita/backends/onednn/detail/program.hpp"
#include "partita/core/shape.hpp"
#include "partita/core/detail/concat.hpp"

namespace partita::detail::onednn {

using ::dnnl::memory;

inline memory::dims dims_of(const shape& s) { return memory::dims(s.dims.begin(), s.dims.begin() + s.rank); }

/// Row-major f32: Partita's own layout (NCHW, [N, features], ...).
inline memory::desc plain(const memory::dims& d) {
  memory::dims strides(d.size(), 1);
  for (std::size_t i = d.size(); i-- > 1;) strides[i - 1] = strides[i] * d[i];
  return {d, memory::data_type::f32, strides};
}

/// Layout left to the primitive (blocked formats for conv2d and dense operands).
inline memory::desc any(const memory::dims& d) { return {d, memory::data_type::f32, memory::format_tag::any}; }

inline ::dnnl::algorithm eltwise_algorithm(op_id op) {
  switch (op) {
    case op_id::clip: return ::dnnl::algorithm::eltwise_clip;
    case op_id::sigmoid: return ::dnnl::algorithm::eltwise_logistic;
    case op_id::tanh: return ::dnnl::algorithm::eltwise_tanh;
    default: return ::dnnl::algorithm::eltwise_relu;
  }
}

inline ::dnnl::algorithm binary_algorithm(op_id op) {
  switch (op) {
    case op_id::subtract: return ::dnnl::algorithm::binary_sub;
    case op_id::multiply: return ::dnnl::algorithm::binary_mul;
    default: return ::dnnl::algorithm::binary_add;
  }
}

/// One partition as oneDNN primitives, built once from its layers and weights.
///
/// Each value keeps the memories holding it: the first as produced, the others reordered
/// copies for readers that want another layout. Parameters and results are plain memories
/// over the caller's buffers ("external": their handles are set by `run`); a result whose
/// producer chose the plain layout is written there directly, any other is reordered there
/// last. A residual summed by a `sum` post-op is added in place when nothing reads it later.
/// One scratchpad serves every primitive. `run` builds nothing and allocates no tensor memory.
///
/// (A single class: its layer builders share the value forms, the lifetimes, the engine and
/// the scratchpad, so they are members rather than free functions passing all of it around.)
class network {
 public:
  network(const ::dnnl::engine& eng, const ::dnnl::stream& strm, std::span<const layer> layers,
          std::span<const result> results, const float* const* in)
      : eng_(eng), strm_(strm), layers_(layers), results_(results), in_(in) {
    values_.resize(layers.size());
    output_of_.assign(layers.size(), -1);
    for (std::size_t k = 0; k < results.size(); ++k)
      if (output_of_[static_cast<std::size_t>(results[k].value)] < 0)
        output_of_[static_cast<std::size_t>(results[k].value)] = static_cast<int>(k);
    landed_.assign(results.size(), false);
    find_lifetimes();
    for (std::size_t i = 0; i < layers.size(); ++i) {
      try {
        build(static_cast<int>(i), layers[i]);
      } catch (const ::dnnl::error& e) {
        throw std::runtime_error(concat("oneDNN cannot run ", label(layers[i]), ": ", e.what()));
      }
    }
    for (std::size_t k = 0; k < results.size(); ++k) {
      if (landed_[k]) continue;
      const value& v = values_[static_cast<std::size_t>(results[k].value)];
      const memory::desc md = plain(v.dims);
      const form* from = &v.forms[0];
      for (const form& f : v.forms)
        if (f.mem.get_desc() == md) from = &f;  // a copy rather than a reorder
      copy(from->mem, external(md, true, static_cast<int>(k), results[k].offset), "result");
    }
    share_scratchpad();
    values_ = {};
    in_ = nullptr;
  }

  /// Runs the partition: `in` holds its parameters, `out` receives its results.
  void run(const float* const* in, float* out) {
    for (external_memory& x : externals_) {
      auto* base = x.output ? reinterpret_cast<std::byte*>(out)
                            : reinterpret_cast<std::byte*>(const_cast<float*>(in[x.index]));  // read only
      void* handle = base + x.offset;
      if (handle != x.current) {
        ::dnnl::error::wrap_c_api(dnnl_memory_set_data_handle(x.mem.get(), handle), "partita: onednn: could not set a buffer");
        x.current = handle;
      }
    }
    for (const step& s : steps_) {
      const dnnl_status_t status =
          dnnl_primitive_execute(s.prim.get(), strm_.get(), static_cast<int>(s.args.size()), s.args.data());
      ::dnnl::error::wrap_c_api(status, "partita: onednn: could not execute a primitive");
    }
    strm_.wait();
  }

  /// One line per primitive: what it computes, oneDNN's implementation and the layouts it chose.
  std::string describe() const {
    std::string r;
    for (const step& s : steps_) (r += s.note) += '\n';
    return r;
  }
  std::size_t num_primitives() const { return steps_.size(); }

 private:
  struct form {
    memory mem;
    bool external = false;
  };
  struct value {
    memory::dims dims;
    std::vector<form> forms;
  };
  // A primitive with its arguments, held as the C API takes them so that `run` builds nothing.
  struct step {
    ::dnnl::primitive prim;
    std::vector<dnnl_exec_arg_t> args;
    std::vector<memory> held;
    memory::desc scratchpad;
    std::string note;
  };
  struct external_memory {
    memory mem;
    bool output = false;  // else a parameter
    int index = 0;
    std::size_t offset = 0;
    void* current = nullptr;
  };

  // "conv2d [1, 64, 56, 56] -> [1, 64, 56, 56]", for errors.
  static std::string label(const layer& l) {
    std::string s(name_of(l.op));
    if (l.op != op_id::param) s += concat(" ", to_string(l.in), " ->");
    return concat(s, " ", to_string(l.out));
  }

  // Lifetimes by storage: a view shares its source's.
  void find_lifetimes() {
    const std::size_t n = layers_.size();
    root_.resize(n);
    last_use_.assign(n, -1);
    for (std::size_t i = 0; i < n; ++i) {
      const layer& l = layers_[i];
      root_[i] = is_view(l.op) ? root_[static_cast<std::size_t>(l.src)] : static_cast<int>(i);
      for (int r : {l.src, l.src2, l.residual})
        if (r >= 0) last_use_[static_cast<std::size_t>(root_[static_cast<std::size_t>(r)])] = static_cast<int>(i);
    }
    for (const result& r : results_)
      last_use_[static_cast<std::size_t>(root_[static_cast<std::size_t>(r.value)])] = static_cast<int>(n);
  }

  void build(int i, const layer& l) {
    value& v = values_[static_cast<std::size_t>(i)];
    v.dims = dims_of(l.out);
    switch (l.op) {
      case op_id::param: v.forms = {{external(plain(v.dims), false, l.index, 0), true}}; break;
      case op_id::flatten:
      case op_id::reshape: view(i, l); break;
      case op_id::conv2d:
      case op_id::dense: gemm(i, l); break;
      case op_id::max_pool2d:
      case op_id::avg_pool2d:
      case op_id::global_avg_pool2d: pool(i, l); break;
      case op_id::add:
      case op_id::subtract:
      case op_id::multiply:
      case op_id::bias_add: binary(i, l); break;
      case op_id::batch_norm: batch_norm(i, l); break;
      case op_id::softmax: softmax(i, l); break;
      default: eltwise(i, l); break;
    }
  }

  memory external(const memory::desc& md, bool output, int index, std::size_t offset) {
    memory m(md, eng_, DNNL_MEMORY_NONE);
    externals_.push_back({m, output, index, offset, nullptr});
    return m;
  }

  // A fresh memory for layer i's result; a result of the partition goes straight to the
  // caller's buffer when the primitive chose the plain layout.
  form fresh(int i, const memory::desc& md) {
    const int k = output_of_[static_cast<std::size_t>(i)];
    if (k >= 0 && !landed_[static_cast<std::size_t>(k)] && md == plain(md.dims())) {
      landed_[static_cast<std::size_t>(k)] = true;
      return {external(md, true, k, results_[static_cast<std::size_t>(k)].offset), true};
    }
    return {memory(md, eng_), false};
  }

  // Value `i` in layout `want`: an existing form, or a reordered copy made now (in the caller's
  // buffer when the value is a result of the partition and `want` is plain).
  const form& as(int i, const memory::desc& want) {
    value& v = values_[static_cast<std::size_t>(i)];
    for (const form& f : v.forms)
      if (f.mem.get_desc() == want) return f;
    form f = fresh(i, want);
    copy(v.forms[0].mem, f.mem, "reorder");
    v.forms.push_back(std::move(f));
    return v.forms.back();
  }

  memory::desc produced(int i) const { return values_[static_cast<std::size_t>(i)].forms[0].mem.get_desc(); }

  void copy(const memory& from, const memory& to, std::string_view why) {
    const ::dnnl::reorder::primitive_desc pd(eng_, from.get_desc(), eng_, to.get_desc(), attributes({}));
    step s{::dnnl::reorder(pd), {}, {}, pd.scratchpad_desc(), {}};
    arg(s, DNNL_ARG_FROM, from);
    arg(s, DNNL_ARG_TO, to);
    note(s, why, "", from.get_desc(), {}, to.get_desc());
    steps_.push_back(std::move(s));
  }

  // A weight's values (`data`, plain `dims`) in the layout `want`: reordered once, at bind.
  memory weight(const float* data, const memory::dims& dims, const memory::desc& want) {
    memory user(plain(dims), eng_, const_cast<float*>(data));  // read only
    memory m(want, eng_);
    ::dnnl::reorder(user, m).execute(strm_, user, m);
    strm_.wait();
    return m;
  }

  static ::dnnl::primitive_attr attributes(const ::dnnl::post_ops& ops) {
    ::dnnl::primitive_attr a;
    a.set_post_ops(ops);
    a.set_scratchpad_mode(::dnnl::scratchpad_mode::user);
    return a;
  }

  static ::dnnl::post_ops post_ops_of(const layer& l) {
    ::dnnl::post_ops ops;
    for (int k = 0; k < l.num_post; ++k) {
      const post_op& p = l.post[static_cast<std::size_t>(k)];
      if (p.op == op_id::add) {
        ops.append_sum(1.0f);
      } else {
        const bool clip = p.op == op_id::clip;
        ops.append_eltwise(1.0f, eltwise_algorithm(p.op), clip ? p.lo : 0.f, clip ? p.hi : 0.f);
      }
    }
    return ops;
  }

  static void arg(step& s, int kind, const memory& m) {
    s.held.push_back(m);
    s.args.push_back({kind, m.get()});
  }

  void push(step&& s, int i, form dst) {
    arg(s, DNNL_ARG_DST, dst.mem);
    steps_.push_back(std::move(s));
    values_[static_cast<std::size_t>(i)].forms = {std::move(dst)};
  }

  // The folded weights and bias of a conv2d or dense followed by a bias and/or a batch norm:
  // w' = w·γ/√(var+ε), b' = β + (b − mean)·γ/√(var+ε).
  void folded(const layer& l, std::vector<float>& w, std::vector<float>& b) const {
    const auto units = static_cast<std::size_t>(l.out[1]);
    const float* wd = in_[l.weight];
    w.assign(wd, wd + l.wshape.elements());
    b.assign(units, 0.f);
    if (l.bias >= 0) std::copy(in_[l.bias], in_[l.bias] + units, b.begin());
    if (l.norm[0] < 0) return;
    const float *gamma = in_[l.norm[0]], *beta = in_[l.norm[1]], *mean = in_[l.norm[2]], *var = in_[l.norm[3]];
    const std::size_t per_unit = w.size() / units;
    for (std::size_t o = 0; o < units; ++o) {
      const double scale = gamma[o] / std::sqrt(static_cast<double>(var[o]) + l.epsilon);
      for (std::size_t k = 0; k < per_unit; ++k) w[o * per_unit + k] = static_cast<float>(w[o * per_unit + k] * scale);
      b[o] = static_cast<float>(beta[o] + (static_cast<double>(b[o]) - mean[o]) * scale);
    }
  }

  void gemm(int i, const layer& l) {
    const bool conv = l.op == op_id::conv2d;
    const bool has_bias = l.bias >= 0 || l.norm[0] >= 0;
    const memory::dims src = dims_of(l.in), dst = dims_of(l.out), bias = {l.out[1]};
    memory::dims w = dims_of(l.wshape);
    if (conv && l.at.groups > 1) {  // [O, I/G, KH, KW] is [G, O/G, I/G, KH, KW]
      w = {l.at.groups, l.wshape[0] / l.at.groups, l.wshape[1], l.wshape[2], l.wshape[3]};
    }
    const ::dnnl::primitive_attr attr = attributes(post_ops_of(l));
    const auto prop = ::dnnl::prop_kind::forward_inference;
    ::dnnl::primitive_desc pd;
    memory::desc src_md, w_md, b_md, dst_md;
    if (conv) {
      // Direct, not auto: oneDNN's f32 Winograd trades accuracy for speed.
      const memory::dims stride{l.at.stride[0], l.at.stride[1]}, pad{l.at.padding[0], l.at.padding[1]};
      const memory::dims pad_end{end_padding(l.at, 0), end_padding(l.at, 1)};
      const memory::dims dilation{l.at.dilation[0] - 1, l.at.dilation[1] - 1};
      const auto alg = ::dnnl::algorithm::convolution_direct;
      const auto d = has_bias ? ::dnnl::convolution_forward::desc(prop, alg, any(src), any(w), any(bias), any(dst), stride,
                                                                  dilation, pad, pad_end)
                              : ::dnnl::convolution_forward::desc(prop, alg, any(src), any(w), any(dst), stride, dilation,
                                                                  pad, pad_end);
      const ::dnnl::convolution_forward::primitive_desc cpd(d, attr, eng_);
      src_md = cpd.src_desc();
      w_md = cpd.weights_desc();
      b_md = cpd.bias_desc();
      dst_md = cpd.dst_desc();
      pd = cpd;
    } else {
      // The source in its producer's layout when oneDNN takes it (a blocked 4-D value read as
      // flat needs no reorder), else in the layout it prefers.
      ::dnnl::inner_product_forward::primitive_desc ipd;
      for (const memory::desc& s : {produced(l.src), any(src)}) {
        const auto d = has_bias ? ::dnnl::inner_product_forward::desc(prop, s, any(w), any(bias), any(dst))
                                : ::dnnl::inner_product_forward::desc(prop, s, any(w), any(dst));
        try {
          ipd = ::dnnl::inner_product_forward::primitive_desc(d, attr, eng_);
          break;
        } catch (const ::dnnl::error&) {
          if (s.data.format_kind == dnnl_format_kind_any) throw;
        }
      }
      src_md = ipd.src_desc();
      w_md = ipd.weights_desc();
      b_md = ipd.bias_desc();
      dst_md = ipd.dst_desc();
      pd = ipd;
    }

    step s{::dnnl::primitive(pd), {}, {}, pd.scratchpad_desc(), {}};
    arg(s, DNNL_ARG_SRC, as(l.src, src_md).mem);
    if (has_bias) {
      std::vector<float> wf, bf;
      folded(l, wf, bf);
      arg(s, DNNL_ARG_WEIGHTS, weight(wf.data(), w, w_md));
      arg(s, DNNL_ARG_BIAS, weight(bf.data(), bias, b_md));
    } else {
      arg(s, DNNL_ARG_WEIGHTS, weight(in_[l.weight], w, w_md));
    }
    form out;
    if (l.residual < 0) {
      out = fresh(i, dst_md);
    } else {
      // The sum post-op adds what the destination holds: the residual, in place when it is not
      // read later and is not the source or a caller's buffer.
      const form& res = as(l.residual, dst_md);
      const int r = root_[static_cast<std::size_t>(l.residual)];
      if (last_use_[static_cast<std::size_t>(r)] == i && r != root_[static_cast<std::size_t>(l.src)] && !res.external) {
        out = res;
      } else {
        const memory from = res.mem;
        out = fresh(i, dst_md);
        copy(from, out.mem, "residual");
      }
    }
    note(s, conv ? "conv2d" : "dense", pd.impl_info_str(), src_md, w_md, dst_md, &l);
    push(std::move(s), i, out);
  }

  void pool(int i, const layer& l) {
    const memory::desc src_md = produced(l.src);  // pooling takes its source's layout
    const bool global = l.op == op_id::global_avg_pool2d;
    const memory::dims kernel = global ? memory::dims{l.in[2], l.in[3]} : memory::dims{l.at.window[0], l.at.window[1]};
    const memory::dims stride = global ? memory::dims{1, 1} : memory::dims{l.at.stride[0], l.at.stride[1]};
    const memory::dims pad = global ? memory::dims{0, 0} : memory::dims{l.at.padding[0], l.at.padding[1]};
    const memory::dims pad_end = global ? memory::dims{0, 0} : memory::dims{end_padding(l.at, 0), end_padding(l.at, 1)};
    const auto alg = l.op == op_id::max_pool2d  ? ::dnnl::algorithm::pooling_max
                     : l.at.count_include_pad ? ::dnnl::algorithm::pooling_avg_include_padding
                                              : ::dnnl::algorithm::pooling_avg_exclude_padding;
    const ::dnnl::pooling_forward::desc d(::dnnl::prop_kind::forward_inference, alg, src_md, any(dims_of(l.out)), stride,
                                          kernel, pad, pad_end);
    const ::dnnl::pooling_forward::primitive_desc pd(d, attributes({}), eng_);
    step s{::dnnl::pooling_forward(pd), {}, {}, pd.scratchpad_desc(), {}};
    arg(s, DNNL_ARG_SRC, values_[static_cast<std::size_t>(l.src)].forms[0].mem);
    note(s, name_of(l.op), pd.impl_info_str(), src_md, {}, pd.dst_desc());
    push(std::move(s), i, fresh(i, pd.dst_desc()));
  }

  void eltwise(int i, const layer& l) {
    const memory::desc src_md = produced(l.src);
    const float lo = l.op == op_id::clip ? l.at.lo : 0.f, hi = l.op == op_id::clip ? l.at.hi : 0.f;
    const ::dnnl::eltwise_forward::desc d(::dnnl::prop_kind::forward_inference, eltwise_algorithm(l.op), src_md, lo, hi);
    const ::dnnl::eltwise_forward::primitive_desc pd(d, attributes({}), eng_);
    step s{::dnnl::eltwise_forward(pd), {}, {}, pd.scratchpad_desc(), {}};
    arg(s, DNNL_ARG_SRC, values_[static_cast<std::size_t>(l.src)].forms[0].mem);
    note(s, name_of(l.op), pd.impl_info_str(), src_md, {}, pd.dst_desc());
    push(std::move(s), i, fresh(i, pd.dst_desc()));
  }

  void softmax(int i, const layer& l) {
    const memory::desc src_md = produced(l.src);
    const int axis = normalize_axis(l.at.axis, l.out.rank);
    const ::dnnl::softmax_forward::desc d(::dnnl::prop_kind::forward_inference, src_md, axis);
    const ::dnnl::softmax_forward::primitive_desc pd(d, attributes({}), eng_);
    step s{::dnnl::softmax_forward(pd), {}, {}, pd.scratchpad_desc(), {}};
    arg(s, DNNL_ARG_SRC, values_[static_cast<std::size_t>(l.src)].forms[0].mem);
    note(s, "softmax", pd.impl_info_str(), src_md, {}, pd.dst_desc());
    push(std::move(s), i, fresh(i, pd.dst_desc()));
  }

  // add / subtract / multiply, and bias_add: the second operand broadcasts into the first
  // (right-aligned, as numpy does; a bias lies along its axis).
  void binary(int i, const layer& l) {
    const memory::desc src0 = produced(l.src);
    const memory::dims out = dims_of(l.out);
    memory::dims second(out.size(), 1);
    if (l.op == op_id::bias_add) {
      const int axis = normalize_axis(l.at.axis, l.out.rank);
      second[static_cast<std::size_t>(axis)] = l.out[axis];
    } else {
      for (int k = 0; k < l.in.rank; ++k) second[out.size() - static_cast<std::size_t>(l.in.rank - k)] = l.in[k];
    }
    const memory::desc src1 = second == out ? src0 : plain(second);
    memory operand;
    if (l.src2 >= 0) {
      operand = as(l.src2, src1).mem;
    } else {
      operand = weight(in_[l.weight], second, src1);
    }
    const ::dnnl::binary::desc d(binary_algorithm(l.op), src0, src1, src0);
    const ::dnnl::binary::primitive_desc pd(d, attributes(post_ops_of(l)), eng_);
    step s{::dnnl::binary(pd), {}, {}, pd.scratchpad_desc(), {}};
    arg(s, DNNL_ARG_SRC_0, values_[static_cast<std::size_t>(l.src)].forms[0].mem);
    arg(s, DNNL_ARG_SRC_1, operand);
    note(s, name_of(l.op), pd.impl_info_str(), src0, src1, pd.dst_desc(), &l);
    push(std::move(s), i, fresh(i, pd.dst_desc()));
  }

  void batch_norm(int i, const layer& l) {
    const memory::desc src_md = produced(l.src);
    const auto flags = ::dnnl::normalization_flags::use_global_stats | ::dnnl::normalization_flags::use_scale |
                       ::dnnl::normalization_flags::use_shift;
    const ::dnnl::batch_normalization_forward::desc d(::dnnl::prop_kind::forward_inference, src_md, l.epsilon, flags);
    const ::dnnl::batch_normalization_forward::primitive_desc pd(d, attributes({}), eng_);
    const memory::dims channels{l.out[1]};
    step s{::dnnl::batch_normalization_forward(pd), {}, {}, pd.scratchpad_desc(), {}};
    arg(s, DNNL_ARG_SRC, values_[static_cast<std::size_t>(l.src)].forms[0].mem);
    arg(s, DNNL_ARG_SCALE, weight(in_[l.norm[0]], channels, plain(channels)));
    arg(s, DNNL_ARG_SHIFT, weight(in_[l.norm[1]], channels, plain(channels)));
    arg(s, DNNL_ARG_MEAN, weight(in_[l.norm[2]], channels, pd.mean_desc()));
    arg(s, DNNL_ARG_VARIANCE, weight(in_[l.norm[3]], channels, pd.variance_desc()));
    note(s, "batch_norm", pd.impl_info_str(), src_md, {}, pd.dst_desc());
    push(std::move(s), i, fresh(i, pd.dst_desc()));
  }

  // flatten / reshape: the source's plain form seen with other dims (a copy only when a
  // result of the partition is a view).
  void view(int i, const layer& l) {
    const memory::desc md = plain(dims_of(l.out));
    const form base = as(l.src, plain(dims_of(l.in)));
    form f{memory(md, eng_, base.mem.get_data_handle()), false};
    if (base.external) {
      for (std::size_t k = 0; k < externals_.size(); ++k)
        if (externals_[k].mem.get() == base.mem.get()) {
          const external_memory x = externals_[k];
          f = {external(md, x.output, x.index, x.offset), true};
          break;
        }
    }
    values_[static_cast<std::size_t>(i)].forms = {f};
  }

  // One buffer, as large as the largest scratchpad, serves every primitive: they run one at a time.
  void share_scratchpad() {
    std::size_t bytes = 1;
    for (const step& s : steps_) bytes = std::max(bytes, s.scratchpad.get_size());
    scratch_ = memory({{static_cast<memory::dim>(bytes)}, memory::data_type::u8, memory::format_tag::a}, eng_);
    for (step& s : steps_)
      if (s.scratchpad.get_size() > 0) arg(s, DNNL_ARG_SCRATCHPAD, memory(s.scratchpad, eng_, scratch_.get_data_handle()));
  }

  static void note(step& s, std::string_view what, std::string_view impl, const memory::desc& src, const memory::desc& w,
                   const memory::desc& dst, const layer* l = nullptr) {
    std::string r(what);
    if (!impl.empty()) r += concat(" [", impl, "]");
    r += concat(" src ", layout(src));
    if (!w.is_zero()) r += concat(l && !is_heavy(l->op) ? " src1 " : " weights ", layout(w));
    r += concat(" dst ", layout(dst));
    if (l && l->num_post > 0) {
      r += " post-ops";
      for (int k = 0; k < l->num_post; ++k) {
        const op_id op = l->post[static_cast<std::size_t>(k)].op;
        r += concat(" ", op == op_id::add ? "sum" : name_of(op));
      }
    }
    s.note = std::move(r);
  }

  ::dnnl::engine eng_;
  ::dnnl::stream strm_;
  std::span<const layer> layers_;
  std::span<const result> results_;
  const float* const* in_;  // while building: the weights

  // While building.
  std::vector<value> values_;
  std::vector<int> output_of_, root_, last_use_;
  std::vector<bool> landed_;

  std::vector<step> steps_;
  std::vector<external_memory> externals_;
  memory scratch_;
};

}  // namespace partita::detail::onednn
