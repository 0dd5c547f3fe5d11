"""Static int8 quantization of a float model: calibration on sample inputs, then the QDQ form.

    quantize_file(model.onnx, samples.safetensors, Options(), out.onnx)

runs the float model on the samples with a numpy evaluator of the ops a CNN or MLP needs,
records every tensor's range (min/max, or a percentile of |x|), and rewrites the graph the way
ONNX Runtime's quantize_static writes its QDQ format: activations u8 asymmetric per tensor (the
range widened to include 0), weights s8 symmetric (-127..127) per output channel or per tensor,
biases of Conv and Gemm i32 with scale = input scale * weight scale and zero point 0.
QuantizeLinear/DequantizeLinear pairs go on the inputs and outputs of Conv, Gemm, MatMul, Add,
Mul, Concat and the pools; a Relu or Clip that alone reads such an output is quantized after it
instead (its range starts at 0, so the clamp stays exact); MaxPool, Flatten, Reshape and
Transpose keep their input's scale and zero point. Other ops (Softmax, Sigmoid...) stay float.
"""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

from . import loader
from .errors import ImportFailure, shown
from .graph import unique_name
from .limits import Budget

METHODS = ("minmax", "percentile")

# Ops whose inputs and outputs are quantized; ops that keep their input's quantization.
QUANTIZED_OPS = {"Conv", "Gemm", "MatMul", "Add", "Mul", "Concat", "MaxPool", "AveragePool", "GlobalAveragePool"}
SAME_AS_INPUT = {"MaxPool", "Flatten", "Reshape", "Transpose"}
FUSED_ACTIVATIONS = {"Relu", "Clip"}
_ALREADY_QUANTIZED = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "ConvInteger", "MatMulInteger"}
# The histogram of |x| the percentile method reads: ONNX Runtime's bin count.
HISTOGRAM_BINS = 2048


@dataclass
class Options:
    """How to calibrate: `method` minmax or percentile (of |x|, `percentile` in percent), and
    weights per output channel or per tensor."""
    method: str = "minmax"
    percentile: float = 99.999
    per_channel: bool = True


# --- samples ----------------------------------------------------------------------------------

_ST_DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "I32": np.int32}


def read_samples(path: str, inputs: dict[str, list[int | None]], budget: Budget) -> list[dict[str, np.ndarray]]:
    """The batches of a safetensors file: one tensor per graph input (`inputs`: name -> dims,
    None where dynamic), of the input's shape (one batch) or with one more axis in front
    (batches stacked on axis 0)."""
    try:
        with open(path, "rb") as f:
            data = f.read(budget.cap + 1)
    except OSError as e:
        raise ImportFailure(f"--calibrate '{shown(path)}': cannot read: {e.strerror}") from None
    where = f"--calibrate '{shown(path)}'"
    if len(data) > budget.cap:
        raise ImportFailure(f"{where}: larger than the importer's memory cap; raise it with --max-memory")
    try:
        (size,) = struct.unpack_from("<Q", data)
        header = json.loads(data[8:8 + size].decode("utf-8"))
        if not isinstance(header, dict) or size > len(data) - 8:
            raise ValueError("bad header")
    except (struct.error, ValueError, UnicodeDecodeError):
        raise ImportFailure(f"{where}: not a safetensors file") from None
    header.pop("__metadata__", None)
    body = memoryview(data)[8 + size:]
    missing = [n for n in inputs if n not in header]
    extra = [n for n in header if n not in inputs]
    if missing or extra:
        raise ImportFailure(f"{where}: expected one tensor per graph input ({', '.join(shown(n) for n in inputs)})"
                            + (f"; missing {', '.join(shown(n) for n in missing)}" if missing else "")
                            + (f"; not inputs: {', '.join(shown(n) for n in extra)}" if extra else ""))
    stacks: dict[str, np.ndarray] = {}
    for name, dims in inputs.items():
        entry = header[name]
        try:
            dtype = np.dtype(_ST_DTYPES[entry["dtype"]]).newbyteorder("<")
            shape = [int(d) for d in entry["shape"]]
            begin, end = (int(o) for o in entry["data_offsets"])
            if not (0 <= begin <= end <= len(body)) or end - begin != dtype.itemsize * int(np.prod(shape)):
                raise ValueError
        except (KeyError, TypeError, ValueError):
            raise ImportFailure(f"{where}: tensor '{shown(name)}': malformed entry, or a dtype other than "
                                f"{', '.join(_ST_DTYPES)}") from None
        a = np.frombuffer(body[begin:end], dtype=dtype).reshape(shape)
        if a.ndim == len(dims):
            a = a[None]
        if a.ndim != len(dims) + 1 or any(d is not None and d != s for d, s in zip(dims, a.shape[1:])):
            shown_dims = "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"
            raise ImportFailure(f"{where}: tensor '{shown(name)}' has shape {shape}; input '{shown(name)}' is "
                                f"{shown_dims}: expected that shape (one batch), or batches of it stacked on axis 0")
        stacks[name] = a.astype(np.float32) if a.dtype == np.float64 else a
    counts = {len(a) for a in stacks.values()}
    if len(counts) != 1 or 0 in counts:
        raise ImportFailure(f"{where}: every input needs the same number of batches, at least one")
    return [{n: np.ascontiguousarray(a[k]) for n, a in stacks.items()} for k in range(counts.pop())]


# --- the float evaluator ----------------------------------------------------------------------

class Unsupported(Exception):
    pass


def _ints(n: onnx.NodeProto, name: str, default):
    for a in n.attribute:
        if a.name == name:
            return list(a.ints) if a.type == onnx.AttributeProto.INTS else a.i
    return default


def _float(n: onnx.NodeProto, name: str, default: float) -> float:
    for a in n.attribute:
        if a.name == name:
            return a.f
    return default


def _windows(x: np.ndarray, kernel: list[int], strides: list[int], pads: list[int], dilations: list[int],
             fill: float) -> np.ndarray:
    """x [N, C, H, W] -> its windows [N, C, kh, kw, OH, OW], padded with `fill` (im2col)."""
    kh, kw = kernel
    t, l, b, r = pads
    xp = np.pad(x, ((0, 0), (0, 0), (t, b), (l, r)), constant_values=fill)
    dh, dw = dilations
    oh = (xp.shape[2] - dh * (kh - 1) - 1) // strides[0] + 1
    ow = (xp.shape[3] - dw * (kw - 1) - 1) // strides[1] + 1
    if oh <= 0 or ow <= 0:
        raise Unsupported("the window is larger than the padded input")
    out = np.empty(x.shape[:2] + (kh, kw, oh, ow), x.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, i, j] = xp[:, :, i * dh:i * dh + strides[0] * (oh - 1) + 1:strides[0],
                                 j * dw:j * dw + strides[1] * (ow - 1) + 1:strides[1]]
    return out


def _window_args(n: onnx.NodeProto, x: np.ndarray, kernel: list[int]):
    if x.ndim != 4 or len(kernel) != 2:
        raise Unsupported("only 2-D windows (NCHW inputs)")
    if _ints(n, "ceil_mode", 0):
        raise Unsupported("ceil_mode=1")
    auto_pad = next((a.s.decode() for a in n.attribute if a.name == "auto_pad"), "NOTSET")
    if auto_pad not in ("NOTSET", "VALID"):
        raise Unsupported(f"auto_pad={auto_pad}")
    return (_ints(n, "strides", [1, 1]), _ints(n, "pads", [0, 0, 0, 0]) if auto_pad == "NOTSET" else [0, 0, 0, 0],
            _ints(n, "dilations", [1, 1]))


def _conv(n, x, w, b=None):
    kernel = list(w.shape[2:])
    strides, pads, dilations = _window_args(n, x, _ints(n, "kernel_shape", kernel))
    g = _ints(n, "group", 1)
    cols = _windows(x, kernel, strides, pads, dilations, 0.0)
    nb, c, _, _, oh, ow = cols.shape
    cols = cols.reshape(nb, g, c // g * kernel[0] * kernel[1], oh * ow)
    y = np.matmul(w.reshape(g, w.shape[0] // g, -1), cols).reshape(nb, w.shape[0], oh, ow)
    return y + b.reshape(1, -1, 1, 1) if b is not None else y


def _pool(n, x, reduce):
    kernel = _ints(n, "kernel_shape", None)
    strides, pads, dilations = _window_args(n, x, kernel)
    if reduce == "max":
        return _windows(x, kernel, strides, pads, dilations, -np.inf).max(axis=(2, 3))
    total = _windows(x, kernel, strides, pads, [1, 1], 0.0).sum(axis=(2, 3))
    if _ints(n, "count_include_pad", 0):
        return total / (kernel[0] * kernel[1])
    ones = np.ones((1, 1) + x.shape[2:], x.dtype)
    return total / _windows(ones, kernel, strides, pads, [1, 1], 0.0).sum(axis=(2, 3))


def _gemm(n, a, b, c=None):
    a = a.T if _ints(n, "transA", 0) else a
    b = b.T if _ints(n, "transB", 0) else b
    y = _float(n, "alpha", 1.0) * (a @ b)
    return y + _float(n, "beta", 1.0) * c if c is not None else y


def _clip(n, x, lo=None, hi=None):
    lo = _float(n, "min", -np.inf) if lo is None else lo
    hi = _float(n, "max", np.inf) if hi is None else hi
    return np.clip(x, lo, hi)


def _softmax(n, x, opset):
    axis = _ints(n, "axis", -1 if opset >= 13 else 1)
    if opset < 13:  # softmax over the flattened trailing axes
        shape = x.shape
        x = x.reshape(int(np.prod(shape[:axis % x.ndim])), -1)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)).reshape(shape)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _reshape(n, x, shape):
    shape = [x.shape[i] if d == 0 and not _ints(n, "allowzero", 0) else int(d) for i, d in enumerate(shape)]
    return x.reshape(shape)


def _batch_norm(n, x, scale, bias, mean, var):
    k = _float(n, "epsilon", 1e-5)
    shaped = [1, -1] + [1] * (x.ndim - 2)
    return (x - mean.reshape(shaped)) / np.sqrt(var.reshape(shaped) + k) * scale.reshape(shaped) + bias.reshape(shaped)


def _flatten(n, x):
    axis = _ints(n, "axis", 1) % (x.ndim + 1) if x.ndim else 0
    return x.reshape(int(np.prod(x.shape[:axis])), -1)


_EVAL = {
    "Conv": _conv,
    "Gemm": _gemm,
    "MatMul": lambda n, a, b: np.matmul(a, b),
    "Add": lambda n, a, b: a + b,
    "Sub": lambda n, a, b: a - b,
    "Mul": lambda n, a, b: a * b,
    "Div": lambda n, a, b: a / b,
    "Relu": lambda n, x: np.maximum(x, 0),
    "Clip": _clip,
    "Sigmoid": lambda n, x: 1 / (1 + np.exp(-x)),
    "HardSigmoid": lambda n, x: np.clip(_float(n, "alpha", 0.2) * x + _float(n, "beta", 0.5), 0, 1),
    "HardSwish": lambda n, x: x * np.clip(x / 6 + 0.5, 0, 1),
    "MaxPool": lambda n, x: _pool(n, x, "max"),
    "AveragePool": lambda n, x: _pool(n, x, "mean"),
    "GlobalAveragePool": lambda n, x: x.mean(axis=tuple(range(2, x.ndim)), keepdims=True),
    "Flatten": _flatten,
    "Reshape": _reshape,
    "Concat": lambda n, *xs: np.concatenate(xs, axis=_ints(n, "axis", 0)),
    "BatchNormalization": _batch_norm,
    "Transpose": lambda n, x: np.transpose(x, _ints(n, "perm", None)),
    "Identity": lambda n, x: x,
    "Dropout": lambda n, x, *rest: x,
    "Softmax": _softmax,  # called with the opset (see evaluate)
}


def evaluate(model: onnx.ModelProto, feed: dict[str, np.ndarray], consts: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every tensor's value on one batch; an op outside the evaluator's list is an ImportFailure
    naming its node."""
    opset = loader.default_opset(model)
    values = dict(consts)
    values.update(feed)
    for n in model.graph.node:
        where = f"node '{shown(n.name or '<unnamed>')}' {shown(n.op_type)}"
        if n.op_type == "Constant":
            values[n.output[0]] = numpy_helper.to_array(n.attribute[0].t) if n.attribute[0].name == "value" else None
            if values[n.output[0]] is None:
                raise ImportFailure(f"calibration: {where}: only the 'value' form is evaluated")
            continue
        fn = _EVAL.get(n.op_type) if n.domain in ("", "ai.onnx") else None
        if fn is None:
            raise ImportFailure(f"calibration: {where}: the calibrator's evaluator has no such op "
                                f"(it evaluates {', '.join(sorted(_EVAL))})")
        args = [values[i] if i else None for i in n.input]
        while args and args[-1] is None:
            args.pop()
        try:
            out = _softmax(n, *args, opset) if n.op_type == "Softmax" else fn(n, *args)
        except (Unsupported, ValueError, TypeError, IndexError) as e:
            raise ImportFailure(f"calibration: {where}: cannot evaluate: {e}") from None
        values[n.output[0]] = np.asarray(out, dtype=np.float32) if np.asarray(out).dtype.kind == "f" else np.asarray(out)
    return values



# --- calibration ------------------------------------------------------------------------------

class _Range:
    """One tensor's observed min and max and, for the percentile method, a histogram of |x|
    whose bin width is fixed by the first batch and which grows by whole bins (as ONNX Runtime's
    histogram calibrator merges batches)."""

    def __init__(self):
        self.lo, self.hi = np.inf, -np.inf
        self.hist: np.ndarray | None = None
        self.width = 0.0

    def add(self, x: np.ndarray, histogram: bool) -> None:
        self.lo, self.hi = min(self.lo, float(x.min())), max(self.hi, float(x.max()))
        if not histogram:
            return
        a = np.abs(x.astype(np.float64)).ravel()
        top = float(a.max())
        if self.hist is None:
            self.width = top / HISTOGRAM_BINS if top > 0 else 1.0
            self.hist = np.zeros(HISTOGRAM_BINS, np.int64)
        bins = max(len(self.hist), int(np.ceil(top / self.width)))
        if bins > len(self.hist):
            self.hist = np.concatenate([self.hist, np.zeros(bins - len(self.hist), np.int64)])
        self.hist += np.bincount(np.minimum((a / self.width).astype(np.int64), bins - 1), minlength=bins)

    def bounds(self, options: Options) -> tuple[float, float]:
        if options.method == "minmax":
            return self.lo, self.hi
        cdf = np.cumsum(self.hist) / self.hist.sum()
        t = (int(np.searchsorted(cdf, options.percentile / 100.0)) + 1) * self.width
        return max(self.lo, -t), min(self.hi, t)


def calibrate(model: onnx.ModelProto, batches: list[dict[str, np.ndarray]], options: Options) -> dict[str, tuple[float, float]]:
    """Every float tensor's range over the batches."""
    consts = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    ranges: dict[str, _Range] = {}
    for feed in batches:
        for name, v in evaluate(model, feed, consts).items():
            if name not in consts and isinstance(v, np.ndarray) and v.dtype == np.float32 and v.size:
                ranges.setdefault(name, _Range()).add(v, options.method == "percentile")
    return {name: r.bounds(options) for name, r in ranges.items()}


# --- the QDQ rewrite --------------------------------------------------------------------------

def activation_params(lo: float, hi: float) -> tuple[np.float32, np.uint8]:
    """u8 asymmetric scale and zero point of [lo, hi] widened to include 0."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if hi <= lo:
        return np.float32(1.0), np.uint8(0)
    scale = (hi - lo) / 255.0  # in double, then stored as float, as ONNX Runtime computes it
    return np.float32(scale), np.uint8(np.clip(np.round(-lo / scale), 0, 255))


def weight_params(w: np.ndarray, axis: int | None) -> np.ndarray:
    """s8 symmetric scales: max |w| / 127 per slice along `axis`, or of the whole tensor."""
    top = np.abs(w).max(axis=tuple(i for i in range(w.ndim) if i != axis)) if axis is not None else np.abs(w).max()
    scale = np.asarray(np.float64(top) * 2 / 254.0, np.float32)
    return np.where(scale > 0, scale, np.float32(1.0)).astype(np.float32)


class _Rewriter:
    def __init__(self, model: onnx.ModelProto):
        self.model = model
        self.consts = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
        self.new_inits: list[onnx.TensorProto] = []
        self.taken = {v for n in model.graph.node for v in (*n.input, *n.output)} | set(self.consts) \
            | {i.name for i in model.graph.input}

    def name(self, base: str) -> str:
        return unique_name(base, self.taken, start=1)

    def init(self, base: str, value: np.ndarray) -> str:
        name = self.name(base)
        self.new_inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def dequantize(self, base: str, q: np.ndarray, scale: np.ndarray, zero: np.ndarray, axis: int | None,
                   out: list[onnx.NodeProto]) -> str:
        qn = self.init(base + "_quantized", q)
        sn = self.init(base + "_scale", scale)
        zn = self.init(base + "_zero_point", zero)
        y = self.name(base + "_DequantizeLinear_Output")
        attrs = {"axis": axis} if axis is not None and scale.ndim == 1 else {}
        out.append(helper.make_node("DequantizeLinear", [qn, sn, zn], [y], name=self.name(base + "_DequantizeLinear"),
                                    **attrs))
        return y

    def weight(self, name: str, axis: int, out: list[onnx.NodeProto], per_channel: bool) -> tuple[str, np.ndarray]:
        w = self.consts[name].astype(np.float32)
        axis = axis if per_channel and w.ndim > 1 else None
        scale = weight_params(w, axis)
        shaped = scale.reshape([-1 if i == axis else 1 for i in range(w.ndim)]) if axis is not None else scale
        q = np.clip(np.round(w / shaped), -127, 127).astype(np.int8)
        return self.dequantize(name, q, scale, np.zeros(scale.shape, np.int8), axis, out), scale

    def bias(self, name: str, x_scale: float, w_scale: np.ndarray, out: list[onnx.NodeProto]) -> str:
        b = self.consts[name].astype(np.float32)
        scale = (np.float32(x_scale) * w_scale).astype(np.float32)
        q = np.clip(np.round(b.astype(np.float64) / scale.astype(np.float64)), -2**31, 2**31 - 1).astype(np.int32)
        return self.dequantize(name, q, scale, np.zeros(scale.shape, np.int32), 0, out)


def _plan(model: onnx.ModelProto, consts: set[str]) -> dict[str, str]:
    """The activations to quantize: tensor -> the tensor whose range gives its parameters."""
    consumers: dict[str, list[onnx.NodeProto]] = {}
    for n in model.graph.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    outputs = {o.name for o in model.graph.output}
    plan: dict[str, str] = {}
    for n in model.graph.node:
        if n.op_type not in QUANTIZED_OPS:
            continue
        for i in n.input[:2] if n.op_type in ("Conv", "Gemm") else n.input:
            if i and i not in consts:
                plan[i] = i
        y = n.output[0]
        users = consumers.get(y, [])
        if len(users) == 1 and users[0].op_type in FUSED_ACTIVATIONS and y not in outputs \
                and all(k == 0 or not i or i in consts for k, i in enumerate(users[0].input)):
            plan[users[0].output[0]] = users[0].output[0]  # quantized after the relu or clip
        else:
            plan[y] = y
    for n in model.graph.node:  # in graph order, so that chains of such ops share one range
        if n.op_type in SAME_AS_INPUT and n.input[0] in plan:
            plan[n.output[0]] = plan[n.input[0]]
    return plan


def to_qdq(model: onnx.ModelProto, ranges: dict[str, tuple[float, float]], options: Options) -> onnx.ModelProto:
    """The QDQ form of `model` with the calibrated `ranges`."""
    out_model = onnx.ModelProto()
    out_model.CopyFrom(model)
    g = out_model.graph
    rw = _Rewriter(out_model)
    constant = set(rw.consts) | {n.output[0] for n in g.node if n.op_type == "Constant"}
    plan = {t: src for t, src in _plan(out_model, constant).items() if src in ranges}
    params = {t: activation_params(*ranges[src]) for t, src in plan.items()}
    graph_outputs = {o.name for o in g.output}
    renamed: dict[str, str] = {}  # an activation -> its dequantized copy
    source_of: dict[str, str] = {}  # and back
    nodes: list[onnx.NodeProto] = []

    def quantize(t: str) -> None:
        scale, zp = params[t]
        sn, zn = rw.init(t + "_scale", scale), rw.init(t + "_zero_point", zp)
        src = t
        if t in graph_outputs:  # the output keeps its name: the producer's copy is renamed
            src = rw.name(t + "_float")
            for n in nodes:
                n.output[:] = [src if o == t else o for o in n.output]
        q = rw.name(t + "_QuantizeLinear_Output")
        dq = t if t in graph_outputs else rw.name(t + "_DequantizeLinear_Output")
        nodes.append(helper.make_node("QuantizeLinear", [src, sn, zn], [q], name=rw.name(t + "_QuantizeLinear")))
        nodes.append(helper.make_node("DequantizeLinear", [q, sn, zn], [dq], name=rw.name(t + "_DequantizeLinear")))
        renamed[t] = dq
        source_of[dq] = t

    for vi in g.input:
        if vi.name in plan:
            quantize(vi.name)
    for n in list(g.node):
        n.input[:] = [renamed.get(i, i) for i in n.input]
        if n.op_type in ("Conv", "Gemm", "MatMul") and len(n.input) > 1 and n.input[1] in rw.consts:
            axis = 0 if n.op_type == "Conv" or (n.op_type == "Gemm" and _ints(n, "transB", 0)) \
                else rw.consts[n.input[1]].ndim - 1
            n.input[1], w_scale = rw.weight(n.input[1], axis, nodes, options.per_channel)
            x = source_of.get(n.input[0])
            b = n.input[2] if len(n.input) > 2 else ""
            if b in rw.consts and x is not None and rw.consts[b].ndim == 1 \
                    and (w_scale.ndim == 0 or rw.consts[b].size == w_scale.size):
                n.input[2] = rw.bias(b, float(params[x][0]), w_scale, nodes)
        elif n.op_type in ("Add", "Mul", "Concat", "MatMul"):
            # A constant operand: s8 symmetric per tensor, like a weight.
            for k, i in enumerate(n.input):
                if i in rw.consts and rw.consts[i].dtype == np.float32 and rw.consts[i].size > 1:
                    n.input[k], _ = rw.weight(i, 0, nodes, False)
        nodes.append(n)
        for o in n.output:
            if o in plan:
                quantize(o)
    del g.node[:]
    g.node.extend(nodes)
    g.initializer.extend(rw.new_inits)
    used = {i for n in g.node for i in n.input}
    kept = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(kept)
    return out_model


def quantize_file(path: str, samples: str, options: Options, out_path: str, budget: Budget,
                  input_shapes: dict[str, list[int]]) -> str:
    """Reads and checks the float model at `path`, calibrates it on `samples`, writes its QDQ
    form to `out_path`; returns `out_path`."""
    model = loader.read_model(path, budget)
    quantized = [n for n in model.graph.node if n.op_type in _ALREADY_QUANTIZED or n.op_type.startswith("QLinear")]
    if quantized:
        raise ImportFailure(f"{shown(path)}: already quantized (node '{shown(quantized[0].name or '<unnamed>')}' "
                            f"{shown(quantized[0].op_type)}); import it without --quantize")
    opset = loader.default_opset(model)
    if options.per_channel and opset < 13:
        raise ImportFailure(f"{shown(path)}: opset {opset}: per-channel weights need DequantizeLinear's axis, "
                            f"from opset 13; re-export with opset_version=13 or later, or pass --per-tensor")
    if opset < 10:
        raise ImportFailure(f"{shown(path)}: opset {opset}: QuantizeLinear needs opset 10 or later")
    inits = {i.name for i in model.graph.initializer}
    inputs = {vi.name: list(input_shapes[vi.name]) if vi.name in input_shapes else
              [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None for d in vi.type.tensor_type.shape.dim]
              for vi in model.graph.input if vi.name not in inits}
    batches = read_samples(samples, inputs, budget)
    ranges = calibrate(model, batches, options)
    qdq = to_qdq(model, ranges, options)
    try:
        onnx.save(qdq, out_path)
    except OSError as e:
        raise ImportFailure(f"--write-qdq '{shown(out_path)}': cannot write ({e.strerror})") from None
    return out_path
