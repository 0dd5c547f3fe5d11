#include "onednn_peer.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <oneapi/dnnl/dnnl.hpp>

#include <partita/backends/onednn/detail/layout_name.hpp>

namespace peers {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

memory::desc plain(const memory::dims& d) {
  return {d, dt::f32, d.size() == 1 ? tag::a : d.size() == 2 ? tag::ab : tag::abcd};
}

memory::desc any(const memory::dims& d) { return {d, dt::f32, tag::any}; }

std::int64_t product(const memory::dims& d, std::size_t from = 0) {
  return std::accumulate(d.begin() + static_cast<std::ptrdiff_t>(from), d.end(), std::int64_t{1},
                         std::multiplies<>());
}

// The layout names in descriptions are Partita's oneDNN backend's, so both print alike.
using partita::detail::onednn::layout;

std::string join(std::string_view a, std::string_view b) {
  std::string r(a);
  r += b;
  return r;
}

}  // namespace

void fold_batch_norm(layer& l, std::span<const float> gamma, std::span<const float> beta, std::span<const float> mean,
                     std::span<const float> var, float eps) {
  const auto channels = static_cast<std::size_t>(l.channels);
  if (l.kind != layer::op::conv || gamma.size() != channels || beta.size() != channels || mean.size() != channels ||
      var.size() != channels)
    throw std::invalid_argument("peers: fold_batch_norm needs a conv layer and one parameter per output channel");
  if (l.bias.empty()) l.bias.assign(channels, 0.0f);
  const std::size_t per_channel = l.weight.size() / channels;
  for (std::size_t o = 0; o < channels; ++o) {
    const double scale = static_cast<double>(gamma[o]) / std::sqrt(static_cast<double>(var[o]) + eps);
    for (std::size_t k = 0; k < per_channel; ++k) {
      float& w = l.weight[o * per_channel + k];
      w = static_cast<float>(w * scale);
    }
    l.bias[o] = static_cast<float>(beta[o] + (static_cast<double>(l.bias[o]) - mean[o]) * scale);
  }
}

struct onednn_net::impl {
  // A value: its logical dims and the memories holding it, the first as produced and the others
  // reordered copies for consumers that want another layout.
  struct value {
    memory::dims dims;
    std::vector<memory> forms;
  };
  // A primitive with its arguments, kept as the C API wants them so that `run` builds nothing.
  struct step {
    dnnl::primitive prim;
    std::vector<dnnl_exec_arg_t> args;
    std::vector<memory> held;  // keeps the argument memories alive
    memory::desc scratchpad;
  };

  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  int threads = 1;
  memory user_in, user_out;  // their handles are the caller's buffers, set by `run`
  memory scratch;            // one scratchpad shared by every primitive
  std::vector<step> steps;
  std::vector<std::string> notes;

  // Indexed by slot(layer): the input, then each layer's result. A flatten shares its source's
  // memory, so `owner` names the value whose memory it is; `last_reader` is the last layer
  // reading that memory.
  std::vector<value> values;
  std::vector<int> owner, last_reader;

  static std::size_t slot(int i) { return static_cast<std::size_t>(i + 1); }

  impl(const memory::dims& input_dims, const std::vector<layer>& layers, int nthreads) : threads(nthreads) {
    if (layers.empty()) throw std::invalid_argument("peers: onednn_net needs at least one layer");
    omp_set_num_threads(threads);  // the primitives created below size their work for this count
    user_in = memory(plain(input_dims), eng, DNNL_MEMORY_NONE);
    values.resize(layers.size() + 1);
    values[0] = {input_dims, {user_in}};
    find_lifetimes(layers);

    for (int i = 0; i < static_cast<int>(layers.size()); ++i) {
      const layer& l = layers[static_cast<std::size_t>(i)];
      const bool last = slot(i) + 1 == values.size();
      switch (l.kind) {
        case layer::op::conv: conv(i, l, last); break;
        case layer::op::dense: dense(i, l, last); break;
        case layer::op::max_pool:
        case layer::op::global_avg_pool: pool(i, l, last); break;
        case layer::op::flatten: values[slot(i)] = values[slot(l.src)]; break;  // dense reads 4-D as flat
      }
    }
    if (!user_out) {
      user_out = memory(plain(values.back().dims), eng, DNNL_MEMORY_NONE);
      copy(values.back().forms[0], user_out, "output");
    }
    share_scratchpad();
  }

  void find_lifetimes(const std::vector<layer>& layers) {
    owner.resize(values.size());
    std::iota(owner.begin(), owner.end(), 0);
    last_reader.assign(values.size(), -1);
    for (int i = 0; i < static_cast<int>(layers.size()); ++i) {
      const layer& l = layers[static_cast<std::size_t>(i)];
      const bool has_residual = l.residual != layer::none;
      if (l.src < layer::network_input || l.src >= i ||
          (has_residual && (l.residual < layer::network_input || l.residual >= i)))
        throw std::invalid_argument("peers: layer " + std::to_string(i) + " reads a layer that is not before it");
      if (l.kind == layer::op::flatten) owner[slot(i)] = owner[slot(l.src)];
      last_reader[static_cast<std::size_t>(owner[slot(l.src)])] = i;
      if (has_residual) last_reader[static_cast<std::size_t>(owner[slot(l.residual)])] = i;
    }
  }

  void conv(int i, const layer& l, bool last) {
    const value& src = values[slot(l.src)];
    const std::int64_t oh = (src.dims[2] + 2 * l.padding - l.kernel) / l.stride + 1;
    const std::int64_t ow = (src.dims[3] + 2 * l.padding - l.kernel) / l.stride + 1;
    const memory::dims w_dims{l.channels, src.dims[1], l.kernel, l.kernel};
    const memory::dims dims{src.dims[0], l.channels, oh, ow};
    const memory::dims strides{l.stride, l.stride}, pad{l.padding, l.padding};
    dnnl::post_ops ops;
    if (l.residual != layer::none) ops.append_sum(1.0f);
    if (l.relu) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    // Direct, not auto: oneDNN's f32 Winograd trades accuracy for speed.
    const auto prop = dnnl::prop_kind::forward_inference;
    const auto alg = dnnl::algorithm::convolution_direct;
    const auto d = l.bias.empty()
                       ? dnnl::convolution_forward::desc(prop, alg, any(src.dims), any(w_dims), any(dims), strides,
                                                         pad, pad)
                       : dnnl::convolution_forward::desc(prop, alg, any(src.dims), any(w_dims), any({l.channels}),
                                                         any(dims), strides, pad, pad);
    const dnnl::convolution_forward::primitive_desc pd(d, attributes(ops), eng);

    step s{dnnl::convolution_forward(pd), {}, {}, pd.scratchpad_desc()};
    arg(s, DNNL_ARG_SRC, as(l.src, pd.src_desc()));
    arg(s, DNNL_ARG_WEIGHTS, prepared(l.weight, w_dims, pd.weights_desc()));
    if (!l.bias.empty()) arg(s, DNNL_ARG_BIAS, prepared(l.bias, {l.channels}, pd.bias_desc()));
    memory dst;
    if (l.residual == layer::none) {
      dst = result(pd.dst_desc(), last);
    } else {
      // The sum post-op adds what dst holds: the residual, in place when nothing reads it later.
      const memory res = as(l.residual, pd.dst_desc());
      const int r = owner[slot(l.residual)];
      if (last_reader[static_cast<std::size_t>(r)] == i && r != owner[slot(l.src)] && res.get() != user_in.get()) {
        dst = res;
      } else {
        dst = result(pd.dst_desc(), last);
        copy(res, dst, "residual");
      }
    }
    arg(s, DNNL_ARG_DST, dst);
    note("conv", pd.impl_info_str(), pd.src_desc(), pd.weights_desc(), pd.dst_desc());
    steps.push_back(std::move(s));
    values[slot(i)] = {dims, {dst}};
  }

  void dense(int i, const layer& l, bool last) {
    const value& src = values[slot(l.src)];
    memory::dims w_dims{l.channels};
    w_dims.insert(w_dims.end(), src.dims.begin() + 1, src.dims.end());
    const memory::dims dims{src.dims[0], l.channels};
    dnnl::post_ops ops;
    if (l.relu) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    // src in the producer's layout (a flattened blocked tensor needs no reorder), else any.
    dnnl::inner_product_forward::primitive_desc pd;
    const auto prop = dnnl::prop_kind::forward_inference;
    for (const memory::desc& src_md : {src.forms[0].get_desc(), any(src.dims)}) {
      const auto d = l.bias.empty()
                         ? dnnl::inner_product_forward::desc(prop, src_md, any(w_dims), any(dims))
                         : dnnl::inner_product_forward::desc(prop, src_md, any(w_dims), any({l.channels}), any(dims));
      try {
        pd = dnnl::inner_product_forward::primitive_desc(d, attributes(ops), eng);
        break;
      } catch (const dnnl::error&) {
        if (src_md.data.format_kind == dnnl_format_kind_any) throw;
      }
    }

    step s{dnnl::inner_product_forward(pd), {}, {}, pd.scratchpad_desc()};
    arg(s, DNNL_ARG_SRC, as(l.src, pd.src_desc()));
    arg(s, DNNL_ARG_WEIGHTS, prepared(l.weight, w_dims, pd.weights_desc()));
    if (!l.bias.empty()) arg(s, DNNL_ARG_BIAS, prepared(l.bias, {l.channels}, pd.bias_desc()));
    const memory dst = result(pd.dst_desc(), last);
    arg(s, DNNL_ARG_DST, dst);
    note("dense", pd.impl_info_str(), pd.src_desc(), pd.weights_desc(), pd.dst_desc());
    steps.push_back(std::move(s));
    values[slot(i)] = {dims, {dst}};
  }

  void pool(int i, const layer& l, bool last) {
    const value& src = values[slot(l.src)];
    const bool global = l.kind == layer::op::global_avg_pool;
    const std::int64_t kh = global ? src.dims[2] : l.kernel, kw = global ? src.dims[3] : l.kernel;
    const std::int64_t stride = global ? 1 : l.stride, padding = global ? 0 : l.padding;
    const memory::dims dims{src.dims[0], src.dims[1], (src.dims[2] + 2 * padding - kh) / stride + 1,
                            (src.dims[3] + 2 * padding - kw) / stride + 1};
    const memory::desc src_md = src.forms[0].get_desc();  // pooling takes its source's layout
    const dnnl::pooling_forward::desc d(
        dnnl::prop_kind::forward_inference,
        global ? dnnl::algorithm::pooling_avg_exclude_padding : dnnl::algorithm::pooling_max, src_md, any(dims),
        {stride, stride}, {kh, kw}, {padding, padding}, {padding, padding});
    const dnnl::pooling_forward::primitive_desc pd(d, attributes({}), eng);

    step s{dnnl::pooling_forward(pd), {}, {}, pd.scratchpad_desc()};
    arg(s, DNNL_ARG_SRC, src.forms[0]);
    const memory dst = result(pd.dst_desc(), last);
    arg(s, DNNL_ARG_DST, dst);
    note(global ? "global_avg_pool" : "max_pool", pd.impl_info_str(), src_md, {}, pd.dst_desc());
    steps.push_back(std::move(s));
    values[slot(i)] = {dims, {dst}};
  }

  static dnnl::primitive_attr attributes(const dnnl::post_ops& ops) {
    dnnl::primitive_attr a;
    a.set_post_ops(ops);
    a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return a;
  }

  static void arg(step& s, int kind, const memory& m) {
    s.held.push_back(m);
    s.args.push_back({kind, m.get()});
  }

  // A fresh memory for a layer's result; the network's result goes straight to the caller's
  // buffer when oneDNN chose the plain layout for it.
  memory result(const memory::desc& md, bool last) {
    if (last && md == plain(md.dims())) {
      user_out = memory(md, eng, DNNL_MEMORY_NONE);
      return user_out;
    }
    return memory(md, eng);
  }

  // Layer `i`'s value in layout `want`: an existing form, or a new copy made by a reorder.
  memory as(int i, const memory::desc& want) {
    value& v = values[slot(i)];
    for (const memory& m : v.forms)
      if (m.get_desc() == want) return m;
    memory m(want, eng);
    copy(v.forms[0], m, "reorder");
    v.forms.push_back(m);
    return m;
  }

  void copy(const memory& from, const memory& to, const char* why) {
    step s{dnnl::reorder(from, to), {}, {}, {}};
    arg(s, DNNL_ARG_FROM, from);
    arg(s, DNNL_ARG_TO, to);
    note(why, "", from.get_desc(), {}, to.get_desc());
    steps.push_back(std::move(s));
  }

  // Weights in oneDNN's chosen layout, reordered once, here.
  memory prepared(const std::vector<float>& data, const memory::dims& dims, const memory::desc& want) {
    if (static_cast<std::int64_t>(data.size()) != product(dims))
      throw std::invalid_argument("peers: a layer's weight has " + std::to_string(data.size()) + " values, expected " +
                                  std::to_string(product(dims)));
    memory user(plain(dims), eng, const_cast<float*>(data.data()));  // read only
    memory m(want, eng);
    dnnl::reorder(user, m).execute(strm, user, m);
    strm.wait();
    return m;
  }

  // One buffer, as large as the largest scratchpad, serves every primitive: they run one at a time.
  void share_scratchpad() {
    std::size_t bytes = 1;
    for (const step& s : steps) bytes = std::max(bytes, s.scratchpad.get_size());
    scratch = memory({{static_cast<memory::dim>(bytes)}, dt::u8, tag::a}, eng);
    for (step& s : steps)
      if (s.scratchpad.get_size() > 0)
        arg(s, DNNL_ARG_SCRATCHPAD, memory(s.scratchpad, eng, scratch.get_data_handle()));
  }

  void note(const char* what, const char* impl_name, const memory::desc& src, const memory::desc& w,
            const memory::desc& dst) {
    std::string s = what;
    if (*impl_name) s += join(join(" [", impl_name), "]");
    s += join(" src ", layout(src));
    if (!w.is_zero()) s += join(" weights ", layout(w));
    s += join(" dst ", layout(dst));
    notes.push_back(std::move(s));
  }

  void run(const float* input, float* output) {
    omp_set_num_threads(threads);
    user_in.set_data_handle(const_cast<float*>(input));  // read only
    user_out.set_data_handle(output);
    for (const step& s : steps)
      dnnl::error::wrap_c_api(
          dnnl_primitive_execute(s.prim.get(), strm.get(), static_cast<int>(s.args.size()), s.args.data()),
          "peers: could not execute a primitive");
    strm.wait();
  }
};

onednn_net::onednn_net(std::vector<std::int64_t> input_dims, std::vector<layer> layers, int threads)
    : impl_(std::make_unique<impl>(input_dims, layers, threads)) {}
onednn_net::onednn_net(onednn_net&&) noexcept = default;
onednn_net& onednn_net::operator=(onednn_net&&) noexcept = default;
onednn_net::~onednn_net() = default;

void onednn_net::run(const float* input, float* output) { impl_->run(input, output); }
std::int64_t onednn_net::input_elements() const { return product(impl_->user_in.get_desc().dims()); }
std::int64_t onednn_net::output_elements() const { return product(impl_->user_out.get_desc().dims()); }
int onednn_net::threads() const { return impl_->threads; }

std::string onednn_net::describe() const {
  std::string r;
  for (const std::string& n : impl_->notes) (r += n) += '\n';
  return r;
}

namespace {

// Builds a layer list from weights named as in the Partita models.
struct builder {
  const weight_lookup& w;
  std::vector<layer> layers;

  int add(layer l) {
    layers.push_back(std::move(l));
    return static_cast<int>(layers.size()) - 1;
  }

  std::vector<float> get(std::string_view name, std::string_view suffix, std::int64_t elements) const {
    const std::span<const float> s = fetch(w, join(name, suffix), static_cast<std::size_t>(elements));
    return {s.begin(), s.end()};
  }

  // conv `name` (name.weight, and name.bias when `bias`).
  int conv(int src, std::string_view name, std::int64_t cin, std::int64_t cout, int k, int stride, int padding,
           bool relu, bool bias = true, int residual = layer::none) {
    layer l{layer::op::conv, src, get(name, ".weight", cout * cin * k * k), {}, cout, k, stride, padding, residual,
            relu};
    if (bias) l.bias = get(name, ".bias", cout);
    return add(std::move(l));
  }

  // conv `name` without bias, then batch norm `bn`, folded.
  int conv_bn(int src, std::string_view name, std::string_view bn, std::int64_t cin, std::int64_t cout, int k,
              int stride, int padding, bool relu, int residual = layer::none) {
    const int i = conv(src, name, cin, cout, k, stride, padding, relu, false, residual);
    fold_batch_norm(layers.back(), get(bn, ".weight", cout), get(bn, ".bias", cout), get(bn, ".running_mean", cout),
                    get(bn, ".running_var", cout));
    return i;
  }

  int dense(int src, std::string_view name, std::int64_t in, std::int64_t units, bool relu) {
    return add({layer::op::dense, src, get(name, ".weight", units * in), get(name, ".bias", units), units, 1, 1, 0,
                layer::none, relu});
  }

  // a pooling or flatten layer
  int op(layer::op kind, int src, int k = 1, int stride = 1, int padding = 0) {
    return add({kind, src, {}, {}, 0, k, stride, padding, layer::none, false});
  }
};

}  // namespace

onednn_net onednn_mlp(std::int64_t batch, const weight_lookup& w, int threads) {
  builder b{w, {}};
  int x = b.dense(layer::network_input, "fc1", 784, 512, true);
  x = b.dense(x, "fc2", 512, 512, true);
  b.dense(x, "fc3", 512, 10, false);
  return onednn_net({batch, 784}, std::move(b.layers), threads);
}

onednn_net onednn_basic_block(const weight_lookup& w, int threads) {
  builder b{w, {}};
  const int in = layer::network_input;
  const int x = b.conv(in, "conv1", 64, 64, 3, 1, 1, true);
  b.conv(x, "conv2", 64, 64, 3, 1, 1, true, true, in);
  return onednn_net({1, 64, 56, 56}, std::move(b.layers), threads);
}

onednn_net onednn_lenet(const weight_lookup& w, int threads) {
  builder b{w, {}};
  int x = b.conv(layer::network_input, "conv1", 1, 6, 5, 1, 2, true);
  x = b.op(layer::op::max_pool, x, 2, 2);
  x = b.conv(x, "conv2", 6, 16, 5, 1, 0, true);
  x = b.op(layer::op::max_pool, x, 2, 2);
  x = b.op(layer::op::flatten, x);
  x = b.dense(x, "fc1", 400, 120, true);
  x = b.dense(x, "fc2", 120, 84, true);
  b.dense(x, "fc3", 84, 10, false);
  return onednn_net({1, 1, 28, 28}, std::move(b.layers), threads);
}

onednn_net onednn_resnet18(const weight_lookup& w, int threads) {
  builder b{w, {}};
  int x = b.conv_bn(layer::network_input, "conv1", "bn1", 3, 64, 7, 2, 3, true);
  x = b.op(layer::op::max_pool, x, 3, 2, 1);
  std::int64_t channels = 64;
  for (int stage = 1; stage <= 4; ++stage) {
    const std::int64_t width = std::int64_t{64} << (stage - 1);
    for (int block = 0; block < 2; ++block) {
      const std::string p = join(join("layer", std::to_string(stage)), join(".", std::to_string(block)));
      const int stride = stage > 1 && block == 0 ? 2 : 1;
      int shortcut = x;
      if (stride != 1 || channels != width)
        shortcut =
            b.conv_bn(x, join(p, ".downsample.0"), join(p, ".downsample.1"), channels, width, 1, stride, 0, false);
      const int h = b.conv_bn(x, join(p, ".conv1"), join(p, ".bn1"), channels, width, 3, stride, 1, true);
      x = b.conv_bn(h, join(p, ".conv2"), join(p, ".bn2"), width, width, 3, 1, 1, true, shortcut);
      channels = width;
    }
  }
  x = b.op(layer::op::global_avg_pool, x);
  x = b.op(layer::op::flatten, x);
  b.dense(x, "fc", 512, 1000, false);
  return onednn_net({1, 3, 224, 224}, std::move(b.layers), threads);
}

}  // namespace peers
