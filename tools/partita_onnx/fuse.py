"""Exporter decompositions recognised and replaced by the one op Partita has for them.

Opset < 17 exporters write LayerNorm as ReduceMean / Sub / Pow / ReduceMean / Add / Sqrt / Div,
then Mul and Add by the affine parameters; PyTorch writes the exact GELU as
`x * 0.5 * (1 + erf(x / sqrt 2))` in several association orders and hardswish (before opset 14)
as `x * HardSigmoid(x)`. Each becomes one node (`LayerNormalization`, `Gelu`, `HardSwish`), so
that the cpu backend sees the op it has a kernel for. `MatMul` by a constant (plus the `Add` of
a constant bias) and the `Gemm` of a linear layer become `Dense` nodes, Partita's `dense` whose
weight is [units, in_features] and whose bias is fused by the cpu backend; in a quantized model
the weight may be the DequantizeLinear of an integer constant, transposed at import as well.

Every rewrite checks that the intermediate values it removes have no other reader.
"""
from __future__ import annotations

import numpy as np

from . import quant
from .graph import Graph, Node

PARTITA = "partita"  # the domain of the importer's own nodes (Dense, Gelu)


def _scalar(g: Graph, name: str) -> float | None:
    c = g.const(name)
    if c is None or c.size != 1 or not np.issubdtype(c.dtype, np.number):
        return None
    return float(c.reshape(-1)[0])


def _close(v: float | None, target: float, tol: float = 1e-4) -> bool:
    return v is not None and abs(v - target) <= tol * max(1.0, abs(target))


class _Rewriter:
    """Use counts and producers of the graph as it is rewritten, kept up to date by `replace`
    so that every rewrite costs time in proportion to the nodes it touches, not to the graph:
    a removed node leaves a hole in `g.nodes` until `compact`, and `position` holds the live
    nodes only."""

    def __init__(self, g: Graph):
        self.g = g
        self.uses = g.uses()
        self.prod = g.producers()
        self.position = {id(n): k for k, n in enumerate(g.nodes)}
        self.outputs = set(g.outputs)  # fusions never change the graph's outputs

    def alive(self, n: Node) -> bool:
        """False once a rewrite has removed `n`."""
        return id(n) in self.position

    def nodes(self, op: str) -> list[Node]:
        """The live nodes of op type `op`, in graph order."""
        return [n for n in self.g.nodes if n is not None and n.op == op]

    def only_use(self, value: str) -> Node | None:
        """The one node reading `value`, when it has exactly one reader and is not an output."""
        readers = self.uses.get(value, [])
        if len(readers) != 1 or value in self.outputs:
            return None
        return readers[0]

    def producer(self, value: str, op: str) -> Node | None:
        n = self.prod.get(value)
        return n if n is not None and n.op == op and n.domain in ("", "ai.onnx") else None

    def other(self, n: Node, value: str) -> str | None:
        """The other input of binary node `n`, of which one input is `value`."""
        if len(n.inputs) != 2:
            return None
        if n.inputs[0] == value:
            return n.inputs[1]
        if n.inputs[1] == value:
            return n.inputs[0]
        return None

    def replace(self, removed: list[Node], new: Node, at_first: bool = False) -> None:
        """Puts `new` where the last of `removed` was (the first with `at_first`: a node whose
        outputs readers of every removed node need); the others go."""
        places = [self.position[id(n)] for n in removed]
        last = min(places) if at_first else max(places)
        for n in removed:
            self.g.nodes[self.position.pop(id(n))] = None  # type: ignore[call-overload]
            for o in n.outputs:
                if self.prod.get(o) is n:
                    del self.prod[o]
            for i in n.inputs:
                readers = self.uses.get(i)
                if readers is not None and n in readers:
                    readers.remove(n)
        self.g.nodes[last] = new
        self.position[id(new)] = last
        for o in new.outputs:
            if o:
                self.prod[o] = new
        for i in new.inputs:
            if i:
                self.uses.setdefault(i, []).append(new)

    def compact(self) -> None:
        """Closes the holes removed nodes left in `g.nodes`."""
        self.g.nodes = [n for n in self.g.nodes if n is not None]
        self.position = {id(n): k for k, n in enumerate(self.g.nodes)}


def _reduce_axes(g: Graph, n: Node) -> list[int] | None:
    axes = n.attrs.get("axes")
    if axes is None and len(n.inputs) > 1 and g.const(n.inputs[1]) is not None:
        axes = [int(a) for a in g.const(n.inputs[1]).reshape(-1)]
    shape = g.shape(n.inputs[0])
    if axes is None or shape is None:
        return None
    return sorted(a + len(shape) if a < 0 else a for a in axes)


def _layer_norms(r: _Rewriter) -> None:
    g = r.g
    for div in r.nodes("Div"):
        if not r.alive(div):
            continue
        d, s = div.inputs
        sub, sqrt = r.producer(d, "Sub"), r.producer(s, "Sqrt")
        if sub is None or sqrt is None:
            continue
        x, mean = sub.inputs
        rm1 = r.producer(mean, "ReduceMean")
        add_eps = r.producer(sqrt.inputs[0], "Add")
        if rm1 is None or rm1.inputs[0] != x or add_eps is None:
            continue
        var = next((v for v in add_eps.inputs if r.producer(v, "ReduceMean")), None)
        if var is None:
            continue
        eps = _scalar(g, r.other(add_eps, var) or "")
        rm2 = r.producer(var, "ReduceMean")
        sq = r.producer(rm2.inputs[0], "Pow") or r.producer(rm2.inputs[0], "Mul")
        if eps is None or sq is None:
            continue
        if sq.op == "Pow" and not (sq.inputs[0] == d and _close(_scalar(g, sq.inputs[1]), 2.0, 0)):
            continue
        if sq.op == "Mul" and sq.inputs != [d, d]:
            continue
        shape = g.shape(x)
        a1, a2 = _reduce_axes(g, rm1), _reduce_axes(g, rm2)
        if shape is None or a1 is None or a1 != a2 or a1 != list(range(len(shape) - len(a1), len(shape))):
            continue
        if not (rm1.attrs.get("keepdims", 1) and rm2.attrs.get("keepdims", 1)):
            continue
        inner = [(mean, 1), (var, 1), (sq.outputs[0], 1), (add_eps.outputs[0], 1), (s, 1),
                 (d, 3 if sq.op == "Mul" else 2)]
        if any(len(r.uses.get(v, [])) != k or v in r.outputs for v, k in inner):
            continue
        removed = [rm1, sub, sq, rm2, add_eps, sqrt, div]
        out = div.outputs[0]
        norm_shape = shape[len(shape) - len(a1):]
        gamma = beta = None
        mul = r.only_use(out)
        if mul is not None and mul.op == "Mul":
            cand = r.other(mul, out)
            if cand is not None and g.const(cand) is not None and g.const(cand).size == int(np.prod(norm_shape)):
                gamma, out = cand, mul.outputs[0]
                gamma_size = g.const(cand).size
                removed.append(mul)
                add = r.only_use(out)
                if add is not None and add.op == "Add":
                    cand = r.other(add, out)
                    if cand is not None and g.const(cand) is not None and g.const(cand).size == gamma_size:
                        beta, out = cand, add.outputs[0]
                        removed.append(add)
        gamma = _parameter(g, gamma, norm_shape, 1.0, f"{out}.scale")
        beta = _parameter(g, beta, norm_shape, 0.0, f"{out}.bias")
        ln = Node("LayerNormalization", removed[-1].name, [x, gamma, beta], [out],
                  {"axis": -len(a1), "epsilon": eps}, "", removed[-1].index, None,
                  [n.op for n in removed])
        r.replace(removed, ln)


def _parameter(g: Graph, name: str | None, shape: tuple, fill: float, new: str) -> str:
    """A layer norm parameter of exactly `shape`: the constant `name` (reshaped if it is, say,
    [1, 1, D]), or a constant of `fill` when the exporter wrote none."""
    if name is None:
        g.consts[new] = np.full(shape, fill, dtype=np.float32)
        g.derived[new] = ("", f"{fill:g} everywhere: the exporter wrote no parameter")
        return new
    c = g.const(name)
    if tuple(c.shape) != tuple(shape):
        g.consts[new] = c.reshape(shape).astype(np.float32)
        g.derived[new] = (name, "reshaped to [" + ", ".join(str(d) for d in shape) + "]")
        return new
    return name


def _gelus(r: _Rewriter) -> None:
    g = r.g
    for erf in r.nodes("Erf"):
        scale = r.prod.get(erf.inputs[0]) if erf.inputs else None
        if scale is None or scale.op not in ("Div", "Mul") or not r.alive(erf):
            continue
        x, c = scale.inputs[0], _scalar(g, scale.inputs[1])
        if scale.op == "Mul" and c is None:  # Mul(0.7071, x)
            x, c = scale.inputs[1], _scalar(g, scale.inputs[0])
        if not ((scale.op == "Div" and _close(c, np.sqrt(2.0))) or (scale.op == "Mul" and _close(c, 1 / np.sqrt(2.0)))):
            continue
        one_plus = r.only_use(erf.outputs[0])
        if r.only_use(scale.outputs[0]) is not erf or one_plus is None or one_plus.op != "Add":
            continue
        if not _close(_scalar(g, r.other(one_plus, erf.outputs[0]) or ""), 1.0, 0):
            continue
        a = one_plus.outputs[0]
        m1 = r.only_use(a)
        if m1 is None or m1.op != "Mul":
            continue
        o1 = r.other(m1, a) or ""
        removed = [scale, erf, one_plus, m1]
        half = r.producer(o1, "Mul")
        if o1 == x or _close(_scalar(g, o1), 0.5, 0):
            # (x * a) * 0.5 or (a * 0.5) * x: one more Mul by what m1 lacks.
            m2 = r.only_use(m1.outputs[0])
            o2 = r.other(m2, m1.outputs[0]) if m2 is not None and m2.op == "Mul" else None
            if o2 is None or not (_close(_scalar(g, o2), 0.5, 0) if o1 == x else o2 == x):
                continue
            removed.append(m2)
        elif half is not None and r.only_use(o1) is m1 and x in half.inputs and \
                _close(_scalar(g, r.other(half, x) or ""), 0.5, 0):
            removed.insert(0, half)  # (x * 0.5) * a
        else:
            continue
        last = removed[-1]
        r.replace(removed, Node("Gelu", last.name, [x], [last.outputs[0]], {}, PARTITA, last.index, None,
                                [n.op for n in removed]))


def _hardswishes(r: _Rewriter) -> None:
    g = r.g
    for hs in r.nodes("HardSigmoid"):
        if not (_close(hs.attrs.get("alpha", 0.2), 1 / 6) and _close(hs.attrs.get("beta", 0.5), 0.5)):
            continue
        mul = r.only_use(hs.outputs[0])
        if mul is None or mul.op != "Mul" or r.other(mul, hs.outputs[0]) != hs.inputs[0]:
            continue
        r.replace([hs, mul], Node("HardSwish", mul.name, [hs.inputs[0]], [mul.outputs[0]], {}, "", mul.index, None,
                                  ["HardSigmoid", "Mul"]))


def _transposed(g: Graph, name: str) -> str:
    """The constant `name` transposed ([K, N] -> [N, K]), under the name `name.T`."""
    new = name + ".T"
    if new not in g.consts:
        g.consts[new] = np.ascontiguousarray(g.const(name).T)
        g.derived[new] = (name, "transposed")
    return new


def _dequantized_weight(r: _Rewriter, value: str) -> Node | None:
    """The DequantizeLinear that writes `value` from a constant 2-D integer weight with a
    constant scale and a valid axis, when `value` has no other reader; else None."""
    g = r.g
    dq = r.producer(value, "DequantizeLinear")
    if dq is None or r.only_use(value) is None:
        return None
    w, scale = g.const(dq.inputs[0]), g.const(dq.input(1))
    if w is None or scale is None or w.ndim != 2 or w.dtype.kind not in "iu" or dq.attrs.get("block_size", 0) \
            or not -2 <= int(dq.attrs.get("axis", 1)) < 2:
        return None
    return dq


def _transposed_dequantize(r: _Rewriter, dq: Node) -> str:
    """Replaces `dq`, the dequantization of a [K, N] weight, by that of the weight transposed to
    [N, K] (`w.T`), a per-axis scale's axis swapped; returns the value it writes."""
    g = r.g
    wt = _transposed(g, dq.inputs[0])
    attrs = dict(dq.attrs)
    if quant.per_axis(g.const(dq.input(1))):
        attrs["axis"] = 1 - int(attrs.get("axis", 1)) % 2
    out = g.new_name(dq.outputs[0])
    g.shapes[out], g.dtypes[out] = tuple(g.const(wt).shape), np.dtype(np.float32)
    r.replace([dq], Node("DequantizeLinear", dq.name, [wt] + dq.inputs[1:], [out], attrs, dq.domain, dq.index,
                         None, dq.fused))
    return out


def _is_bias(r: _Rewriter, value: str, units: int) -> bool:
    """True when `value` is `units` bias values: a float constant, or the DequantizeLinear of a
    constant (a quantized model's int32 bias)."""
    c = r.g.const(value)
    if c is not None:
        return c.shape == (units,) and c.dtype == np.float32
    dq = r.producer(value, "DequantizeLinear")
    q = r.g.const(dq.inputs[0]) if dq is not None else None
    return q is not None and q.shape == (units,)


def _dense(r: _Rewriter) -> None:
    g = r.g
    for n in [n for n in g.nodes if n is not None]:
        if not r.alive(n):
            continue
        # A constant weight, or the DequantizeLinear of one (QDQ form): the weight dense takes is
        # [N, K], transposed at import where ONNX's is [K, N].
        transpose = n.op == "MatMul" or (n.op == "Gemm" and not n.attrs.get("transB", 0))
        if n.op not in ("MatMul", "Gemm") or len(n.inputs) < 2:
            continue
        a, b = n.inputs[0], n.inputs[1]
        w = g.const(b)
        dq = _dequantized_weight(r, b) if w is None else None
        if dq is not None:
            w = g.const(dq.inputs[0])
        elif w is None or w.dtype != np.float32:
            continue
        if w.ndim != 2:
            continue
        units = w.shape[1] if transpose else w.shape[0]
        if n.op == "MatMul":
            sa = g.shape(a)
            if sa is None or len(sa) < 1:
                continue
            bias, removed = "", [n]
        else:
            if n.attrs.get("transA", 0) or n.attrs.get("alpha", 1.0) != 1.0:
                continue
            c = n.input(2)
            if c and n.attrs.get("beta", 1.0) != 1.0:
                continue
            if c and dq is not None:
                if not _is_bias(r, c, units):
                    continue
            elif c and (g.const(c) is None or g.const(c).size != units):
                continue
            bias, removed = c, [n]
            if c and g.const(c) is not None and g.const(c).shape != (units,):
                bias = c + ".flat"
                g.consts[bias] = g.const(c).reshape(units)
                g.derived[bias] = (c, f"reshaped to [{units}]")
        out = n.outputs[0]
        if not bias:
            add = r.only_use(out)
            if add is not None and add.op == "Add":
                cand = r.other(add, out)
                if cand and _is_bias(r, cand, units):
                    bias, out = cand, add.outputs[0]
                    removed.append(add)
        if dq is None:
            weight = _transposed(g, b) if transpose else b
        else:
            weight = _transposed_dequantize(r, dq) if transpose else b
        last = removed[-1]
        r.replace(removed, Node("Dense", last.name, [a, weight] + ([bias] if bias else []), [out], {}, PARTITA,
                                last.index, None, [m.op for m in removed]))


def _slice_cut(g: Graph, n: Node) -> tuple[int, int, int] | None:
    """(axis, start, end) of a one-axis, step-1 Slice with constant bounds, normalized."""
    shape = g.shape(n.inputs[0])
    if shape is None or "starts" in n.attrs or len(n.inputs) < 3:
        return None
    vals = [g.const(i) if i else None for i in n.inputs[1:5]]
    if any(v is None for v in vals[:2]) or any(v is None and i for v, i in zip(vals[2:], n.inputs[3:5])):
        return None
    starts, ends = vals[0].reshape(-1), vals[1].reshape(-1)
    axes = vals[2].reshape(-1) if len(vals) > 2 and vals[2] is not None else [0]
    steps = vals[3].reshape(-1) if len(vals) > 3 and vals[3] is not None else [1]
    if len(starts) != 1 or len(axes) != 1 or int(steps[0]) != 1:
        return None
    axis = int(axes[0]) % len(shape)
    s, e, _ = slice(int(starts[0]), int(ends[0]), 1).indices(shape[axis])
    return (axis, s, e) if e > s else None


def _slices_to_split(r: _Rewriter) -> None:
    """Slices that cut one value into consecutive parts (Q, K and V of a packed projection)
    become one Split, Partita's `split`: one op instead of several."""
    g = r.g
    groups: dict[tuple[str, int], list[tuple[int, int, Node]]] = {}
    for n in r.nodes("Slice"):
        if n.domain in ("", "ai.onnx"):
            cut = _slice_cut(g, n)
            if cut is not None:
                groups.setdefault((n.inputs[0], cut[0]), []).append((cut[1], cut[2], n))
    for (x, axis), cuts in groups.items():
        cuts.sort(key=lambda c: c[0])
        dim = g.shape(x)[axis]
        tiles = len(cuts) > 1 and cuts[0][0] == 0 and cuts[-1][1] == dim and \
            all(a[1] == b[0] for a, b in zip(cuts, cuts[1:]))
        if not tiles:
            continue
        first = min((c[2] for c in cuts), key=lambda n: r.position[id(n)])
        split = Node("Split", first.name, [x], [c[2].outputs[0] for c in cuts],
                     {"axis": axis, "split": [c[1] - c[0] for c in cuts]}, "", first.index, None,
                     ["Slice"] * len(cuts))
        r.replace([c[2] for c in cuts], split, at_first=True)


def fuse(g: Graph) -> None:
    """Applies every rewrite of this module to `g`."""
    r = _Rewriter(g)
    for rewrite in (_slices_to_split, _layer_norms, _gelus, _hardswishes, _dense):
        rewrite(r)
    r.compact()
