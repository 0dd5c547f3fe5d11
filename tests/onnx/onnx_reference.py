"""A numpy evaluator of ONNX graphs: the independent oracle of the importer's tests.

onnx.reference exists only from onnx 1.13 (Debian 12 ships 1.12), so the tests compute expected
outputs here: the importer's constant-folding evaluators for the ops they cover, and direct numpy
implementations, written from the ONNX operator specification, for the rest.
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from partita_onnx.fold import EVALUATORS  # noqa: E402
from partita_onnx.graph import Node  # noqa: E402


def _attrs(n: onnx.NodeProto) -> dict:
    out = {}
    for a in n.attribute:
        v = helper.get_attribute_value(a)
        out[a.name] = v.decode() if isinstance(v, bytes) else numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else v
    return out


def _pads(a: dict, spatial, kernel, strides, dil):
    auto = a.get("auto_pad", "NOTSET")
    k = len(kernel)
    if auto in ("NOTSET", ""):
        return list(a.get("pads", [0] * 2 * k))
    if auto == "VALID":
        return [0] * 2 * k
    b, e = [], []
    for i in range(k):
        out = -(-spatial[i] // strides[i])
        total = max((out - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - spatial[i], 0)
        lo, hi = total // 2, total - total // 2
        b.append(lo if auto == "SAME_UPPER" else hi)
        e.append(hi if auto == "SAME_UPPER" else lo)
    return b + e


def conv(x, w, b, a):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    s = a.get("strides", [1, 1])
    d = a.get("dilations", [1, 1])
    g = a.get("group", 1)
    p = _pads(a, (h, wd), (kh, kw), s, d)
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])))
    oh = (xp.shape[2] - d[0] * (kh - 1) - 1) // s[0] + 1
    ow = (xp.shape[3] - d[1] * (kw - 1) - 1) // s[1] + 1
    y = np.zeros((n, o, oh, ow), dtype=np.float64)
    og = o // g
    for gi in range(g):
        xs = xp[:, gi * cg:(gi + 1) * cg].astype(np.float64)
        ws = w[gi * og:(gi + 1) * og].astype(np.float64)
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * d[0]:i * d[0] + s[0] * (oh - 1) + 1:s[0], j * d[1]:j * d[1] + s[1] * (ow - 1) + 1:s[1]]
                y[:, gi * og:(gi + 1) * og] += np.einsum("nchw,oc->nohw", patch, ws[:, :, i, j])
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y.astype(np.float32)


def conv1d(x, w, b, a):
    """A 1-D Conv as the 2-D one of height 1: each attribute gains a leading axis of no effect."""
    a2 = dict(a)
    for key, unit in (("strides", 1), ("dilations", 1), ("kernel_shape", 1)):
        if key in a:
            a2[key] = [unit] + list(a[key])
    if "pads" in a:
        a2["pads"] = [0, a["pads"][0], 0, a["pads"][1]]
    return conv(x[:, :, None, :], w[:, :, None, :], b, a2)[:, :, 0, :]


def conv_transpose(x, w, b, a):
    """ConvTranspose from its definition: every input pixel scatters its channels times the
    kernel into the full output at stride steps; the padding then crops that output's borders
    (a negative end padding grows it with zeros)."""
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    g = a.get("group", 1)
    cg = c // g
    s = list(a.get("strides", [1, 1]))
    d = list(a.get("dilations", [1, 1]))
    extra = list(a.get("output_padding", [0, 0]))
    size, k = (h, wd), (kh, kw)
    full = [s[i] * (size[i] - 1) + extra[i] + (k[i] - 1) * d[i] + 1 for i in range(2)]
    auto = a.get("auto_pad", "NOTSET")
    if "output_shape" in a or auto in ("SAME_UPPER", "SAME_LOWER"):
        want = list(a["output_shape"])[-2:] if "output_shape" in a else [size[i] * s[i] for i in range(2)]
        begin, end = [], []
        for i in range(2):
            total = full[i] - want[i]
            if total < 0:
                begin.append(0)
                end.append(total)
            elif auto == "SAME_UPPER":
                begin.append(total // 2)
                end.append(total - total // 2)
            else:
                begin.append(total - total // 2)
                end.append(total // 2)
    elif auto == "VALID":
        begin, end = [0, 0], [0, 0]
    else:
        p = list(a.get("pads", [0, 0, 0, 0]))
        begin, end = p[:2], p[2:]
    y = np.zeros((n, og * g, full[0], full[1]), dtype=np.float64)
    for gi in range(g):
        xs = x[:, gi * cg:(gi + 1) * cg].astype(np.float64)
        ws = w[gi * cg:(gi + 1) * cg].astype(np.float64)
        for i in range(kh):
            for j in range(kw):
                rows = slice(i * d[0], i * d[0] + s[0] * (h - 1) + 1, s[0])
                cols = slice(j * d[1], j * d[1] + s[1] * (wd - 1) + 1, s[1])
                y[:, gi * og:(gi + 1) * og, rows, cols] += np.einsum("nchw,co->nohw", xs, ws[:, :, i, j])
    y = np.pad(y, ((0, 0), (0, 0), (0, max(0, -end[0])), (0, max(0, -end[1]))))
    out = [full[i] - begin[i] - end[i] for i in range(2)]
    y = y[:, :, begin[0]:begin[0] + out[0], begin[1]:begin[1] + out[1]]
    if b is not None:
        y += b.reshape(1, -1, 1, 1)
    return y.astype(np.float32)


def conv_transpose1d(x, w, b, a):
    """A 1-D ConvTranspose as the 2-D one of height 1, like conv1d."""
    a2 = dict(a)
    for key, unit in (("strides", 1), ("dilations", 1), ("kernel_shape", 1), ("output_padding", 0)):
        if key in a:
            a2[key] = [unit] + list(a[key])
    if "pads" in a:
        a2["pads"] = [0, a["pads"][0], 0, a["pads"][1]]
    if "output_shape" in a:
        a2["output_shape"] = [1, list(a["output_shape"])[-1]]
    return conv_transpose(x[:, :, None, :], w[:, :, None, :], b, a2)[:, :, 0, :]


def depth_to_space(x, a):
    b = a["blocksize"]
    n, c, h, w = x.shape
    if a.get("mode", "DCR") == "DCR":
        t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        t = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    return t.reshape(n, c // (b * b), h * b, w * b)


def space_to_depth(x, a):
    b = a["blocksize"]
    n, c, h, w = x.shape
    t = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return t.reshape(n, c * b * b, h // b, w // b)


def pool(x, a, kind):
    if x.ndim == 3:
        # 1-D: the 2-D pooling of height 1, each attribute with a leading axis of no effect.
        b = dict(a)
        b["kernel_shape"] = [1] + list(a["kernel_shape"])
        b["strides"] = [1] + list(a.get("strides", [1]))
        if "pads" in a:
            b["pads"] = [0, a["pads"][0], 0, a["pads"][1]]
        return pool(x[:, :, None, :], b, kind)[:, :, 0, :]
    k = a["kernel_shape"]
    s = a.get("strides", [1, 1])
    p = _pads(a, x.shape[2:], k, s, [1, 1])
    ceil = a.get("ceil_mode", 0)
    h, w = x.shape[2:]
    out = []
    for i in range(2):
        size = x.shape[2 + i] + p[i] + p[2 + i] - k[i]
        o = (-(-size // s[i]) if ceil else size // s[i]) + 1
        if ceil and (o - 1) * s[i] >= x.shape[2 + i] + p[i]:
            o -= 1
        out.append(o)
    y = np.zeros(x.shape[:2] + tuple(out), dtype=np.float32)
    for oi in range(out[0]):
        for oj in range(out[1]):
            h0, w0 = oi * s[0] - p[0], oj * s[1] - p[1]
            h1, w1 = min(h0 + k[0], h + p[2]), min(w0 + k[1], w + p[3])
            win = x[:, :, max(h0, 0):min(h1, h), max(w0, 0):min(w1, w)]
            if kind == "max":
                y[:, :, oi, oj] = win.max(axis=(2, 3))
            else:
                count = (h1 - h0) * (w1 - w0) if a.get("count_include_pad", 0) else win.shape[2] * win.shape[3]
                y[:, :, oi, oj] = win.sum(axis=(2, 3)) / count
    return y


def resize(x, out_hw, a):
    mode = a.get("mode", "nearest")
    ct = a.get("coordinate_transformation_mode", "half_pixel")
    ih, iw = x.shape[2:]
    oh, ow = out_hw

    def src(o, size_in, size_out):
        scale = size_out / size_in
        if ct == "asymmetric":
            return o / scale
        if ct == "align_corners":
            return o * (size_in - 1) / (size_out - 1) if size_out > 1 else 0.0
        if ct == "pytorch_half_pixel" and size_out == 1:
            return 0.0
        return (o + 0.5) / scale - 0.5

    y = np.zeros(x.shape[:2] + (oh, ow), dtype=np.float32)
    for i in range(oh):
        for j in range(ow):
            sy, sx = src(i, ih, oh), src(j, iw, ow)
            if mode == "nearest":
                nm = a.get("nearest_mode", "round_prefer_floor")
                f = math.floor if nm == "floor" else (lambda v: math.ceil(v - 0.5))
                y[:, :, i, j] = x[:, :, min(max(f(sy), 0), ih - 1), min(max(f(sx), 0), iw - 1)]
            else:
                sy, sx = min(max(sy, 0), ih - 1), min(max(sx, 0), iw - 1)
                y0, x0 = int(math.floor(sy)), int(math.floor(sx))
                y1, x1 = min(y0 + 1, ih - 1), min(x0 + 1, iw - 1)
                dy, dx = sy - y0, sx - x0
                y[:, :, i, j] = ((1 - dy) * (1 - dx) * x[:, :, y0, x0] + (1 - dy) * dx * x[:, :, y0, x1]
                                 + dy * (1 - dx) * x[:, :, y1, x0] + dy * dx * x[:, :, y1, x1])
    return y


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _layer_norm(x, g, b, axis, eps):
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps) * g
    return y + b if b is not None else y


def _gemm(a, b, c, at):
    A = a.T if at.get("transA", 0) else a
    B = b.T if at.get("transB", 0) else b
    y = at.get("alpha", 1.0) * (A @ B)
    return y + at.get("beta", 1.0) * c if c is not None else y


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def recurrent(op: str, x, w, r, b, h0, c0, a) -> list[np.ndarray]:
    """ONNX's LSTM, GRU and RNN in float64, step by step as the operator's equations read
    (default activations, RNN's Relu, clip, directions, layout, linear_before_reset)."""
    layout = a.get("layout", 0)
    if layout:
        x = x.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    x, w, r = (np.asarray(v, dtype=np.float64) for v in (x, w, r))
    seq, batch, _ = x.shape
    dirs, gh, hidden = r.shape
    g = gh // hidden
    b = np.zeros((dirs, 2 * gh)) if b is None else np.asarray(b, dtype=np.float64)
    direction = a.get("direction", b"forward")
    direction = direction.decode() if isinstance(direction, bytes) else direction
    clip = a.get("clip")
    act = lambda v: np.clip(v, -clip, clip) if clip else v  # noqa: E731
    relu = [s.decode() if isinstance(s, bytes) else s for s in a.get("activations", [])][:1] == ["Relu"]
    y = np.zeros((seq, dirs, batch, hidden))
    yh = np.zeros((dirs, batch, hidden))
    yc = np.zeros((dirs, batch, hidden))
    for d in range(dirs):
        h = np.zeros((batch, hidden)) if h0 is None else np.asarray(h0[d], dtype=np.float64)
        c = np.zeros((batch, hidden)) if c0 is None else np.asarray(c0[d], dtype=np.float64)
        wb, rb = b[d, :gh], b[d, gh:]
        backwards = direction == "reverse" or (direction == "bidirectional" and d == 1)
        for t in (range(seq - 1, -1, -1) if backwards else range(seq)):
            xw = x[t] @ w[d].T + wb
            hr = h @ r[d].T + rb
            if op == "LSTM":
                i, o, f, cc = (xw[:, k * hidden:(k + 1) * hidden] + hr[:, k * hidden:(k + 1) * hidden] for k in range(4))
                c = _sigmoid(act(f)) * c + _sigmoid(act(i)) * np.tanh(act(cc))
                h = _sigmoid(act(o)) * np.tanh(c)
            elif op == "GRU":
                z = _sigmoid(act(xw[:, :hidden] + hr[:, :hidden]))
                rr = _sigmoid(act(xw[:, hidden:2 * hidden] + hr[:, hidden:2 * hidden]))
                if a.get("linear_before_reset", 0):
                    hh = np.tanh(act(xw[:, 2 * hidden:] + rr * hr[:, 2 * hidden:]))
                else:
                    hh = np.tanh(act(xw[:, 2 * hidden:] + (rr * h) @ r[d][2 * hidden:].T + rb[2 * hidden:]))
                h = (1 - z) * hh + z * h
            else:
                v = act(xw + hr)
                h = np.maximum(v, 0) if relu else np.tanh(v)
            y[t, d] = h
        yh[d], yc[d] = h, c
    if layout:
        y, yh, yc = y.transpose(2, 0, 1, 3), yh.transpose(1, 0, 2), yc.transpose(1, 0, 2)
    out = [y.astype(np.float32), yh.astype(np.float32)]
    return out + [yc.astype(np.float32)] if op == "LSTM" else out


def run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The graph's outputs for `feeds`, evaluated node by node."""
    env = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    env.update(feeds)
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    shapes_model = onnx.shape_inference.infer_shapes(model)
    out_shapes = {}
    for vi in list(shapes_model.graph.value_info) + list(shapes_model.graph.output):
        out_shapes[vi.name] = tuple(d.dim_value for d in vi.type.tensor_type.shape.dim)
    for n in model.graph.node:
        a = _attrs(n)
        x = [env[i] if i else None for i in n.input]
        op = n.op_type
        if op == "Conv":
            y = [(conv if x[0].ndim == 4 else conv1d)(x[0], x[1], x[2] if len(x) > 2 else None, a)]
        elif op == "ConvTranspose":
            y = [(conv_transpose if x[0].ndim == 4 else conv_transpose1d)(x[0], x[1], x[2] if len(x) > 2 else None, a)]
        elif op == "DepthToSpace":
            y = [depth_to_space(x[0], a)]
        elif op == "SpaceToDepth":
            y = [space_to_depth(x[0], a)]
        elif op in ("MaxPool", "AveragePool"):
            y = [pool(x[0], a, "max" if op == "MaxPool" else "avg")]
        elif op == "GlobalAveragePool":
            y = [x[0].mean(axis=(2, 3), keepdims=True)]
        elif op == "BatchNormalization":
            s, b, m, v = (t.reshape(1, -1, *([1] * (x[0].ndim - 2))) for t in x[1:5])
            y = [((x[0] - m) / np.sqrt(v + a.get("epsilon", 1e-5)) * s + b).astype(np.float32)]
        elif op in ("Resize", "Upsample"):
            y = [resize(x[0], out_shapes[n.output[0]][2:], a)]
        elif op == "Softmax":
            axis = a.get("axis", -1 if opset >= 13 else 1)
            if opset < 13:
                shp = x[0].shape
                flat = x[0].reshape(int(np.prod(shp[:axis])), -1)
                y = [_softmax(flat, -1).reshape(shp)]
            else:
                y = [_softmax(x[0], axis)]
        elif op == "LayerNormalization":
            y = [_layer_norm(x[0], x[1], x[2] if len(x) > 2 else None, a.get("axis", -1), a.get("epsilon", 1e-5))]
        elif op == "Gemm":
            y = [_gemm(x[0], x[1], x[2] if len(x) > 2 else None, a)]
        elif op == "Pad":
            pads = list(a["pads"]) if "pads" in a else [int(v) for v in x[1]]
            value = a.get("value", 0.0) if len(x) < 3 or x[2] is None else float(x[2])
            r = x[0].ndim
            y = [np.pad(x[0], [(pads[i], pads[r + i]) for i in range(r)], constant_values=value)]
        elif op == "HardSigmoid":
            y = [np.clip(a.get("alpha", 0.2) * x[0] + a.get("beta", 0.5), 0, 1).astype(np.float32)]
        elif op == "HardSwish":
            y = [(x[0] * np.clip(x[0] / 6 + 0.5, 0, 1)).astype(np.float32)]
        elif op == "LeakyRelu":
            y = [np.where(x[0] >= 0, x[0], a.get("alpha", 0.01) * x[0]).astype(np.float32)]
        elif op == "PRelu":
            y = [np.where(x[0] >= 0, x[0], x[1] * x[0]).astype(np.float32)]
        elif op == "Shape":
            y = [np.asarray(x[0].shape, dtype=np.int64)]
        elif op in ("LSTM", "GRU", "RNN"):
            opt = lambda k: x[k] if len(x) > k and x[k] is not None else None  # noqa: E731
            y = recurrent(op, x[0], x[1], x[2], opt(3), opt(5), opt(6) if op == "LSTM" else None, a)
        elif op in ("ArgMax", "ArgMin"):
            axis, v = a.get("axis", 0), (x[0] if op == "ArgMax" else -x[0])
            if a.get("select_last_index", 0):
                r = v.shape[axis] - 1 - np.argmax(np.flip(v, axis=axis), axis=axis)
            else:
                r = np.argmax(v, axis=axis)
            y = [np.expand_dims(r, axis) if a.get("keepdims", 1) else r]
        elif op == "CumSum":
            axis = int(x[1].reshape(-1)[0])
            v = np.flip(x[0], axis) if a.get("reverse", 0) else x[0]
            c = np.cumsum(v.astype(np.float64), axis=axis)
            if a.get("exclusive", 0):
                c = c - v
            y = [(np.flip(c, axis) if a.get("reverse", 0) else c).astype(np.float32)]
        elif op == "GatherElements":
            y = [np.take_along_axis(x[0], x[1].astype(np.int64), axis=a.get("axis", 0))]
        elif op == "TopK":
            k, axis = int(x[1].reshape(-1)[0]), a.get("axis", -1)
            order = np.argsort(-x[0] if a.get("largest", 1) else x[0], axis=axis, kind="stable")
            idx = np.take(order, np.arange(k), axis=axis)
            y = [np.take_along_axis(x[0], idx, axis=axis), idx.astype(np.int64)]
        elif op == "GlobalMaxPool":
            y = [x[0].max(axis=(2, 3), keepdims=True)]
        else:
            node = Node(op, n.name, list(n.input), list(n.output), a)
            y = EVALUATORS[op](node, x)
        for name, v in zip(n.output, y):
            if name:
                env[name] = np.asarray(v)
    return [env[o.name] for o in model.graph.output]
