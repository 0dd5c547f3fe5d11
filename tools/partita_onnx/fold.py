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
from onnx import shape_inference

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


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype)


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
    "Neg": _unary(np.negative), "Abs": _unary(np.abs), "Sqrt": _unary(np.sqrt), "Exp": _unary(np.exp),
    "Log": _unary(np.log), "Floor": _unary(np.floor), "Ceil": _unary(np.ceil), "Sign": _unary(np.sign),
    "Reciprocal": _unary(np.reciprocal), "Relu": _unary(lambda x: np.maximum(x, 0)),
    "Sigmoid": _unary(lambda x: 1 / (1 + np.exp(-x))), "Tanh": _unary(np.tanh), "Erf": _unary(_erf),
    "Cast": _cast, "CastLike": lambda n, a: [np.asarray(a[0]).astype(np.asarray(a[1]).dtype)],
    "Identity": lambda n, a: [a[0]], "Dropout": lambda n, a: [a[0]],
    "Constant": _constant, "ConstantOfShape": _constant_of_shape,
    "Range": lambda n, a: [np.arange(a[0], a[1], a[2]).astype(np.result_type(a[0], a[1], a[2]))],
    "Gather": _gather, "Unsqueeze": _unsqueeze, "Squeeze": _squeeze,
    "Concat": lambda n, a: [np.concatenate([np.asarray(x) for x in a], axis=n.attrs["axis"])],
    "Reshape": _reshape, "Flatten": lambda n, a: [a[0].reshape(int(np.prod(a[0].shape[:n.attrs.get("axis", 1)])), -1)],
    "Transpose": lambda n, a: [np.transpose(a[0], n.attrs.get("perm"))],
    "Slice": _slice, "Split": _split, "Clip": _clip,
    "Expand": lambda n, a: [a[0] * np.ones([int(d) for d in a[1]], dtype=a[0].dtype)],
    "Tile": lambda n, a: [np.tile(a[0], [int(r) for r in a[1]])],
    "MatMul": lambda n, a: [np.matmul(a[0], a[1])],
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
        with np.errstate(all="ignore"):
            return [np.asarray(v) for v in EVALUATORS[n.op](n, args)]
    except Exception:  # a node numpy cannot evaluate stays in the graph, to be reported later
        return None


def drop_copies(g: Graph) -> bool:
    """Removes Identity and inference-mode Dropout: readers read the copied value directly."""
    changed = False
    for n in list(g.nodes):
        if n.op not in ("Identity", "Dropout") or n.domain not in ("", "ai.onnx"):
            continue
        if n.op == "Dropout" and len(n.outputs) > 1 and n.outputs[1]:
            continue  # the mask is used: the mapping reports it
        g.nodes.remove(n)
        g.replace_uses(n.outputs[0], n.inputs[0])
        changed = True
    return changed


def fold_constants(g: Graph) -> bool:
    """One pass over the graph folding what can be folded; True when something changed."""
    changed = False
    keep = []
    aliased: list[tuple[str, str]] = []
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
            aliased.append((n.outputs[0], n.inputs[0]))
            continue
        for name, v in zip(n.outputs, values):
            if name:
                g.consts[name] = v
    g.nodes = keep
    for old, new in aliased:
        g.replace_uses(old, new)
    return changed


def reinfer(g: Graph) -> None:
    """Runs ONNX shape inference on the current graph and records the shapes it finds."""
    try:
        m = shape_inference.infer_shapes(g.to_model(), check_type=False, strict_mode=False, data_prop=True)
    except Exception:  # the shapes already known stay; the mapping reports what is missing
        return
    g.read_value_infos(m)


def clean_up(g: Graph) -> None:
    """Folds constants and shape arithmetic, drops copies and dead nodes, until nothing changes."""
    for _ in range(16):
        changed = drop_copies(g)
        changed = fold_constants(g) or changed
        g.remove_dead()
        if not changed:
            break
        reinfer(g)
