#!/usr/bin/env python3
"""Tests of tools/partita_import.py on small graphs built with onnx.helper.

    test_importer.py [unittest arguments]

Header tests import a graph and check the C++ it maps to, op by op and attribute by attribute;
error tests check what the user reads (every culprit at once, no traceback, exit 2); end-to-end
tests compile imported graphs against the library, run them on `cpu` and compare with a numpy
evaluation of the ONNX graph (onnx_reference.py). The compiler is $PARTITA_ONNX_CXX (default
g++) with $PARTITA_ONNX_CXXFLAGS. Without onnx or numpy the tests are skipped (exit 77), except
under CI=true, where that fails.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(ROOT, "tools", "partita_import.py")

sys.path.insert(0, HERE)
import onnx_required  # noqa: E402

onnx_required.require("test_importer")
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import helper  # noqa: E402

import onnx_graphs as G  # noqa: E402
import onnx_reference  # noqa: E402

n = helper.make_node
F, I64 = G.F, G.I64


def run_tool(m: onnx.ModelProto | bytes, out: str, ns: str = "m", *extra: str) -> subprocess.CompletedProcess:
    """Imports model `m` (a ModelProto, or raw file bytes) into `out`/`ns`.hpp."""
    path = os.path.join(out, ns + ".onnx")
    with open(path, "wb") as f:
        f.write(m if isinstance(m, bytes) else m.SerializeToString())
    return subprocess.run([sys.executable, TOOL, path, "--out", out, "--namespace", ns, *extra],
                          capture_output=True, text=True)


class ToolTest(unittest.TestCase):
    """Imports into a fresh directory per test."""

    def setUp(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="partita_onnx_")
        self.dir = self._dir.name

    def tearDown(self) -> None:
        self._dir.cleanup()

    def header(self, m: onnx.ModelProto, *extra: str) -> str:
        r = run_tool(m, self.dir, "m", *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.dir, "m.hpp"), encoding="utf-8") as f:
            return f.read()

    def failure(self, m: onnx.ModelProto | bytes, *extra: str) -> str:
        r = run_tool(m, self.dir, "m", *extra)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        return r.stderr


def unary_model(node: onnx.NodeProto, shape=(1, 4, 6, 6), inits=(), opset=13, out_shape=None) -> onnx.ModelProto:
    return G.model([node], [("x", F, list(shape))], [("y", F, out_shape)], list(inits), opset)


class HeaderTest(ToolTest):
    """The C++ each op and attribute variant maps to."""

    def assertMaps(self, m: onnx.ModelProto, *fragments: str) -> str:
        text = self.header(m)
        for frag in fragments:
            self.assertIn(frag, text)
        return text

    def test_elementwise_unary(self) -> None:
        for op, cpp in [("Relu", "relu<in_x>"), ("Sigmoid", "sigmoid<in_x>"), ("Tanh", "tanh_<in_x>"),
                        ("Sqrt", "sqrt_<in_x>"), ("Exp", "exp_<in_x>"), ("Log", "log_<in_x>"),
                        ("Erf", "erf_<in_x>"), ("Abs", "abs_<in_x>"), ("Neg", "neg<in_x>"),
                        ("Reciprocal", "divide<scalar<1.0f>, in_x>")]:
            with self.subTest(op=op):
                self.assertMaps(unary_model(n(op, ["x"], ["y"], name="u")), f"struct n0 : {cpp} {{}};",
                                f"// u ({op})", "static_assert(n0::desc.out == shape_of<1, 4, 6, 6>);")

    def test_activations_with_attributes(self) -> None:
        self.assertMaps(unary_model(n("LeakyRelu", ["x"], ["y"], alpha=0.2)), "leaky_relu<in_x, 0.2f>")
        self.assertMaps(unary_model(n("HardSigmoid", ["x"], ["y"])), "hardsigmoid<in_x, 0.2f, 0.5f>")
        self.assertMaps(unary_model(n("HardSwish", ["x"], ["y"]), opset=14), "hardswish<in_x>")
        hs = G.model([n("HardSigmoid", ["x"], ["h"], alpha=1 / 6), n("Mul", ["x", "h"], ["y"])],
                     [("x", F, [1, 4])], [("y", F, None)])
        self.assertMaps(hs, "hardswish<in_x>", "HardSwish from HardSigmoid, Mul")
        self.assertMaps(unary_model(n("PRelu", ["x", "s"], ["y"]), inits=[G.const("s", G.w((4, 1, 1)))]),
                        'prelu<in_x, weight<"s", f32, 4, 1, 1>>')

    def test_clip(self) -> None:
        lo, hi = G.const("lo", np.float32(0)), G.const("hi", np.float32(6))
        self.assertMaps(unary_model(n("Clip", ["x", "lo", "hi"], ["y"]), inits=[lo, hi]), "clip<in_x, 0.0f, 6.0f>")
        self.assertMaps(unary_model(n("Clip", ["x", "lo"], ["y"]), inits=[lo]), "relu<in_x>")
        self.assertMaps(unary_model(n("Clip", ["x", "", "hi"], ["y"]), inits=[hi]),
                        "clip<in_x, -std::numeric_limits<float>::infinity(), 6.0f>")

    def test_binary_operands(self) -> None:
        big = G.const("b", G.w((6,)))
        for op, cpp in [("Add", "add"), ("Sub", "subtract"), ("Mul", "multiply"), ("Div", "divide"),
                        ("Max", "maximum"), ("Min", "minimum")]:
            with self.subTest(op=op):
                self.assertMaps(unary_model(n(op, ["x", "b"], ["y"]), inits=[big]),
                                f'{cpp}<in_x, literal<dims<6>, ')
        self.assertMaps(unary_model(n("Mul", ["x", "s"], ["y"]), inits=[G.const("s", np.float32(0.125))]),
                        "multiply<in_x, scalar<0.125f>>")
        self.assertMaps(unary_model(n("Add", ["c", "x"], ["y"]), inits=[G.const("c", G.w((4, 6, 6)))]),
                        'add<weight<"c", f32, 4, 6, 6>, in_x>')
        self.assertMaps(unary_model(n("Pow", ["x", "e"], ["y"]), inits=[G.const("e", np.float32(3))]),
                        "power<in_x, 3.0f>")
        self.assertMaps(unary_model(n("Sum", ["x", "x", "x"], ["y"])), "add<add<in_x, in_x>, in_x>")

    def test_conv_variants(self) -> None:
        wt = G.const("w", G.w((8, 4, 3, 3)))
        dw = G.const("dw", G.w((4, 1, 3, 3)))
        b = G.const("b", G.w(8))
        cases = [
            (n("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2]), [wt, b],
             'bias_add<conv2d<in_x, weight<"w", f32, 8, 4, 3, 3>, {.stride = {2, 2}, .padding = {1, 1}}>, '
             'weight<"b", f32, 8>>'),
            (n("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", dilations=[2, 2]), [wt],
             "{.padding = {2, 2}, .dilation = {2, 2}}"),
            # SAME over 6 pixels at stride 2 pads one in all: after the axis (UPPER) or before it (LOWER)
            (n("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", strides=[2, 2]), [wt],
             'conv2d<in_x, weight<"w", f32, 8, 4, 3, 3>, {.stride = {2, 2}, .padding_end = {1, 1}}>'),
            (n("Conv", ["x", "w"], ["y"], auto_pad="SAME_LOWER", strides=[2, 2]), [wt],
             "{.stride = {2, 2}, .padding = {1, 1}, .padding_end = {0, 0}}>"),
            (n("Conv", ["x", "w"], ["y"], auto_pad="VALID"), [wt], 'conv2d<in_x, weight<"w", f32, 8, 4, 3, 3>>'),
            (n("Conv", ["x", "dw"], ["y"], group=4, pads=[0, 1, 2, 1]), [dw],
             'conv2d<in_x, weight<"dw", f32, 4, 1, 3, 3>, {.padding = {0, 1}, .padding_end = {2, 1}, .groups = 4}>'),
            (n("Conv", ["x", "w"], ["y"], pads=[2, 1, 0, 1], dilations=[1, 2]), [wt],
             "{.padding = {2, 1}, .padding_end = {0, 1}, .dilation = {1, 2}}>"),
        ]
        for node, inits, frag in cases:
            with self.subTest(attrs=str(node.attribute)):
                self.assertMaps(unary_model(node, inits=inits), frag)

    def test_pooling(self) -> None:
        self.assertMaps(unary_model(n("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
                        "max_pool2d<in_x, {.size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}}>")
        self.assertMaps(unary_model(n("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
                                    shape=(1, 4, 7, 7)), ".ceil_mode = true")
        self.assertMaps(unary_model(n("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                                      count_include_pad=1)), ".count_include_pad = true")
        self.assertMaps(unary_model(n("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], pads=[0, 0, 1, 1])),
                        "max_pool2d<in_x, {.size = {2, 2}, .stride = {1, 1}, .padding_end = {1, 1}}>")
        self.assertMaps(unary_model(n("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_LOWER")),
                        "max_pool2d<in_x, {.size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}, .padding_end = {0, 0}}>")
        # Padding larger before than after, counted by the average or not (then each window
        # divides by its in-bounds cells, as ONNX does).
        self.assertMaps(unary_model(n("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[2, 1, 0, 1])),
                        "avg_pool2d<in_x, {.size = {3, 3}, .stride = {1, 1}, .padding = {2, 1}, .padding_end = {0, 1}}>")
        self.assertMaps(unary_model(n("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[0, 1, 2, 1],
                                      auto_pad="NOTSET", count_include_pad=1)),
                        "{.size = {3, 3}, .stride = {1, 1}, .padding = {0, 1}, .padding_end = {2, 1}, "
                        ".count_include_pad = true}>")
        self.assertMaps(unary_model(n("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1],
                                      ceil_mode=1), shape=(1, 4, 7, 7)),
                        "{.size = {2, 2}, .stride = {2, 2}, .padding_end = {1, 1}, .ceil_mode = true}>")
        # 1-D: the 2-D pooling of height 1 between reshapes.
        self.assertMaps(unary_model(n("MaxPool", ["x"], ["y"], kernel_shape=[3], strides=[2], pads=[1, 0], ceil_mode=1),
                                    shape=(2, 4, 10)),
                        "reshape<max_pool2d<reshape<in_x, 2, 4, 1, 10>, {.size = {1, 3}, .stride = {1, 2}, "
                        ".padding = {0, 1}, .padding_end = {0, 0}, .ceil_mode = true}>, 2, 4, 5>")
        self.assertMaps(unary_model(n("AveragePool", ["x"], ["y"], kernel_shape=[2], pads=[1, 1], count_include_pad=1),
                                    shape=(1, 3, 7)),
                        "avg_pool2d<reshape<in_x, 1, 3, 1, 7>, {.size = {1, 2}, .stride = {1, 1}, .padding = {0, 1}, "
                        ".count_include_pad = true}>, 1, 3, 8>")
        self.assertMaps(unary_model(n("GlobalAveragePool", ["x"], ["y"])), "global_avg_pool2d<in_x>")
        self.assertMaps(unary_model(n("GlobalMaxPool", ["x"], ["y"])), "reduce_max<in_x, axes<2, 3>, true>")

    def test_conv_transpose1d(self) -> None:
        # The weight [4, 3, 3] is declared [4, 3, 1, 3] (same bytes), the input viewed as NCHW.
        w1 = G.const("w", G.w((4, 3, 3)))
        self.assertMaps(unary_model(n("ConvTranspose", ["x", "w"], ["y"], strides=[2], pads=[1, 0], output_padding=[1]),
                                    shape=(1, 4, 5), inits=[w1]),
                        'reshape<conv_transpose2d<reshape<in_x, 1, 4, 1, 5>, weight<"w.2d", f32, 4, 3, 1, 3>, '
                        '{.stride = {1, 2}, .padding = {0, 1}, .padding_end = {0, 0}, .output_padding = {0, 1}}>, 1, 3, 11>')

    def test_conv1d(self) -> None:
        w1 = G.const("w", G.w((6, 2, 3)))
        b = G.const("b", G.w(6))
        cases = [
            (n("Conv", ["x", "w", "b"], ["y"], group=2, dilations=[2], pads=[3, 1], strides=[2]), [w1, b],
             'bias_add<conv1d<in_x, weight<"w", f32, 6, 2, 3>, '
             '{.stride = 2, .padding = 3, .padding_end = 1, .dilation = 2, .groups = 2}>, weight<"b", f32, 6>>'),
            (n("Conv", ["x", "w"], ["y"], group=2, pads=[1, 1]), [w1],
             'conv1d<in_x, weight<"w", f32, 6, 2, 3>, {.padding = 1, .groups = 2}>'),
            (n("Conv", ["x", "w"], ["y"], group=2, auto_pad="SAME_UPPER", strides=[2]), [w1],
             "{.stride = 2, .padding = 1, .groups = 2}>"),  # 11 at stride 2: 2 in all, 1 each side
            (n("Conv", ["x", "w"], ["y"], group=2, auto_pad="SAME_LOWER", strides=[3], kernel_shape=[3]), [w1],
             "{.stride = 3, .padding = 1, .padding_end = 0, .groups = 2}>"),  # 1 in all, before
            (n("Conv", ["x", "w"], ["y"], group=2), [w1], 'conv1d<in_x, weight<"w", f32, 6, 2, 3>, {.groups = 2}>'),
        ]
        for node, inits, frag in cases:
            with self.subTest(attrs=str(node.attribute)):
                self.assertMaps(unary_model(node, shape=(1, 4, 11), inits=inits), frag)

    def test_conv_transpose(self) -> None:
        tw = G.const("w", G.w((4, 2, 3, 3)))
        b = G.const("b", G.w(4))
        ct = lambda inits=(tw,), ins=("x", "w"), **a: unary_model(n("ConvTranspose", list(ins), ["y"], **a), inits=inits)
        cases = [
            (ct(inits=(tw, b), ins=("x", "w", "b"), strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1], group=2),
             'bias_add<conv_transpose2d<in_x, weight<"w", f32, 4, 2, 3, 3>, '
             '{.stride = {2, 2}, .padding = {1, 1}, .output_padding = {1, 1}, .groups = 2}>, weight<"b", f32, 4>>',
             (1, 4, 12, 12)),
            (ct(pads=[0, 1, 2, 0], dilations=[2, 1]), "{.padding = {0, 1}, .padding_end = {2, 0}, .dilation = {2, 1}}>",
             (1, 2, 8, 7)),
            (ct(strides=[2, 2], pads=[2, 1, 1, 0]), "{.stride = {2, 2}, .padding = {2, 1}, .padding_end = {1, 0}}>",
             (1, 2, 10, 12)),
            # output_shape: 13 rows at stride 2 without padding; 12 takes one from the beginning
            # (ONNX's split of an odd total when auto_pad is NOTSET), 14 needs an output padding.
            (ct(strides=[2, 2], output_shape=[12, 14]), "{.stride = {2, 2}, .padding = {1, 0}, .padding_end = {0, 0}, "
             ".output_padding = {0, 1}}>", (1, 2, 12, 14)),
            (ct(strides=[2, 2], output_shape=[11, 13]), "{.stride = {2, 2}, .padding = {1, 0}}>",
             (1, 2, 11, 13)),
            (ct(strides=[2, 2], output_shape=[12, 12], auto_pad="SAME_UPPER"),
             "{.stride = {2, 2}, .padding_end = {1, 1}}>", (1, 2, 12, 12)),
            (ct(strides=[2, 2], auto_pad="SAME_UPPER"), "{.stride = {2, 2}, .padding_end = {1, 1}}>", (1, 2, 12, 12)),
            (ct(strides=[2, 2], auto_pad="SAME_LOWER"), "{.stride = {2, 2}, .padding = {1, 1}, .padding_end = {0, 0}}>",
             (1, 2, 12, 12)),
            (ct(auto_pad="VALID", group=1), 'conv_transpose2d<in_x, weight<"w", f32, 4, 2, 3, 3>>', (1, 2, 8, 8)),
        ]
        for m, frag, shape in cases:
            with self.subTest(attrs=str(m.graph.node[0].attribute)):
                text = self.assertMaps(m, frag)
                self.assertIn(f"static_assert(n0::desc.out == shape_of<{', '.join(map(str, shape))}>);", text)

    def test_depth_to_space(self) -> None:
        x = (1, 8, 3, 2)
        self.assertMaps(unary_model(n("DepthToSpace", ["x"], ["y"], blocksize=2), shape=x),
                        "struct n0 : depth_to_space<in_x, 2> {};", "shape_of<1, 2, 6, 4>")
        self.assertMaps(unary_model(n("DepthToSpace", ["x"], ["y"], blocksize=2, mode="DCR"), shape=x),
                        "depth_to_space<in_x, 2> {};")
        self.assertMaps(unary_model(n("DepthToSpace", ["x"], ["y"], blocksize=2, mode="CRD"), shape=x),
                        "depth_to_space<in_x, 2, depth_to_space_mode::crd> {};")
        self.assertMaps(unary_model(n("SpaceToDepth", ["x"], ["y"], blocksize=3), shape=(1, 2, 6, 9)),
                        "struct n0 : space_to_depth<in_x, 3> {};", "shape_of<1, 18, 2, 3>")

    def test_batch_norm(self) -> None:
        p = [G.const(k, np.abs(G.w(4, i)) + 0.5) for i, k in enumerate("sbmv")]
        self.assertMaps(unary_model(n("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-3), inits=p),
                        'batch_norm<in_x, weight<"s", f32, 4>, weight<"b", f32, 4>, weight<"m", f32, 4>, '
                        'weight<"v", f32, 4>, 0.001f>')

    def test_resize(self) -> None:
        sc = G.const("sc", np.array([1, 1, 2, 2], dtype=np.float32))
        sizes = G.const("sz", np.array([1, 4, 9, 9]))
        cases = [
            ({"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}, "sc",
             "resize<in_x, 12, 12>"),
            ({"mode": "nearest"}, "sc", "resize<in_x, 12, 12>"),  # half_pixel, whole factor
            ({"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, "sc",
             "resize<in_x, 12, 12, {.mode = resize_mode::bilinear}>"),
            ({"mode": "linear", "coordinate_transformation_mode": "align_corners"}, "sz",
             "resize<in_x, 9, 9, {.mode = resize_mode::bilinear, .align_corners = true}>"),
        ]
        for attrs, src, frag in cases:
            with self.subTest(attrs=attrs):
                ins = ["x", "", "sc"] if src == "sc" else ["x", "", "", "sz"]
                self.assertMaps(unary_model(n("Resize", ins, ["y"], **attrs), inits=[sc, sizes]), frag)

    def test_shape_ops(self) -> None:
        self.assertMaps(unary_model(n("Flatten", ["x"], ["y"])), "flatten<in_x>")
        self.assertMaps(unary_model(n("Flatten", ["x"], ["y"], axis=2)), "reshape<in_x, 4, 36>")
        self.assertMaps(unary_model(n("Reshape", ["x", "s"], ["y"]), inits=[G.const("s", np.array([0, -1, 6]))]),
                        "reshape<in_x, 1, 24, 6>")
        self.assertMaps(unary_model(n("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1])), "transpose<in_x, 0, 2, 3, 1>")
        self.assertMaps(unary_model(n("Transpose", ["x"], ["y"])), "transpose<in_x, 3, 2, 1, 0>")
        self.assertMaps(unary_model(n("Squeeze", ["x"], ["y"], axes=[0]), opset=11), "squeeze<in_x, 0>")
        self.assertMaps(unary_model(n("Squeeze", ["x", "a"], ["y"]), inits=[G.const("a", np.array([0]))]),
                        "squeeze<in_x, 0>")
        self.assertMaps(unary_model(n("Unsqueeze", ["x"], ["y"], axes=[-1]), opset=11), "unsqueeze<in_x, 4>")
        self.assertMaps(unary_model(n("Unsqueeze", ["x", "a"], ["y"]), inits=[G.const("a", np.array([1]))]),
                        "unsqueeze<in_x, 1>")

    def test_slice_split_concat_gather_pad(self) -> None:
        c = G.const
        self.assertMaps(unary_model(n("Slice", ["x", "s", "e", "a", "t"], ["y"]),
                                    inits=[c("s", np.array([-1])), c("e", np.array([-100])), c("a", np.array([3])),
                                           c("t", np.array([-2]))]), "slice<in_x, 3, 5, -7, -2>")
        self.assertMaps(unary_model(n("Slice", ["x", "s", "e"], ["y"]),
                                    inits=[c("s", np.array([0, 1])), c("e", np.array([1, 3]))]),
                        "slice<in_x, 1, 1, 3>")  # axis 0 takes everything: no slice for it
        split13 = G.model([n("Split", ["x", "sp"], ["a", "b"], axis=1)], [("x", F, [1, 4, 2])],
                          [("a", F, None), ("b", F, None)], [c("sp", np.array([1, 3]))])
        self.assertMaps(split13, "struct n0 : split<in_x, 1, 1, 3> {};", "get<n0, 0>", "get<n0, 1>")
        split11 = G.model([n("Split", ["x"], ["a", "b"], axis=-1)], [("x", F, [1, 4, 2])],
                          [("a", F, None), ("b", F, None)], opset=11)
        self.assertMaps(split11, "split<in_x, 2, 1, 1>")
        cat = G.model([n("Concat", ["x", "x", "k"], ["y"], axis=-1)], [("x", F, [1, 2])], [("y", F, None)],
                      [c("k", G.w((1, 3)))])
        self.assertMaps(cat, 'concatenate<1, in_x, in_x, weight<"k", f32, 1, 3>>')
        self.assertMaps(unary_model(n("Gather", ["x", "i"], ["y"], axis=1), inits=[c("i", np.array(-1))]),
                        "squeeze<slice<in_x, 1, 3, 4>, 1>")
        self.assertMaps(unary_model(n("Gather", ["x", "i"], ["y"], axis=2), inits=[c("i", np.array([3, 1]))]),
                        'gather<in_x, weight<"i", i64, 2>, 2>')
        emb = G.model([n("Gather", ["t", "ids"], ["y"])], [("ids", I64, [1, 5])], [("y", F, None)], [c("t", G.w((9, 3)))])
        self.assertMaps(emb, 'embedding<weight<"t", f32, 9, 3>, in_ids>', 'input<"ids", i64, 1, 5>')
        self.assertMaps(unary_model(n("Pad", ["x", "p", "v"], ["y"]),
                                    inits=[c("p", np.array([0, 0, 1, 2, 0, 0, 3, 4])), c("v", np.float32(-1))]),
                        "pad<in_x, dims<0, 0, 1, 2>, dims<0, 0, 3, 4>, -1.0f>")

    def test_matmul_gemm_dense(self) -> None:
        c = G.const
        mm = G.model([n("MatMul", ["x", "w"], ["m"]), n("Add", ["m", "b"], ["y"])], [("x", F, [2, 3, 4])],
                     [("y", F, None)], [c("w", G.w((4, 5))), c("b", G.w(5))])
        text = self.assertMaps(mm, 'bias_add<dense<in_x, weight<"w.T", f32, 5, 4>>, weight<"b", f32, 5>, -1>',
                               "(Dense from MatMul, Add)", "//   w.T: 'w' transposed")
        self.assertNotIn('"w"', text)
        both = G.model([n("MatMul", ["x", "x2"], ["y"])], [("x", F, [2, 3, 4]), ("x2", F, [2, 4, 5])], [("y", F, None)])
        self.assertMaps(both, "matmul<in_x, in_x2>")
        gemm = lambda **a: G.model([n("Gemm", ["x", "w", "b"], ["y"], **a)], [("x", F, [4, 3] if a.get("transA") else [3, 4])],
                                   [("y", F, None)], [c("w", G.w((5, 4) if a.get("transB") else (4, 5))), c("b", G.w(5))])
        self.assertMaps(gemm(transB=1), 'bias_add<dense<in_x, weight<"w", f32, 5, 4>>, weight<"b", f32, 5>, -1>')
        self.assertMaps(gemm(), 'dense<in_x, weight<"w.T", f32, 5, 4>>')
        self.assertMaps(gemm(transA=1, alpha=0.5, beta=2.0),
                        'add<multiply<matmul<in_x, weight<"w", f32, 4, 5>, {.transpose_a = true}>, scalar<0.5f>>, '
                        'multiply<literal<dims<5>, ', ">, scalar<2.0f>>>")

    def test_normalization_and_softmax(self) -> None:
        c = G.const
        ln = G.model([n("LayerNormalization", ["x", "g", "b"], ["y"], epsilon=1e-6)], [("x", F, [1, 3, 8])],
                     [("y", F, None)], [c("g", G.w(8)), c("b", G.w(8, 2))], opset=17)
        self.assertMaps(ln, 'layer_norm<in_x, weight<"g", f32, 8>, weight<"b", f32, 8>, -1, 1e-06f>')
        ln2 = G.model([n("LayerNormalization", ["x", "g"], ["y"], axis=1)], [("x", F, [1, 3, 8])],
                      [("y", F, None)], [c("g", G.w((3, 8)))], opset=17)
        self.assertMaps(ln2, 'weight<"g.zero_bias", f32, 3, 8>, -2, 1e-05f>', "g.zero_bias: zeros")
        self.assertMaps(G.encoder_block(), "layer_norm<add<in_x, ", "weight<\"lng\", f32, 8>, weight<\"lnb\", f32, 8>, -1, 1e-05f>",
                        "dense<gelu<n28>, ", "(Dense from MatMul, Add)", "(Split from Slice, Slice, Slice)")
        self.assertMaps(unary_model(n("Softmax", ["x"], ["y"], axis=1)), "softmax<in_x, 1>")
        self.assertMaps(unary_model(n("Softmax", ["x"], ["y"])), "softmax<in_x>")
        self.assertMaps(unary_model(n("Softmax", ["x"], ["y"]), opset=11),
                        "reshape<softmax<reshape<in_x, 1, 144>>, 1, 4, 6, 6>")
        self.assertMaps(unary_model(n("Softmax", ["x"], ["y"], axis=3), opset=11), "softmax<in_x, 3>")

    def test_gelu_orders(self) -> None:
        c = G.const
        inits = [c("r2", np.float32(np.sqrt(2))), c("ir2", np.float32(1 / np.sqrt(2))), c("one", np.float32(1)),
                 c("half", np.float32(0.5))]
        orders = {
            "x*a*0.5": [n("Div", ["x", "r2"], ["d"]), n("Erf", ["d"], ["e"]), n("Add", ["e", "one"], ["a"]),
                        n("Mul", ["x", "a"], ["m"]), n("Mul", ["m", "half"], ["y"])],
            "(x*0.5)*a": [n("Mul", ["x", "half"], ["h"]), n("Mul", ["x", "ir2"], ["d"]), n("Erf", ["d"], ["e"]),
                          n("Add", ["one", "e"], ["a"]), n("Mul", ["h", "a"], ["y"])],
            "x*(a*0.5)": [n("Div", ["x", "r2"], ["d"]), n("Erf", ["d"], ["e"]), n("Add", ["e", "one"], ["a"]),
                          n("Mul", ["a", "half"], ["m"]), n("Mul", ["m", "x"], ["y"])],
        }
        for name, nodes in orders.items():
            with self.subTest(order=name):
                self.assertMaps(G.model(nodes, [("x", F, [2, 3])], [("y", F, None)], inits), "gelu<in_x>")

    def test_reductions(self) -> None:
        self.assertMaps(unary_model(n("ReduceMean", ["x"], ["y"], axes=[2, 3], keepdims=0)),
                        "reduce_mean<in_x, axes<2, 3>, false>")
        self.assertMaps(unary_model(n("ReduceSum", ["x", "a"], ["y"]), inits=[G.const("a", np.array([-1]))]),
                        "reduce_sum<in_x, axes<3>, true>")
        self.assertMaps(unary_model(n("ReduceMax", ["x"], ["y"], axes=[1])), "reduce_max<in_x, axes<1>, true>")
        self.assertMaps(unary_model(n("ReduceMin", ["x"], ["y"], axes=[1], keepdims=0)),
                        "neg<reduce_max<neg<in_x>, axes<1>, false>>")
        self.assertMaps(unary_model(n("ReduceMean", ["x"], ["y"])), "reduce_mean<in_x, axes<0, 1, 2, 3>, true>")

    def test_folding_and_copies(self) -> None:
        c = G.const
        nodes = [n("Identity", ["x"], ["i"]), n("Dropout", ["i"], ["d"]), n("Shape", ["d"], ["s"]),
                 n("Gather", ["s", "zero"], ["b"]), n("Unsqueeze", ["b", "ax"], ["bu"]),
                 n("ConstantOfShape", ["one"], ["ones"], value=helper.make_tensor("v", I64, [1], [-1])),
                 n("Range", ["r0", "r3", "r1"], ["rg"]), n("Cast", ["rg"], ["rf"], to=F),
                 n("ReduceSum", ["rf"], ["n3"], keepdims=1), n("Cast", ["n3"], ["n3i"], to=I64),
                 n("Concat", ["bu", "ones", "n3i"], ["tgt"], axis=0), n("Reshape", ["d", "tgt"], ["y"])]
        m = G.model(nodes, [("x", F, [2, 3, 4])], [("y", F, [2, 4, 3])],
                    [c("zero", np.array(0)), c("ax", np.array([0])), c("one", np.array([1])),
                     c("r0", np.array(0)), c("r3", np.array(3)), c("r1", np.array(1))])
        text = self.assertMaps(m, "struct n11 : reshape<in_x, 2, 4, 3> {};")
        self.assertEqual(text.count("struct "), 1)

    def test_dynamic_input_fixed_by_input_shape(self) -> None:
        m = unary_model(n("Relu", ["x"], ["y"]), shape=("batch", 3))
        text = self.header(m, "--input-shape", "x=2,3")
        self.assertIn('input<"x", f32, 2, 3>', text)

    def test_weight_names(self) -> None:
        c = G.const
        m = G.model([n("Add", ["x", "__metadata__"], ["a"]), n("Add", ["a", "literal.k"], ["b"]),
                     n("Add", ["b", "onnx::Add_7"], ["y"])], [("x", F, [1, 20])], [("y", F, None)],
                    [c("__metadata__", G.w(20)), c("literal.k", G.w(20, 2)), c("onnx::Add_7", G.w(20, 3))])
        text = self.header(m)
        self.assertIn('weight<"onnx.__metadata__", f32, 20>', text)
        self.assertIn('weight<"onnx.literal.k", f32, 20>', text)
        self.assertIn('weight<"onnx::Add_7", f32, 20>', text)
        self.assertIn("//   onnx.literal.k: renamed from the ONNX name", text)
        names = safetensors_names(os.path.join(self.dir, "m.safetensors"))
        self.assertEqual(sorted(names), ["onnx.__metadata__", "onnx.literal.k", "onnx::Add_7"])


def safetensors_names(path: str) -> list[str]:
    import json
    import struct
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
    return [k for k in header if k != "__metadata__"]


class ErrorTest(ToolTest):
    """What a user reads when the model cannot be imported."""

    def test_unsupported_ops_listed_at_once(self) -> None:
        m = G.model([n("Relu", ["x"], ["r"], name="ok"), n("LogSoftmax", ["r"], ["v"], name="top"),
                     n("Elu", ["r"], ["e"], name="elu"), n("Relu", ["e"], ["y"], name="after")],
                    [("x", F, [1, 8])], [("v", F, None), ("y", F, None)])
        err = self.failure(m)
        self.assertIn("2 nodes cannot be imported", err)
        self.assertIn("node 'top' LogSoftmax (ai.onnx opset 13), inputs f32[1, 8]: Partita has no log_softmax op", err)
        self.assertIn("node 'elu' Elu (ai.onnx opset 13), inputs f32[1, 8]: Partita has no mapping for this op", err)
        self.assertNotIn("'after'", err)  # a consequence, not a cause

    def test_root_causes_first_and_all_of_them(self) -> None:
        # A detector's tail: a Resize the importer cannot map, then ops with no mapping at all
        # downstream of it, which must still be listed (first, every one, counted by op).
        m = G.model([n("Resize", ["x", "", "sc"], ["r"], mode="cubic", name="rs"),
                     n("NonZero", ["r"], ["nz1"], name="nz1"), n("NonZero", ["x"], ["nz2"], name="nz2"),
                     n("If", ["c"], ["f"], name="nms", then_branch=G.model([], [], [("t", F, [1])]).graph,
                       else_branch=G.model([], [], [("t", F, [1])]).graph),
                     n("Relu", ["r"], ["y"], name="after"), n("Shape", ["nz2"], ["nzs"], name="count")],
                    [("x", F, [1, 1, 4, 4]), ("c", onnx.TensorProto.BOOL, [])],
                    [("nz1", I64, None), ("nz2", I64, None), ("f", F, None), ("y", F, None), ("nzs", I64, None)],
                    [G.const("sc", np.array([1, 1, 2, 2], dtype=np.float32))])
        lines = self.failure(m).strip().splitlines()
        self.assertIn("4 nodes cannot be imported", lines[0])
        self.assertEqual(lines[1].strip(), "ops with no mapping: NonZero (2), If (1)")
        self.assertIn("'nz1' NonZero", lines[2])
        self.assertIn("keep the mask and select with Where", lines[2])
        self.assertIn("'nz2' NonZero", lines[3])
        self.assertIn("'nms' If", lines[4])
        self.assertIn("control flow at run time", lines[4])
        self.assertIn("'rs' Resize", lines[5])
        self.assertNotIn("'after'", "\n".join(lines))  # a consequence, not a cause
        self.assertNotIn("'count'", "\n".join(lines))  # a Shape the importer would fold, behind NonZero

    def test_unsupported_attribute(self) -> None:
        m = unary_model(n("Resize", ["x", "", "sc"], ["y"], mode="cubic", name="rs"),
                        inits=[G.const("sc", np.array([1, 1, 2, 2], dtype=np.float32))])
        self.assertIn("node 'rs' Resize (ai.onnx opset 13), inputs f32[1, 4, 6, 6], f32[4]: mode='cubic'",
                      self.failure(m))
        w3 = G.const("w", G.w((4, 2, 2, 2, 2)))
        self.assertIn("ConvTranspose (ai.onnx opset 13), inputs f32[1, 4, 3, 3, 3], f32[4, 2, 2, 2, 2]: a 3-D transposed "
                      "convolution: Partita has conv_transpose2d (NCHW), and NCL as NCHW of height 1",
                      self.failure(unary_model(n("ConvTranspose", ["x", "w"], ["y"], name="up"), shape=(1, 4, 3, 3, 3),
                                               inits=[w3])))
        self.assertIn("a 3-D convolution: Partita has conv1d (NCL) and conv2d (NCHW)",
                      self.failure(unary_model(n("Conv", ["x", "w"], ["y"]), shape=(1, 4, 3, 3, 3),
                                               inits=[G.const("w", G.w((2, 4, 2, 2, 2)))])))
        self.assertIn("an output padding of 2 along axis 3, not smaller than the stride 2 or the dilation 1",
                      self.failure(unary_model(n("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], output_shape=[11, 14]),
                                               inits=[G.const("w", G.w((4, 2, 2, 2)))])))

    def test_dynamic_dimension(self) -> None:
        m = unary_model(n("Relu", ["x"], ["y"]), shape=("batch", 3, "h", 8))
        err = self.failure(m)
        self.assertIn("input 'x' [batch, 3, h, 8]: dimensions 0 ('batch'), 2 ('h') are dynamic; "
                      "fix them with --input-shape x=1,3,1,8", err)
        self.assertIn("is not an input", self.failure(m, "--input-shape", "y=1,3"))
        self.assertIn("expected NAME=D0,D1", self.failure(m, "--input-shape", "x=1,a"))

    def test_corrupt_and_truncated_files(self) -> None:
        good = G.conv_net().SerializeToString()
        for name, data in [("corrupt", b"\x08\x07garbage\xff\xff\xff" * 20), ("truncated", good[: len(good) // 2]),
                           ("empty", b"")]:
            with self.subTest(file=name):
                err = self.failure(data)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertIn("m.onnx: ", err)
        self.assertIn("cannot read", subprocess.run([sys.executable, TOOL, os.path.join(self.dir, "none.onnx"), "--out",
                                                     self.dir, "--namespace", "m"], capture_output=True, text=True).stderr)

    def test_bad_namespace(self) -> None:
        r = run_tool(unary_model(n("Relu", ["x"], ["y"])), self.dir, "not-an-identifier")
        self.assertEqual(r.returncode, 2)
        self.assertIn("expected a C++ identifier", r.stderr)


class OracleTest(unittest.TestCase):
    """The numpy oracle against the expected outputs ONNX ships with its operator definitions
    (onnx.backend.test.case.node), for the ops the oracle computes itself in 2-D."""

    MODULES = ("conv", "convtranspose", "depthtospace", "spacetodepth", "averagepool", "maxpool")

    def test_operator_cases(self) -> None:
        import importlib
        try:
            from onnx.backend.test.case import node as node_cases
            for mod in self.MODULES:
                importlib.import_module(f"onnx.backend.test.case.node.{mod}")
            cases = list(node_cases._NodeTestCases)
        except Exception as e:  # the cases are not part of onnx's API; this onnx may lack them
            self.skipTest(f"no ONNX operator cases: {e}")
        checked = 0
        for case in cases:
            node = case.model.graph.node[0]
            if node.op_type not in ("Conv", "ConvTranspose", "DepthToSpace", "SpaceToDepth", "AveragePool", "MaxPool"):
                continue
            if len(node.output) > 1 or any(a.name == "dilations" for a in node.attribute if "Pool" in node.op_type):
                continue  # the Indices output and dilated pooling: not mapped, not in the oracle
            for inputs, outputs in case.data_sets:
                if inputs[0].ndim != 4:
                    continue
                feeds = {vi.name: v for vi, v in zip(case.model.graph.input, inputs)}
                with self.subTest(case=case.name):
                    got = onnx_reference.run(case.model, feeds)[0]
                    self.assertEqual(got.shape, outputs[0].shape)
                    np.testing.assert_allclose(got, outputs[0], rtol=1e-5, atol=1e-5)
                    checked += 1
        self.assertGreaterEqual(checked, 30)


def compile_flags() -> tuple[str, list[str]]:
    cxx = os.environ.get("PARTITA_ONNX_CXX", "g++")
    flags = shlex.split(os.environ.get("PARTITA_ONNX_CXXFLAGS", "-std=c++20 -O1"))
    if "clang" in os.path.basename(cxx) and not any("constexpr-steps" in f for f in flags):
        flags.append("-fconstexpr-steps=16777216")
    return cxx, flags + ["-I", os.path.join(ROOT, "include"), "-pthread"]


DRIVER = r'''
#include <cstdint>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
@INCLUDES@

template <class T>
std::vector<T> read(const std::string& path, std::size_t n) {
  std::vector<T> v(n);
  std::ifstream in(path, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(T))))
    throw std::runtime_error("cannot read " + path);
  return v;
}

// Runs E on the files STEM.in.NAME.bin (inputs by name, in whatever order run takes them) and
// writes STEM.outK.bin.
template <class E, std::size_t... I, std::size_t... O>
void run_files(E& exe, const std::string& stem, std::index_sequence<I...>, std::index_sequence<O...>) {
  auto ins = std::make_tuple(read<std::conditional_t<E::input(I).type == partita::dtype::i64, std::int64_t, float>>(
      stem + ".in." + std::string(E::input(I).name) + ".bin", static_cast<std::size_t>(E::input(I).shp.elements()))...);
  auto outs = std::make_tuple(std::vector<float>(static_cast<std::size_t>(E::output(O).shp.elements()))...);
  exe.run(std::get<I>(ins)..., std::get<O>(outs)...);
  (std::ofstream(stem + ".out" + std::to_string(O) + ".bin", std::ios::binary)
       .write(reinterpret_cast<const char*>(std::get<O>(outs).data()),
              static_cast<std::streamsize>(std::get<O>(outs).size() * sizeof(float))), ...);
}

template <class Net>
void run_model(const std::string& stem, partita::weight_set* embedded = nullptr) {
  using E = partita::compiled<Net, partita::cpu>;
  auto exe = std::make_unique<E>();
  if (embedded) exe->bind(*embedded);
  else exe->bind(partita::load_safetensors(stem + ".safetensors"));
  run_files(*exe, stem, std::make_index_sequence<E::num_inputs>{}, std::make_index_sequence<E::num_outputs>{});
}

@MAIN@
'''


class EndToEndTest(ToolTest):
    """Imported graphs compiled with the library, run on cpu, compared with the numpy oracle."""

    def build(self, sources: dict[str, str]) -> str:
        cxx, flags = compile_flags()
        objs = []
        for name, text in sources.items():
            src = os.path.join(self.dir, name)
            with open(src, "w") as f:
                f.write(text)
            objs.append(src)
        exe = os.path.join(self.dir, "driver")
        r = subprocess.run([cxx, *flags, *objs, "-o", exe], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr[-6000:])
        return exe

    def feeds(self, ns: str, m: onnx.ModelProto) -> list[np.ndarray]:
        feeds = G.inputs_for(m)
        for name, v in feeds.items():
            v.tofile(os.path.join(self.dir, f"{ns}.in.{name}.bin"))
        return onnx_reference.run(m, feeds)

    def compare(self, ns: str, expected: list[np.ndarray], tol: float = 1e-4) -> None:
        for k, want in enumerate(expected):
            got = np.fromfile(os.path.join(self.dir, f"{ns}.out{k}.bin"), dtype=np.float32)
            with self.subTest(model=ns, output=k):
                self.assertEqual(got.size, want.size)
                np.testing.assert_allclose(got, want.reshape(-1).astype(np.float32), rtol=tol, atol=tol)

    def test_graphs_match_numpy(self) -> None:
        graphs = {"conv_net": G.conv_net(), "encoder_block": G.encoder_block(), "misc_ops": G.misc_ops(),
                  "conv_net11": G.conv_net(11), "encoder_block17": G.encoder_block(17), "conv_ops": G.conv_ops(),
                  "mask_ops": G.mask_ops(), "recurrent_ops": G.recurrent_ops()}
        expected = {}
        for ns, m in graphs.items():
            r = run_tool(m, self.dir, ns)
            self.assertEqual(r.returncode, 0, r.stderr)
            expected[ns] = self.feeds(ns, m)
        includes = "\n".join(f'#include "{ns}.hpp"' for ns in graphs)
        calls = "\n".join(f'  run_model<{ns}::net>(dir + "/{ns}");' for ns in graphs)
        main = f"int main(int, char** argv) {{\n  const std::string dir = argv[1];\n{calls}\n}}\n"
        exe = self.build({"driver.cpp": DRIVER.replace("@INCLUDES@", includes).replace("@MAIN@", main)})
        r = subprocess.run([exe, self.dir], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        for ns in graphs:
            self.compare(ns, expected[ns])

    def test_embedded_weights_in_two_translation_units(self) -> None:
        m = G.conv_net()
        r = run_tool(m, self.dir, "emb", "--embed-weights")
        self.assertEqual(r.returncode, 0, r.stderr)
        expected = self.feeds("emb", m)
        os.rename(os.path.join(self.dir, "emb.safetensors"), os.path.join(self.dir, "moved.safetensors"))
        define = f'#define EMB_WEIGHTS_FILE "{os.path.join(self.dir, "moved.safetensors")}"\n#include "emb.hpp"'
        other = define + "\npartita::weight_set other_weights() { return emb::weights(); }\n"
        main = ("partita::weight_set other_weights();\n"
                "int main(int, char** argv) {\n  auto w = other_weights();\n  auto v = emb::weights();\n"
                "  if (w.tensors().size() != v.tensors().size() || w.tensors()[0].bytes.data() != v.tensors()[0].bytes.data())"
                " return 3;\n  run_model<emb::net>(std::string(argv[1]) + \"/emb\", &w);\n}\n")
        exe = self.build({"driver.cpp": DRIVER.replace("@INCLUDES@", define).replace("@MAIN@", main), "other.cpp": other})
        os.remove(os.path.join(self.dir, "moved.safetensors"))  # nothing is read from disk
        r = subprocess.run([exe, self.dir], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.compare("emb", expected)

    def test_weight_arrays_for_static_executable(self) -> None:
        # --embed-weights=arrays: constexpr arrays and the table weights::tensors in a header that
        # includes only <partita/model.hpp>, so that the freestanding header can use it; a
        # static_executable on mcu reads them in place, and compiled<> binds them through
        # weight_set::of. Both match the ONNX reference, and nothing is read from disk.
        m = G.conv_net()
        r = run_tool(m, self.dir, "arr", "--embed-weights=arrays")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.dir, "arr.hpp"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn("#include <partita/model.hpp>", text)
        self.assertNotIn("partita/partita.hpp", text)
        self.assertNotIn(".incbin", text)
        os.remove(os.path.join(self.dir, "arr.safetensors"))
        expected = self.feeds("arr", m)
        main = r"""
template <class E, std::size_t... I, std::size_t... O>
void run_static(E& exe, const std::string& stem, std::index_sequence<I...>, std::index_sequence<O...>) {
  auto ins = std::make_tuple(read<float>(stem + ".in." + std::string(E::input(I).name) + ".bin",
                                         E::template input_span<I>::extent)...);
  auto outs = std::make_tuple(std::vector<float>(E::template output_span<O>::extent)...);
  exe.run(typename E::template input_span<I>(std::get<I>(ins).data(), std::get<I>(ins).size())...,
          typename E::template output_span<O>(std::get<O>(outs).data(), std::get<O>(outs).size())...);
  (std::ofstream(stem + ".out" + std::to_string(O) + ".bin", std::ios::binary)
       .write(reinterpret_cast<const char*>(std::get<O>(outs).data()),
              static_cast<std::streamsize>(std::get<O>(outs).size() * sizeof(float))), ...);
}
partita::static_executable<arr::net, arr::weights, partita::mcu> in_place;
int main(int, char** argv) {
  using E = decltype(in_place);
  run_static(in_place, std::string(argv[1]) + "/arr", std::make_index_sequence<E::num_inputs>{},
             std::make_index_sequence<E::num_outputs>{});
  auto w = partita::weight_set::of(arr::weights::tensors);
  run_model<arr::net>(std::string(argv[1]) + "/bound", &w);
}
"""
        for name in os.listdir(self.dir):
            if name.startswith("arr.in."):
                os.link(os.path.join(self.dir, name), os.path.join(self.dir, "bound" + name[3:]))
        exe = self.build({"driver.cpp": DRIVER.replace("@INCLUDES@", '#include <partita/partita.hpp>\n#include "arr.hpp"')
                          .replace("@MAIN@", main)})
        r = subprocess.run([exe, self.dir], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.compare("arr", expected)
        self.compare("bound", expected)

    def test_output_names_reach_the_executable(self) -> None:
        # Three outputs: a plain name, a name with a quote, a backslash and a colon, and an
        # Identity the importer drops (its output becomes the value it copies, twice an output).
        odd = 'probs "final"\\0:0'
        m = G.model([n("Relu", ["x"], ["relu_out"]), n("Sigmoid", ["x"], [odd]), n("Identity", ["relu_out"], ["copy"])],
                    [("x", F, [1, 4])], [("relu_out", F, None), (odd, F, None), ("copy", F, None)])
        r = run_tool(m, self.dir, "names")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.dir, "names.hpp"), encoding="utf-8") as f:
            text = f.read()
        self.assertIn('output<"copy", ', text)
        checks = "\n".join(f'static_assert(E::output({k}).name == R"~({name})~");'
                           for k, name in enumerate(["relu_out", odd, "copy"]))
        source = ('#include "names.hpp"\nusing E = partita::compiled<names::net, partita::cpu>;\n'
                  f"static_assert(E::num_outputs == 3);\n{checks}\n"
                  "void by_name(E& exe, const std::vector<float>& x, std::vector<float>& a, std::vector<float>& b,\n"
                  '             std::vector<float>& c) {\n  exe.run({{"x", x}}, {{"copy", c}, {"relu_out", a}, '
                  f'{{R"~({odd})~", b}}}});\n}}\n')
        src = os.path.join(self.dir, "names.cpp")
        with open(src, "w") as f:
            f.write(source)
        cxx, flags = compile_flags()
        r = subprocess.run([cxx, *flags, "-fsyntax-only", src], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr[-6000:])


if __name__ == "__main__":
    unittest.main()
