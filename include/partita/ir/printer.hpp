#pragma once
/// The text printer of a module (`print(module)`), one line per node, function by function.
#include <cstdio>
#include <string>
#include <string_view>

#include "partita/core/detail/concat.hpp"
#include "partita/ir/layout.hpp"
#include "partita/ir/module.hpp"

namespace partita {
namespace detail {

template <class M>
std::string type_string(const M& m, int i) {
  const graph_node& n = m.node(i);
  if (!n.is_tuple) return concat(name_of(n.type), to_string(n.out));
  if (is_tuple_op(n.op)) {
    const op_fields f = op_fields_of(m, i);
    std::string s = "(";
    for (int k = 0; k < f.count; ++k) {
      const op_field& x = f.at[static_cast<std::size_t>(k)];
      s += concat(k ? ", " : "", name_of(x.type), to_string(x.out));
    }
    return s + ")";
  }
  if (n.op == op_id::call) return type_string(m, m.functions[static_cast<std::size_t>(n.index)].result);
  if (n.op == op_id::get) {
    int t = m.arg(i, 0);
    while (m.node(t).op == op_id::call) t = m.functions[static_cast<std::size_t>(m.node(t).index)].result;
    return t == m.arg(i, 0) ? "tuple" : type_string(m, m.arg(t, n.index));
  }
  std::string s = "(";
  for (int k = 0; k < n.nargs; ++k) {
    if (k) s += ", ";
    s += type_string(m, m.arg(i, k));
  }
  s += ")";
  return s;
}

inline std::string pair_string(const std::array<int, 2>& p) {
  return concat("[", std::to_string(p[0]), ", ", std::to_string(p[1]), "]");
}

/// ", padding_end=[h, w]" for a convolution or pooling padded differently after its axes.
inline std::string end_padding_string(const attrs& a) {
  if (a.padding_end[0] < 0 && a.padding_end[1] < 0) return {};
  return concat(", padding_end=", pair_string({end_padding(a, 0), end_padding(a, 1)}));
}

inline std::string float_string(float f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(f));
  return buf;
}

/// The attributes of a node that matter for its op, as `key=value` pairs.
inline std::string attr_string(const graph_node& n) {
  const attrs& a = *n.at;
  switch (n.op) {
    case op_id::conv2d:
      return concat("stride=", pair_string(a.stride), ", padding=", pair_string(a.padding), end_padding_string(a),
                    ", dilation=", pair_string(a.dilation), ", groups=", std::to_string(a.groups));
    case op_id::conv1d:
      return concat("stride=", std::to_string(a.stride[1]), ", padding=", std::to_string(a.padding[1]),
                    a.padding_end[1] >= 0 ? concat(", padding_end=", std::to_string(a.padding_end[1])) : "",
                    ", dilation=", std::to_string(a.dilation[1]), ", groups=", std::to_string(a.groups));
    case op_id::conv_transpose2d:
      return concat("stride=", pair_string(a.stride), ", padding=", pair_string(a.padding), end_padding_string(a),
                    ", output_padding=", pair_string(a.output_padding), ", dilation=", pair_string(a.dilation),
                    ", groups=", std::to_string(a.groups));
    case op_id::depth_to_space:
      return concat("block=", std::to_string(a.block), a.depth_order == depth_to_space_mode::crd ? ", CRD" : ", DCR");
    case op_id::space_to_depth:
      return concat("block=", std::to_string(a.block));
    case op_id::max_pool2d:
    case op_id::avg_pool2d:
      return concat("size=", pair_string(a.window), ", stride=", pair_string(a.stride), ", padding=",
                    pair_string(a.padding), end_padding_string(a), a.count_include_pad ? ", count_include_pad" : "",
                    a.ceil_mode ? ", ceil_mode" : "");
    case op_id::clip:
      return concat("lo=", float_string(a.lo), ", hi=", float_string(a.hi));
    case op_id::batch_norm:
      return concat("epsilon=", float_string(a.epsilon));
    case op_id::bias_add:
    case op_id::concatenate:
    case op_id::softmax:
      return concat("axis=", std::to_string(a.axis));
    case op_id::reshape:
      return concat("shape=", to_string(a.target));
    case op_id::get:
      return concat("index=", std::to_string(n.index));
    case op_id::matmul:
      return concat(a.transpose_a ? "transpose_a" : "", a.transpose_a && a.transpose_b ? ", " : "",
                    a.transpose_b ? "transpose_b" : "");
    case op_id::transpose: {
      std::string p = "perm=[";
      for (int i = 0; i < n.out.rank; ++i) p += concat(i ? ", " : "", std::to_string(a.perm[static_cast<std::size_t>(i)]));
      return p + "]";
    }
    case op_id::slice:
      return concat("axis=", std::to_string(a.axis), ", begin=", std::to_string(a.start), ", end=", std::to_string(a.stop),
                    ", step=", std::to_string(a.step));
    case op_id::pad: {
      std::string p = "pads=[";
      for (int i = 0; i < n.out.rank; ++i)
        p += concat(i ? ", " : "", std::to_string(a.pad_before[static_cast<std::size_t>(i)]), ":",
                    std::to_string(a.pad_after[static_cast<std::size_t>(i)]));
      return concat(p, "], value=", float_string(a.alpha));
    }
    case op_id::gather:
      return concat("axis=", std::to_string(a.axis));
    case op_id::resize:
      return concat("size=", pair_string(a.window), a.resize == resize_mode::bilinear ? ", bilinear" : ", nearest",
                    a.align_corners ? ", align_corners" : "");
    case op_id::reduce_mean:
    case op_id::reduce_sum:
    case op_id::reduce_max: {
      std::string p = "axes=[";
      bool first = true;
      for (int i = 0; i < max_rank; ++i)
        if ((a.axes >> i) & 1) {
          p += concat(first ? "" : ", ", std::to_string(i));
          first = false;
        }
      return concat(p, "]", a.keepdims ? ", keepdims" : "");
    }
    case op_id::layer_norm:
    case op_id::rms_norm:
      return concat("axis=", std::to_string(a.axis), ", epsilon=", float_string(a.epsilon));
    case op_id::leaky_relu:
      return concat("alpha=", float_string(a.alpha));
    case op_id::power:
      return concat("exponent=", float_string(a.alpha));
    case op_id::hardsigmoid:
      return concat("alpha=", float_string(a.alpha), ", beta=", float_string(a.beta));
    case op_id::lstm: case op_id::gru: case op_id::rnn:
      return concat(a.direction == rnn_direction::forward   ? "forward"
                    : a.direction == rnn_direction::reverse ? "reverse"
                                                            : "bidirectional",
                    a.batch_first ? ", batch_first" : "", a.linear_before_reset ? ", linear_before_reset" : "",
                    n.op == op_id::rnn && a.activation == rnn_activation::relu ? ", relu" : "",
                    a.rnn_clip > 0 ? concat(", clip=", float_string(a.rnn_clip)) : std::string());
    case op_id::argmax: case op_id::argmin:
      return concat("axis=", std::to_string(a.axis), a.keepdims ? ", keepdims" : "", a.select_last ? ", select_last" : "");
    case op_id::cumsum:
      return concat("axis=", std::to_string(a.axis), a.exclusive ? ", exclusive" : "", a.reverse ? ", reverse" : "");
    case op_id::gather_elements:
      return concat("axis=", std::to_string(a.axis));
    case op_id::non_max_suppression:
      return concat("max_per_class=", std::to_string(a.start), ", iou=", float_string(a.alpha),
                    ", score=", float_string(a.beta), a.upper ? ", center_point_box" : "");
    case op_id::topk:
      return concat("k=", std::to_string(a.start), ", axis=", std::to_string(a.axis), a.largest ? ", largest" : ", smallest");
    case op_id::trilu:
      return concat(a.upper ? "upper" : "lower", ", k=", std::to_string(a.start));
    default:
      return {};
  }
}

/// A rank-0 literal's value, as its dtype holds it: `0.5`, or `128:u8` for an integer.
inline std::string scalar_string(dtype t, const void* v) {
  switch (t) {
    case dtype::u8: return concat(std::to_string(*static_cast<const std::uint8_t*>(v)), ":u8");
    case dtype::i8: return concat(std::to_string(*static_cast<const std::int8_t*>(v)), ":i8");
    case dtype::i32: return concat(std::to_string(*static_cast<const std::int32_t*>(v)), ":i32");
    case dtype::boolean: return *static_cast<const bool*>(v) ? "true" : "false";
    default: return float_string(*static_cast<const float*>(v));
  }
}

template <class M>
std::string value_name(const M& m, int i) {
  const graph_node& n = m.node(i);
  switch (n.op) {
    case op_id::input: return concat("%", n.name);
    // A scalar literal prints as its value; larger literals by their (hashed) name.
    case op_id::weight: return n.at->data.values && n.out.rank == 0 ? scalar_string(n.type, n.at->data.values) : concat("@", n.name);
    case op_id::param: return concat("%p", std::to_string(n.index));
    default: return concat("%", std::to_string(i));
  }
}

template <class M>
std::string call_string(const M& m, int i) {
  const graph_node& n = m.node(i);
  std::string s;
  if (n.op == op_id::call) {
    s = concat("@", m.functions[static_cast<std::size_t>(n.index)].name());
  } else if (n.op != op_id::tuple) {
    s = std::string(name_of(n.op));
  }
  s += "(";
  for (int k = 0; k < n.nargs; ++k) {
    if (k) s += ", ";
    s += value_name(m, m.arg(i, k));
  }
  std::string at = attr_string(n);
  if (!at.empty()) {
    if (n.nargs) s += ", ";
    s += at;
  }
  s += ")";
  return s;
}

template <class M>
void print_function(std::string& out, const M& m, const function_info& f) {
  out += concat("def @", f.name(), "(");
  bool first = true;
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    const graph_node& n = m.node(i);
    if (n.op != op_id::input && n.op != op_id::param) continue;
    out += concat(first ? "" : ", ", value_name(m, i), ": ", type_string(m, i));
    first = false;
  }
  out += ")";
  if (f.result >= 0) out += concat(" -> ", type_string(m, f.result));
  if (!f.composite.empty() || !f.backend.empty()) {
    out += " attrs {";
    if (!f.composite.empty()) out += concat("composite=\"", f.composite, "\"");
    if (!f.backend.empty()) out += concat(f.composite.empty() ? "" : ", ", "backend=\"", f.backend, "\"");
    out += "}";
  }
  out += " {\n";
  for (int i = f.first_node; i < f.first_node + f.num_nodes; ++i) {
    const graph_node& n = m.node(i);
    if (is_leaf(n.op)) continue;
    out += concat("  %", std::to_string(i), " = ", call_string(m, i), " : ", type_string(m, i), "\n");
  }
  out += concat("  return ", value_name(m, f.result), "\n}\n");
}

}  // namespace detail

/// Readable text of a module, one `def` per function (main last), in the spirit of Relay's text
/// format: `%5 = relu(%4) : f32[1, 512]`. Weights print as `@name`, inputs as `%name`.
template <module_type M>
std::string print(M) {
  const auto& m = M::value;
  std::string out;
  for (std::size_t f = 0; f < m.functions.size(); ++f) {
    if (f == 0) continue;
    detail::print_function(out, m, m.functions[f]);
    out += "\n";
  }
  detail::print_function(out, m, m.functions[0]);
  return out;
}

}  // namespace partita
