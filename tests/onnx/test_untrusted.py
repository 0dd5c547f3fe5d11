#!/usr/bin/env python3
"""Tests of tools/partita_import.py on hostile and malformed models.

    test_untrusted.py [unittest arguments]

A model file is untrusted input. These tests feed the importer files whose data disagree with
their dims, external data that points outside the model's folder or at devices, constants that
fold to gigabytes, graphs of tens of thousands of nodes, names that carry line breaks, and bad
command lines; each must end in exit 2 with one escaped line per culprit (never a signal, a
traceback or exit 3), read nothing outside the model's folder and write nothing outside --out.
Without onnx or numpy the tests are skipped (exit 77), except under CI=true, where that fails.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(ROOT, "tools", "partita_import.py")

sys.path.insert(0, HERE)
import onnx_required  # noqa: E402

onnx_required.require("test_untrusted")
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import onnx_graphs as G  # noqa: E402

n = helper.make_node
F, I64 = TensorProto.FLOAT, TensorProto.INT64
PREFIX = "partita_import: "


def raw_model(nodes, inputs, outputs, inits=(), opset: int = 13) -> onnx.ModelProto:
    """A model built without the checker or shape inference, so that it may be malformed."""
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(*o) for o in outputs], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="test")
    m.ir_version = 8
    return m


def reshape_model(shape_tensor: onnx.TensorProto) -> onnx.ModelProto:
    """x [2, 3] reshaped by the int64 initializer `shape_tensor` (named 's')."""
    return raw_model([n("Reshape", ["x", "s"], ["y"], name="rs")], [("x", F, [2, 3])], [("y", F, [3, 2])],
                     [shape_tensor])


def bad_int64(raw: bytes, dims=(2,)) -> onnx.TensorProto:
    t = onnx.TensorProto()
    t.name, t.data_type = "s", TensorProto.INT64
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def external(t: onnx.TensorProto, location: str, offset: int | None = None, length: int | None = None) -> None:
    """Moves tensor `t`'s data to external data at `location` (the bytes are not written)."""
    t.ClearField("raw_data")
    t.ClearField("float_data")
    t.data_location = TensorProto.EXTERNAL
    del t.external_data[:]
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)


def weight_model(location: str, offset: int | None = None, length: int | None = None,
                 in_constant: bool = False) -> onnx.ModelProto:
    """y = x + w, w [4] float32 with external data at `location` (an initializer, or the value of
    a Constant node when `in_constant`)."""
    w = numpy_helper.from_array(np.zeros(4, dtype=np.float32), "w")
    external(w, location, offset, length)
    if in_constant:
        nodes = [n("Constant", [], ["w"], value=w, name="c"), n("Add", ["x", "w"], ["y"], name="add")]
        return raw_model(nodes, [("x", F, [4])], [("y", F, [4])])
    return raw_model([n("Add", ["x", "w"], ["y"], name="add")], [("x", F, [4])], [("y", F, [4])], [w])


class Sandbox(unittest.TestCase):
    """Each test gets `root/model/` (the model's folder), `root/out/` and a secret file
    `root/secret.bin` outside the model's folder that no import may read."""

    SECRET = b"partita-secret-marker-" + b"7" * 42  # 64 bytes: 16 floats, a plausible weight

    def setUp(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="partita_untrusted_")
        self.root = os.path.realpath(self._dir.name)
        self.model_dir = os.path.join(self.root, "model")
        self.out = os.path.join(self.root, "out")
        os.makedirs(self.model_dir)
        with open(os.path.join(self.root, "secret.bin"), "wb") as f:
            f.write(self.SECRET)

    def tearDown(self) -> None:
        self._dir.cleanup()

    def run_tool(self, m: onnx.ModelProto | bytes, *extra: str, ns: str = "m", cwd: str | None = None,
                 timeout: float = 120) -> subprocess.CompletedProcess:
        path = os.path.join(self.model_dir, "m.onnx")
        with open(path, "wb") as f:
            f.write(m if isinstance(m, bytes) else m.SerializeToString())
        return subprocess.run([sys.executable, TOOL, path, "--out", self.out, "--namespace", ns, *extra],
                              capture_output=True, text=True, cwd=cwd or self.root, timeout=timeout)

    def refused(self, r: subprocess.CompletedProcess) -> str:
        """Checks that `r` is a clean refusal (exit 2, one headline, indented details, nothing
        else); returns its stderr."""
        self.assertEqual(r.returncode, 2, f"exit {r.returncode}: {r.stdout}{r.stderr}")
        self.assertEqual(r.stdout, "")
        lines = r.stderr.splitlines()
        self.assertTrue(lines and lines[0].startswith(PREFIX), r.stderr)
        self.assertEqual(sum(line.startswith(PREFIX) for line in lines), 1, r.stderr)
        for line in lines[1:]:
            self.assertTrue(line.startswith("  "), r.stderr)
        for line in lines:
            self.assertTrue(line.isprintable(), repr(line))
        self.assertNotIn("Traceback", r.stderr)
        self.assertNotIn("Warning", r.stderr)
        self.assert_secret_kept()
        return r.stderr

    def assert_secret_kept(self) -> None:
        if not os.path.isdir(self.out):
            return
        for name in os.listdir(self.out):
            with open(os.path.join(self.out, name), "rb") as f:
                self.assertNotIn(self.SECRET[:24], f.read(), name)


class TensorDataTest(Sandbox):
    """A tensor's bytes are checked against its dims and type before anything native reads it."""

    def test_raw_data_shorter_than_one_element(self) -> None:
        err = self.refused(self.run_tool(reshape_model(bad_int64(b"\x03\x00\x00"))))
        self.assertIn("initializer 's'", err)
        self.assertIn("3 bytes of raw data", err)
        self.assertIn("int64[2] needs 16", err)

    def test_raw_data_longer_than_dims(self) -> None:
        err = self.refused(self.run_tool(reshape_model(bad_int64(np.array([3, 2, 7, 7], np.int64).tobytes()))))
        self.assertIn("32 bytes of raw data", err)
        self.assertIn("int64[2] needs 16", err)

    def test_typed_data_count(self) -> None:
        t = onnx.TensorProto()
        t.name, t.data_type = "s", TensorProto.INT64
        t.dims.append(2)
        t.int64_data.extend([3, 2, 1])
        self.assertIn("3 values in int64_data", self.refused(self.run_tool(reshape_model(t))))

    def test_constant_attribute(self) -> None:
        t = bad_int64(b"\x01", dims=(2,))
        m = raw_model([n("Constant", [], ["s"], value=t, name="shape"), n("Reshape", ["x", "s"], ["y"], name="rs")],
                      [("x", F, [2, 3])], [("y", F, [3, 2])])
        err = self.refused(self.run_tool(m))
        self.assertIn("node 'shape' Constant", err)
        self.assertIn("attribute 'value'", err)

    def test_constant_of_shape_value(self) -> None:
        v = onnx.TensorProto()
        v.data_type, v.raw_data = TensorProto.FLOAT, b"\x00\x00"
        v.dims.append(1)
        m = raw_model([n("ConstantOfShape", ["s"], ["c"], value=v, name="fill"), n("Add", ["x", "c"], ["y"])],
                      [("x", F, [2, 3])], [("y", F, [2, 3])], [numpy_helper.from_array(np.array([2, 3]), "s")])
        self.assertIn("node 'fill' ConstantOfShape", self.refused(self.run_tool(m)))

    def test_sparse_initializer(self) -> None:
        values = numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "w")
        indices = bad_int64(b"\x00" * 5)
        indices.name = ""
        sparse = helper.make_sparse_tensor(values, indices, [4])
        m = raw_model([n("Add", ["x", "w"], ["y"])], [("x", F, [4])], [("y", F, [4])])
        m.graph.sparse_initializer.append(sparse)
        self.assertIn("sparse initializer 'w'", self.refused(self.run_tool(m)))

    def test_unknown_element_type(self) -> None:
        t = bad_int64(np.array([3, 2], np.int64).tobytes())
        t.data_type = 99
        self.assertIn("element type 99", self.refused(self.run_tool(reshape_model(t))))

    def test_negative_dim(self) -> None:
        t = bad_int64(b"", dims=(-2,))
        self.assertIn("dims [-2]", self.refused(self.run_tool(reshape_model(t))))


    def test_rank_and_segment(self) -> None:
        t = bad_int64(b"", dims=(1,) * 40)
        t.raw_data = np.zeros(1, np.int64).tobytes()
        self.assertIn("rank 40", self.refused(self.run_tool(reshape_model(t))))
        t = bad_int64(np.array([3, 2], np.int64).tobytes())
        t.segment.begin, t.segment.end = 0, 2
        self.assertIn("segment", self.refused(self.run_tool(reshape_model(t))))

    def test_names_not_utf8(self) -> None:
        m = raw_model([n("Relu", ["x"], ["y"], name="RELUNAME")], [("x", F, [1, 3])], [("y", F, [1, 3])])
        data = m.SerializeToString().replace(b"RELUNAME", b"RELU\xff\xfeME")
        self.assertIn("not UTF-8", self.refused(self.run_tool(data)))

    def test_ill_typed_graph(self) -> None:
        # Gemm's bias of another element type than its input: ONNX's type check, not a header
        # that fails to compile.
        m = raw_model([n("Gemm", ["x", "w", "b"], ["y"], name="fc")], [("x", F, [1, 4])], [("y", F, [1, 2])],
                      [numpy_helper.from_array(np.ones((4, 2), np.float32), "w"),
                       numpy_helper.from_array(np.ones(2, np.int64), "b")])
        err = self.refused(self.run_tool(m))
        self.assertIn("fc", err)
        self.assertIn("int64", err)

    def test_inference_crash_is_a_refusal(self) -> None:
        # onnx 1.12's Conv inference with auto_pad crashes the process on a weight of rank 2:
        # inference runs in a child process.
        m = raw_model([n("Conv", ["x", "w", "b"], ["y"], name="conv", auto_pad="SAME_LOWER", strides=[2, 2])],
                      [("x", F, [1, 4, 5, 6])], [("y", F, [1, 4, 3, 3])],
                      [numpy_helper.from_array(np.ones((1, 1), np.float32), "w"),
                       numpy_helper.from_array(np.ones(4, np.float32), "b")])
        self.refused(self.run_tool(m))


class ExternalDataTest(Sandbox):
    """External data is read only from regular files inside the model's folder."""

    def write(self, rel: str, data: bytes) -> str:
        path = os.path.join(self.model_dir, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def test_inside_is_read(self) -> None:
        self.write("gen/w.bin", np.arange(8, dtype=np.float32).tobytes())
        for in_constant in (False, True):
            with self.subTest(in_constant=in_constant):
                r = self.run_tool(weight_model("gen/w.bin", offset=16, length=16, in_constant=in_constant))
                self.assertEqual(r.returncode, 0, r.stderr)

    def test_constant_read_against_the_model_folder(self) -> None:
        # The current directory holds a file of the same name: the model's own must be read.
        self.write("w.bin", np.full(4, 2.0, np.float32).tobytes())
        with open(os.path.join(self.root, "w.bin"), "wb") as f:
            f.write(self.SECRET[:16])
        r = self.run_tool(weight_model("w.bin", in_constant=True), cwd=self.root)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_secret_kept()

    def test_escapes_refused(self) -> None:
        self.write("gen/w.bin", b"\x00" * 16)
        os.symlink(os.path.join(self.root, "secret.bin"), os.path.join(self.model_dir, "link.bin"))
        os.mkfifo(os.path.join(self.model_dir, "fifo.bin"))
        cases = {
            "gen/../../secret.bin": "outside the model's folder",
            "../secret.bin": "outside the model's folder",
            os.path.join(self.root, "secret.bin"): "an absolute path",
            "link.bin": "outside the model's folder",
            "/dev/zero": "an absolute path",
            "fifo.bin": "not a regular file",
            "gen": "not a regular file",
            "missing.bin": "cannot be opened",
        }
        for location, why in cases.items():
            for in_constant in (False, True):
                with self.subTest(location=location, in_constant=in_constant):
                    err = self.refused(self.run_tool(weight_model(location, in_constant=in_constant)))
                    self.assertIn("'w'", err)
                    self.assertIn(why, err)

    def test_bounds_checked(self) -> None:
        self.write("w.bin", b"\x00" * 16)
        self.assertIn("past the end of", self.refused(self.run_tool(weight_model("w.bin", offset=8, length=16))))
        self.assertIn("past the end of", self.refused(self.run_tool(weight_model("w.bin", offset=32))))
        self.assertIn("float32[4] needs 16",
                      self.refused(self.run_tool(weight_model("w.bin", offset=0, length=8))))
        err = self.refused(self.run_tool(weight_model("w.bin", offset=0, length=5 << 30)))
        self.assertIn("past the end of", err)


class ResourceTest(Sandbox):
    """Folding and loading stay under the memory cap, and refuse past it naming node and size."""

    def test_constant_of_shape_past_the_cap(self) -> None:
        m = raw_model([n("ConstantOfShape", ["s"], ["c"], name="huge"), n("Add", ["x", "c"], ["y"])],
                      [("x", F, [1])], [("y", F, [5, 1 << 30])],
                      [numpy_helper.from_array(np.array([5, 1 << 30], np.int64), "s")])
        t0 = time.monotonic()
        err = self.refused(self.run_tool(m))
        self.assertLess(time.monotonic() - t0, 30)
        self.assertIn("node 'huge' ConstantOfShape", err)
        self.assertIn("5368709120 elements", err)
        self.assertIn("--max-memory", err)

    def test_cap_option(self) -> None:
        m = raw_model([n("ConstantOfShape", ["s"], ["c"], name="fill"), n("Add", ["x", "c"], ["y"])],
                      [("x", F, [1])], [("y", F, [1 << 20])],
                      [numpy_helper.from_array(np.array([1 << 20], np.int64), "s")])
        self.assertIn("node 'fill' ConstantOfShape", self.refused(self.run_tool(m, "--max-memory", "1M")))
        self.assertEqual(self.run_tool(m, "--max-memory", "64M").returncode, 0)
        self.assertIn("--max-memory", self.refused(self.run_tool(m, "--max-memory", "lots")))

    def test_erf_folds_vectorised(self) -> None:
        x = np.linspace(-7, 7, 2_000_001, dtype=np.float32)
        m = raw_model([n("Erf", ["c"], ["e"], name="erf"), n("Add", ["x", "e"], ["y"])],
                      [("x", F, [x.size])], [("y", F, [x.size])], [numpy_helper.from_array(x, "c")])
        t0 = time.monotonic()
        r = self.run_tool(m)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertLess(time.monotonic() - t0, 30)

    def test_erf_values(self) -> None:
        sys.path.insert(0, os.path.join(ROOT, "tools"))
        import math

        from partita_onnx import fold
        x = np.concatenate([np.linspace(-8, 8, 100_001), [0.0, -0.0, 1e-30, 3.9, 5.9, 6.1, np.inf, -np.inf, np.nan]])
        got = fold.erf(x)
        want = np.array([math.erf(v) for v in x])
        self.assertTrue(np.allclose(got, want, rtol=1e-13, atol=1e-15, equal_nan=True),
                        float(np.nanmax(np.abs(got - want))))
        # In float32, at most one unit in the last place from the correctly rounded value.
        x32 = x.astype(np.float32)
        got32, want32 = fold.erf(x32), np.array([math.erf(v) for v in x32]).astype(np.float32)
        self.assertEqual(got32.dtype, np.float32)
        ulps = np.abs(got32.view(np.int32).astype(np.int64) - want32.view(np.int32).astype(np.int64))
        self.assertLessEqual(int(ulps[~np.isnan(want32)].max()), 1)

    def test_external_length_past_the_cap(self) -> None:
        with open(os.path.join(self.model_dir, "w.bin"), "wb") as f:
            f.truncate(64 << 20)  # sparse: no disk used
        w = onnx.TensorProto()
        w.name, w.data_type = "w", TensorProto.FLOAT
        w.dims.append(16 << 20)
        external(w, "w.bin", 0, 64 << 20)
        m = raw_model([n("Add", ["x", "w"], ["y"])], [("x", F, [16 << 20])], [("y", F, [16 << 20])], [w])
        err = self.refused(self.run_tool(m, "--max-memory", "32M"))
        self.assertIn("'w'", err)
        self.assertIn("--max-memory", err)


class TimeLimitTest(Sandbox):
    """An import that runs past --time-limit stops with the one-line message."""

    def test_time_limit(self) -> None:
        nodes, prev = [], "x"
        for i in range(5000):
            nodes.append(n("Relu", [prev], [f"v{i}"]))
            prev = f"v{i}"
        m = raw_model(nodes, [("x", F, [1, 4])], [(prev, F, [1, 4])])
        self.assertIn("--time-limit", self.refused(self.run_tool(m, "--time-limit", "0.05")))
        self.assertIn("--time-limit", self.refused(self.run_tool(m, "--time-limit", "-1")))
        self.assertFalse(os.path.exists(self.out))


class ScaleTest(Sandbox):
    """Clean-up and fusion are linear: a regression test at 2·10⁴ nodes."""

    def test_twenty_thousand_nodes(self) -> None:
        count = 20_000
        nodes, prev = [], "x"
        for i in range(count):
            op = ("Relu", "Identity", "Neg", "Sigmoid")[i % 4]
            nodes.append(n(op, [prev], [f"v{i}"], name=f"node{i}"))
            prev = f"v{i}"
        m = raw_model(nodes, [("x", F, [1, 4])], [(prev, F, [1, 4])])
        t0 = time.monotonic()
        r = self.run_tool(m, timeout=300)
        took = time.monotonic() - t0
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertLess(took, 20, f"{count} nodes took {took:.1f} s")


class MessageTest(Sandbox):
    """Every string from the file is escaped: one headline, one line per culprit."""

    def test_newline_in_node_name(self) -> None:
        m = raw_model([n("LogSoftmax", ["x"], ["v"], name="top\npartita_import: forged\r\x1b[31m"),
                       n("Elu", ["x"], ["y"], name="e" * 10000)],
                      [("x", F, [1, 8])], [("v", F, [1, 8]), ("y", F, [1, 8])])
        err = self.refused(self.run_tool(m))
        self.assertIn("top\\npartita_import: forged\\r\\x1b[31m", err)
        self.assertLess(len(err), 4000)

    def test_newline_in_dim_param_and_domain(self) -> None:
        m = raw_model([n("Relu", ["x"], ["y"])], [("x", F, ["b\npartita_import: forged", 3])],
                      [("y", F, ["b\npartita_import: forged", 3])])
        self.assertIn("b\\npartita_import: forged", self.refused(self.run_tool(m)))
        m = raw_model([n("Relu", ["x"], ["y"], domain="evil\ndomain")], [("x", F, [1, 3])], [("y", F, [1, 3])])
        m.opset_import.append(helper.make_opsetid("evil\ndomain", 1))
        self.refused(self.run_tool(m))

    def test_half_parsed_file(self) -> None:
        good = G.conv_net().SerializeToString()
        for cut in (len(good) - 3, len(good) // 3, 7):
            for data in (good[:cut], good[:cut] + b"\x0c\xff\xff", b"\x0c" + good):
                with self.subTest(cut=cut, size=len(data)):
                    self.refused(self.run_tool(data))


class CommandLineTest(Sandbox):
    """Arguments are checked before any work."""

    def model(self) -> onnx.ModelProto:
        return raw_model([n("Relu", ["x"], ["y"])], [("x", F, [1, 3])], [("y", F, [1, 3])])

    def test_keyword_namespace(self) -> None:
        for ns in ("class", "int", "namespace", "co_await", "partita", "std", "__x", "_Upper"):
            with self.subTest(ns=ns):
                self.assertIn("--namespace", self.refused(self.run_tool(self.model(), ns=ns)))
                self.assertFalse(os.path.exists(self.out))

    def test_limits_out_of_range(self) -> None:
        for args in (["--time-limit", "inf"], ["--time-limit", "1e308"], ["--time-limit", "nan"],
                     ["--input-shape", "x=99999999999999999999"], ["--max-memory", "0"]):
            with self.subTest(args=args):
                self.refused(self.run_tool(self.model(), *args))

    def test_header_comments_escaped(self) -> None:
        m = raw_model([n("Relu", ["x\x1b[2J"], ["y"], name="r\x7f\x00\x0b\x85\u2028end\\")],
                      [("x\x1b[2J", F, [1, 3])], [("y", F, [1, 3])])
        m.producer_name = "evil\nproducer\\"
        r = self.run_tool(m)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.out, "m.hpp"), encoding="utf-8") as f:
            text = f.read()
        for line in text.splitlines():
            if line.startswith("//"):
                self.assertTrue(line.isprintable(), repr(line))
                self.assertFalse(line.endswith("\\"), repr(line))
        self.assertIn("r\\x7f\\x00\\x0b\\x85\\u2028end\\\\", text)

    def test_out_is_a_file(self) -> None:
        with open(self.out, "w") as f:
            f.write("keep")
        err = self.refused(self.run_tool(self.model()))
        self.assertIn("--out", err)
        with open(self.out) as f:
            self.assertEqual(f.read(), "keep")


class ExitCodeTest(Sandbox):
    """A malformed model is exit 2, naming what is wrong; exit 3 is left to the importer's bugs."""

    def test_bad_attribute_type(self) -> None:
        conv = n("Conv", ["x", "w"], ["y"], name="conv")
        conv.attribute.append(helper.make_attribute("strides", 2.5))
        m = raw_model([conv], [("x", F, [1, 2, 4, 4])], [("y", F, [1, 2, 2, 2])],
                      [numpy_helper.from_array(np.ones((2, 2, 1, 1), np.float32), "w")])
        err = self.refused(self.run_tool(m))
        self.assertIn("'conv'", err)
        self.assertIn("strides", err)

    def test_unknown_attribute_enum(self) -> None:
        # An attribute whose type is an enum value this onnx does not know: protobuf keeps it
        # as an unknown field and reads the type as UNDEFINED.
        relu = n("LeakyRelu", ["x"], ["y"], name="r", alpha=0.5)
        m = raw_model([relu], [("x", F, [1, 3])], [("y", F, [1, 3])])
        data = m.SerializeToString()
        typed = b"\xa0\x01\x01"  # field 20 (type), varint 1 (FLOAT)
        self.assertEqual(data.count(typed), 1)
        err = self.refused(self.run_tool(data.replace(typed, b"\xa0\x01\x4d")))
        self.assertIn("'r'", err)
        self.assertIn("alpha", err)


if __name__ == "__main__":
    unittest.main()
