"""The mapping table: each ONNX op to the Partita op types that compute it.

`MAPPERS[op_type](m, node)` returns one term per output of `node`, or raises `Unsupported` with
the reason, in the user's terms (which attribute value Partita lacks). The limits are those of
docs/ops.md; docs/onnx.md lists them per op.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from . import quant
from .graph import Graph, Node, Shape
from .terms import Term, apply, dims, fmt_float
from .weights import UnsupportedWeight, WeightTable


class Unsupported(Exception):
    """A node the table cannot map; the message says why."""


class Mapper:
    """Turns the cleaned-up graph into terms: value name -> term."""

    def __init__(self, g: Graph, weights: WeightTable):
        self.g = g
        self.weights = weights
        self.terms: dict[str, Term] = {}
        self.node: Node | None = None  # the node being mapped, the origin of new terms

    # -- values -------------------------------------------------------------------------------

    def shape(self, name: str) -> Shape:
        s = self.g.shape(name)
        if s is None:
            raise Unsupported(f"the shape of '{name}' is not static after shape inference")
        return s

    def out_shape(self, i: int = 0) -> Shape:
        return self.shape(self.node.outputs[i])

    def const(self, name: str) -> np.ndarray | None:
        return self.g.const(name)

    def need_const(self, name: str, what: str) -> np.ndarray:
        c = self.g.const(name)
        if c is None:
            raise Unsupported(f"{what} ('{name}') must be a constant")
        return c

    def weight(self, name: str) -> Term:
        """The weight leaf of constant `name`."""
        source, how = self.g.derived.get(name, (name, ""))
        try:
            entry = self.weights.add(name, self.g.const(name), note=(f"'{source}' {how}" if source else how) if how else "")
        except UnsupportedWeight as e:
            raise Unsupported(str(e)) from None
        return Term(entry.type_text(), leaf=True, shape=tuple(entry.data.shape))

    def value(self, name: str) -> Term:
        """The term of value `name`: its computation, or a weight when it is a constant."""
        if name in self.terms:
            return self.terms[name]
        if self.g.const(name) is not None:
            return self.weight(name)
        raise Unsupported(f"input '{name}' has no value")

    def operand(self, name: str, rank: int) -> Term:
        """An elementwise operand: small float constants become literals written in the type
        (`scalar<0.5f>`), larger ones weights; `rank` is the other operand's, which a scalar must
        not exceed (a literal keeps its own rank, so the result's does not change)."""
        c = self.g.const(name)
        if c is None or c.dtype.kind != "f":
            return self.value(name)
        if c.size == 1 and c.ndim <= rank:
            return Term(f"scalar<{fmt_float(c.reshape(-1)[0])}>", leaf=True, shape=())
        if c.size <= 16 and c.ndim >= 1:
            values = ", ".join(fmt_float(v) for v in c.reshape(-1))
            return Term(f"literal<dims<{dims(c.shape)}>, {values}>", leaf=True, shape=tuple(c.shape))
        return self.weight(name)

    def term(self, template: str, *args: Term, shape: Shape | None = None) -> Term:
        return apply(template, *args, shape=shape, origin=self.node)

    # -- attributes ---------------------------------------------------------------------------

    def ints(self, n: Node, attr: str, position: int) -> list[int] | None:
        """An int list given as attribute `attr` (older opsets) or constant input `position`."""
        if attr in n.attrs:
            return [int(v) for v in n.attrs[attr]]
        name = n.input(position)
        if not name:
            return None
        c = self.need_const(name, attr)
        if c.dtype.kind not in "iu":
            raise Unsupported(f"{attr} ('{name}') must be integers, not {c.dtype}")
        return [int(v) for v in c.reshape(-1)]

    def axes(self, n: Node, position: int, rank: int) -> list[int] | None:
        a = self.ints(n, "axes", position)
        return None if a is None else sorted(x + rank if x < 0 else x for x in a)

    def bound(self, n: Node, attr: str, position: int, default: float) -> float:
        """A float given as attribute `attr` or constant input `position` (Clip's min and max)."""
        if attr in n.attrs:
            return float(n.attrs[attr])
        name = n.input(position)
        return float(self.need_const(name, attr).reshape(-1)[0]) if name else default


Mapping = Callable[[Mapper, Node], list[Term]]


def _same(m: Mapper, n: Node) -> list[Term]:
    """The output is the input (a reshape to its own shape, a Cast to its own type)."""
    return [m.value(n.inputs[0])]


def _unary(template: str) -> Mapping:
    return lambda m, n: [m.term(template, m.value(n.inputs[0]), shape=m.out_shape())]


_BINARY = {"Add": "add", "Sub": "subtract", "Mul": "multiply", "Div": "divide", "Max": "maximum",
           "Min": "minimum", "Sum": "add"}


def _binary(m: Mapper, n: Node) -> list[Term]:
    names = [i for i in n.inputs if i]
    if not names:
        raise Unsupported("no inputs")
    if n.op in ("Max", "Min", "Sum") and len(names) == 1:
        return _same(m, n)
    if all(m.const(i) is not None for i in names):
        raise Unsupported("every input is a constant")  # folding failed for a reason numpy gave
    ranks = [len(m.shape(i)) for i in names]
    acc = m.value(names[0]) if m.const(names[0]) is None else m.operand(names[0], max(ranks[1:]))
    for k, name in enumerate(names[1:], 1):
        rhs = m.operand(name, max(ranks[:k]))
        shape = m.out_shape() if k == len(names) - 1 else None
        acc = m.term(f"{_BINARY[n.op]}<$0, $1>", acc, rhs, shape=shape)
    return [acc]


def _pow(m: Mapper, n: Node) -> list[Term]:
    e = m.const(n.inputs[1])
    if e is None or e.size != 1:
        raise Unsupported("the exponent must be a constant scalar")
    e = float(e.reshape(-1)[0])
    x = m.value(n.inputs[0])
    if e == 1.0:
        return [x]
    if e == 0.5:
        return [m.term("sqrt_<$0>", x, shape=m.out_shape())]
    return [m.term(f"power<$0, {fmt_float(e)}>", x, shape=m.out_shape())]


def _reciprocal(m: Mapper, n: Node) -> list[Term]:
    return [m.term("divide<scalar<1.0f>, $0>", m.value(n.inputs[0]), shape=m.out_shape())]


def _clip(m: Mapper, n: Node) -> list[Term]:
    lo = m.bound(n, "min", 1, -math.inf)
    hi = m.bound(n, "max", 2, math.inf)
    x = m.value(n.inputs[0])
    if lo == -math.inf and hi == math.inf:
        return [x]
    if lo == 0.0 and hi == math.inf:
        return [m.term("relu<$0>", x, shape=m.out_shape())]
    if lo > hi:
        raise Unsupported(f"min {lo} is above max {hi}")
    return [m.term(f"clip<$0, {fmt_float(lo)}, {fmt_float(hi)}>", x, shape=m.out_shape())]


def _leaky_relu(m: Mapper, n: Node) -> list[Term]:
    alpha = n.attrs.get("alpha", 0.01)
    return [m.term(f"leaky_relu<$0, {fmt_float(alpha)}>", m.value(n.inputs[0]), shape=m.out_shape())]


def _hard_sigmoid(m: Mapper, n: Node) -> list[Term]:
    alpha, beta = n.attrs.get("alpha", 0.2), n.attrs.get("beta", 0.5)
    return [m.term(f"hardsigmoid<$0, {fmt_float(alpha)}, {fmt_float(beta)}>", m.value(n.inputs[0]),
                   shape=m.out_shape())]


def _prelu(m: Mapper, n: Node) -> list[Term]:
    return [m.term("prelu<$0, $1>", m.value(n.inputs[0]), m.value(n.inputs[1]), shape=m.out_shape())]


def _gelu(m: Mapper, n: Node) -> list[Term]:
    approx = n.attrs.get("approximate", "none")
    op = {"none": "gelu", "tanh": "gelu_tanh"}.get(approx)
    if op is None:
        raise Unsupported(f"approximate='{approx}'")
    return [m.term(f"{op}<$0>", m.value(n.inputs[0]), shape=m.out_shape())]


# -- convolution and pooling ---------------------------------------------------------------


def _spatial_pads(n: Node, size: Shape, kernel: list[int], strides: list[int], dilations: list[int]) -> list[int]:
    """ONNX's [begin..., end...] of each spatial axis, with auto_pad resolved."""
    auto = n.attrs.get("auto_pad", "NOTSET")
    k = len(kernel)
    if auto in ("NOTSET", ""):
        return [int(p) for p in n.attrs.get("pads", [0] * 2 * k)]
    if auto == "VALID":
        return [0] * 2 * k
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise Unsupported(f"auto_pad='{auto}'")
    begin, end = [], []
    for i in range(k):
        out = -(-size[i] // strides[i])
        total = max((out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - size[i], 0)
        small, large = total // 2, total - total // 2
        begin.append(small if auto == "SAME_UPPER" else large)
        end.append(large if auto == "SAME_UPPER" else small)
    return begin + end


def _vector(values: list[int]) -> str:
    """An attribute of each spatial axis: `{2, 2}` for conv2d and pooling, `2` for conv1d."""
    return str(values[0]) if len(values) == 1 else "{" + ", ".join(str(v) for v in values) + "}"


def _window_fields(pads: list[int], strides: list[int] | None = None, dilations: list[int] | None = None,
                   output_padding: list[int] | None = None) -> list[str]:
    """`.stride`, `.padding`, `.padding_end`, `.output_padding`, `.dilation` where they differ
    from the defaults, in the order the attribute structs declare them. `pads` is ONNX's
    [begin..., end...]; `.padding_end` is written only when the two sides differ."""
    k = len(pads) // 2
    begin, end = pads[:k], pads[k:]
    fields = []
    if strides is not None and strides != [1] * k:
        fields.append(f".stride = {_vector(strides)}")
    if begin != [0] * k:
        fields.append(f".padding = {_vector(begin)}")
    if end != begin:
        fields.append(f".padding_end = {_vector(end)}")
    if output_padding is not None and output_padding != [0] * k:
        fields.append(f".output_padding = {_vector(output_padding)}")
    if dilations is not None and dilations != [1] * k:
        fields.append(f".dilation = {_vector(dilations)}")
    return fields


def _braced(fields: list[str]) -> str:
    return f", {{{', '.join(fields)}}}" if fields else ""


def _explicit_pad(m: Mapper, x: Term, rank: int, pads: list[int], value: float = 0.0) -> Term:
    """`pad` of the trailing axes by `pads` [begin..., end...] (ONNX's Pad, or the importer's own)."""
    k = len(pads) // 2
    before = [0] * (rank - k) + pads[:k]
    after = [0] * (rank - k) + pads[k:]
    suffix = "" if value == 0.0 else f", {fmt_float(value)}"
    return m.term(f"pad<$0, dims<{dims(before)}>, dims<{dims(after)}>{suffix}>", x)


def _with_bias(m: Mapper, n: Node, op: Term) -> list[Term]:
    """`op`, the output of `n`, plus `n`'s optional bias input (input 2) along the channels."""
    if not n.input(2):
        op.shape = m.out_shape()
        return [op]
    return [m.term("bias_add<$0, $1>", op, m.value(n.input(2)), shape=m.out_shape())]


def _conv(m: Mapper, n: Node) -> list[Term]:
    xs, ws = m.shape(n.inputs[0]), m.shape(n.inputs[1])
    k = len(xs) - 2
    if k not in (1, 2):
        raise Unsupported(f"a {k}-D convolution: Partita has conv1d (NCL) and conv2d (NCHW)")
    kernel = list(n.attrs.get("kernel_shape", ws[2:]))
    strides = list(n.attrs.get("strides", [1] * k))
    dilations = list(n.attrs.get("dilations", [1] * k))
    group = int(n.attrs.get("group", 1))
    pads = _spatial_pads(n, xs[2:], kernel, strides, dilations)
    if any(p < 0 for p in pads):
        raise Unsupported(f"negative pads {pads}")
    fields = _window_fields(pads, strides, dilations)
    if group != 1:
        fields.append(f".groups = {group}")
    op = "conv2d" if k == 2 else "conv1d"
    return _with_bias(m, n, m.term(f"{op}<$0, $1{_braced(fields)}>", m.value(n.inputs[0]), m.value(n.inputs[1])))


def _conv_transpose(m: Mapper, n: Node) -> list[Term]:
    xs, ws = list(m.shape(n.inputs[0])), list(m.shape(n.inputs[1]))
    k = len(xs) - 2
    if k not in (1, 2):
        raise Unsupported(f"a {k}-D transposed convolution: Partita has conv_transpose2d (NCHW), and NCL as NCHW "
                          "of height 1")
    kernel = ws[2:]
    if list(n.attrs.get("kernel_shape", kernel)) != kernel:
        raise Unsupported(f"kernel_shape {list(n.attrs['kernel_shape'])} differs from the weight's {kernel}")
    for attr in ("strides", "dilations", "output_padding"):
        if attr in n.attrs and len(n.attrs[attr]) != k:
            raise Unsupported(f"{attr} {list(n.attrs[attr])} for {k} spatial axes")
    if "output_shape" in n.attrs and len(n.attrs["output_shape"]) < k:
        raise Unsupported(f"output_shape {list(n.attrs['output_shape'])} for {k} spatial axes")
    # A 1-D one is the 2-D one of height 1: every attribute gains a leading axis of no effect.
    lift = (lambda v, fill: [fill] + [int(x) for x in v]) if k == 1 else (lambda v, fill: [int(x) for x in v])
    strides = lift(n.attrs.get("strides", [1] * k), 1)
    dilations = lift(n.attrs.get("dilations", [1] * k), 1)
    extra = lift(n.attrs.get("output_padding", [0] * k), 0)
    group = int(n.attrs.get("group", 1))
    auto = n.attrs.get("auto_pad", "NOTSET")
    target = n.attrs.get("output_shape")
    if target is not None:
        target = lift(list(target)[-k:], 1)
    if k == 1:
        xs, ws, kernel = xs[:2] + [1] + xs[2:], ws[:2] + [1] + ws[2:], [1] + kernel
    if auto not in ("NOTSET", "", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise Unsupported(f"auto_pad='{auto}'")
    if target is not None or auto in ("SAME_UPPER", "SAME_LOWER"):
        # The padding that gives the requested extent (output_shape, else input · stride), split
        # as ONNX specifies: the odd row at the end for SAME_UPPER, at the beginning otherwise.
        want = target if target is not None else [xs[2 + i] * strides[i] for i in range(2)]
        begin, end = [0, 0], [0, 0]
        for i in range(2):
            total = strides[i] * (xs[2 + i] - 1) + extra[i] + (kernel[i] - 1) * dilations[i] + 1 - want[i]
            if total < 0:
                extra[i] -= total  # rows past the last one any input reaches: more output padding
            elif auto == "SAME_UPPER":
                begin[i], end[i] = total // 2, total - total // 2
            else:
                begin[i], end[i] = total - total // 2, total // 2
        pads = begin + end
    elif auto == "VALID":
        pads = [0, 0, 0, 0]
    else:
        pads = [int(p) for p in n.attrs.get("pads", [0] * 2 * k)]
        if k == 1:
            pads = [0, pads[0], 0, pads[1]]
    if any(p < 0 for p in pads):
        raise Unsupported(f"negative pads {pads}")
    for i in range(2):
        if extra[i] >= strides[i] and extra[i] >= dilations[i]:
            raise Unsupported(f"an output padding of {extra[i]} along axis {2 + i - (2 - k)}, not smaller than the "
                              f"stride {strides[i]} or the dilation {dilations[i]}")
    fields = _window_fields(pads, strides, dilations, extra)
    if group != 1:
        fields.append(f".groups = {group}")
    x, w = m.value(n.inputs[0]), m.value(n.inputs[1])
    if k == 1:
        # The weight [C, O/g, K] as [C, O/g, 1, K]: the same bytes under a 4-D declaration.
        if m.g.const(n.inputs[1]) is None:
            raise Unsupported("a 1-D transposed convolution whose weight is computed: it is declared as 2-D, "
                              "which needs a constant")
        entry = m.weights.add(n.inputs[1], m.g.const(n.inputs[1]).reshape(ws), variant=".2d",
                              note="viewed as the 2-D transposed convolution's weight of height 1")
        w = Term(entry.type_text(), leaf=True, shape=tuple(ws))
        x = m.term(f"reshape<$0, {dims(xs)}>", x)
        out = list(m.out_shape())
        t = m.term(f"reshape<conv_transpose2d<$0, $1{_braced(fields)}>, {dims(out)}>", x, w)
    else:
        t = m.term(f"conv_transpose2d<$0, $1{_braced(fields)}>", x, w)
    return _with_bias(m, n, t)


def _depth_to_space(m: Mapper, n: Node) -> list[Term]:
    block = int(n.attrs["blocksize"])
    x = m.value(n.inputs[0])
    if n.op == "SpaceToDepth":
        return [m.term(f"space_to_depth<$0, {block}>", x, shape=m.out_shape())]
    mode = n.attrs.get("mode", "DCR")
    if mode not in ("DCR", "CRD"):
        raise Unsupported(f"mode='{mode}'")
    suffix = ", depth_to_space_mode::crd" if mode == "CRD" else ""
    return [m.term(f"depth_to_space<$0, {block}{suffix}>", x, shape=m.out_shape())]


def _pool_extent(size: int, k: int, s: int, p: int, p_end: int, ceil: bool) -> int:
    # Partita's (and PyTorch's) rule: a last window never starts in the trailing padding.
    span = size + p + p_end - k
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool(m: Mapper, n: Node) -> list[Term]:
    if len(n.outputs) > 1 and n.outputs[1]:
        raise Unsupported("the Indices output")
    xs = m.shape(n.inputs[0])
    k = len(xs) - 2
    if k not in (1, 2):
        raise Unsupported(f"{k}-D pooling: Partita pools NCHW (2-D), and NCL (1-D) as NCHW of height 1")
    kernel = list(n.attrs["kernel_shape"])
    strides = list(n.attrs.get("strides", [1] * k))
    dilations = list(n.attrs.get("dilations", [1] * k))
    if dilations != [1] * k:
        raise Unsupported(f"dilations={dilations}: Partita's pooling has no dilation")
    ceil = bool(n.attrs.get("ceil_mode", 0))
    include_pad = bool(n.attrs.get("count_include_pad", 0))
    pads = _spatial_pads(n, xs[2:], kernel, strides, dilations)
    if any(p < 0 for p in pads):
        raise Unsupported(f"negative pads {pads}")
    expected = m.out_shape()
    got = tuple(xs[:2]) + tuple(_pool_extent(xs[2 + i], kernel[i], strides[i], pads[i], pads[k + i], ceil)
                                for i in range(k))
    if got != expected:
        raise Unsupported(f"ONNX's output {list(expected)} differs from Partita's {list(got)} (ceil_mode rule)")
    x = m.value(n.inputs[0])
    if k == 1:
        # NCL pools as NCHW of height 1: a window of one row, no padding above or below.
        kernel, strides, pads = [1] + kernel, [1] + strides, [0, pads[0], 0, pads[1]]
        x = m.term(f"reshape<$0, {dims([xs[0], xs[1], 1, xs[2]])}>", x)
    # The stride is always written: Partita's default is the window size, ONNX's is 1.
    fields = [f".size = {_vector(kernel)}", f".stride = {_vector(strides)}"] + _window_fields(pads)
    if include_pad and n.op == "AveragePool":
        fields.append(".count_include_pad = true")
    if ceil:
        fields.append(".ceil_mode = true")
    op = "max_pool2d" if n.op == "MaxPool" else "avg_pool2d"
    pooled = f"{op}<$0, {{{', '.join(fields)}}}>"
    if k == 1:
        pooled = f"reshape<{pooled}, {dims(list(expected))}>"
    return [m.term(pooled, x, shape=expected)]


def _global_pool(m: Mapper, n: Node) -> list[Term]:
    xs = m.shape(n.inputs[0])
    x = m.value(n.inputs[0])
    if n.op == "GlobalAveragePool" and len(xs) == 4:
        return [m.term("global_avg_pool2d<$0>", x, shape=m.out_shape())]
    op = "reduce_mean" if n.op == "GlobalAveragePool" else "reduce_max"
    return [m.term(f"{op}<$0, axes<{dims(range(2, len(xs)))}>, true>", x, shape=m.out_shape())]


def _batch_norm(m: Mapper, n: Node) -> list[Term]:
    if n.attrs.get("training_mode", 0) or any(o for o in n.outputs[1:]):
        raise Unsupported("training mode (running statistics as outputs)")
    args = [m.value(n.inputs[0])] + [m.value(i) for i in n.inputs[1:5]]
    eps = fmt_float(n.attrs.get("epsilon", 1e-5))
    return [m.term(f"batch_norm<$0, $1, $2, $3, $4, {eps}>", *args, shape=m.out_shape())]


def _resize(m: Mapper, n: Node) -> list[Term]:
    xs, out = m.shape(n.inputs[0]), m.out_shape()
    if len(xs) != 4 or tuple(xs[:2]) != tuple(out[:2]):
        raise Unsupported(f"resizing {list(xs)} to {list(out)}: Partita resizes the H and W of NCHW only")
    mode = n.attrs.get("mode", "nearest")
    if n.op == "Upsample":
        transform, nearest = "asymmetric", "floor"
    else:
        transform = n.attrs.get("coordinate_transformation_mode", "half_pixel")
        nearest = n.attrs.get("nearest_mode", "round_prefer_floor")
    if n.attrs.get("antialias", 0):
        raise Unsupported("antialias=1")
    whole = all(out[i] % xs[i] == 0 for i in (2, 3))
    if mode == "nearest":
        # PyTorch's nearest is ONNX's asymmetric + floor; for whole upscaling factors the
        # half-pixel transforms pick the same pixels (the offset stays below half a pixel).
        if not ((transform == "asymmetric" and nearest == "floor")
                or (whole and transform in ("half_pixel", "pytorch_half_pixel"))):
            raise Unsupported(f"nearest with coordinate_transformation_mode='{transform}', nearest_mode='{nearest}'")
        attrs = ""
    elif mode == "linear":
        if transform == "align_corners":
            attrs = ", {.mode = resize_mode::bilinear, .align_corners = true}"
        elif transform == "pytorch_half_pixel" or (transform == "half_pixel" and min(out[2:]) > 1):
            attrs = ", {.mode = resize_mode::bilinear}"
        else:
            raise Unsupported(f"linear with coordinate_transformation_mode='{transform}'")
    else:
        raise Unsupported(f"mode='{mode}': Partita resizes with nearest and bilinear only")
    return [m.term(f"resize<$0, {out[2]}, {out[3]}{attrs}>", m.value(n.inputs[0]), shape=out)]


# -- shapes and data movement ----------------------------------------------------------------


def _reshape_to(m: Mapper, n: Node) -> list[Term]:
    """Flatten, Reshape, Squeeze, Unsqueeze: the output shape is known, so it is stated."""
    xs, out = m.shape(n.inputs[0]), m.out_shape()
    x = m.value(n.inputs[0])
    if tuple(xs) == tuple(out):
        return [x]
    if n.op == "Flatten" and len(xs) >= 2 and tuple(out) == (xs[0], int(np.prod(xs[1:]))):
        return [m.term("flatten<$0>", x, shape=out)]
    if n.op in ("Squeeze", "Unsqueeze"):
        rank = len(out) if n.op == "Unsqueeze" else len(xs)
        axes = m.axes(n, 1, rank)
        if axes is None:  # Squeeze of every axis of extent 1
            axes = [i for i, d in enumerate(xs) if d == 1]
        op = "squeeze" if n.op == "Squeeze" else "unsqueeze"
        return [m.term(f"{op}<$0, {dims(axes)}>", x, shape=out)]
    if len(out) == 0:
        raise Unsupported("a reshape to a scalar (rank 0)")
    return [m.term(f"reshape<$0, {dims(out)}>", x, shape=out)]


def _transpose(m: Mapper, n: Node) -> list[Term]:
    rank = len(m.shape(n.inputs[0]))
    perm = list(n.attrs.get("perm", range(rank - 1, -1, -1)))
    x = m.value(n.inputs[0])
    if perm == list(range(rank)):
        return [x]
    return [m.term(f"transpose<$0, {dims(perm)}>", x, shape=m.out_shape())]


def _slice_bounds(start: int, end: int, step: int, dim: int) -> tuple[int, int] | None:
    """ONNX bounds as Partita's slice reads them (same rules), clamped so that the type reads
    plainly; None when the slice takes everything."""
    s, e, _ = slice(start, end, step).indices(dim)
    if step > 0 and s == 0 and e >= dim and step == 1:
        return None
    if step < 0 and e < 0:
        e = -dim - 1  # "past the first element", which a plain -1 would not say
    return s, e


def _slice(m: Mapper, n: Node) -> list[Term]:
    xs = m.shape(n.inputs[0])
    if "starts" in n.attrs:
        starts, ends = list(n.attrs["starts"]), list(n.attrs["ends"])
        axes = list(n.attrs.get("axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        starts, ends = m.ints(n, "starts", 1), m.ints(n, "ends", 2)
        axes = m.ints(n, "axes", 3) or list(range(len(starts)))
        steps = m.ints(n, "steps", 4) or [1] * len(starts)
    t = m.value(n.inputs[0])
    cuts = []
    for start, end, axis, step in zip(starts, ends, axes, steps):
        if not -len(xs) <= axis < len(xs):
            raise Unsupported(f"axis {axis} of a rank-{len(xs)} input")
        axis = axis + len(xs) if axis < 0 else axis
        if step == 0:
            raise Unsupported("a step of 0")
        if len(range(*slice(start, end, step).indices(xs[axis]))) == 0:
            raise Unsupported(f"an empty slice of axis {axis}: Partita's slices are never empty")
        b = _slice_bounds(start, end, step, xs[axis])
        if b is not None:
            cuts.append((axis, b, step))
    for k, (axis, (s, e), step) in enumerate(cuts):
        suffix = f", {step}" if step != 1 else ""
        t = m.term(f"slice<$0, {axis}, {s}, {e}{suffix}>", t, shape=m.out_shape() if k == len(cuts) - 1 else None)
    return [t]


def _split(m: Mapper, n: Node) -> list[Term]:
    xs = m.shape(n.inputs[0])
    axis = int(n.attrs.get("axis", 0))
    axis = axis + len(xs) if axis < 0 else axis
    sizes = m.ints(n, "split", 1)
    if sizes is None:
        parts = len(n.outputs)
        size = -(-xs[axis] // parts)
        sizes = [size] * (parts - 1) + [xs[axis] - size * (parts - 1)]
    x = m.value(n.inputs[0])
    if len(sizes) == 1:
        return [x]
    whole = m.term(f"split<$0, {axis}, {dims(sizes)}>", x)
    whole.tensor = False
    return [m.term(f"get<$0, {i}>", whole, shape=m.out_shape(i)) if o else None
            for i, o in enumerate(n.outputs)]


def _concat(m: Mapper, n: Node) -> list[Term]:
    names = [i for i in n.inputs if i]
    rank = len(m.out_shape())
    axis = int(n.attrs["axis"])
    axis = axis + rank if axis < 0 else axis
    if len(names) == 1:
        return [m.value(names[0])]
    args = [m.value(i) for i in names]
    refs = ", ".join(f"${i}" for i in range(len(args)))
    return [m.term(f"concatenate<{axis}, {refs}>", *args, shape=m.out_shape())]


def _gather(m: Mapper, n: Node) -> list[Term]:
    data, idx = n.inputs[0], n.inputs[1]
    ds = m.shape(data)
    axis = int(n.attrs.get("axis", 0))
    axis = axis + len(ds) if axis < 0 else axis
    c = m.const(idx)
    if c is not None and m.const(data) is None:
        flat = [int(v) + (ds[axis] if v < 0 else 0) for v in c.reshape(-1)]
        x = m.value(data)
        if c.ndim == 0:  # x[..., i, ...]: one slice, its axis dropped
            cut = m.term(f"slice<$0, {axis}, {flat[0]}, {flat[0] + 1}>", x)
            return [m.term(f"squeeze<$0, {axis}>", cut, shape=m.out_shape())]
        if c.ndim == 1 and flat == list(range(flat[0], flat[0] + len(flat))):
            return [m.term(f"slice<$0, {axis}, {flat[0]}, {flat[-1] + 1}>", x, shape=m.out_shape())]
    if m.g.dtype(idx) not in (np.dtype(np.int64), np.dtype(np.int32)):
        raise Unsupported("indices that are not int32 or int64")
    table, ids = m.value(data), m.value(idx)
    if axis == 0:
        return [m.term("embedding<$0, $1>" if len(ds) == 2 else "gather<$0, $1>", table, ids, shape=m.out_shape())]
    return [m.term(f"gather<$0, $1, {axis}>", table, ids, shape=m.out_shape())]


def _pad(m: Mapper, n: Node) -> list[Term]:
    mode = n.attrs.get("mode", "constant")
    if mode != "constant":
        raise Unsupported(f"mode='{mode}': Partita pads with a constant only")
    xs = m.shape(n.inputs[0])
    pads = m.ints(n, "pads", 1) or [0] * 2 * len(xs)
    value = n.attrs.get("value", 0.0)
    if n.input(2):
        value = float(m.need_const(n.input(2), "constant_value").reshape(-1)[0])
    axes = m.axes(n, 3, len(xs))
    if axes is not None:  # opset 18: pads for the listed axes only
        k = len(axes)
        full = [0] * 2 * len(xs)
        for j, a in enumerate(axes):
            full[a], full[len(xs) + a] = pads[j], pads[k + j]
        pads = full
    if any(p < 0 for p in pads):
        raise Unsupported(f"negative pads {pads} (cropping)")
    x = m.value(n.inputs[0])
    if not any(pads):
        return [x]
    t = _explicit_pad(m, x, len(xs), pads, value)
    t.shape = m.out_shape()
    return [t]


# -- linear algebra, normalization, reductions -------------------------------------------


def _dense(m: Mapper, n: Node) -> list[Term]:
    """The importer's own Dense node (fuse.py): weight [units, in_features], optional bias."""
    x, w = m.value(n.inputs[0]), m.value(n.inputs[1])
    if not n.input(2):
        return [m.term("dense<$0, $1>", x, w, shape=m.out_shape())]
    return [m.term("bias_add<$0, $1, -1>", m.term("dense<$0, $1>", x, w), m.value(n.input(2)), shape=m.out_shape())]


def _matmul(m: Mapper, n: Node) -> list[Term]:
    a, b = n.inputs
    if len(m.shape(a)) < 2 or len(m.shape(b)) < 2:
        raise Unsupported("a 1-D operand: Partita's matmul multiplies matrices (rank >= 2)")
    return [m.term("matmul<$0, $1>", m.value(a), m.value(b), shape=m.out_shape())]


def _gemm(m: Mapper, n: Node) -> list[Term]:
    """A Gemm that fuse.py could not make a Dense: operands transposed in place, scaled."""
    a, b = m.value(n.inputs[0]), m.value(n.inputs[1])
    flags = []
    if n.attrs.get("transA", 0):
        flags.append(".transpose_a = true")
    if n.attrs.get("transB", 0):
        flags.append(".transpose_b = true")
    attrs = f", {{{', '.join(flags)}}}" if flags else ""
    t = m.term(f"matmul<$0, $1{attrs}>", a, b)
    alpha, beta = float(n.attrs.get("alpha", 1.0)), float(n.attrs.get("beta", 1.0))
    if alpha != 1.0:
        t = m.term(f"multiply<$0, scalar<{fmt_float(alpha)}>>", t)
    if n.input(2) and beta != 0.0:
        c = m.operand(n.input(2), 2)
        if beta != 1.0:
            c = m.term(f"multiply<$0, scalar<{fmt_float(beta)}>>", c)
        t = m.term("add<$0, $1>", t, c)
    t.shape = m.out_shape()
    return [t]


def _layer_norm(m: Mapper, n: Node) -> list[Term]:
    if any(o for o in n.outputs[1:]):
        raise Unsupported("the Mean or InvStdDev output")
    xs = m.shape(n.inputs[0])
    axis = int(n.attrs.get("axis", -1))
    axis = axis - len(xs) if axis >= 0 else axis
    eps = fmt_float(n.attrs.get("epsilon", 1e-5))
    norm_shape = xs[len(xs) + axis:]
    bias = n.input(2)
    if not bias:
        bias = n.inputs[1] + ".zero_bias"
        m.g.consts.setdefault(bias, np.zeros(norm_shape, dtype=np.float32))
        m.g.derived[bias] = ("", "zeros: the ONNX node has no bias")
    args = [m.value(n.inputs[0]), m.value(n.inputs[1]), m.value(bias)]
    return [m.term(f"layer_norm<$0, $1, $2, {axis}, {eps}>", *args, shape=m.out_shape())]


def _softmax(m: Mapper, n: Node) -> list[Term]:
    xs = m.shape(n.inputs[0])
    x = m.value(n.inputs[0])
    if m.g.opset >= 13:
        axis = int(n.attrs.get("axis", -1))
        return [m.term(f"softmax<$0, {axis}>" if axis != -1 else "softmax<$0>", x, shape=m.out_shape())]
    # Before opset 13, Softmax normalizes the input flattened to 2-D at `axis` (default 1).
    axis = int(n.attrs.get("axis", 1))
    axis = axis + len(xs) if axis < 0 else axis
    if all(d == 1 for d in xs[axis + 1:]):
        return [m.term(f"softmax<$0, {axis}>", x, shape=m.out_shape())]
    rows, cols = int(np.prod(xs[:axis])), int(np.prod(xs[axis:]))
    flat = m.term(f"softmax<reshape<$0, {rows}, {cols}>>", x)
    return [m.term(f"reshape<$0, {dims(xs)}>", flat, shape=m.out_shape())]


_REDUCE = {"ReduceMean": "reduce_mean", "ReduceSum": "reduce_sum", "ReduceMax": "reduce_max", "ReduceMin": "reduce_max"}


def _reduce(m: Mapper, n: Node) -> list[Term]:
    xs = m.shape(n.inputs[0])
    axes = m.axes(n, 1, len(xs))
    x = m.value(n.inputs[0])
    if not axes:
        if n.attrs.get("noop_with_empty_axes", 0):
            return [x]
        axes = list(range(len(xs)))
    keep = "true" if n.attrs.get("keepdims", 1) else "false"
    if n.op == "ReduceMin":  # min(x) = -max(-x)
        inner = m.term(f"reduce_max<neg<$0>, axes<{dims(axes)}>, {keep}>", x)
        return [m.term("neg<$0>", inner, shape=m.out_shape())]
    return [m.term(f"{_REDUCE[n.op]}<$0, axes<{dims(axes)}>, {keep}>", x, shape=m.out_shape())]


# The element types `cast` converts between, as Partita spells them.
_CAST_TYPES = {np.dtype(np.float32): "f32", np.dtype(np.int64): "i64", np.dtype(np.int32): "i32",
               np.dtype(np.int8): "i8", np.dtype(np.uint8): "u8", np.dtype(np.bool_): "boolean"}


def _cast(m: Mapper, n: Node) -> list[Term]:
    if n.fused in (["MatMulInteger"], ["ConvInteger"]) and m.g.dtype(n.outputs[0]) == np.dtype(np.int32):
        # The float sums of an integer product (qlinear.py): whole numbers, quantized exactly.
        return [m.term("quantize<$0, scalar<1.0f>, int_scalar<i32, 0>>", m.value(n.inputs[0]), shape=m.out_shape())]
    src, dst = m.g.dtype(n.inputs[0]), m.g.dtype(n.outputs[0])
    if src == dst:
        return _same(m, n)
    for t in (src, dst):
        if t not in _CAST_TYPES:
            raise Unsupported(f"a cast from {src} to {dst}: Partita's cast converts between f32, i64, i32, i8, u8 and bool")
    return [m.term(f"cast<$0, {_CAST_TYPES[dst]}>", m.value(n.inputs[0]), shape=m.out_shape())]


_COMPARE = {"Equal": "equal", "Less": "less", "LessOrEqual": "less_equal", "Greater": "greater",
            "GreaterOrEqual": "greater_equal"}
_LOGICAL = {"And": "logical_and", "Or": "logical_or", "Xor": "logical_xor"}


def _operands(m: Mapper, names: list[str]) -> list[Term]:
    """Elementwise operands: a constant beside computed values becomes a literal or a weight
    (`Mapper.operand`), of at most the rank of the others."""
    if all(m.const(i) is not None for i in names):
        raise Unsupported("every input is a constant")  # folding failed for a reason numpy gave
    ranks = [len(m.shape(i)) for i in names]
    return [m.value(i) if m.const(i) is None else m.operand(i, max(r for j, r in enumerate(ranks) if j != k))
            for k, i in enumerate(names)]


def _compare(m: Mapper, n: Node) -> list[Term]:
    a, b = _operands(m, list(n.inputs[:2]))
    return [m.term(f"{_COMPARE[n.op]}<$0, $1>", a, b, shape=m.out_shape())]


def _logical(m: Mapper, n: Node) -> list[Term]:
    if n.op == "Not":
        return [m.term("logical_not<$0>", m.value(n.inputs[0]), shape=m.out_shape())]
    a, b = _operands(m, list(n.inputs[:2]))
    return [m.term(f"{_LOGICAL[n.op]}<$0, $1>", a, b, shape=m.out_shape())]


def _where(m: Mapper, n: Node) -> list[Term]:
    """Where(cond, a, b): PyTorch's masked_fill(mask, v) exports as Where(mask, v, x)."""
    c, a, b = _operands(m, list(n.inputs[:3]))
    return [m.term("where<$0, $1, $2>", c, a, b, shape=m.out_shape())]


def _first_int(m: Mapper, name: str, what: str) -> int:
    """The integer that constant input `name` holds (a scalar or a one-element tensor)."""
    c = m.need_const(name, what)
    if c.size != 1 or c.dtype.kind not in "iu":
        raise Unsupported(f"{what} ('{name}') must be one integer, not {c.dtype}{list(c.shape)}")
    return int(c.reshape(-1)[0])


def _topk(m: Mapper, n: Node) -> list[Term]:
    """TopK: one topk node, its values and indices projected with get (sorted output, which
    ONNX allows where `sorted` is 0 too)."""
    xs = m.shape(n.inputs[0])
    k = _first_int(m, n.input(1), "K") if n.input(1) else int(n.attrs.get("k", 0))
    axis = int(n.attrs.get("axis", -1))
    if not -len(xs) <= axis < len(xs):
        raise Unsupported(f"axis {axis} of a rank-{len(xs)} input")
    if not 1 <= k <= xs[axis]:
        raise Unsupported(f"K = {k} of {xs[axis]} elements along axis {axis}")
    largest = "true" if int(n.attrs.get("largest", 1)) else "false"
    whole = m.term(f"topk<$0, {k}, {axis}, {largest}>", m.value(n.inputs[0]))
    whole.tensor = False
    return [m.term(f"get<$0, {i}>", whole, shape=m.out_shape(i)) if o else None for i, o in enumerate(n.outputs)]


_RECURRENT = {"LSTM": ("lstm", 4, ["Sigmoid", "Tanh", "Tanh"]), "GRU": ("gru", 3, ["Sigmoid", "Tanh"]),
              "RNN": ("rnn", 1, ["Tanh"])}


def _zeros_const(m: Mapper, like: str, shape: tuple[int, ...], what: str) -> str:
    """A constant of zeros named after `like`, for an optional input ONNX leaves out."""
    name = f"{like}.{what}"
    if name not in m.g.consts:
        m.g.consts[name] = np.zeros(shape, dtype=np.float32)
        m.g.derived[name] = ("", f"zeros: the ONNX node has no {what}")
    return name


def _recurrent(m: Mapper, n: Node) -> list[Term]:
    """LSTM, GRU and RNN: one lstm / gru / rnn node and get of each output used. The weights must
    be constants; optional inputs left out are zeros (B, an initial state the other one has)."""
    op, gates, default_acts = _RECURRENT[n.op]
    xs = m.shape(n.inputs[0])
    direction = n.attrs.get("direction", b"forward")
    direction = direction.decode() if isinstance(direction, bytes) else str(direction)
    if direction not in ("forward", "reverse", "bidirectional"):
        raise Unsupported(f"direction '{direction}'")
    dirs = 2 if direction == "bidirectional" else 1
    acts = [a.decode() if isinstance(a, bytes) else str(a) for a in n.attrs.get("activations", [])]
    relu = False
    if n.op == "RNN" and acts and all(a == "Relu" for a in acts):
        relu = True
    elif acts and acts != default_acts * dirs:
        raise Unsupported(f"activations {acts}: Partita's {op} has {default_acts}" + (" or Relu" if n.op == "RNN" else ""))
    if n.attrs.get("activation_alpha") or n.attrs.get("activation_beta"):
        raise Unsupported("activation_alpha / activation_beta")
    if int(n.attrs.get("input_forget", 0)):
        raise Unsupported("input_forget (coupled input and forget gates)")
    if len(xs) != 3:
        raise Unsupported(f"X of rank {len(xs)}: a recurrent layer reads [seq, batch, input]")
    w = m.need_const(n.input(1), "W")
    if w.ndim != 3 or w.shape[1] == 0 or w.shape[1] % gates:
        raise Unsupported(f"W of shape {list(w.shape)}: expected [directions, {gates} · hidden, input]")
    for k, what in ((2, "R"), (3, "B")):
        if n.input(k):
            m.need_const(n.input(k), what)
    hidden = w.shape[1] // gates
    if int(n.attrs.get("hidden_size", hidden)) != hidden:
        raise Unsupported(f"hidden_size {n.attrs['hidden_size']} does not match W {list(w.shape)}")
    batch_first = int(n.attrs.get("layout", 0)) == 1
    seq, batch = (xs[1], xs[0]) if batch_first else (xs[0], xs[1])
    lens = n.input(4)
    if lens:
        c = m.const(lens)
        if c is None or not np.all(c == seq):
            raise Unsupported("sequence_lens shorter than the sequence (Partita runs every step of every sequence)")
    if n.op == "LSTM" and n.input(7):
        p = m.const(n.input(7))
        if p is None or np.any(p != 0):
            raise Unsupported("peepholes (input P)")
    args = [m.value(n.inputs[0]), m.weight(n.input(1)), m.weight(n.input(2))]
    b = n.input(3) or _zeros_const(m, n.input(1), (dirs, 2 * gates * hidden), "bias")
    args.append(m.weight(b))
    state_shape = (batch, dirs, hidden) if batch_first else (dirs, batch, hidden)
    states = [n.input(5)] + ([n.input(6)] if n.op == "LSTM" else [])
    # Initial states that are all zeros (what PyTorch exports without one) are left out.
    given = [s for s in states if s and not (m.const(s) is not None and not np.any(m.const(s)))]
    if given:
        for k, s in enumerate(states):
            if not s or (m.const(s) is not None and not np.any(m.const(s))):
                states[k] = _zeros_const(m, n.input(1), state_shape, "initial_c" if k else "initial_h")
            args.append(m.value(states[k]))
    fields = []
    if direction != "forward":
        fields.append(f".direction = rnn_direction::{direction}")
    if batch_first:
        fields.append(".batch_first = true")
    if int(n.attrs.get("linear_before_reset", 0)):
        fields.append(".linear_before_reset = true")
    if relu:
        fields.append(".activation = rnn_activation::relu")
    if "clip" in n.attrs:
        fields.append(f".clip = {fmt_float(float(n.attrs['clip']))}")
    states_text = "".join(f", ${i}" for i in range(4, len(args)))
    whole = m.term(f"{op}<$0, $1, $2, $3, {{{', '.join(fields)}}}{states_text}>", *args)
    whole.tensor = False
    return [m.term(f"get<$0, {i}>", whole, shape=m.out_shape(i)) if o else None for i, o in enumerate(n.outputs)]


def _arg_reduce(m: Mapper, n: Node) -> list[Term]:
    rank = len(m.shape(n.inputs[0]))
    axis = int(n.attrs.get("axis", 0))
    if not -rank <= axis < rank:
        raise Unsupported(f"axis {axis} of a rank-{rank} input")
    keep = "true" if int(n.attrs.get("keepdims", 1)) else "false"
    last = "true" if int(n.attrs.get("select_last_index", 0)) else "false"
    op = "argmax" if n.op == "ArgMax" else "argmin"
    return [m.term(f"{op}<$0, {axis}, {keep}, {last}>", m.value(n.inputs[0]), shape=m.out_shape())]


def _cumsum(m: Mapper, n: Node) -> list[Term]:
    rank = len(m.shape(n.inputs[0]))
    axis = _first_int(m, n.input(1), "the axis")
    if not -rank <= axis < rank:
        raise Unsupported(f"axis {axis} of a rank-{rank} input")
    exclusive = "true" if int(n.attrs.get("exclusive", 0)) else "false"
    reverse = "true" if int(n.attrs.get("reverse", 0)) else "false"
    return [m.term(f"cumsum<$0, {axis}, {exclusive}, {reverse}>", m.value(n.inputs[0]), shape=m.out_shape())]


def _gather_elements(m: Mapper, n: Node) -> list[Term]:
    axis = int(n.attrs.get("axis", 0))
    return [m.term(f"gather_elements<$0, $1, {axis}>", m.value(n.inputs[0]), m.value(n.inputs[1]), shape=m.out_shape())]


def _trilu(m: Mapper, n: Node) -> list[Term]:
    k = _first_int(m, n.input(1), "the diagonal k") if n.input(1) else 0
    op = "triu" if int(n.attrs.get("upper", 1)) else "tril"
    return [m.term(f"{op}<$0, {k}>", m.value(n.inputs[0]), shape=m.out_shape())]


def _expand(m: Mapper, n: Node) -> list[Term]:
    if tuple(m.shape(n.inputs[0])) != tuple(m.out_shape()):
        raise Unsupported("an Expand that grows the tensor at run time")
    return _same(m, n)


# -- quantization ------------------------------------------------------------------------------


def _zero_point(m: Mapper, n: Node, scale: str, dtype: np.dtype) -> str:
    """The zero point of `n`: its input 2, or a constant of zeros of `dtype` shaped like the
    scale (ONNX's default when the input is omitted), named after the scale."""
    if n.input(2):
        return n.input(2)
    name = f"{scale}.zero_{quant.ZERO_POINT_TYPES.get(dtype, 'point')}"
    if name not in m.g.consts:
        m.g.consts[name] = np.zeros(m.g.const(scale).shape, dtype=dtype)
        m.g.derived[name] = ("", "zeros: the ONNX node has no zero point")
    return name


def _quantization(m: Mapper, n: Node, template: str) -> list[Term]:
    """QuantizeLinear and DequantizeLinear: `template`<x, scale, zero point[, axis]>, the scale
    and zero point weights (rebinding them recalibrates the model)."""
    block = int(n.attrs.get("block_size", 0))
    if block:
        raise Unsupported(f"block quantization (block_size {block}) is not supported: Partita's scales are per "
                          f"tensor or per axis")
    x = n.inputs[0]
    xs = m.shape(x)
    scale = m.need_const(n.input(1), "the scale")
    why = quant.scale_problem(n.input(1), scale)
    if why is None:
        dtype = quant.DEFAULT_TYPE if n.op == "QuantizeLinear" else m.g.dtype(x)
        if n.op == "DequantizeLinear" and n.input(2) == "":
            why = quant.zero_point_type_problem(dtype)  # the input's own type: an int16 input, say
        if why is None:
            zp_name = _zero_point(m, n, n.input(1), dtype)
            why = quant.zero_point_problem(zp_name, m.need_const(zp_name, "the zero point"), scale)
    axis = int(n.attrs.get("axis", 1))
    if why is None and quant.per_axis(scale):
        axis, why = quant.axis_problem(axis, len(xs), scale, xs)
    if why is not None:
        raise Unsupported(why)
    suffix = f", {axis}" if quant.per_axis(scale) else ""
    return [m.term(f"{template}<$0, $1, $2{suffix}>", m.value(x), m.weight(n.input(1)), m.weight(zp_name),
                   shape=m.out_shape())]


MAPPERS: dict[str, Mapping] = {
    "Relu": _unary("relu<$0>"), "Sigmoid": _unary("sigmoid<$0>"), "Tanh": _unary("tanh_<$0>"),
    "Sqrt": _unary("sqrt_<$0>"), "Exp": _unary("exp_<$0>"), "Log": _unary("log_<$0>"),
    "Erf": _unary("erf_<$0>"), "Abs": _unary("abs_<$0>"), "Neg": _unary("neg<$0>"),
    "HardSwish": _unary("hardswish<$0>"), "Reciprocal": _reciprocal,
    "LeakyRelu": _leaky_relu, "HardSigmoid": _hard_sigmoid, "PRelu": _prelu, "Gelu": _gelu,
    "Clip": _clip, "Pow": _pow,
    "Add": _binary, "Sub": _binary, "Mul": _binary, "Div": _binary, "Max": _binary, "Min": _binary, "Sum": _binary,
    "Conv": _conv, "ConvTranspose": _conv_transpose, "MaxPool": _pool, "AveragePool": _pool,
    "DepthToSpace": _depth_to_space, "SpaceToDepth": _depth_to_space,
    "GlobalAveragePool": _global_pool, "GlobalMaxPool": _global_pool,
    "BatchNormalization": _batch_norm, "Resize": _resize, "Upsample": _resize,
    "Flatten": _reshape_to, "Reshape": _reshape_to, "Squeeze": _reshape_to, "Unsqueeze": _reshape_to,
    "Transpose": _transpose, "Slice": _slice, "Split": _split, "Concat": _concat, "Gather": _gather, "Pad": _pad,
    "Dense": _dense, "MatMul": _matmul, "Gemm": _gemm, "LayerNormalization": _layer_norm, "Softmax": _softmax,
    "ReduceMean": _reduce, "ReduceSum": _reduce, "ReduceMax": _reduce, "ReduceMin": _reduce,
    "Cast": _cast, "CastLike": _cast, "Expand": _expand, "Identity": _same,
    "Equal": _compare, "Less": _compare, "LessOrEqual": _compare, "Greater": _compare, "GreaterOrEqual": _compare,
    "Not": _logical, "And": _logical, "Or": _logical, "Xor": _logical, "Where": _where, "Trilu": _trilu,
    "TopK": _topk, "LSTM": _recurrent, "GRU": _recurrent, "RNN": _recurrent, "ArgMax": _arg_reduce,
    "ArgMin": _arg_reduce, "CumSum": _cumsum, "GatherElements": _gather_elements,
    "QuantizeLinear": lambda m, n: _quantization(m, n, "quantize"),
    "DequantizeLinear": lambda m, n: _quantization(m, n, "dequantize"),
}

# The ops whose inputs may be of any dtype at run time (integers, bool), the views among them: the
# others compute in f32.
ANY_DTYPE_OPS = {"Cast", "CastLike", "Identity", "Where", "Not", "And", "Or", "Xor", "Trilu", "TopK", "ArgMax",
                 "ArgMin", "CumSum", "GatherElements", "Reshape", "Flatten", "Squeeze", "Unsqueeze"} | set(_COMPARE)

# The importer's own nodes (fuse.py) live in their own domain; these are the ops it may name.
OWN_OPS = {"Dense", "Gelu"}
