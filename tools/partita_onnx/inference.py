"""ONNX shape inference, run where it cannot take the importer down.

onnx's shape inference is native code, and some well-formed models that the checker accepts
still crash it (a Conv weight of the wrong rank: a segmentation fault) or keep it busy for
minutes (an input dimension of 2^62). It runs here in a forked child: a crash becomes a
one-line refusal, and the importer's time limit can stop it. The child is given the graph with
its large constants as typed inputs instead of data, since inference reads the values of small
shape tensors only: the bytes of the weights are neither copied nor serialized again.
"""
from __future__ import annotations

import os
import signal

import onnx
from onnx import helper, shape_inference

from .errors import ImportFailure, first_line, shown
from .validate import elements

# Constants with more elements than this reach inference as typed inputs, without their data.
SMALL_ELEMENTS = 1024


class InferenceError(Exception):
    """Shape inference refused the model (its first line), as onnx's InferenceError does."""


def _typed_input(t: onnx.TensorProto) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))


def light(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` with each large initializer replaced by a graph input of the same type and shape."""
    g = model.graph
    out = onnx.ModelProto()
    out.ir_version = model.ir_version
    out.opset_import.extend(model.opset_import)
    out.functions.extend(model.functions)
    lg = out.graph
    lg.name = g.name
    lg.node.extend(g.node)
    lg.input.extend(g.input)
    lg.output.extend(g.output)
    lg.value_info.extend(g.value_info)
    declared = {i.name for i in g.input}
    for t in g.initializer:
        if elements(t) <= SMALL_ELEMENTS:
            lg.initializer.append(t)
        elif t.name not in declared:
            lg.input.append(_typed_input(t))
    return out


def _infer_in_child(model: onnx.ModelProto, fd: int, check_type: bool) -> None:
    try:
        m = shape_inference.infer_shapes(model, check_type=check_type, strict_mode=False, data_prop=True)
        found = onnx.GraphProto()
        found.value_info.extend(m.graph.value_info)
        found.output.extend(m.graph.output)
        data = b"\x00" + found.SerializeToString()
    except Exception as e:  # onnx raises InferenceError and others
        data = b"\x01" + first_line(e).encode("utf-8", "replace")
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def infer(model: onnx.ModelProto, path: str, check_type: bool = False) -> onnx.GraphProto:
    """A graph holding the value_info and outputs inference finds for `model` (best given
    `light`, without the bytes of its large constants); raises InferenceError when inference
    refuses the model (with `check_type`, also when an op's inputs have types its schema does
    not allow), ImportFailure when it crashes."""
    if not hasattr(os, "fork"):
        try:
            m = shape_inference.infer_shapes(model, check_type=check_type, strict_mode=False, data_prop=True)
        except Exception as e:
            raise InferenceError(first_line(e)) from None
        return m.graph
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: infer, write the result, leave without running the parent's cleanup
        try:
            os.close(read_end)
            _infer_in_child(model, write_end, check_type)
        finally:
            os._exit(0)
    os.close(write_end)
    try:
        with os.fdopen(read_end, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        pid = 0
    finally:
        if pid:  # interrupted (the time limit): the child must not outlive the import
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    # The child writes a tag byte, then the result: a child that died has a signal for status
    # (and nothing, or part of its answer, in the pipe).
    if os.WIFSIGNALED(status) or not data:
        why = signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status) else "no result"
        raise ImportFailure(f"{shown(path)}: ONNX shape inference crashed on this model ({why}); the model is "
                            f"malformed in a way the ONNX checker does not see (an input or weight of an "
                            f"unexpected rank, say)")
    body = data[1:]
    if data[:1] == b"\x01":
        raise InferenceError(body.decode("utf-8", "replace"))
    found = onnx.GraphProto()
    found.ParseFromString(body)
    return found
