#!/usr/bin/env python3
"""How long tools/partita_import.py takes on large graphs: every clean-up and fusion pass must
grow linearly (or as n log n) with the number of nodes.

    benchmarks/importer/scale.py [--nodes 20000,100000] [--record DIR]

Builds graphs of the given sizes in four shapes and imports each in a fresh process:
  chain   a chain of Relu, Identity, Neg and Sigmoid (copies dropped, nothing folded);
  dense   MatMul + Add by constants, fused into Partita's dense, then Relu;
  shapes  Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains on the input's shape, all
          folded to constants;
  norms   the LayerNorm decomposition of opset < 17 exporters, fused into one op.
Prints one line per graph (nodes, seconds, nodes per second) and, with --record, writes the
run as a record under DIR (benchmarks/results/ by convention; benchmarks/README.md, "Records").
The goal it measures: 10^5 nodes in at most 10 s.
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "partita_import.py")
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import record  # noqa: E402 (benchmarks/record.py)

F, I64 = TensorProto.FLOAT, TensorProto.INT64
n = helper.make_node


def _model(nodes, inputs, outputs, inits=()) -> onnx.ModelProto:
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                          [helper.make_tensor_value_info(*o) for o in outputs], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="scale")
    m.ir_version = 8
    return m


def chain(count: int) -> onnx.ModelProto:
    nodes, prev = [], "x"
    for i in range(count):
        nodes.append(n(("Relu", "Identity", "Neg", "Sigmoid")[i % 4], [prev], [f"v{i}"], name=f"n{i}"))
        prev = f"v{i}"
    return _model(nodes, [("x", F, [1, 4])], [(prev, F, [1, 4])])


def dense(count: int) -> onnx.ModelProto:
    nodes, inits, prev = [], [], "x"
    for i in range(count // 3):
        inits += [numpy_helper.from_array(np.full((4, 4), 0.1, np.float32), f"w{i}"),
                  numpy_helper.from_array(np.zeros(4, np.float32), f"b{i}")]
        nodes += [n("MatMul", [prev, f"w{i}"], [f"m{i}"]), n("Add", [f"m{i}", f"b{i}"], [f"a{i}"]),
                  n("Relu", [f"a{i}"], [f"r{i}"])]
        prev = f"r{i}"
    return _model(nodes, [("x", F, [1, 4])], [(prev, F, [1, 4])], inits)


def shapes(count: int) -> onnx.ModelProto:
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array([-1], np.int64), "rest"),
             numpy_helper.from_array(np.array([0], np.int64), "axes")]
    nodes, prev = [], "x"
    for i in range(count // 6):
        nodes += [n("Shape", ["x"], [f"s{i}"]), n("Gather", [f"s{i}", "zero"], [f"g{i}"], axis=0),
                  n("Unsqueeze", [f"g{i}", "axes"], [f"u{i}"]), n("Concat", [f"u{i}", "rest"], [f"c{i}"], axis=0),
                  n("Reshape", [prev, f"c{i}"], [f"y{i}"]), n("Relu", [f"y{i}"], [f"r{i}"])]
        prev = f"r{i}"
    return _model(nodes, [("x", F, [2, 4])], [(prev, F, [2, 4])], inits)


def norms(count: int) -> onnx.ModelProto:
    inits = [numpy_helper.from_array(np.array([-1], np.int64), "axes"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(1e-5, np.float32), "eps")]
    nodes, prev = [], "x"
    for i in range(count // 8):
        p = f"l{i}_"
        nodes += [n("ReduceMean", [prev], [p + "mean"], axes=[-1]), n("Sub", [prev, p + "mean"], [p + "d"]),
                  n("Pow", [p + "d", "two"], [p + "sq"]), n("ReduceMean", [p + "sq"], [p + "var"], axes=[-1]),
                  n("Add", [p + "var", "eps"], [p + "ve"]), n("Sqrt", [p + "ve"], [p + "sd"]),
                  n("Div", [p + "d", p + "sd"], [p + "y"]), n("Relu", [p + "y"], [p + "r"])]
        prev = p + "r"
    return _model(nodes, [("x", F, [1, 8])], [(prev, F, [1, 8])], inits)


GRAPHS = {"chain": chain, "dense": dense, "shapes": shapes, "norms": norms}


def time_import(m: onnx.ModelProto, folder: str) -> tuple[float, str]:
    path = os.path.join(folder, "m.onnx")
    onnx.save(m, path)
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, TOOL, path, "--out", os.path.join(folder, "out"), "--namespace", "m"],
                       capture_output=True, text=True)
    took = time.monotonic() - t0
    if r.returncode != 0:
        raise SystemExit(f"scale: the import failed (exit {r.returncode}): {r.stderr.strip()}")
    return took, r.stdout.strip()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", default="20000,100000", help="graph sizes, comma-separated")
    p.add_argument("--graphs", default=",".join(GRAPHS), help="which graphs: " + ", ".join(GRAPHS))
    p.add_argument("--record", metavar="DIR", help="write the run as a JSON record into DIR")
    args = p.parse_args()
    figures = []
    with tempfile.TemporaryDirectory(prefix="partita_scale_") as folder:
        for size in (int(s) for s in args.nodes.split(",")):
            for name in args.graphs.split(","):
                m = GRAPHS[name](size)
                took, _ = time_import(m, folder)
                count = len(m.graph.node)
                figures.append({"graph": name, "nodes": count, "partita": {"seconds": round(took, 3)}})
                print(f"{name:7} {count:8} nodes  {took:7.2f} s  {count / took:9.0f} nodes/s", flush=True)
    if args.record:
        r = record.header("importer_scale", command=" ".join(["scale.py", *sys.argv[1:]]),
                          tools={"python": platform.python_version(), "onnx": onnx.__version__,
                                 "numpy": np.__version__})
        r["figures"] = figures
        print(f"scale: wrote {record.write(r, args.record)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
