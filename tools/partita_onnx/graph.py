"""A small mutable graph of ONNX nodes, the form every clean-up pass rewrites.

ONNX protobufs are awkward to rewrite in place, so the importer copies the graph once into
plain Python objects: nodes with decoded attributes, constants as numpy arrays, and the static
shape and dtype of every value that shape inference could tell.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .inference import SMALL_ELEMENTS
from .limits import Budget


def unique_name(base: str, taken: set[str], sep: str = "_", start: int = 2) -> str:
    """`base`, else `base<sep><start>`, `base<sep><start + 1>`, ...: the first name not in
    `taken`, which it then joins."""
    name, k = base, start
    while name in taken:
        name = f"{base}{sep}{k}"
        k += 1
    taken.add(name)
    return name

Shape = tuple[int, ...]

# ONNX element types as numpy dtypes (onnx.mapping is the spelling onnx 1.12 has; newer releases
# keep it with a deprecation warning, so it is read once here).
_NP_OF_ONNX = {
    onnx.TensorProto.FLOAT: np.dtype(np.float32), onnx.TensorProto.DOUBLE: np.dtype(np.float64),
    onnx.TensorProto.FLOAT16: np.dtype(np.float16), onnx.TensorProto.INT64: np.dtype(np.int64),
    onnx.TensorProto.INT32: np.dtype(np.int32), onnx.TensorProto.INT16: np.dtype(np.int16),
    onnx.TensorProto.INT8: np.dtype(np.int8), onnx.TensorProto.UINT8: np.dtype(np.uint8),
    onnx.TensorProto.BOOL: np.dtype(np.bool_),
}


def np_dtype(elem_type: int) -> np.dtype | None:
    """The numpy dtype of an ONNX element type, or None for one numpy cannot hold (bfloat16...)."""
    return _NP_OF_ONNX.get(elem_type)


def onnx_elem_type(dtype: np.dtype) -> int:
    """The ONNX element type of a numpy dtype."""
    for k, v in _NP_OF_ONNX.items():
        if v == dtype:
            return k
    raise ValueError(f"no ONNX element type for {dtype}")


@dataclass(eq=False)
class Node:
    """One ONNX node. An omitted optional input is the empty string, as in ONNX. Nodes compare
    by identity: two nodes with equal fields are still two nodes (and comparing is O(1))."""

    op: str
    name: str
    inputs: list[str]
    outputs: list[str]
    attrs: dict[str, Any]
    domain: str = ""
    index: int = 0  # position in the ONNX file's node list: it names the node's C++ type
    proto: onnx.NodeProto | None = None  # the original, for another round of shape inference
    fused: list[str] = field(default_factory=list)  # op types a fusion folded into this node

    def input(self, i: int) -> str:
        """Input `i`, or '' when the node has fewer inputs."""
        return self.inputs[i] if i < len(self.inputs) else ""

    def describe(self) -> str:
        """`'/layer1/Relu' (Relu)`: the node as messages and comments name it."""
        return f"'{self.name or '<unnamed>'}' ({self.op})"


# The doc string of a node the importer wrote in place of an operator-form quantized node
# (qlinear.py), followed by that node's op type.
EXPANDED_FROM = "partita_import: expanded from "


def expanded_from(n: onnx.NodeProto) -> list[str]:
    """`[op]` for a node expanded from an operator-form node of op type `op`, else `[]`."""
    return [n.doc_string[len(EXPANDED_FROM):]] if n.doc_string.startswith(EXPANDED_FROM) else []


def _attribute(a: onnx.AttributeProto) -> Any:
    v = helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, list) and v and isinstance(v[0], bytes):
        return [s.decode("utf-8", "replace") for s in v]
    if isinstance(v, onnx.TensorProto):
        return numpy_helper.to_array(v)
    return v


class Graph:
    """The graph being imported: nodes in topological order, constants, shapes and dtypes."""

    def __init__(self, model: onnx.ModelProto, path: str, opset: int):
        g = model.graph
        self.path = path
        self.opset = opset
        self.model = model  # kept for its metadata and to rebuild a model for shape inference
        self.consts: dict[str, np.ndarray] = {}
        for init in g.initializer:
            self.consts[init.name] = numpy_helper.to_array(init)
        self.initializers = set(self.consts)
        self.inputs = [i.name for i in g.input if i.name not in self.consts]
        self.outputs = [o.name for o in g.output]
        # The ONNX names of the graph outputs, in order: the model's outputs keep them (`outputs`
        # may come to name other values, where an output was a copy).
        self.output_names = list(self.outputs)
        self.nodes = [Node(n.op_type, n.name, list(n.input), list(n.output),
                           {a.name: _attribute(a) for a in n.attribute}, n.domain, i, n, expanded_from(n))
                      for i, n in enumerate(g.node)]
        self.shapes: dict[str, Shape | None] = {}
        self.dtypes: dict[str, np.dtype | None] = {}
        self.read_value_infos(model.graph)
        self.generated = 0  # counter for the names of values the importer makes up
        # An output replaced by the value it copied (a dropped Identity): new name -> ONNX name.
        self.aliases: dict[str, str] = {}
        # Constants the importer made from others: name -> (ONNX constant, how it was derived).
        self.derived: dict[str, tuple[str, str]] = {}
        # What folding may still allocate (the import's budget replaces this default one).
        self.budget = Budget()

    def read_value_infos(self, g: onnx.GraphProto) -> None:
        """Takes the shapes and dtypes shape inference recorded in `g` (its inputs, value_info
        and outputs); symbolic dims become None."""
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            t = vi.type.tensor_type
            self.dtypes[vi.name] = np_dtype(t.elem_type)
            if t.HasField("shape"):
                self.shapes[vi.name] = tuple(d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim)
            else:
                self.shapes.setdefault(vi.name, None)

    # -- queries ------------------------------------------------------------------------------

    def const(self, name: str) -> np.ndarray | None:
        """The value of `name` when it is a constant, else None."""
        return self.consts.get(name) if name else None

    def shape(self, name: str) -> Shape | None:
        """The static shape of `name`, or None when some dimension is unknown."""
        if name in self.consts:
            return tuple(self.consts[name].shape)
        s = self.shapes.get(name)
        if s is None or any(d is None for d in s):
            return None
        return s  # type: ignore[return-value]

    def dtype(self, name: str) -> np.dtype | None:
        """The element type of `name`, when known."""
        if name in self.consts:
            return self.consts[name].dtype
        return self.dtypes.get(name)

    def uses(self) -> dict[str, list[Node]]:
        """Value name -> the nodes that read it (once per reading input)."""
        u: dict[str, list[Node]] = {}
        for n in self.nodes:
            for i in n.inputs:
                if i:
                    u.setdefault(i, []).append(n)
        return u

    def producers(self) -> dict[str, Node]:
        """Value name -> the node that writes it."""
        return {o: n for n in self.nodes for o in n.outputs if o}

    # -- rewriting ----------------------------------------------------------------------------

    def new_name(self, hint: str) -> str:
        """A value name that is not in the graph yet, built from `hint`."""
        self.generated += 1
        return f"{hint}.partita{self.generated}"

    def rename_values(self, renamed: dict[str, str]) -> None:
        """Every reader of a value `old` in `renamed` reads `renamed[old]` instead (following
        chains: a copy of a copy reads the original), graph outputs included, in one pass over
        the graph. An output renamed so keeps its ONNX name in `output_names` (and in `aliases`,
        for messages about the value)."""
        def final(value: str) -> str:
            seen = set()
            while value in renamed and value not in seen:
                seen.add(value)
                value = renamed[value]
            return value

        if not renamed:
            return
        for n in self.nodes:
            if any(i in renamed for i in n.inputs):
                n.inputs = [final(i) if i in renamed else i for i in n.inputs]
        outputs = []
        for o in self.outputs:
            if o in renamed:
                new = final(o)
                self.aliases[new] = self.aliases.get(o, o)
                o = new
            outputs.append(o)
        self.outputs = outputs

    def remove_dead(self) -> None:
        """Drops the nodes no graph output depends on."""
        live = set(self.outputs)
        keep = []
        for n in reversed(self.nodes):
            if any(o in live for o in n.outputs):
                keep.append(n)
                live.update(i for i in n.inputs if i)
        self.nodes = keep[::-1]

    def to_model(self) -> onnx.ModelProto:
        """The current graph as an ONNX model (constants as initializers), for shape inference."""
        used = {i for n in self.nodes for i in n.inputs if i} | set(self.outputs)
        orig_inputs = {i.name: i for i in self.model.graph.input}
        inputs = [orig_inputs[i] for i in self.inputs]
        # Inference reads the values of small (shape) tensors only: large constants go as
        # typed inputs, so that their bytes are not copied into protobuf again.
        inits = []
        for k, v in self.consts.items():
            if k not in used:
                continue
            v = np.asarray(v)
            if v.size <= SMALL_ELEMENTS:
                inits.append(numpy_helper.from_array(v, k))
            else:
                inputs.append(helper.make_tensor_value_info(k, onnx_elem_type(v.dtype), list(v.shape)))
        outputs = []
        for o in self.outputs:
            dt = self.dtype(o)
            outputs.append(helper.make_tensor_value_info(o, onnx_elem_type(dt) if dt else 0, None))
        nodes = []
        for n in self.nodes:
            if n.proto is None:
                raise ValueError(f"node {n.describe()} has no ONNX form")
            p = onnx.NodeProto()
            p.CopyFrom(n.proto)
            del p.input[:]
            p.input.extend(n.inputs)
            nodes.append(p)
        graph = helper.make_graph(nodes, self.model.graph.name or "graph", inputs, outputs, inits)
        m = helper.make_model(graph, opset_imports=list(self.model.opset_import))
        m.ir_version = self.model.ir_version
        return m


def static_dims(shape: Iterable[int | None]) -> bool:
    """True when every dimension is known."""
    return all(d is not None for d in shape)
