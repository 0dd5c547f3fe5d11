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
  static constexpr tag tags[] = {tag::undef, tag::a, tag::ab, tag::abc, tag::abcd, tag::abcde};
  return {d, dt::f32, tags[d.size()]};
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
    // Grouped: oneDNN's weights are [groups, out / groups, in / groups, k, k], the same bytes as OIHW.
    const memory::dims w_dims = l.groups == 1 ? memory::dims{l.channels, src.dims[1], l.kernel, l.kernel}
                                              : memory::dims{l.groups, l.channels / l.groups, src.dims[1] / l.groups,
                                                             l.kernel, l.kernel};
    const memory::dims dims{src.dims[0], l.channels, oh, ow};
    const memory::dims strides{l.stride, l.stride}, pad{l.padding, l.padding};
    dnnl::post_ops ops;
    if (l.residual != layer::none) ops.append_sum(1.0f);
    append_relu(ops, l);
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
    append_relu(ops, l);
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

  // relu, or clip to [0, cap] (ReLU6), as a post-op.
  static void append_relu(dnnl::post_ops& ops, const layer& l) {
    if (!l.relu) return;
    if (l.relu_cap > 0) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, 0.0f, l.relu_cap);
    else ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
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
           bool relu, bool bias = true, int residual = layer::none, int groups = 1) {
    layer l{layer::op::conv, src, get(name, ".weight", cout * (cin / groups) * k * k), {}, cout, k, stride, padding,
            residual, relu};
    l.groups = groups;
    if (bias) l.bias = get(name, ".bias", cout);
    return add(std::move(l));
  }

  // conv `name` without bias, then batch norm `bn`, folded.
  int conv_bn(int src, std::string_view name, std::string_view bn, std::int64_t cin, std::int64_t cout, int k,
              int stride, int padding, bool relu, int residual = layer::none, int groups = 1) {
    const int i = conv(src, name, cin, cout, k, stride, padding, relu, false, residual, groups);
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

onednn_net onednn_mobilenet_v2(const weight_lookup& w, int threads) {
  builder b{w, {}};
  // torchvision's Conv2dNormActivation `p` (conv p.0, batch norm p.1, ReLU6), "same" padding.
  const auto conv_bn_relu6 = [&](int src, const std::string& p, std::int64_t cin, std::int64_t cout, int k, int stride,
                                 int groups = 1) {
    const int i = b.conv_bn(src, p + ".0", p + ".1", cin, cout, k, stride, (k - 1) / 2, true, layer::none, groups);
    b.layers.back().relu_cap = 6.0f;
    return i;
  };
  int x = conv_bn_relu6(layer::network_input, "features.0", 3, 32, 3, 2);
  std::int64_t channels = 32;
  int index = 1;
  // torchvision's inverted_residual_setting: expansion t, channels c, repeats n, first stride s.
  constexpr int setting[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                 {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  for (const auto& [t, c, n, s] : setting)
    for (int r = 0; r < n; ++r, ++index) {
      // InvertedResidual: [1×1 expansion,] depthwise 3×3, linear 1×1 projection (+ the input).
      const std::string p = "features." + std::to_string(index) + ".conv.";
      const int stride = r == 0 ? s : 1;
      const std::int64_t hidden = channels * t;
      int h = x, at = 0;
      if (t != 1) h = conv_bn_relu6(h, p + std::to_string(at++), channels, hidden, 1, 1);
      h = conv_bn_relu6(h, p + std::to_string(at++), hidden, hidden, 3, stride, static_cast<int>(hidden));
      const bool residual = stride == 1 && channels == c;
      x = b.conv_bn(h, p + std::to_string(at), p + std::to_string(at + 1), hidden, c, 1, 1, 0, false,
                    residual ? x : layer::none);
      channels = c;
    }
  x = conv_bn_relu6(x, "features.18", channels, 1280, 1, 1);
  x = b.op(layer::op::global_avg_pool, x);
  x = b.op(layer::op::flatten, x);
  b.dense(x, "classifier.1", 1280, 1000, false);
  return onednn_net({1, 3, 224, 224}, std::move(b.layers), threads);
}

}  // namespace peers

namespace peers {

struct onednn_encoder::impl {
  struct step {
    dnnl::primitive prim;
    std::vector<dnnl_exec_arg_t> args;
    std::vector<memory> held;
    memory::desc scratchpad;
  };

  encoder_config c;
  const weight_lookup& w;  // read during construction only
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  int threads = 1;
  std::vector<float> tok, pos;                      // embedding tables [vocab, d], [seq, d]
  std::vector<float> x, qkv, probs, ctx, ff, pooled;  // activations
  memory logits;                                    // its handle is the caller's buffer, set by `run`
  memory scratch;
  std::vector<step> steps;
  std::vector<std::string> notes;

  impl(const encoder_config& config, const weight_lookup& lookup, int nthreads)
      : c(config), w(lookup), threads(nthreads) {
    if (c.d_model % c.heads != 0) throw std::invalid_argument("peers: d_model must be a multiple of heads");
    omp_set_num_threads(threads);  // the primitives created below size their work for this count
    const std::int64_t s = c.seq, d = c.d_model, h = c.heads, dh = d / h;
    tok = get("tok_emb.weight", c.vocab * d);
    pos = get("pos_emb.weight", s * d);
    x.resize(static_cast<std::size_t>(s * d));
    qkv.resize(static_cast<std::size_t>(s * 3 * d));
    probs.resize(static_cast<std::size_t>(h * s * s));
    ctx.resize(static_cast<std::size_t>(s * d));
    ff.resize(static_cast<std::size_t>(s * c.d_ff));
    pooled.resize(static_cast<std::size_t>(d));

    const memory x_m = view(x.data(), {s, d});
    layer_norm(x_m, "emb_norm", c.embedding_eps);
    for (std::int64_t l = 0; l < c.layers; ++l) {
      const std::string p = "layers." + std::to_string(l) + ".";
      const memory qkv_m = view(qkv.data(), {s, 3 * d});
      linear(x_m, p + "self_attn.in_proj", d, 3 * d, qkv_m, {});
      // Head j of q is qkv[:, j·dh : (j+1)·dh]: [h, s, dh] with strides (dh, 3d, 1); k from column
      // d on, read as kᵀ [h, dh, s] with strides (dh, 1, 3d); v from column 2d on.
      const memory q = view(qkv.data(), {h, s, dh}, {dh, 3 * d, 1});
      const memory kt = view(qkv.data() + d, {h, dh, s}, {dh, 1, 3 * d});
      const memory v = view(qkv.data() + 2 * d, {h, s, dh}, {dh, 3 * d, 1});
      const memory probs_m = view(probs.data(), {h, s, s});
      matmul(q, kt, probs_m, {}, 1.0f / std::sqrt(static_cast<float>(dh)), "q·kᵀ");
      softmax(probs_m);
      // probs·v, written as the merged heads [s, d]: head j at columns j·dh.
      matmul(probs_m, v, view(ctx.data(), {h, s, dh}, {dh, d, 1}), {}, 1.0f, "probs·v");
      dnnl::post_ops sum;
      sum.append_sum(1.0f);
      linear(view(ctx.data(), {s, d}), p + "self_attn.out_proj", d, d, x_m, sum);
      layer_norm(x_m, p + "norm1", c.eps);
      dnnl::post_ops gelu;
      gelu.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
      const memory ff_m = view(ff.data(), {s, c.d_ff});
      linear(x_m, p + "linear1", d, c.d_ff, ff_m, gelu);
      linear(ff_m, p + "linear2", c.d_ff, d, x_m, sum);
      layer_norm(x_m, p + "norm2", c.eps);
    }
    dnnl::post_ops tanh;
    tanh.append_eltwise(1.0f, dnnl::algorithm::eltwise_tanh, 0.0f, 0.0f);
    const memory pooled_m = view(pooled.data(), {1, d});
    linear(view(x.data(), {1, d}), "pooler", d, d, pooled_m, tanh);  // the first token
    logits = memory(plain({1, c.classes}), eng, DNNL_MEMORY_NONE);
    linear(pooled_m, "classifier", d, c.classes, logits, {});
    share_scratchpad();
  }

  std::vector<float> get(const std::string& name, std::int64_t elements) const {
    const std::span<const float> s = fetch(w, name, static_cast<std::size_t>(elements));
    return {s.begin(), s.end()};
  }

  // `stem.weight` (`stem.bias`), or `stem_weight` as PyTorch names its packed attention
  // projection (`self_attn.in_proj_weight`).
  std::vector<float> param(const std::string& stem, const char* what, std::int64_t elements) const {
    try {
      return get(join(join(stem, "."), what), elements);
    } catch (const std::runtime_error&) {
      return get(join(join(stem, "_"), what), elements);
    }
  }

  // `dims` over `data`, dense row-major or with the given strides.
  memory view(float* data, const memory::dims& dims, const memory::dims& strides = {}) const {
    return memory(strides.empty() ? plain(dims) : memory::desc(dims, dt::f32, strides), eng, data);
  }

  static dnnl::primitive_attr attributes(const dnnl::post_ops& ops, float scale = 1.0f) {
    dnnl::primitive_attr a;
    a.set_post_ops(ops);
    if (scale != 1.0f) a.set_output_scales(0, {scale});
    a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return a;
  }

  static void arg(step& s, int kind, const memory& m) {
    s.held.push_back(m);
    s.args.push_back({kind, m.get()});
  }

  // A constant in oneDNN's chosen layout `want`, from `data` laid out as `given`.
  memory prepared(std::vector<float> data, const memory::desc& given, const memory::desc& want) {
    memory user(given, eng, data.data());
    memory m(want, eng);
    dnnl::reorder(user, m).execute(strm, user, m);
    strm.wait();
    return m;
  }

  // torch.nn.Linear: dst = src · weightᵀ + bias, weight [out, in]; `ops` after.
  void linear(const memory& src, const std::string& name, std::int64_t in, std::int64_t out, const memory& dst,
              const dnnl::post_ops& ops) {
    const memory::dims w_dims{in, out};
    const dnnl::matmul::desc d(src.get_desc(), any(w_dims), plain({1, out}), dst.get_desc());
    const dnnl::matmul::primitive_desc pd(d, attributes(ops), eng);
    step s{dnnl::matmul(pd), {}, {}, pd.scratchpad_desc()};
    arg(s, DNNL_ARG_SRC, src);
    // weight [out, in] row-major is weightᵀ [in, out] with strides (1, in).
    arg(s, DNNL_ARG_WEIGHTS, prepared(param(name, "weight", in * out), memory::desc(w_dims, dt::f32, {1, in}),
                                      pd.weights_desc()));
    arg(s, DNNL_ARG_BIAS, prepared(param(name, "bias", out), plain({1, out}), pd.bias_desc()));
    arg(s, DNNL_ARG_DST, dst);
    note(join("linear ", name), pd.impl_info_str());
    steps.push_back(std::move(s));
  }

  // Batched matmul dst = scale · a · b over the leading axis.
  void matmul(const memory& a, const memory& b, const memory& dst, const dnnl::post_ops& ops, float scale,
              const char* what) {
    const dnnl::matmul::desc d(a.get_desc(), b.get_desc(), dst.get_desc());
    const dnnl::matmul::primitive_desc pd(d, attributes(ops, scale), eng);
    step s{dnnl::matmul(pd), {}, {}, pd.scratchpad_desc()};
    arg(s, DNNL_ARG_SRC, a);
    arg(s, DNNL_ARG_WEIGHTS, b);
    arg(s, DNNL_ARG_DST, dst);
    note(join("matmul ", what), pd.impl_info_str());
    steps.push_back(std::move(s));
  }

  // Softmax along the last axis, in place.
  void softmax(const memory& m) {
    const dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, m.get_desc(),
                                        static_cast<int>(m.get_desc().dims().size()) - 1);
    const dnnl::softmax_forward::primitive_desc pd(d, attributes({}), eng);
    step s{dnnl::softmax_forward(pd), {}, {}, pd.scratchpad_desc()};
    arg(s, DNNL_ARG_SRC, m);
    arg(s, DNNL_ARG_DST, m);
    note("softmax", pd.impl_info_str());
    steps.push_back(std::move(s));
  }

  // torch.nn.LayerNorm `name` over the last axis, in place.
  void layer_norm(const memory& m, const std::string& name, float eps) {
    const dnnl::layer_normalization_forward::desc d(
        dnnl::prop_kind::forward_inference, m.get_desc(), eps,
        dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift);
    const dnnl::layer_normalization_forward::primitive_desc pd(d, attributes({}), eng);
    step s{dnnl::layer_normalization_forward(pd), {}, {}, pd.scratchpad_desc()};
    const memory::desc params = plain({c.d_model});
    arg(s, DNNL_ARG_SRC, m);
    arg(s, DNNL_ARG_DST, m);
    arg(s, DNNL_ARG_SCALE, prepared(get(name + ".weight", c.d_model), params, params));
    arg(s, DNNL_ARG_SHIFT, prepared(get(name + ".bias", c.d_model), params, params));
    note(join("layer_norm ", name), pd.impl_info_str());
    steps.push_back(std::move(s));
  }

  void note(std::string what, const char* impl_name) { notes.push_back(join(join(what, " ["), join(impl_name, "]"))); }

  void share_scratchpad() {
    std::size_t bytes = 1;
    for (const step& s : steps) bytes = std::max(bytes, s.scratchpad.get_size());
    scratch = memory({{static_cast<memory::dim>(bytes)}, dt::u8, tag::a}, eng);
    for (step& s : steps)
      if (s.scratchpad.get_size() > 0)
        arg(s, DNNL_ARG_SCRATCHPAD, memory(s.scratchpad, eng, scratch.get_data_handle()));
  }

  void run(const std::int64_t* ids, float* output) {
    omp_set_num_threads(threads);
    // The embeddings: token rows plus the position table (positions 0..seq-1).
    const auto d = static_cast<std::size_t>(c.d_model);
    for (std::size_t i = 0; i < static_cast<std::size_t>(c.seq); ++i) {
      if (ids[i] < 0 || ids[i] >= c.vocab) throw std::out_of_range("peers: token id out of range");
      const float* t = tok.data() + static_cast<std::size_t>(ids[i]) * d;
      const float* p = pos.data() + i * d;
      float* o = x.data() + i * d;
      for (std::size_t k = 0; k < d; ++k) o[k] = t[k] + p[k];
    }
    logits.set_data_handle(output);
    for (const step& s : steps)
      dnnl::error::wrap_c_api(
          dnnl_primitive_execute(s.prim.get(), strm.get(), static_cast<int>(s.args.size()), s.args.data()),
          "peers: could not execute a primitive");
    strm.wait();
  }
};

onednn_encoder::onednn_encoder(const encoder_config& config, const weight_lookup& w, int threads)
    : impl_(std::make_unique<impl>(config, w, threads)) {}
onednn_encoder::onednn_encoder(onednn_encoder&&) noexcept = default;
onednn_encoder& onednn_encoder::operator=(onednn_encoder&&) noexcept = default;
onednn_encoder::~onednn_encoder() = default;

void onednn_encoder::run(const std::int64_t* ids, float* logits) { impl_->run(ids, logits); }
std::int64_t onednn_encoder::input_elements() const { return impl_->c.seq; }
std::int64_t onednn_encoder::output_elements() const { return impl_->c.classes; }
int onednn_encoder::threads() const { return impl_->threads; }

std::string onednn_encoder::describe() const {
  std::string r;
  for (const std::string& n : impl_->notes) (r += n) += '\n';
  return r;
}

onednn_encoder onednn_transformer(const encoder_config& config, const weight_lookup& w, int threads) {
  return onednn_encoder(config, w, threads);
}

}  // namespace peers
