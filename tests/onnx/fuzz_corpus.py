"""The seed models of fuzz_importer.py: small valid graphs built with onnx.helper.

Each seed is a model the importer turns into a header (exit 0), so that a mutation starts from
an input that reaches every stage (loader, fold, fuse, mapping, emit) rather than one refused
at the first check. A seed may keep some of its tensors in side files (external data), and may
need `--input-shape` arguments.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onnx_graphs as G

F, I64 = TensorProto.FLOAT, TensorProto.INT64
n = helper.make_node


@dataclass
class Seed:
    """A model, its side files (path relative to the model's folder -> bytes) and the
    `--input-shape` values it needs."""

    name: str
    model: onnx.ModelProto
    files: dict[str, bytes] = field(default_factory=dict)
    shapes: list[str] = field(default_factory=list)


def _model(nodes: list, inputs: list, outputs: list, inits: list | None = None, opset: int = 13) -> onnx.ModelProto:
    """A model without the shape inference onnx_graphs.model runs (outputs carry their shapes)."""
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(*o) for o in outputs], inits or [])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="fuzz")
    m.ir_version = 8
    return m


def mlp() -> onnx.ModelProto:
    """Gemm (transB) + Relu, then MatMul + Add (a dense layer to fuse), Softmax."""
    nodes = [n("Gemm", ["x", "w1", "b1"], ["h"], name="fc1", transB=1), n("Relu", ["h"], ["r"], name="relu"),
             n("MatMul", ["r", "w2"], ["m"], name="fc2"), n("Add", ["m", "b2"], ["l"], name="fc2_bias"),
             n("Softmax", ["l"], ["y"], name="softmax", axis=-1)]
    inits = [G.const("w1", G.w((16, 8), 41)), G.const("b1", G.w(16, 42)), G.const("w2", G.w((16, 4), 43)),
             G.const("b2", G.w(4, 44))]
    return G.model(nodes, [("x", F, [2, 8])], [("y", F, None)], inits)


def conv_bn() -> onnx.ModelProto:
    """Conv, BatchNormalization, Relu, MaxPool, GlobalAveragePool, Flatten."""
    nodes = [n("Conv", ["x", "cw", "cb"], ["c"], name="conv", pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
             n("BatchNormalization", ["c", "g", "be", "mu", "var"], ["b"], name="bn"),
             n("Relu", ["b"], ["r"], name="relu"),
             n("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
             n("GlobalAveragePool", ["p"], ["gp"], name="gap"), n("Flatten", ["gp"], ["y"], name="flat")]
    inits = [G.const("cw", G.w((6, 3, 3, 3), 51)), G.const("cb", G.w(6, 52)), G.const("g", 1 + G.w(6, 53, 0.1)),
             G.const("be", G.w(6, 54)), G.const("mu", G.w(6, 55, 0.1)), G.const("var", 0.5 + np.abs(G.w(6, 56)))]
    return G.model(nodes, [("x", F, [1, 3, 8, 8])], [("y", F, None)], inits)


def reshape_chain() -> onnx.ModelProto:
    """A Reshape whose target comes from Shape -> Gather -> Unsqueeze -> Concat, as exporters write."""
    nodes = [n("Shape", ["x"], ["s"], name="shape"), n("Gather", ["s", "i0"], ["d0"], name="dim0", axis=0),
             n("Unsqueeze", ["d0", "ax0"], ["d0u"], name="unsq"),
             n("Concat", ["d0u", "minus1"], ["tgt"], name="target", axis=0),
             n("Reshape", ["x", "tgt"], ["flat"], name="reshape"), n("Sigmoid", ["flat"], ["y"], name="sig")]
    inits = [G.const("i0", np.array(0)), G.const("ax0", np.array([0])), G.const("minus1", np.array([-1]))]
    return G.model(nodes, [("x", F, [2, 3, 4])], [("y", F, [2, 12])], inits)


def constants() -> onnx.ModelProto:
    """Constant, ConstantOfShape, Expand, Range (cast to float), Erf: values the importer folds."""
    shape = numpy_helper.from_array(np.array([2, 4], dtype=np.int64), "shape_value")
    nodes = [n("Constant", [], ["shp"], name="shape_const", value=shape),
             n("ConstantOfShape", ["shp"], ["half"], name="fill",
               value=numpy_helper.from_array(np.array([0.5], dtype=np.float32), "fill_value")),
             n("Constant", [], ["row"], name="row_const", value_floats=[1.0, 2.0, 3.0, 4.0]),
             n("Expand", ["row", "shp"], ["rows"], name="expand"),
             n("Range", ["start", "limit", "delta"], ["ri"], name="range"),
             n("Cast", ["ri"], ["rf"], name="cast", to=F),
             n("Erf", ["half"], ["e"], name="erf"),
             n("Add", ["x", "e"], ["a"], name="add_erf"), n("Mul", ["a", "rows"], ["b"], name="mul_rows"),
             n("Add", ["b", "rf"], ["y"], name="add_range")]
    inits = [G.const("start", np.array(0, dtype=np.int64)), G.const("limit", np.array(4, dtype=np.int64)),
             G.const("delta", np.array(1, dtype=np.int64))]
    return G.model(nodes, [("x", F, [2, 4])], [("y", F, None)], inits)


def dynamic_batch() -> onnx.ModelProto:
    """An MLP whose batch dimension is symbolic: it needs --input-shape."""
    m = mlp()
    for vi in (m.graph.input[0], m.graph.output[0]):
        vi.type.tensor_type.shape.dim[0].dim_param = "batch"
    return m


def external(m: onnx.ModelProto, location: str = "weights.bin") -> tuple[onnx.ModelProto, dict[str, bytes]]:
    """`m` with every initializer's data in one side file `location`, 64-byte aligned."""
    blob = bytearray()
    for t in m.graph.initializer:
        data = numpy_helper.to_array(t).tobytes()
        blob += b"\0" * (-len(blob) % 64)
        offset = len(blob)
        blob += data
        t.ClearField("raw_data")
        for f in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data", "string_data"):
            t.ClearField(f)
        t.data_location = TensorProto.EXTERNAL
        del t.external_data[:]
        for k, v in (("location", location), ("offset", str(offset)), ("length", str(len(data)))):
            e = t.external_data.add()
            e.key, e.value = k, v
    return m, {location: bytes(blob)}


def big_chain(pairs: int) -> onnx.ModelProto:
    """`pairs` dense layers in a row (MatMul by a constant, Add of a bias): a graph of thousands of
    nodes, each pair a fusion, so that work per node beyond a constant shows as time."""
    nodes, prev = [], "x"
    for i in range(pairs):
        nodes.append(n("MatMul", [prev, "w"], [f"m{i}"], name=f"mm{i}"))
        nodes.append(n("Add", [f"m{i}", "b"], [f"v{i}"], name=f"add{i}"))
        prev = f"v{i}"
    nodes.append(n("Relu", [prev], ["y"], name="relu"))
    return _model(nodes, [("x", F, [1, 4])], [("y", F, [1, 4])], [G.const("w", G.w((4, 4), 61)), G.const("b", G.w(4, 62))])


def seeds() -> list[Seed]:
    """The small seeds, each importable as it is."""
    ext_model, ext_files = external(mlp())
    ext_conv, ext_conv_files = external(conv_bn(), "data/conv.bin")
    return [
        Seed("mlp", mlp()),
        Seed("conv_bn", conv_bn()),
        Seed("reshape_chain", reshape_chain()),
        Seed("constants", constants()),
        Seed("external_mlp", ext_model, ext_files),
        Seed("external_conv", ext_conv, ext_conv_files),
        Seed("dynamic_batch", dynamic_batch(), shapes=["x=3,8"]),
        Seed("conv_net", G.conv_net()),
        Seed("encoder_block", G.encoder_block()),
        Seed("misc_ops", G.misc_ops()),
        Seed("conv_ops", G.conv_ops()),
        Seed("mask_ops", G.mask_ops()),
        Seed("recurrent_ops", G.recurrent_ops()),
    ]
