"""Quantized ops of the operator form, rewritten in QDQ form before anything else reads the graph.

ONNX writes a quantized model in two ways: QDQ form (`DequantizeLinear -> Conv ->
QuantizeLinear`, float ops between quantization nodes) and operator form (`QLinearConv`,
`QLinearMatMul`, `MatMulInteger`, ONNX Runtime's `QLinearAdd` ...). Partita's passes and the
cpu backend's patterns read QDQ form only, so each operator-form node becomes its QDQ
equivalent here, on the ONNX model, before shape inference (which does not know the
com.microsoft ops): every quantized input dequantized, the float op, the output quantized.
The nodes written keep the original node's name and say in their doc string which op they
come from (graph.EXPANDED_FROM), so that messages and the header name it.

    QLinearConv(x, sx, zx, w, sw, zw, sy, zy, B)
        -> QuantizeLinear(Conv(DQ(x, sx, zx), DQ(w, sw, zw, axis 0), DQ(B, sx * sw, axis 0)), sy, zy)

The bias scale `sx * sw` is a `Mul` that constant folding computes in float32. A `Clip` of the
integer output of a QuantizeLinear (PyTorch's fbgemm exports clamp activations to [0, 127] so)
becomes the float clip of its dequantized value, quantized again with the same parameters:

    Clip(QuantizeLinear(x, s, z), lo, hi)
        -> QuantizeLinear(Clip(DQ(QuantizeLinear(x, s, z), s, z), (lo - z) * s, (hi - z) * s), s, z)

which is exact (each bound and value is an integer multiple of s, dequantized and quantized
back to itself); a Clip of float values is left as it is. `MatMulInteger`
and `ConvInteger` become a float product of the operands dequantized with scale 1, quantized to
int32 with scale 1 (written as a `Cast` to int32, which ops.py maps to that quantize): exact
while every sum stays below 2^24 in magnitude, which is checked when the weight is a constant.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from . import quant
from .errors import ImportFailure, shown
from .graph import EXPANDED_FROM, unique_name

MICROSOFT = "com.microsoft"


class _Refused(Exception):
    """An operator-form node that cannot be expanded; the message says why."""


class _Expander:
    """Writes the QDQ nodes of one operator-form node at a time."""

    def __init__(self, model: onnx.ModelProto, opset: int):
        g = model.graph
        self.g = g
        self.opset = opset
        self.consts: dict[str, np.ndarray] = {}
        for t in g.initializer:
            self.consts[t.name] = t  # read on demand: most are never looked at
        for n in g.node:
            if n.op_type == "Constant" and n.domain in ("", "ai.onnx") and len(n.output) == 1:
                for a in n.attribute:
                    if a.name == "value" and a.HasField("t"):
                        self.consts[n.output[0]] = a.t
        self.taken = {v for n in g.node for v in list(n.input) + list(n.output)}
        self.taken |= {v.name for v in list(g.input) + list(g.output)} | set(self.consts)
        self.out: list[onnx.NodeProto] = []
        self.node: onnx.NodeProto | None = None
        self.producer = {o: n for n in g.node for o in n.output}

    def const(self, name: str) -> np.ndarray | None:
        t = self.consts.get(name) if name else None
        if t is None:
            return None
        if isinstance(t, onnx.TensorProto):
            t = self.consts[name] = numpy_helper.to_array(t)
        return t

    def fresh(self, hint: str) -> str:
        return unique_name(hint, self.taken, sep=".")

    def initializer(self, hint: str, value: np.ndarray) -> str:
        name = self.fresh(hint)
        self.g.initializer.append(numpy_helper.from_array(value, name))
        self.consts[name] = value
        return name

    def emit(self, op: str, inputs: list[str], output: str, **attrs) -> str:
        n = self.node
        self.out.append(helper.make_node(op, inputs, [output], name=n.name,
                                         doc_string=EXPANDED_FROM + n.op_type, **attrs))
        return output

    def axis_attrs(self, scale: str, axis: int) -> dict:
        """`axis` for a DequantizeLinear whose scale (or the scale it is computed from) may be
        per axis."""
        s = self.const(scale)
        if s is not None and not quant.per_axis(s):
            return {}
        if self.opset < 13:
            raise _Refused(f"a per-axis scale ('{shown(scale)}') needs opset 13 (the axis of DequantizeLinear); "
                           f"re-export with opset 13")
        return {"axis": axis}

    def dequantize(self, x: str, scale: str, zp: str, axis: int = 1, like: str = "") -> str:
        """The DequantizeLinear of `x`; `like` names the scale that decides whether `scale` is
        per axis when `scale` is computed."""
        out = self.fresh(f"{x}.dequantized")
        inputs = [x, scale] + ([zp] if zp else [])
        return self.emit("DequantizeLinear", inputs, out, **self.axis_attrs(like or scale, axis))

    def quantize(self, x: str, scale: str, zp: str, out: str) -> str:
        if not zp:  # com.microsoft ops default to a zero of the input's type: u8 when unknown
            dtype = self.zero_type
            zp = self.initializer(f"{out}.zero_point", np.zeros((), dtype=dtype))
        return self.emit("QuantizeLinear", [x, scale, zp], out)

    @property
    def zero_type(self) -> np.dtype:
        """The quantized type of the node's first zero point, when it is a constant; else u8."""
        for i in self.node.input:
            c = self.const(i)
            if c is not None and c.dtype in quant.ZERO_POINT_TYPES and c.dtype != np.int32:
                return c.dtype
        return quant.DEFAULT_TYPE

    def float_out(self, op: str) -> str:
        return self.fresh(f"{self.node.output[0]}.{op.lower()}")


def _input(n: onnx.NodeProto, i: int) -> str:
    return n.input[i] if i < len(n.input) else ""


def _float_attrs(n: onnx.NodeProto, drop: tuple[str, ...] = ()) -> dict:
    return {a.name: helper.get_attribute_value(a) for a in n.attribute if a.name not in drop}


def _qlinear_conv(e: _Expander, n: onnx.NodeProto) -> None:
    x = e.dequantize(n.input[0], n.input[1], n.input[2])
    w = e.dequantize(n.input[3], n.input[4], n.input[5], axis=0)
    inputs = [x, w]
    if _input(n, 8):
        scale = e.emit("Mul", [n.input[1], n.input[4]], e.fresh(f"{n.input[8]}.scale"))
        inputs.append(e.dequantize(n.input[8], scale, "", axis=0, like=n.input[4]))
    y = e.emit("Conv", inputs, e.float_out("Conv"), **_float_attrs(n))
    e.quantize(y, n.input[6], n.input[7], n.output[0])


def _qlinear_matmul(e: _Expander, n: onnx.NodeProto) -> None:
    a = e.dequantize(n.input[0], n.input[1], n.input[2], axis=-2)  # per row, when per axis
    b = e.dequantize(n.input[3], n.input[4], n.input[5], axis=-1)  # per column
    y = e.emit("MatMul", [a, b], e.float_out("MatMul"))
    e.quantize(y, n.input[6], n.input[7], n.output[0])


def _ones_like(e: _Expander, zp: str, hint: str) -> str:
    """A scale of 1 for the integer operand whose zero point is `zp`, of its shape."""
    c = e.const(zp)
    if zp and c is None:
        raise _Refused(f"the zero point '{shown(zp)}' must be a constant")
    return e.initializer(f"{hint}.unit_scale", np.ones(c.shape if c is not None else (), dtype=np.float32))


def _integer_bound(e: _Expander, a_zp: str, w: str, w_zp: str, reduce_axes: tuple[int, ...],
                   zp_axis: int) -> float | None:
    """The largest |sum| of (a - za)(w - zw) the integer product can reach, when the weight is
    a constant (else None): each |a - za| at most the quantized type's range around its zero
    point."""
    wv = e.const(w)
    if wv is None:
        return None
    za = e.const(a_zp)
    if za is not None:
        info = np.iinfo(za.dtype)
        z = za.astype(np.int64)
        a_max = float(np.max(np.maximum(z - info.min, info.max - z)))
    else:
        a_max = 255.0
    zw = e.const(w_zp)
    wide = wv.astype(np.int64)
    if zw is not None:
        wide = wide - quant.broadcast(zw.astype(np.int64), zp_axis, wv.ndim)
    return a_max * float(np.max(np.sum(np.abs(wide), axis=reduce_axes), initial=0))


def _integer(e: _Expander, n: onnx.NodeProto) -> None:
    """MatMulInteger and ConvInteger: dequantized with scale 1, the float op, quantized to int32."""
    conv = n.op_type == "ConvInteger"
    a_zp, w_zp = _input(n, 2), _input(n, 3)
    w = n.input[1]
    wv = e.const(w)
    if conv:
        bound = _integer_bound(e, a_zp, w, w_zp, (1, 2, 3)[:max(wv.ndim - 1, 0)] if wv is not None else (), 0)
    else:
        bound = _integer_bound(e, a_zp, w, w_zp, (wv.ndim - 2,) if wv is not None and wv.ndim >= 2 else (),
                               max(wv.ndim - 1, 0) if wv is not None else 0)
    if bound is not None and not quant.exact_accumulation(bound):
        raise _Refused(f"its integer sums may reach {bound:.0f} in magnitude, and Partita computes them in float32, "
                       f"exact below 2^24 = 16777216")
    a = e.dequantize(n.input[0], _ones_like(e, a_zp, n.input[0]), a_zp, axis=-2 if not conv else 1)
    wd = e.dequantize(w, _ones_like(e, w_zp, w), w_zp, axis=0 if conv else -1)
    op = "Conv" if conv else "MatMul"
    y = e.emit(op, [a, wd], e.float_out(op), **(_float_attrs(n) if conv else {}))
    # A Cast to int32 for ONNX's shape inference (QuantizeLinear to int32 is not an ONNX op
    # before opset 21): the float sums are whole numbers, so it is the quantize to int32 with
    # scale 1 and zero point 0 that ops.py writes for it.
    e.emit("Cast", [y], n.output[0], to=onnx.TensorProto.INT32)


def _channels_first(n: onnx.NodeProto) -> None:
    for a in n.attribute:
        if a.name == "channels_last" and helper.get_attribute_value(a):
            raise _Refused("channels_last=1: Partita pools NCHW")


def _elementwise(op: str):
    """QLinearAdd, QLinearMul: (A, sa, za, B, sb, zb, sc, zc)."""
    def expand(e: _Expander, n: onnx.NodeProto) -> None:
        a = e.dequantize(n.input[0], n.input[1], _input(n, 2))
        b = e.dequantize(n.input[3], n.input[4], _input(n, 5))
        y = e.emit(op, [a, b], e.float_out(op))
        e.quantize(y, n.input[6], _input(n, 7), n.output[0])
    return expand


def _unary(op: str, drop: tuple[str, ...] = ("channels_last",)):
    """QLinearGlobalAveragePool, QLinearAveragePool, QLinearSigmoid, QLinearLeakyRelu:
    (X, sx, zx, sy, zy) and the float op's attributes."""
    def expand(e: _Expander, n: onnx.NodeProto) -> None:
        _channels_first(n)
        x = e.dequantize(n.input[0], n.input[1], _input(n, 2))
        y = e.emit(op, [x], e.float_out(op), **_float_attrs(n, drop))
        e.quantize(y, n.input[3], _input(n, 4), n.output[0])
    return expand


def _qlinear_concat(e: _Expander, n: onnx.NodeProto) -> None:
    """QLinearConcat: (sy, zy, then (X, sx, zx) per input); attribute axis."""
    ins = list(n.input)
    if len(ins) < 5 or (len(ins) - 2) % 3:
        raise _Refused(f"{len(ins)} inputs: expected the output's scale and zero point, then three per input")
    parts = [e.dequantize(ins[k], ins[k + 1], ins[k + 2]) for k in range(2, len(ins), 3)]
    y = e.emit("Concat", parts, e.float_out("Concat"), **_float_attrs(n))
    e.quantize(y, ins[0], ins[1], n.output[0])


# Operator forms by (domain, op type); the default domain is "".
def _integer_clip(e: _Expander, n: onnx.NodeProto) -> None:
    """Clip of a QuantizeLinear's per-tensor output with constant bounds, in QDQ form; any other
    Clip stays as it is."""
    q = e.producer.get(n.input[0])
    bounds = [e.const(_input(n, i)) if _input(n, i) else None for i in (1, 2)]
    if q is None or q.op_type != "QuantizeLinear" or len(q.input) < 3 or len(n.attribute) or \
            any(_input(n, i) and b is None for i, b in zip((1, 2), bounds)):
        e.out.append(n)
        return
    scale, zp = e.const(q.input[1]), e.const(q.input[2])
    if scale is None or zp is None or scale.size != 1 or zp.size != 1:
        e.out.append(n)
        return
    s, z = np.float32(scale.reshape(())), np.int64(zp.reshape(()))
    x = e.dequantize(n.input[0], q.input[1], q.input[2])
    inputs = [x]
    for i, b in zip(("min", "max"), bounds):
        # As DequantizeLinear computes it: float32(q - z) · s in float32.
        inputs.append(e.initializer(f"{n.output[0]}.{i}", np.float32(np.float32(np.int64(b.reshape(())) - z) * s))
                      if b is not None else "")
    while inputs and not inputs[-1]:
        inputs.pop()
    y = e.emit("Clip", inputs, e.float_out("Clip"))
    e.quantize(y, q.input[1], q.input[2], n.output[0])


_EXPANSIONS = {
    ("", "QLinearConv"): _qlinear_conv, ("", "QLinearMatMul"): _qlinear_matmul,
    ("", "MatMulInteger"): _integer, ("", "ConvInteger"): _integer,
    (MICROSOFT, "QLinearAdd"): _elementwise("Add"), (MICROSOFT, "QLinearMul"): _elementwise("Mul"),
    (MICROSOFT, "QLinearGlobalAveragePool"): _unary("GlobalAveragePool"),
    (MICROSOFT, "QLinearAveragePool"): _unary("AveragePool"),
    (MICROSOFT, "QLinearSigmoid"): _unary("Sigmoid"), (MICROSOFT, "QLinearLeakyRelu"): _unary("LeakyRelu"),
    (MICROSOFT, "QLinearConcat"): _qlinear_concat, ("", "Clip"): _integer_clip,
}


def expand(model: onnx.ModelProto, path: str, opset: int) -> None:
    """Rewrites every operator-form quantized node of `model`'s main graph in QDQ form, in
    place; a node that cannot be is refused, every one at once, one line each."""
    g = model.graph
    domain = lambda n: "" if n.domain == "ai.onnx" else n.domain  # noqa: E731
    if not any((domain(n), n.op_type) in _EXPANSIONS for n in g.node):
        return
    e = _Expander(model, opset)
    problems = []
    for n in g.node:
        how = _EXPANSIONS.get((domain(n), n.op_type))
        if how is None:
            e.out.append(n)
            continue
        e.node = n
        mark = len(e.out)
        try:
            how(e, n)
        except (_Refused, IndexError) as err:
            why = str(err) if isinstance(err, _Refused) else "fewer inputs than the op takes"
            problems.append(f"node '{shown(n.name or '<unnamed>')}' {shown(n.op_type)}: {why}")
            del e.out[mark:]
            e.out.append(n)
    if problems:
        raise ImportFailure(f"{shown(path)}: {len(problems)} quantized node{'s' if len(problems) != 1 else ''} "
                            f"cannot be imported:", problems)
    del g.node[:]
    g.node.extend(e.out)
