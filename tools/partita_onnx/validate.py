"""Checks of a parsed model file before anything native reads it.

Protobuf parses many files that are not sound models: a tensor whose bytes disagree with its
dims (ONNX's shape inference then reads past the buffer and crashes the process), an element or
attribute type that no ONNX release defines, an attribute of the wrong type for its op. Every
tensor of the file (initializers, sparse initializers, tensors held by attributes, in subgraphs
and functions too) and every attribute is checked here, and all problems are reported at once
in the user's terms.
"""
from __future__ import annotations

import math
from typing import Iterator

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, numpy_helper

from .errors import shown
from .limits import Budget

T = TensorProto

# Bytes per element of each element type that raw_data may hold (the float8 types exist in
# newer onnx releases only).
ITEMSIZE: dict[int, int] = {
    T.FLOAT: 4, T.UINT8: 1, T.INT8: 1, T.UINT16: 2, T.INT16: 2, T.INT32: 4, T.INT64: 8, T.BOOL: 1,
    T.FLOAT16: 2, T.DOUBLE: 8, T.UINT32: 4, T.UINT64: 8, T.COMPLEX64: 8, T.COMPLEX128: 16, T.BFLOAT16: 2,
}
for _name in ("FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ"):
    if hasattr(T, _name):
        ITEMSIZE[getattr(T, _name)] = 1

# The typed field that holds each element type when raw_data is not used, and how many values
# one element takes there.
_TYPED_FIELD: dict[int, tuple[str, int]] = {
    T.FLOAT: ("float_data", 1), T.COMPLEX64: ("float_data", 2), T.DOUBLE: ("double_data", 1),
    T.COMPLEX128: ("double_data", 2), T.INT64: ("int64_data", 1), T.UINT32: ("uint64_data", 1),
    T.UINT64: ("uint64_data", 1), T.STRING: ("string_data", 1),
}

_TYPE_NAMES = {T.FLOAT: "float32", T.DOUBLE: "float64", T.FLOAT16: "float16"}


def type_name(elem_type: int) -> str:
    """`float32`, `int64`, ..., or `element type 99` for a number no ONNX release defines."""
    if elem_type in _TYPE_NAMES:
        return _TYPE_NAMES[elem_type]
    try:
        return T.DataType.Name(elem_type).lower()
    except ValueError:
        return f"element type {elem_type}"


def tensor_text(t: TensorProto) -> str:
    """`int64[2]`."""
    return f"{type_name(t.data_type)}[{', '.join(str(d) for d in t.dims)}]"


def elements(t: TensorProto) -> int:
    """The number of elements the dims of `t` say it has (dims already checked non-negative)."""
    return math.prod(t.dims)


def _negative(dims) -> str | None:
    """The problem with `dims` when one is negative, else None."""
    return f"dims [{', '.join(str(d) for d in dims)}] are negative" if any(d < 0 for d in dims) else None


# The most dimensions a tensor may have (numpy's limit).
MAX_RANK = 32


def tensor_problem(t: TensorProto) -> str | None:
    """What is wrong with tensor `t`'s type, dims or data (external data aside), or None."""
    if t.data_type not in ITEMSIZE and t.data_type != T.STRING:
        if t.data_type == T.UNDEFINED:
            return "the tensor has no element type"
        return f"{type_name(t.data_type)} is not an element type this importer knows"
    if (negative := _negative(t.dims)) is not None:
        return negative
    if len(t.dims) > MAX_RANK:
        return f"rank {len(t.dims)}: at most {MAX_RANK} dimensions are read"
    if t.HasField("segment"):
        return "a segment of a tensor: segmented tensors are not read"
    if t.data_location == T.EXTERNAL:
        if t.data_type == T.STRING:
            return "a string tensor with external data"
        return None  # checked as it is read, by external_data
    count = elements(t)
    if t.HasField("raw_data"):
        if t.data_type == T.STRING:
            return "a string tensor with raw data"
        need = count * ITEMSIZE[t.data_type]
        if len(t.raw_data) != need:
            return f"{len(t.raw_data)} bytes of raw data, but {tensor_text(t)} needs {need}"
        return None
    field, per = _TYPED_FIELD.get(t.data_type, ("int32_data", 1))
    have = len(getattr(t, field))
    if have != count * per:
        return f"{have} values in {field}, but {tensor_text(t)} holds {count * per}"
    if t.data_type == T.STRING:
        try:
            for v in t.string_data:
                v.decode("utf-8")
        except UnicodeDecodeError:
            return "a string that is not UTF-8"
    if t.data_type == T.FLOAT16 or t.data_type == T.BFLOAT16:
        bits = np.asarray(t.int32_data, dtype=np.int64)
        if bits.size and (bits.min() < 0 or bits.max() > 0xFFFF):
            return f"{field} holds values that are not 16-bit patterns"
    if t.data_type in _NARROW_INTEGERS:
        # numpy would wrap them silently: a uint8 zero point of 300 would read as 44.
        info = np.iinfo(_NARROW_INTEGERS[t.data_type])
        values = np.asarray(t.int32_data, dtype=np.int64)
        bad = values[(values < info.min) | (values > info.max)]
        if bad.size:
            return f"{field} holds {bad[0]}, outside {type_name(t.data_type)}'s range [{info.min}, {info.max}]"
    return None


# Integer types narrower than the int32 field that holds them.
_NARROW_INTEGERS = {T.INT8: np.int8, T.UINT8: np.uint8, T.INT16: np.int16, T.UINT16: np.uint16}


def sparse_problem(s: onnx.SparseTensorProto) -> str | None:
    """What is wrong with sparse tensor `s`, or None; its values and indices are checked too."""
    for part, t in (("values", s.values), ("indices", s.indices)):
        p = tensor_problem(t)
        if p is not None:
            return f"its {part}: {p}"
    if (negative := _negative(s.dims)) is not None:
        return negative
    if s.values.data_location == T.EXTERNAL or s.indices.data_location == T.EXTERNAL:
        return "sparse tensors with external data are not read"
    if s.indices.data_type != T.INT64:
        return f"its indices are {type_name(s.indices.data_type)}, not int64"
    nnz = elements(s.values)
    if len(s.values.dims) != 1:
        return "its values are not one-dimensional"
    shape = list(s.indices.dims)
    if not (shape == [nnz] or shape == [nnz, len(s.dims)]):
        return f"indices of shape [{', '.join(str(d) for d in shape)}] for {nnz} values of a rank-{len(s.dims)} tensor"
    return None


def dense_of_sparse(s: onnx.SparseTensorProto, name: str, budget: Budget) -> TensorProto:
    """The dense tensor of a (checked) sparse initializer; out-of-range indices are refused."""
    values = numpy_helper.to_array(s.values).reshape(-1)
    indices = numpy_helper.to_array(s.indices).astype(np.int64)
    dims = [int(d) for d in s.dims]
    total = math.prod(dims)
    budget.charge(f"sparse initializer '{shown(name)}'", total, values.dtype.itemsize)
    if indices.ndim == 2:
        if indices.size and (indices.min() < 0 or np.any(indices >= np.asarray(dims, dtype=np.int64))):
            raise ValueError("an index is outside the tensor's dims")
        flat = np.ravel_multi_index(tuple(indices.T), dims) if indices.size else indices.reshape(-1)
    else:
        flat = indices
    if flat.size and (flat.min() < 0 or flat.max() >= total):
        raise ValueError("an index is outside the tensor's dims")
    dense = np.zeros(total, dtype=values.dtype)
    dense[flat] = values
    return numpy_helper.from_array(dense.reshape(dims), name)


def _held_tensors(a: AttributeProto) -> list[TensorProto]:
    return ([a.t] if a.HasField("t") else []) + list(a.tensors)


def _held_graphs(a: AttributeProto) -> list[onnx.GraphProto]:
    return ([a.g] if a.HasField("g") else []) + list(a.graphs)


def _where(prefix: str, node: onnx.NodeProto) -> str:
    return f"{prefix}node '{shown(node.name or '<unnamed>')}' {shown(node.op_type)}"


def _attributes_of(prefix: str, nodes, deep: bool) -> Iterator[tuple[str, onnx.NodeProto, AttributeProto]]:
    """Each attribute of `nodes` with the prefix of where it is (see `_where`); with `deep`,
    those of their subgraphs' nodes too."""
    for node in nodes:
        for a in node.attribute:
            yield prefix, node, a
            if deep and (a.HasField("g") or a.graphs):
                inner = f"{_where(prefix, node)}, attribute '{shown(a.name)}': "
                for g in _held_graphs(a):
                    yield from _attributes_of(inner, g.node, deep)


def tensors(model: onnx.ModelProto) -> Iterator[tuple[str, TensorProto]]:
    """Every dense tensor of the model with a description for messages: initializers (of the
    graph and its subgraphs) and the tensors attributes hold."""
    def graph_tensors(prefix: str, g: onnx.GraphProto) -> Iterator[tuple[str, TensorProto]]:
        for t in g.initializer:
            yield f"{prefix}initializer '{shown(t.name)}'", t
        for at, node, a in _attributes_of(prefix, g.node, False):
            if a.type in _NO_TENSORS:
                continue
            where = _where(at, node)
            for t in _held_tensors(a):
                named = f" (tensor '{shown(t.name)}')" if t.name else ""
                yield f"{where}, attribute '{shown(a.name)}'{named}", t
            for g2 in _held_graphs(a):
                yield from graph_tensors(f"{where}, attribute '{shown(a.name)}': ", g2)

    yield from graph_tensors("", model.graph)
    for f in model.functions:
        for at, node, a in _attributes_of(f"function '{shown(f.name)}', ", f.node, True):
            for t in _held_tensors(a):
                yield f"{_where(at, node)}, attribute '{shown(a.name)}'", t


def _sparse_tensors(model: onnx.ModelProto) -> Iterator[tuple[str, onnx.SparseTensorProto]]:
    for s in model.graph.sparse_initializer:
        yield f"sparse initializer '{shown(s.values.name)}'", s
    for at, node, a in _attributes_of("", model.graph.node, True):
        for s in ([a.sparse_tensor] if a.HasField("sparse_tensor") else []) + list(a.sparse_tensors):
            yield f"{_where(at, node)}, attribute '{shown(a.name)}'", s


_ATTR_TYPES = set(AttributeProto.AttributeType.values()) - {AttributeProto.UNDEFINED}
# Attribute types that hold neither tensors nor graphs.
_NO_TENSORS = {AttributeProto.FLOAT, AttributeProto.INT, AttributeProto.STRING, AttributeProto.FLOATS,
               AttributeProto.INTS, AttributeProto.STRINGS}


def _opsets(model: onnx.ModelProto) -> dict[str, int]:
    return {("" if o.domain == "ai.onnx" else o.domain): o.version for o in model.opset_import}


def attribute_problems(model: onnx.ModelProto) -> list[str]:
    """Attributes whose type is unknown, or not the type the op's schema declares."""
    problems = []
    opsets = _opsets(model)
    for at, node, a in _attributes_of("", model.graph.node, True):
        if a.type not in _ATTR_TYPES:
            problems.append(f"{_where(at, node)}: attribute '{shown(a.name)}' has no attribute type this importer knows")
            continue
        domain = "" if node.domain == "ai.onnx" else node.domain
        if domain not in opsets:
            continue
        try:
            schema = onnx.defs.get_schema(node.op_type, opsets[domain], domain)
        except Exception:  # an op with no schema in this onnx: the mapping reports it
            continue
        declared = schema.attributes.get(a.name)
        if declared is not None and int(declared.type) != a.type:
            problems.append(f"{_where(at, node)}: attribute '{shown(a.name)}' is {AttributeProto.AttributeType.Name(a.type)}, "
                            f"but {shown(node.op_type)} takes {AttributeProto.AttributeType.Name(int(declared.type))}")
    return problems


def _plain_node(node: onnx.NodeProto) -> bool:
    """True when every string of `node` is text and no attribute holds a message (the common
    case, checked without walking the node's fields one by one)."""
    try:
        "".join(node.input) + "".join(node.output) + node.name + node.op_type + node.domain + node.doc_string
        for a in node.attribute:
            if a.type not in _NO_TENSORS:
                return False
            a.name + a.ref_attr_name + a.doc_string
    except TypeError:  # a bytes value: not UTF-8
        return False
    return True


def _plain_tensor(t: TensorProto) -> bool:
    """True when the name, doc string and external data entries of `t` are text."""
    try:
        t.name + t.doc_string + "".join(e.key + e.value for e in t.external_data)
    except TypeError:
        return False
    return True


def _repeated(field) -> bool:
    # protobuf 5 added is_repeated; protobuf 7 dropped label.
    is_repeated = getattr(field, "is_repeated", None)
    return bool(is_repeated) if is_repeated is not None else field.label == field.LABEL_REPEATED


def text_problems(model: onnx.ModelProto) -> list[str]:
    """Names and other strings that are not UTF-8 (protobuf hands them over as bytes)."""
    problems: list[str] = []

    def walk(message, where: tuple) -> None:
        for field, value in message.ListFields():
            repeated = _repeated(field)
            if field.type == field.TYPE_STRING:
                if any(isinstance(v, bytes) for v in (value if repeated else [value])):
                    problems.append("".join(where) + f"{field.name}: a string that is not UTF-8")
            elif field.type == field.TYPE_MESSAGE:
                plain = _plain_node if field.message_type.name == "NodeProto" else \
                    _plain_tensor if field.message_type.name == "TensorProto" else None
                for k, m in enumerate(value if repeated else [value]):
                    if plain is None or not plain(m):
                        walk(m, where + ((f"{field.name}[{k}].",) if repeated else (f"{field.name}.",)))

    walk(model, ())
    return problems[:20] + ([f"... and {len(problems) - 20} more"] if len(problems) > 20 else [])


def data_problems(model: onnx.ModelProto) -> list[str]:
    """Every tensor, in-file or sparse, whose data disagree with its dims and type."""
    problems = []
    for what, t in tensors(model):
        p = tensor_problem(t)
        if p is not None:
            problems.append(f"{what}: {p}")
    for what, s in _sparse_tensors(model):
        p = sparse_problem(s)
        if p is not None:
            problems.append(f"{what}: {p}")
    return problems


def charge_in_file(model: onnx.ModelProto, budget: Budget) -> None:
    """Charges the budget for the in-file initializers, which the importer copies to numpy."""
    for what, t in tensors(model):
        if t.data_location != T.EXTERNAL and t.data_type in ITEMSIZE:
            budget.charge(what, elements(t), ITEMSIZE[t.data_type])
