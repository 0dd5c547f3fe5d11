"""Graph clean-up before mapping: constants folded with numpy, copies dropped.

Exporters compute many shapes at run time: `Shape -> Gather -> Unsqueeze -> Concat -> Reshape`
chains, `ConstantOfShape`, `Range`, `Cast`. With static input shapes they are constants, and
Partita wants constants: a reshape's target, a slice's bounds, a weight. Folding evaluates every
node whose inputs are all constant (and `Shape`/`Size` of any value whose shape is static) with
the numpy evaluators below, then runs shape inference again, since a folded shape may fix shapes
further down that inference could not see before; it repeats until nothing changes.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from . import inference, quant
from .errors import shown
from .graph import Graph, Node, np_dtype

Evaluator = Callable[[Node, list], list]


def _axes(node: Node, args: list, position: int, rank: int) -> list[int] | None:
    """A node's `axes`, from the attribute or (newer opsets) from input `position`, normalized."""
    axes = node.attrs.get("axes")
    if axes is None and len(args) > position and args[position] is not None:
        axes = [int(a) for a in np.asarray(args[position]).reshape(-1)]
    if axes is None:
        return None
    return sorted(a + rank if a < 0 else a for a in axes)


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # ONNX integer division truncates toward zero, as C does; numpy's // floors.
    q = np.abs(a) // np.abs(b)
    return (q * np.sign(a) * np.sign(b)).astype(np.result_type(a, b))


def _div(n: Node, a: list) -> list:
    x, y = a
    if np.issubdtype(np.asarray(x).dtype, np.integer):
        return [_int_div(np.asarray(x), np.asarray(y))]
    return [np.asarray(x / y).astype(np.result_type(x, y))]


def _slice(n: Node, a: list) -> list:
    x = a[0]
    if "starts" in n.attrs:  # opset < 10
        starts, ends, axes, steps = n.attrs["starts"], n.attrs["ends"], n.attrs.get("axes"), None
    else:
        starts, ends = list(a[1]), list(a[2])
        axes = list(a[3]) if len(a) > 3 and a[3] is not None else None
        steps = list(a[4]) if len(a) > 4 and a[4] is not None else None
    axes = axes if axes is not None else list(range(len(starts)))
    steps = steps if steps is not None else [1] * len(starts)
    index = [slice(None)] * x.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps):
        dim = x.shape[int(ax)]
        # numpy clamps like ONNX, except that huge values overflow Python's slice on some
        # platforms: clamp them first.
        s, e = max(min(int(s), dim + 1), -dim - 1), max(min(int(e), dim + 1), -dim - 1)
        index[int(ax)] = slice(s, e, int(st))
    return [x[tuple(index)]]


def _reshape(n: Node, a: list) -> list:
    x, shape = a[0], [int(d) for d in a[1]]
    if not n.attrs.get("allowzero", 0):
        shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return [x.reshape(shape)]


def _gather(n: Node, a: list) -> list:
    return [np.take(a[0], np.asarray(a[1]).astype(np.int64), axis=n.attrs.get("axis", 0))]


def _squeeze(n: Node, a: list) -> list:
    axes = _axes(n, a, 1, a[0].ndim)
    return [np.squeeze(a[0], axis=tuple(axes)) if axes is not None else np.squeeze(a[0])]


def _unsqueeze(n: Node, a: list) -> list:
    x = a[0]
    added = len(n.attrs["axes"]) if "axes" in n.attrs else np.asarray(a[1]).size
    for ax in _axes(n, a, 1, x.ndim + added) or []:
        x = np.expand_dims(x, ax)
    return [x]


def _reduce(fn: Callable) -> Evaluator:
    def evaluate(n: Node, a: list) -> list:
        axes = _axes(n, a, 1, a[0].ndim)
        if axes is None and n.attrs.get("noop_with_empty_axes", 0):
            return [a[0]]
        keep = bool(n.attrs.get("keepdims", 1))
        return [np.asarray(fn(a[0], axis=tuple(axes) if axes is not None else None, keepdims=keep))]
    return evaluate


def _cast(n: Node, a: list) -> list:
    dt = np_dtype(n.attrs["to"])
    if dt is None:
        raise ValueError("cast to an unsupported type")
    return [np.asarray(a[0]).astype(dt)]


def _trilu(n: Node, a: list) -> list:
    k = int(np.asarray(a[1]).reshape(-1)[0]) if len(a) > 1 and a[1] is not None else 0
    return [np.triu(a[0], k) if n.attrs.get("upper", 1) else np.tril(a[0], k)]


def _constant(n: Node, a: list) -> list:
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if key in n.attrs:
            v = n.attrs[key]
            if key.endswith("float") or key.endswith("floats"):
                return [np.asarray(v, dtype=np.float32)]
            if key.endswith("int") or key.endswith("ints"):
                return [np.asarray(v, dtype=np.int64)]
            return [np.asarray(v)]
    raise ValueError("Constant without a numeric value")


def _constant_of_shape(n: Node, a: list) -> list:
    value = n.attrs.get("value", np.zeros(1, dtype=np.float32))
    return [np.full([int(d) for d in a[0]], np.asarray(value).reshape(-1)[0], dtype=np.asarray(value).dtype)]


def _split(n: Node, a: list) -> list:
    x, axis = a[0], n.attrs.get("axis", 0)
    sizes = n.attrs.get("split")
    if sizes is None and len(a) > 1 and a[1] is not None:
        sizes = [int(s) for s in a[1]]
    if sizes is None:
        k = len(n.outputs)
        sizes = [-(-x.shape[axis] // k)] * k
        sizes[-1] = x.shape[axis] - sum(sizes[:-1])
    return list(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


def _clip(n: Node, a: list) -> list:
    lo = a[1] if len(a) > 1 and a[1] is not None else n.attrs.get("min", -np.inf)
    hi = a[2] if len(a) > 2 and a[2] is not None else n.attrs.get("max", np.inf)
    return [np.clip(a[0], lo, hi).astype(a[0].dtype)]


def _quantize_linear(n: Node, a: list) -> list:
    """QuantizeLinear of a constant (a float weight in QDQ form): the integer weight, so that the
    header holds `dequantize<weight<"w", i8, ...>, ...>`. Anything unusual (a bad scale, block
    quantization) is not folded, and the mapping reports it."""
    x, scale = np.asarray(a[0]), np.asarray(a[1])
    zp = np.asarray(a[2]) if len(a) > 2 and a[2] is not None else np.zeros(scale.shape, dtype=quant.DEFAULT_TYPE)
    if n.attrs.get("block_size", 0) or x.dtype != np.float32 or quant.scale_problem("", scale) is not None \
            or quant.zero_point_problem("", zp, scale) is not None:
        raise ValueError("not a quantization Partita folds")
    axis = int(n.attrs.get("axis", 1))
    if quant.per_axis(scale):
        axis, why = quant.axis_problem(axis, x.ndim, scale, x.shape)
        if why is not None:
            raise ValueError(why)
    return [quant.quantize(x, scale, zp, axis)]


def _erf_series(x: np.ndarray) -> np.ndarray:
    """erf on |x| <= 2.5: 2/sqrt(pi) exp(-x^2) sum_n 2^n x^(2n+1) / (1*3*...*(2n+1)), whose
    terms are all of one sign, summed until the last term no longer changes the sum."""
    x2 = x * x
    term, total, n = x.copy(), x.copy(), 0
    while True:
        term *= 2 * x2 / (2 * n + 3)
        total += term
        n += 1
        if not np.any(np.abs(term) > 1e-17 * np.abs(total)):
            break
    return 2 / math.sqrt(math.pi) * np.exp(-x2) * total


def _erfc_fraction(x: np.ndarray) -> np.ndarray:
    """erfc on x > 2.5: Laplace's continued fraction exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x
    + (3/2)/(x + ...)))), evaluated from a depth that reaches double precision there."""
    t = x.copy()
    for k in range(32, 0, -1):
        t = x + (k / 2) / t
    return np.exp(-x * x) / math.sqrt(math.pi) / t


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, element-wise, in float64 and returned in `x`'s element type;
    vectorised, a block at a time, so that a large constant folds in bounded memory."""
    x = np.asarray(x)
    flat = x.astype(np.float64).reshape(-1)
    out = np.empty_like(flat)
    block = 1 << 16
    for begin in range(0, flat.size, block):
        v = flat[begin:begin + block]
        r = out[begin:begin + block]
        a = np.abs(v)
        small = ~(a > 2.5)  # NaN takes the series, which returns it
        r[small] = _erf_series(v[small])
        large = ~small
        r[large] = np.sign(v[large]) * (1 - _erfc_fraction(a[large]))
    return out.reshape(x.shape).astype(x.dtype)


def _expanded_shape(a: list) -> tuple[int, ...]:
    return np.broadcast_shapes(np.shape(a[0]), tuple(int(d) for d in np.asarray(a[1]).reshape(-1)))


def _matmul_shape(a: tuple, b: tuple) -> tuple[int, ...]:
    """numpy's (and ONNX's) MatMul result shape: 1-D operands promoted, then their dim removed."""
    if not a or not b:
        raise ValueError("a scalar operand")
    a2, b2 = (1,) + a if len(a) == 1 else a, b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ValueError("mismatched inner dimensions")
    out = np.broadcast_shapes(a2[:-2], b2[:-2]) + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def _nonnegative(values) -> list[int]:
    dims = [int(d) for d in np.asarray(values).reshape(-1)]
    if any(d < 0 for d in dims):
        raise ValueError("a negative dimension")
    return dims


def _range_length(a: list) -> int:
    start, limit, delta = (float(np.asarray(v).reshape(-1)[0]) for v in a[:3])
    if delta == 0 or not all(math.isfinite(v) for v in (start, limit, delta)):
        raise ValueError("no finite range")
    return max(math.ceil((limit - start) / delta), 0)


def _output_elements(n: Node, a: list) -> int:
    """How many elements the outputs of `n` on constant arguments `a` hold, computed from the
    arguments' shapes without evaluating; ValueError (or another exception) when they do not
    fit together, in which case the node is not folded."""
    op = n.op
    sizes = [np.size(x) for x in a if x is not None]
    if op == "ConstantOfShape":
        return math.prod(_nonnegative(a[0]))
    if op == "Expand":
        return math.prod(_expanded_shape(a))
    if op == "Tile":
        return math.prod(d * r for d, r in zip(np.shape(a[0]), _nonnegative(a[1])))
    if op == "Range":
        return _range_length(a)
    if op == "MatMul":
        return math.prod(_matmul_shape(np.shape(a[0]), np.shape(a[1])))
    if op == "Concat":
        return sum(sizes)
    if op == "Gather":
        data = np.shape(a[0])
        axis = n.attrs.get("axis", 0) % max(len(data), 1)
        return (math.prod(data) // data[axis] if data and data[axis] else 0) * np.size(a[1])
    if op in _ELEMENTWISE:
        return math.prod(np.broadcast_shapes(*(np.shape(x) for x in a if x is not None)))
    return max(sizes, default=1)  # the others never produce more elements than they read


def _output_itemsize(n: Node, a: list) -> int:
    """The bytes of one output element of `n` (at most: comparisons make less than they read)."""
    if n.op == "ConstantOfShape":
        value = n.attrs.get("value")
        return np.asarray(value).dtype.itemsize if value is not None else 4
    if n.op == "Cast":
        dt = np_dtype(n.attrs.get("to", 0))
        return dt.itemsize if dt is not None else 8
    return max((np.asarray(x).dtype.itemsize for x in a if x is not None), default=8)


# Ops whose output takes the broadcast shape of their inputs.
_ELEMENTWISE = {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Equal", "Less", "Greater",
                "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Where"}


def _binary(fn: Callable) -> Evaluator:
    # Keep the operands' element type: numpy would widen float32 by a Python float.
    return lambda n, a: [np.asarray(fn(a[0], a[1])).astype(np.result_type(a[0], a[1]))]


def _unary(fn: Callable) -> Evaluator:
    return lambda n, a: [np.asarray(fn(a[0])).astype(np.asarray(a[0]).dtype)]


EVALUATORS: dict[str, Evaluator] = {
    "Add": _binary(np.add), "Sub": _binary(np.subtract), "Mul": _binary(np.multiply), "Div": _div,
    "Pow": _binary(np.power), "Mod": _binary(np.fmod), "Max": lambda n, a: [np.maximum.reduce(a)],
    "Min": lambda n, a: [np.minimum.reduce(a)], "Sum": lambda n, a: [sum(a[1:], a[0])],
    "Equal": lambda n, a: [np.equal(a[0], a[1])], "Less": lambda n, a: [np.less(a[0], a[1])],
    "Greater": lambda n, a: [np.greater(a[0], a[1])], "LessOrEqual": lambda n, a: [np.less_equal(a[0], a[1])],
    "GreaterOrEqual": lambda n, a: [np.greater_equal(a[0], a[1])],
    "And": lambda n, a: [np.logical_and(a[0], a[1])], "Or": lambda n, a: [np.logical_or(a[0], a[1])],
    "Not": lambda n, a: [np.logical_not(a[0])], "Where": lambda n, a: [np.where(a[0], a[1], a[2])],
    "Xor": lambda n, a: [np.logical_xor(a[0], a[1])], "Trilu": _trilu,
    "Neg": _unary(np.negative), "Abs": _unary(np.abs), "Sqrt": _unary(np.sqrt), "Exp": _unary(np.exp),
    "Log": _unary(np.log), "Floor": _unary(np.floor), "Ceil": _unary(np.ceil), "Sign": _unary(np.sign),
    "Reciprocal": _unary(np.reciprocal), "Relu": _unary(lambda x: np.maximum(x, 0)),
    "Sigmoid": _unary(lambda x: 1 / (1 + np.exp(-x))), "Tanh": _unary(np.tanh), "Erf": lambda n, a: [erf(a[0])],
    "Cast": _cast, "CastLike": lambda n, a: [np.asarray(a[0]).astype(np.asarray(a[1]).dtype)],
    "Identity": lambda n, a: [a[0]], "Dropout": lambda n, a: [a[0]],
    "Constant": _constant, "ConstantOfShape": _constant_of_shape,
    "Range": lambda n, a: [np.arange(a[0], a[1], a[2]).astype(np.result_type(a[0], a[1], a[2]))],
    "Gather": _gather, "Unsqueeze": _unsqueeze, "Squeeze": _squeeze,
    "Concat": lambda n, a: [np.concatenate([np.asarray(x) for x in a], axis=n.attrs["axis"])],
    "Reshape": _reshape, "Flatten": lambda n, a: [a[0].reshape(int(np.prod(a[0].shape[:n.attrs.get("axis", 1)])), -1)],
    "Transpose": lambda n, a: [np.transpose(a[0], n.attrs.get("perm"))],
    "Slice": _slice, "Split": _split, "Clip": _clip,
    "Expand": lambda n, a: [np.array(np.broadcast_to(a[0], _expanded_shape(a)))],
    "Tile": lambda n, a: [np.tile(a[0], [int(r) for r in a[1]])],
    "MatMul": lambda n, a: [np.matmul(a[0], a[1])],
    # DequantizeLinear is never folded: the backend's patterns fuse dequantize<weight<i8>> into
    # integer kernels, which a float weight would hide from them.
    "QuantizeLinear": _quantize_linear,
    "ReduceProd": _reduce(np.prod), "ReduceSum": _reduce(np.sum), "ReduceMax": _reduce(np.max),
    "ReduceMin": _reduce(np.min), "ReduceMean": _reduce(np.mean),
}


def _fold_node(g: Graph, n: Node) -> list[np.ndarray] | None:
    """The values of `n`'s outputs when they can be computed now, else None."""
    if n.domain not in ("", "ai.onnx"):
        return None
    if n.op in ("Shape", "Size"):
        shape = g.shape(n.inputs[0])
        if shape is None:
            return None
        if n.op == "Size":
            return [np.asarray(int(np.prod(shape)), dtype=np.int64)]
        start, end = n.attrs.get("start", 0), n.attrs.get("end", len(shape))
        return [np.asarray(shape[start:end] if "start" in n.attrs or "end" in n.attrs else shape, dtype=np.int64)]
    if n.op not in EVALUATORS:
        return None
    if n.op == "Dropout" and len(n.outputs) > 1 and n.outputs[1]:
        return None  # the mask output is not a copy
    args = [g.const(i) if i else None for i in n.inputs]
    if any(a is None for i, a in zip(n.inputs, args) if i):
        return None
    if n.op in ("Identity", "Dropout"):
        return None  # copies of constants are renamed, not copied (see drop_copies)
    try:
        count = _output_elements(n, args)
    except Exception:  # arguments that do not fit together: the node stays, to be reported later
        return None
    # Charged before numpy allocates anything.
    g.budget.charge(f"node '{shown(n.name or '<unnamed>')}' {n.op}", count, _output_itemsize(n, args))
    try:
        with np.errstate(all="ignore"):
            return [np.asarray(v) for v in EVALUATORS[n.op](n, args)]
    except Exception:  # a node numpy cannot evaluate stays in the graph, to be reported later
        return None


def drop_copies(g: Graph) -> bool:
    """Removes Identity and inference-mode Dropout: readers read the copied value directly."""
    def is_copy(n: Node) -> bool:
        if n.op not in ("Identity", "Dropout") or n.domain not in ("", "ai.onnx") or not n.inputs:
            return False
        return not (n.op == "Dropout" and len(n.outputs) > 1 and n.outputs[1])  # a used mask is no copy

    copies = {n.outputs[0]: n.inputs[0] for n in g.nodes if is_copy(n)}
    if not copies:
        return False
    g.nodes = [n for n in g.nodes if not is_copy(n)]
    g.rename_values(copies)
    return True


def fold_constants(g: Graph) -> bool:
    """One pass over the graph folding what can be folded; True when something changed."""
    changed = False
    keep = []
    aliased: dict[str, str] = {}
    for n in g.nodes:
        values = _fold_node(g, n)
        if values is None or len(values) < len([o for o in n.outputs if o]):
            keep.append(n)
            continue
        changed = True
        src = g.const(n.inputs[0]) if n.inputs and n.op not in ("Constant", "ConstantOfShape") else None
        if len(n.outputs) == 1 and src is not None and src.shape == values[0].shape and src.dtype == values[0].dtype \
                and np.array_equal(src, values[0]):
            # A slice or reshape that changed nothing: readers keep the original constant and
            # its ONNX name (the position table sliced to its full length, say).
            aliased[n.outputs[0]] = n.inputs[0]
            continue
        for name, v in zip(n.outputs, values):
            if name:
                g.consts[name] = v
        if n.op == "QuantizeLinear" and n.inputs[0] in g.consts:
            g.derived[n.outputs[0]] = (n.inputs[0], f"quantized with the scale '{n.inputs[1]}' at import")
    g.nodes = keep
    g.rename_values(aliased)
    return changed


def reinfer(g: Graph) -> None:
    """Runs ONNX shape inference on the current graph and records the shapes it finds."""
    try:
        found = inference.infer(g.to_model(), g.path)
    except inference.InferenceError:  # the shapes already known stay; the mapping reports what is missing
        return
    g.read_value_infos(found)


def clean_up(g: Graph) -> None:
    """Folds constants and shape arithmetic, drops copies and dead nodes, until nothing changes."""
    for _ in range(16):
        changed = drop_copies(g)
        changed = fold_constants(g) or changed
        g.remove_dead()
        if not changed:
            break
        reinfer(g)
