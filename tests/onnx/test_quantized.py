#!/usr/bin/env python3
"""Tests of tools/partita_import.py on quantized graphs built with onnx.helper.

    test_quantized.py [unittest arguments]            QDQ and operator forms, refusals
    test_quantized.py --runtime [unittest arguments]  imported models compiled, run on cpu and
                                                      compared with ONNX Runtime

The first checks the C++ each quantized graph maps to (QDQ form, operator forms expanded into
it, MatMul and Gemm by a dequantized weight as `dense`) and the one line each hostile node gets.
The second needs onnxruntime too. Without onnx and numpy (and onnxruntime for --runtime) the
program is skipped (exit 77), except under CI=true, where that fails.
"""
from __future__ import annotations

import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import onnx_required  # noqa: E402

RUNTIME = "--runtime" in sys.argv
if RUNTIME:
    sys.argv.remove("--runtime")
onnx_required.require("test_quantized")
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

import onnx_graphs as G  # noqa: E402
from test_importer import DRIVER, ToolTest, compile_flags, run_tool  # noqa: E402

n = helper.make_node
c = G.const
F, U8, I8, I32 = TensorProto.FLOAT, TensorProto.UINT8, TensorProto.INT8, TensorProto.INT32


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def scales(count: int, seed: int) -> np.ndarray:
    return (0.002 + 0.01 * rng(seed).random(count)).astype(np.float32)


def int8_weight(shape, seed: int) -> np.ndarray:
    return rng(seed).integers(-127, 128, shape).astype(np.int8)


def qdq(x: str, s: str, z: str, tag: str) -> list:
    """Quantize then dequantize `x` (an activation in QDQ form); the result is `tag`."""
    return [n("QuantizeLinear", [x, s, z], [tag + "_q"], name=tag + "_q"),
            n("DequantizeLinear", [tag + "_q", s, z], [tag], name=tag + "_dq")]


def activation_params(prefix: str, scale: float, zp: int = 128) -> list:
    return [c(prefix + "_s", np.float32(scale)), c(prefix + "_z", np.uint8(zp))]


def qdq_conv(per_channel: bool = True) -> onnx.ModelProto:
    """x -> QDQ -> Conv(DQ(w int8), DQ(b int32)) -> Relu -> QDQ."""
    ws = scales(8, 1) if per_channel else np.float32(0.006)
    xs = np.float32(0.03)
    nodes = qdq("x", "x_s", "x_z", "xd") + [
        n("DequantizeLinear", ["w", "w_s", "w_z"], ["wd"], name="w_dq", **({"axis": 0} if per_channel else {})),
        n("DequantizeLinear", ["b", "b_s"], ["bd"], name="b_dq", axis=0),
        n("Conv", ["xd", "wd", "bd"], ["cv"], name="conv", pads=[1, 1, 1, 1]),
        n("Relu", ["cv"], ["r"], name="relu")] + qdq("r", "y_s", "y_z", "y")
    zw = np.zeros(ws.shape, dtype=np.int8)
    inits = activation_params("x", float(xs)) + activation_params("y", 0.05, 0) + [
        c("w", int8_weight((8, 4, 3, 3), 2)), c("w_s", ws), c("w_z", zw),
        c("b", rng(3).integers(-500, 500, 8).astype(np.int32)), c("b_s", (xs * ws).astype(np.float32))]
    return G.model(nodes, [("x", F, [1, 4, 6, 6])], [("y", F, None)], inits)


def qdq_mlp() -> onnx.ModelProto:
    """Gemm(transB) by a per-channel int8 weight [N, K] with an int32 bias, then MatMul by a
    per-channel weight [K, N] plus the Add of a dequantized bias."""
    xs, hs = np.float32(0.02), np.float32(0.04)
    s1, s2 = scales(6, 4), scales(5, 5)
    nodes = qdq("x", "x_s", "x_z", "xd") + [
        n("DequantizeLinear", ["w1", "w1_s", "w1_z"], ["w1d"], name="w1_dq", axis=0),
        n("DequantizeLinear", ["b1", "b1_s"], ["b1d"], name="b1_dq", axis=0),
        n("Gemm", ["xd", "w1d", "b1d"], ["h"], name="fc1", transB=1),
        n("Relu", ["h"], ["hr"], name="relu")] + qdq("hr", "h_s", "h_z", "hd") + [
        n("DequantizeLinear", ["w2", "w2_s", "w2_z"], ["w2d"], name="w2_dq", axis=1),
        n("MatMul", ["hd", "w2d"], ["m"], name="fc2"),
        n("DequantizeLinear", ["b2", "b2_s"], ["b2d"], name="b2_dq", axis=0),
        n("Add", ["m", "b2d"], ["o"], name="fc2_bias")] + qdq("o", "y_s", "y_z", "y")
    inits = activation_params("x", float(xs)) + activation_params("h", float(hs), 0) + \
        activation_params("y", 0.1) + [
        c("w1", int8_weight((6, 10), 6)), c("w1_s", s1), c("w1_z", np.zeros(6, np.int8)),
        c("b1", rng(7).integers(-300, 300, 6).astype(np.int32)), c("b1_s", (xs * s1).astype(np.float32)),
        c("w2", int8_weight((6, 5), 8)), c("w2_s", s2), c("w2_z", np.zeros(5, np.int8)),
        c("b2", rng(9).integers(-300, 300, 5).astype(np.int32)), c("b2_s", (hs * s2).astype(np.float32))]
    return G.model(nodes, [("x", F, [2, 10])], [("y", F, None)], inits)


def qdq_residual() -> onnx.ModelProto:
    """Two quantized activations added, the sum quantized: a residual connection."""
    nodes = qdq("x", "x_s", "x_z", "xd") + [n("Sigmoid", ["xd"], ["sg"], name="sig")] + \
        qdq("sg", "s_s", "s_z", "sd") + [n("Add", ["xd", "sd"], ["a"], name="residual")] + qdq("a", "y_s", "y_z", "y")
    inits = activation_params("x", 0.03) + activation_params("s", 1 / 255, 0) + activation_params("y", 0.04)
    return G.model(nodes, [("x", F, [1, 3, 4, 4])], [("y", F, None)], inits)


def qdq_matmul() -> onnx.ModelProto:
    """The product of two quantized activations (attention's Q·Kᵀ)."""
    nodes = qdq("a", "a_s", "a_z", "ad") + qdq("b", "b_s", "b_z", "bd") + [
        n("MatMul", ["ad", "bd"], ["m"], name="qk")] + qdq("m", "y_s", "y_z", "y")
    inits = activation_params("a", 0.02) + activation_params("b", 0.025) + activation_params("y", 0.1)
    return G.model(nodes, [("a", F, [2, 3, 4]), ("b", F, [2, 4, 5])], [("y", F, None)], inits)


def qdq_concat_pool() -> onnx.ModelProto:
    """Two quantized activations concatenated, average-pooled, globally pooled."""
    nodes = qdq("a", "a_s", "a_z", "ad") + qdq("b", "b_s", "b_z", "bd") + [
        n("Concat", ["ad", "bd"], ["cat"], name="cat", axis=1)] + qdq("cat", "c_s", "c_z", "cd") + [
        n("AveragePool", ["cd"], ["ap"], name="ap", kernel_shape=[2, 2], strides=[2, 2])] + \
        qdq("ap", "p_s", "p_z", "pd") + [n("GlobalAveragePool", ["pd"], ["gp"], name="gp")] + qdq("gp", "y_s", "y_z", "y")
    inits = activation_params("a", 0.02) + activation_params("b", 0.03) + activation_params("c", 0.03) + \
        activation_params("p", 0.03) + activation_params("y", 0.01)
    return G.model(nodes, [("a", F, [1, 2, 4, 4]), ("b", F, [1, 3, 4, 4])], [("y", F, None)], inits)


def qdq_float_weight() -> onnx.ModelProto:
    """A float weight quantized in the graph (QuantizeLinear of a constant), as PyTorch exports."""
    nodes = qdq("x", "x_s", "x_z", "xd") + qdq("w", "w_s", "w_z", "wd") + [
        n("Conv", ["xd", "wd"], ["cv"], name="conv")] + qdq("cv", "y_s", "y_z", "y")
    inits = activation_params("x", 0.03) + activation_params("y", 0.05) + [
        c("w", G.w((4, 3, 1, 1), 4)), c("w_s", np.float32(0.01)), c("w_z", np.int8(0))]
    return G.model(nodes, [("x", F, [1, 3, 4, 4])], [("y", F, None)], inits)


def with_output(m: onnx.ModelProto, name: str, elem: int, shape: list) -> onnx.ModelProto:
    del m.graph.output[:]
    m.graph.output.append(helper.make_tensor_value_info(name, elem, shape))
    return m


def operator_model(nodes: list, inputs: list, output: tuple, inits: list, microsoft: bool = False) -> onnx.ModelProto:
    """A model of operator-form nodes (shape inference does not know com.microsoft's: the
    output is declared)."""
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(*output)], inits)
    opsets = [helper.make_opsetid("", 13)] + ([helper.make_opsetid("com.microsoft", 1)] if microsoft else [])
    m = helper.make_model(g, opset_imports=opsets, producer_name="test")
    m.ir_version = 8
    return m


def qlinear_conv() -> onnx.ModelProto:
    ws = scales(8, 11)
    inits = [c("x_s", np.float32(0.03)), c("x_z", np.uint8(128)), c("w", int8_weight((8, 4, 3, 3), 12)),
             c("w_s", ws), c("w_z", np.zeros(8, np.int8)), c("y_s", np.float32(0.2)), c("y_z", np.uint8(100)),
             c("b", rng(13).integers(-500, 500, 8).astype(np.int32))]
    node = n("QLinearConv", ["x", "x_s", "x_z", "w", "w_s", "w_z", "y_s", "y_z", "b"], ["y"], name="qconv",
             pads=[1, 1, 1, 1], strides=[2, 2])
    return operator_model([node], [("x", U8, [1, 4, 6, 6])], ("y", U8, [1, 8, 3, 3]), inits)


def qlinear_matmul() -> onnx.ModelProto:
    inits = [c("a_s", np.float32(0.03)), c("a_z", np.uint8(128)), c("b", int8_weight((6, 5), 14)),
             c("b_s", scales(5, 15)), c("b_z", np.zeros(5, np.int8)), c("y_s", np.float32(0.1)),
             c("y_z", np.uint8(128))]
    node = n("QLinearMatMul", ["a", "a_s", "a_z", "b", "b_s", "b_z", "y_s", "y_z"], ["y"], name="qmm")
    return operator_model([node], [("a", U8, [2, 6])], ("y", U8, [2, 5]), inits)


def qlinear_add_pool() -> onnx.ModelProto:
    inits = [c("a_s", np.float32(0.03)), c("a_z", np.uint8(128)), c("b_s", np.float32(0.02)), c("b_z", np.uint8(120)),
             c("s_s", np.float32(0.05)), c("s_z", np.uint8(128)), c("y_s", np.float32(0.04)), c("y_z", np.uint8(128))]
    nodes = [n("QLinearAdd", ["a", "a_s", "a_z", "b", "b_s", "b_z", "s_s", "s_z"], ["s"], name="qadd",
               domain="com.microsoft"),
             n("QLinearGlobalAveragePool", ["s", "s_s", "s_z", "y_s", "y_z"], ["y"], name="qgap",
               domain="com.microsoft", channels_last=0)]
    return operator_model(nodes, [("a", U8, [1, 3, 4, 4]), ("b", U8, [1, 3, 4, 4])], ("y", U8, [1, 3, 1, 1]),
                          inits, microsoft=True)


def matmul_integer(k: int = 6, big: bool = False) -> onnx.ModelProto:
    w = np.full((k, 5), 127, np.int8) if big else int8_weight((k, 5), 16)
    inits = [c("w", w), c("a_z", np.uint8(128)), c("w_z", np.int8(0))]
    node = n("MatMulInteger", ["a", "w", "a_z", "w_z"], ["y"], name="mmi")
    return operator_model([node], [("a", U8, [2, k])], ("y", I32, [2, 5]), inits)


def integer_clip() -> onnx.ModelProto:
    """PyTorch's fbgemm export: activations quantized, then clamped to [0, 127] as integers."""
    inits = [c("y_s", np.float32(0.05)), c("y_z", np.uint8(3)), c("lo", np.uint8(0)), c("hi", np.uint8(127))]
    nodes = [n("QuantizeLinear", ["x", "y_s", "y_z"], ["q"], name="q"),
             n("Clip", ["q", "lo", "hi"], ["qc"], name="clamp"),
             n("DequantizeLinear", ["qc", "y_s", "y_z"], ["y"], name="dq")]
    return operator_model(nodes, [("x", F, [1, 3, 4, 4])], ("y", F, [1, 3, 4, 4]), inits)


def read_safetensors(path: str) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file (the importer's dtypes)."""
    import json
    import struct
    with open(path, "rb") as f:
        blob = f.read()
    size = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + size])
    types = {"F32": np.float32, "I32": np.int32, "I64": np.int64, "I8": np.int8, "U8": np.uint8}
    out = {}
    for name, e in header.items():
        if name != "__metadata__":
            begin, end = e["data_offsets"]
            data = blob[8 + size + begin:8 + size + end]
            out[name] = np.frombuffer(data, dtype=types[e["dtype"]]).reshape(e["shape"])
    return out


class QuantizedTest(ToolTest):
    """Imports a graph and looks for fragments in what the user reads."""

    def assertOutput(self, m: onnx.ModelProto, refused: bool, *fragments: str) -> str:
        text = self.failure(m) if refused else self.header(m)
        for frag in fragments:
            self.assertIn(frag, text)
        return text

    def assertMaps(self, m: onnx.ModelProto, *fragments: str) -> str:
        return self.assertOutput(m, False, *fragments)

    def assertRefused(self, m: onnx.ModelProto, *fragments: str) -> str:
        return self.assertOutput(m, True, *fragments)


class QdqHeaderTest(QuantizedTest):
    """The C++ that QDQ graphs map to."""

    def test_conv_per_channel_and_per_tensor(self) -> None:
        self.assertMaps(qdq_conv(True),
                        'dequantize<quantize<in_x, weight<"x_s", f32>, weight<"x_z", u8>>, weight<"x_s", f32>, '
                        'weight<"x_z", u8>>',
                        'dequantize<weight<"w", i8, 8, 4, 3, 3>, weight<"w_s", f32, 8>, weight<"w_z", i8, 8>, 0>',
                        'dequantize<weight<"b", i32, 8>, weight<"b_s", f32, 8>, weight<"b_s.zero_i32", i32, 8>, 0>',
                        "quantize<relu<", "//   b_s.zero_i32: zeros: the ONNX node has no zero point")
        self.assertMaps(qdq_conv(False),
                        'dequantize<weight<"w", i8, 8, 4, 3, 3>, weight<"w_s", f32>, weight<"w_z", i8>>, {.padding')

    def test_mlp_dense(self) -> None:
        text = self.assertMaps(
            qdq_mlp(),
            # Gemm with transB: the weight [N, K] as it is, per-axis along 0.
            'bias_add<dense<dequantize<quantize<in_x, ',
            'dequantize<weight<"w1", i8, 6, 10>, weight<"w1_s", f32, 6>, weight<"w1_z", i8, 6>, 0>>, '
            'dequantize<weight<"b1", i32, 6>, weight<"b1_s", f32, 6>, weight<"b1_s.zero_i32", i32, 6>, 0>, -1>',
            # MatMul: the weight [K, N] transposed to [N, K] at import, its axis 1 becoming 0.
            'dequantize<weight<"w2.T", i8, 5, 6>, weight<"w2_s", f32, 5>, weight<"w2_z", i8, 5>, 0>>, '
            'dequantize<weight<"b2", i32, 5>, ', "(Dense from MatMul, Add)", "(Dense from Gemm)",
            "//   w2.T: 'w2' transposed")
        self.assertNotIn('"w2",', text)
        self.assertNotIn("matmul<", text)

    def test_residual_matmul_concat_pool(self) -> None:
        self.assertMaps(qdq_residual(), "add<n1, dequantize<quantize<sigmoid<n1>, ")
        self.assertMaps(qdq_matmul(), "quantize<matmul<dequantize<quantize<in_a, ",
                        'weight<"y_s", f32>, weight<"y_z", u8>>')
        self.assertMaps(qdq_concat_pool(), "concatenate<1, dequantize<quantize<in_a, ",
                        "avg_pool2d<dequantize<quantize<", "global_avg_pool2d<dequantize<quantize<")

    def test_float_weight_quantized_at_import(self) -> None:
        self.assertMaps(qdq_float_weight(),
                        'dequantize<weight<"wd_q", i8, 4, 3, 1, 1>, weight<"w_s", f32>, weight<"w_z", i8>>',
                        "//   wd_q: 'w' quantized with the scale 'w_s' at import")

    def test_no_float_fold_of_dequantize(self) -> None:
        text = self.header(qdq_conv(True))
        self.assertNotIn('weight<"w", f32', text)
        self.assertNotIn('weight<"wd"', text)


class OperatorFormTest(QuantizedTest):
    """Operator forms, expanded into QDQ form."""

    def test_qlinear_conv(self) -> None:
        text = self.header(qlinear_conv())
        for frag in ['input<"x", u8, 1, 4, 6, 6>',
                     'conv2d<dequantize<in_x, weight<"x_s", f32>, weight<"x_z", u8>>, '
                     'dequantize<weight<"w", i8, 8, 4, 3, 3>, weight<"w_s", f32, 8>, weight<"w_z", i8, 8>, 0>, '
                     '{.stride = {2, 2}, .padding = {1, 1}}>',
                     'dequantize<weight<"b", i32, 8>, weight<"b.scale", f32, 8>, weight<"b.scale.zero_i32", i32, 8>, 0>',
                     'weight<"y_s", f32>, weight<"y_z", u8>>', "(QuantizeLinear from QLinearConv)"]:
            self.assertIn(frag, text)
        # The bias scale is x_scale · w_scale in float32, as the bias was quantized with it.
        tensors = read_safetensors(os.path.join(self.dir, "m.safetensors"))
        m = qlinear_conv()
        inits = {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}
        np.testing.assert_array_equal(tensors["b.scale"], inits["x_s"] * inits["w_s"])

    def test_qlinear_matmul_is_dense(self) -> None:
        text = self.header(qlinear_matmul())
        self.assertIn('dense<dequantize<in_a, weight<"a_s", f32>, weight<"a_z", u8>>, '
                      'dequantize<weight<"b.T", i8, 5, 6>, weight<"b_s", f32, 5>, weight<"b_z", i8, 5>, 0>>', text)

    def test_qlinear_add_and_global_pool(self) -> None:
        text = self.header(qlinear_add_pool())
        self.assertIn("add<dequantize<in_a, ", text)
        self.assertIn("global_avg_pool2d<dequantize<quantize<add<", text)
        self.assertIn("(QuantizeLinear from QLinearGlobalAveragePool)", text)

    def test_integer_clip(self) -> None:
        text = self.header(integer_clip())
        self.assertIn('quantize<clip<dequantize<quantize<in_x, weight<"y_s", f32>, weight<"y_z", u8>>, '
                      'weight<"y_s", f32>, weight<"y_z", u8>>, -0.15f, 6.2000003f>, weight<"y_s", f32>, weight<"y_z", u8>>',
                      text)

    def test_matmul_integer(self) -> None:
        text = self.header(matmul_integer())
        self.assertIn('quantize<dense<dequantize<in_a, weight<"a.unit_scale", f32>, weight<"a_z", u8>>, '
                      'dequantize<weight<"w.T", i8, 5, 6>, weight<"w.unit_scale", f32>, weight<"w_z", i8>>>, '
                      'scalar<1.0f>, int_scalar<i32, 0>>', text)
        self.assertIn("(Cast from MatMulInteger)", text)


class QuantizedErrorTest(QuantizedTest):
    """Hostile quantized graphs: one line each, naming the node."""

    def test_scale_zero(self) -> None:
        m = qdq_conv(True)
        for t in m.graph.initializer:
            if t.name == "w_s":
                v = scales(8, 1)
                v[3] = 0
                t.CopyFrom(c("w_s", v))
        self.assertRefused(m, "node 'w_dq' DequantizeLinear", "scale 'w_s' is 0 at index 3; a quantized tensor needs "
                                                              "a positive finite scale")

    def test_negative_and_nan_scale(self) -> None:
        for name, value, frag in [("s_s", -0.5, "node 'sd_q' QuantizeLinear"), ("y_s", np.nan, "node 'y_q' QuantizeLinear"),
                                  ("s_s", np.inf, "node 'sd_q' QuantizeLinear")]:
            m = qdq_residual()
            for t in m.graph.initializer:
                if t.name == name:
                    t.CopyFrom(c(name, np.float32(value)))
            with self.subTest(value=value):
                err = self.assertRefused(m, frag, f"scale '{name}' is {value:g}; a quantized tensor needs")
                # The readers of the refused node's output are not listed: one line, its first cause.
                self.assertEqual(err.count("\n  node "), 1, err)

    def test_zero_point_out_of_range(self) -> None:
        m = qdq_residual()
        for t in m.graph.initializer:
            if t.name == "x_z":
                t.CopyFrom(helper.make_tensor("x_z", U8, [], [300]))
        self.assertRefused(m, "initializer 'x_z': int32_data holds 300, outside uint8's range [0, 255]")

    def test_bad_axis(self) -> None:
        m = qdq_conv(True)
        for node in m.graph.node:
            if node.name == "w_dq":
                node.attribute[0].i = 1  # 4 input channels for 8 scales
        self.assertRefused(m, "node 'w_dq' DequantizeLinear", "the scale has 8 elements, but axis 1 of the input has 4")
        for node in m.graph.node:
            if node.name == "w_dq":
                node.attribute[0].i = 7
        self.assertRefused(m, "node 'w_dq' DequantizeLinear", "axis 7 is outside the input's rank 4")

    def test_scale_shape_mismatch(self) -> None:
        m = qdq_conv(True)
        for t in m.graph.initializer:
            if t.name == "w_z":
                t.CopyFrom(c("w_z", np.zeros(4, np.int8)))
        self.assertRefused(m, "node 'w_dq' DequantizeLinear", "the zero point 'w_z' has shape [4] and the scale [8]")

    def test_dynamic_quantize_linear(self) -> None:
        nodes = [n("DynamicQuantizeLinear", ["x"], ["q", "s", "z"], name="dql"),
                 n("DequantizeLinear", ["q", "s", "z"], ["y"], name="dq")]
        m = G.model(nodes, [("x", F, [2, 3])], [("y", F, None)])
        err = self.assertRefused(m, "node 'dql' DynamicQuantizeLinear", "computes its scale and zero point at run time",
                                 "quantize the model statically")
        self.assertNotIn("node 'dq'", err)  # reported at its first cause

    def test_matmul_integer_past_float_exactness(self) -> None:
        self.assertRefused(matmul_integer(k=1100, big=True), "node 'mmi' MatMulInteger",
                           "exact below 2^24")

    def test_operator_form_scale_zero(self) -> None:
        m = qlinear_conv()
        for t in m.graph.initializer:
            if t.name == "x_s":
                t.CopyFrom(c("x_s", np.float32(0)))
        self.assertRefused(m, "node 'qconv' DequantizeLinear from QLinearConv", "scale 'x_s' is 0;")


def ort_outputs(m: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(m.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


class RuntimeTest(ToolTest):
    """QDQ models imported, compiled for cpu, run, compared with ONNX Runtime: the outputs are
    quantized values, which may differ by one step (the requantization rule, docs/onnx.md)."""

    def test_models_match_onnxruntime(self) -> None:
        models = {"qconv": qdq_conv(True), "qmlp": qdq_mlp(), "qres": qdq_residual(), "qcat": qdq_concat_pool(),
                  "qclip": integer_clip()}
        expected = {}
        for ns, m in models.items():
            r = run_tool(m, self.dir, ns)
            self.assertEqual(r.returncode, 0, r.stderr)
            feeds = G.inputs_for(m)
            for name, v in feeds.items():
                v.tofile(os.path.join(self.dir, f"{ns}.in.{name}.bin"))
            expected[ns] = ort_outputs(m, feeds)
        includes = "\n".join(f'#include "{ns}.hpp"' for ns in models)
        calls = "\n".join(f'  run_model<{ns}::net>(dir + "/{ns}");' for ns in models)
        main = f"int main(int, char** argv) {{\n  const std::string dir = argv[1];\n{calls}\n}}\n"
        src = os.path.join(self.dir, "driver.cpp")
        with open(src, "w") as f:
            f.write(DRIVER.replace("@INCLUDES@", includes).replace("@MAIN@", main))
        cxx, flags = compile_flags()
        exe = os.path.join(self.dir, "driver")
        r = subprocess.run([cxx, *flags, src, "-o", exe], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr[-6000:])
        r = subprocess.run([exe, self.dir], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        for ns, m in models.items():
            scale = float(next(onnx.numpy_helper.to_array(t) for t in m.graph.initializer if t.name == "y_s"))
            got = np.fromfile(os.path.join(self.dir, f"{ns}.out0.bin"), dtype=np.float32)
            want = expected[ns][0].reshape(-1)
            with self.subTest(model=ns):
                self.assertEqual(got.size, want.size)
                steps = np.abs(got - want) / scale
                self.assertLessEqual(float(steps.max()), 1.0 + 1e-3, f"{ns}: off by {steps.max():.2f} steps")


def require_onnxruntime() -> None:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            print(f"test_quantized: onnxruntime is required under CI=true for {sys.executable}", file=sys.stderr)
            sys.exit(1)
        print(f"test_quantized: skipped: no onnxruntime for {sys.executable}")
        sys.exit(onnx_required.SKIPPED)


if __name__ == "__main__":
    if RUNTIME:
        require_onnxruntime()
        unittest.main(defaultTest="RuntimeTest")
    else:
        unittest.main(defaultTest=["QdqHeaderTest", "OperatorFormTest", "QuantizedErrorTest"])
