"""Reading an ONNX file: validation, fixed input shapes and shape inference.

Everything a user can get wrong about the file itself is reported here in one message: a file
that is not ONNX (corrupt or truncated), an opset outside the supported range, inputs with
dynamic dimensions (with the `--input-shape` that would fix them). Quantized ops of the operator
form are rewritten in QDQ form here (qlinear.py), before shape inference.
"""
from __future__ import annotations

import os
import stat
import warnings

import onnx
from google.protobuf.message import DecodeError

from . import external_data, inference, qlinear, validate
from .errors import ImportFailure, first_line, shown
from .graph import np_dtype
from .limits import Budget, size_text

# Opsets whose attribute-or-input forms the mapping table reads (Split, Squeeze, Unsqueeze,
# reductions, Clip, Pad, Resize moved attributes to inputs between 11 and 18).
MIN_OPSET, MAX_OPSET = 11, 18

def parse_input_shapes(specs: list[str]) -> dict[str, list[int]]:
    """`["x=1,3,224,224"]` -> `{"x": [1, 3, 224, 224]}`; a malformed spec is an ImportFailure."""
    shapes: dict[str, list[int]] = {}
    for spec in specs:
        name, sep, dims = spec.rpartition("=")
        try:
            values = [int(d) for d in dims.split(",")] if dims.strip() else []
        except ValueError:
            values = None
        if not sep or not name or values is None or any(v <= 0 or v >= 1 << 62 for v in values):
            raise ImportFailure(f"--input-shape {spec!r}: expected NAME=D0,D1,... with positive dimensions "
                                f"(for example x=1,3,224,224)")
        shapes[name] = values
    return shapes


def _parse(data: bytes, path: str) -> onnx.ModelProto:
    """The model that `data` encodes; a protobuf error or warning is a one-line ImportFailure."""
    model = onnx.ModelProto()
    try:
        # Protobuf warns (RuntimeWarning) on some half-parsed inputs instead of failing.
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            model.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError, SystemError, Warning) as e:
        # SystemError: the C++ protobuf reports a warning raised as an error that way.
        raise ImportFailure(f"{shown(path)}: not an ONNX model, or a corrupt or truncated one "
                            f"({first_line(e)})") from None
    return model


def read_model(path: str, budget: Budget) -> onnx.ModelProto:
    """The model in file `path`, checked, with external data loaded from its folder; a file that
    is not a sound ONNX model is an ImportFailure saying what is wrong, every tensor at once.
    Every tensor is charged to `budget`."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise ImportFailure(f"{shown(path)}: not a regular file")
            if st.st_size > budget.cap:
                raise ImportFailure(f"{shown(path)}: the file's {st.st_size} bytes are past the importer's memory cap of "
                                    f"{size_text(budget.cap)}; raise it with --max-memory")
            data = f.read()
    except OSError as e:
        raise ImportFailure(f"{shown(path)}: cannot read: {e.strerror}") from None
    if not data:
        raise ImportFailure(f"{shown(path)}: the file is empty, not an ONNX model")
    model = _parse(data, path)
    del data
    # Protobuf accepts many byte strings (a truncation at a field boundary, foreign data that
    # happens to parse), so the checks below and the checker have the last word.
    if not model.HasField("graph") or model.ir_version <= 0:
        raise ImportFailure(f"{shown(path)}: not an ONNX model, or a corrupt or truncated one (no graph or IR version)")
    problems = validate.text_problems(model)
    if problems:
        raise ImportFailure(f"{shown(path)}: the model's text is not UTF-8, as ONNX requires:", problems)
    problems = validate.attribute_problems(model) + validate.data_problems(model)
    if problems:
        raise ImportFailure(f"{shown(path)}: the model's data is malformed:", problems)
    validate.charge_in_file(model, budget)
    external_data.load(model, path, budget)
    _densify_sparse(model, path, budget)
    try:
        onnx.checker.check_model(model)
    except Exception as e:  # onnx raises ValidationError and others here
        raise ImportFailure(f"{shown(path)}: not a valid ONNX model, or a corrupt or truncated one "
                            f"({first_line(e)})") from None
    return model


def _densify_sparse(model: onnx.ModelProto, path: str, budget: Budget) -> None:
    """Sparse initializers become dense ones, the form the rest of the importer reads."""
    problems = []
    for s in list(model.graph.sparse_initializer):
        name = s.values.name
        try:
            model.graph.initializer.append(validate.dense_of_sparse(s, name, budget))
        except ValueError as e:
            problems.append(f"sparse initializer '{shown(name)}': {e}")
    if problems:
        raise ImportFailure(f"{shown(path)}: the model's data is malformed:", problems)
    del model.graph.sparse_initializer[:]


def default_opset(model: onnx.ModelProto) -> int:
    """The version of the default ('ai.onnx') domain the model imports."""
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return 0


def _dims_text(dims: list) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


def fix_input_shapes(model: onnx.ModelProto, shapes: dict[str, list[int]], path: str) -> None:
    """Applies `--input-shape` to the graph inputs, then refuses any input left dynamic."""
    inits = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    names = [i.name for i in inputs]
    unknown = [n for n in shapes if n not in names]
    if unknown:
        listed = ", ".join("'" + shown(n) + "'" for n in unknown)
        inputs_listed = ", ".join("'" + shown(n) + "'" for n in names)
        raise ImportFailure(f"{shown(path)}: --input-shape names {listed}, which "
                            f"{'is not an input' if len(unknown) == 1 else 'are not inputs'}; the inputs are "
                            f"{inputs_listed}")
    problems = []
    for vi in inputs:
        t = vi.type.tensor_type
        if vi.name in shapes:
            del t.shape.dim[:]
            for d in shapes[vi.name]:
                t.shape.dim.add().dim_value = d
            continue
        if not t.HasField("shape"):
            problems.append(f"input '{shown(vi.name)}' has no shape; give one with --input-shape {shown(vi.name)}=D0,D1,...")
            continue
        dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else shown(d.dim_param or "?")
                for d in t.shape.dim]
        dynamic = [i for i, d in enumerate(dims) if not isinstance(d, int)]
        if dynamic:
            which = ", ".join(f"{i} ('{dims[i]}')" for i in dynamic)
            suggestion = ",".join("1" if not isinstance(d, int) else str(d) for d in dims)
            problems.append(f"input '{shown(vi.name)}' {_dims_text(dims)}: dimension{'s' if len(dynamic) > 1 else ''} "
                            f"{which} {'are' if len(dynamic) > 1 else 'is'} dynamic; fix "
                            f"{'them' if len(dynamic) > 1 else 'it'} with --input-shape {shown(vi.name)}={suggestion}")
    if problems:
        raise ImportFailure(f"{shown(path)}: Partita compiles static shapes, and some inputs are dynamic:", problems)


def infer_shapes(model: onnx.ModelProto, path: str) -> onnx.ModelProto:
    """The model with every value's shape inferred from the (now static) input shapes."""
    # Shapes recorded by the exporter may carry symbolic batch sizes that contradict the fixed
    # ones; inference recomputes them all.
    del model.graph.value_info[:]
    for o in model.graph.output:
        o.type.tensor_type.ClearField("shape")
    try:
        found = inference.infer(inference.light(model), path, check_type=True)
    except inference.InferenceError as e:
        raise ImportFailure(f"{shown(path)}: ONNX shape inference failed: {e}") from None
    model.graph.value_info.extend(found.value_info)
    outputs = {o.name: o for o in found.output}
    for o in model.graph.output:
        if o.name in outputs:
            o.type.CopyFrom(outputs[o.name].type)
    return model


def load(path: str, input_shapes: dict[str, list[int]], budget: Budget) -> tuple[onnx.ModelProto, int]:
    """Reads, validates and shape-infers the model at `path`; returns it with its opset."""
    model = read_model(path, budget)
    opset = default_opset(model)
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise ImportFailure(f"{shown(path)}: opset {opset} of the default domain is not supported "
                            f"(opsets {MIN_OPSET} to {MAX_OPSET} are); re-export with opset_version=17")
    qlinear.expand(model, path, opset)
    fix_input_shapes(model, input_shapes, path)
    for vi in model.graph.input:
        if np_dtype(vi.type.tensor_type.elem_type) is None:
            raise ImportFailure(f"{shown(path)}: input '{shown(vi.name)}' has an element type Partita cannot hold "
                                f"({validate.type_name(vi.type.tensor_type.elem_type)})")
    return infer_shapes(model, path), opset
