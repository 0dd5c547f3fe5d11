#!/usr/bin/env python3
"""Partita's int8 path against ONNX Runtime on ResNet-18 and MobileNetV2 (QDQ, 64x64).

    compare_deep_models.py MODELS_DIR IMPORT_DIR EXE WORK_DIR [--record DIR] [--compiler CXX]

MODELS_DIR holds make_models.py's models and ONNX Runtime's values, IMPORT_DIR the imports and
cut_layers.py's layers.json, EXE the program of deep_models.cpp. Writes each model's inputs to
WORK_DIR/in, runs EXE, and compares in units of the output's scale (LSB):

- end to end: the whole model on NAME.input.safetensors against ONNX Runtime's output with
  graph optimizations off (the QDQ graph as written): at most MAX_END_TO_END LSB apart, since
  rounding flips compound through the layers;
- layer by layer: each cut layer fed ONNX Runtime's quantized input, within MAX_LAYER (1) LSB
  of ONNX Runtime's quantized output (the project's rule: one rounding of the requantization);
- in both, at least EQUAL of the values exactly equal.

Prints a table of both, how many of each model's ops the cpu integer composites claim and what
stays in float (the placement report's "not fused" lines); with --record, writes the figures as
a record under DIR (benchmarks/record.py). Exits 1 when a bound fails.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import struct
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ("resnet18", "mobilenet_v2")
# The bounds, from the figures of docs/quantization.md ("Agreement with ONNX Runtime"): both
# models agree exactly, end to end and layer by layer. ONNX Runtime's reference sums in float, in
# an order that depends on the machine's instruction set, and the values are made anew on each
# machine, so a value lying within a float rounding of a half may round the other way there: a
# layer may differ by 1 (the project's rule), and a flip moves the next layers' sums by one input
# step times a weight, a fraction of their output's step, so end to end a few flips may reach
# 2 LSB. Beyond that, or more than 1 % of the values off, something computes differently.
MAX_END_TO_END = 2
MAX_LAYER = 1
EQUAL = 0.99

_DTYPES = {"F32": np.float32, "U8": np.uint8, "I8": np.int8, "I32": np.int32, "I64": np.int64}
_NAMES = {np.dtype(v): k for k, v in _DTYPES.items()}


def read_safetensors(path: str) -> dict[str, np.ndarray]:
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        out[name] = np.frombuffer(body[begin:end], dtype=_DTYPES[entry["dtype"]]).reshape(entry["shape"])
    return out


def write_safetensors(path: str, arrays: dict[str, np.ndarray]) -> None:
    header, offset, blobs = {}, 0, []
    for name, a in arrays.items():
        b = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": _NAMES[a.dtype], "shape": list(a.shape), "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def lsb_counts(diff: np.ndarray) -> dict:
    """The distribution of |difference| in LSB: {"0": count, "1": count, ...}, the largest and the
    share exactly equal and within 1."""
    d = np.abs(diff).astype(np.int64).ravel()
    counts = np.bincount(d)
    return {"values": int(d.size), "counts": {str(k): int(c) for k, c in enumerate(counts) if c},
            "max": int(d.max()), "equal": round(float(np.mean(d == 0)), 4),
            "within_1": round(float(np.mean(d <= 1)), 4)}


def initializer(model: onnx.ModelProto, name: str) -> np.ndarray:
    for t in model.graph.initializer:
        if t.name == name:
            return numpy_helper.to_array(t)
    raise KeyError(name)


def end_to_end(models_dir: str, out_dir: str, name: str) -> dict:
    """The dequantized output against ONNX Runtime's, in steps of the output's scale."""
    model = onnx.load(os.path.join(models_dir, name + ".onnx"), load_external_data=False)
    out = model.graph.output[0].name
    dq = next(n for n in model.graph.node if out in n.output)
    scale = float(initializer(model, dq.input[1]))
    ours = read_safetensors(os.path.join(out_dir, name + ".safetensors"))[out]
    ref = read_safetensors(os.path.join(models_dir, name + ".output.safetensors"))[out]
    steps = (ours.astype(np.float64) - ref.astype(np.float64)) / scale
    return {"output": out, "scale": scale, **lsb_counts(np.rint(steps))}


def placement(out_dir: str, name: str) -> dict:
    """From the plan: steps that run an integer composite (its kernel note starts with "q") and
    the others; from the placement report: ops claimed by a cpu.q composite, and "not fused"."""
    with open(os.path.join(out_dir, name + ".plan.txt")) as f:
        steps = [line for line in f.read().split("steps:\n", 1)[1].split("arena:\n", 1)[0].splitlines()
                 if not line.startswith("  copy")]
    integer = [s for s in steps if re.search(r"\[q\w*:", s)]
    others = sorted({re.match(r"\s*\d+ \S+ (\w+)\(", s).group(1) for s in steps if s not in integer})
    with open(os.path.join(out_dir, name + ".explain.txt")) as f:
        report = f.read().splitlines()
    ops = [line for line in report if line.startswith("%")]
    claimed = [line for line in ops if "composite cpu.q" in line]
    not_fused = sorted({line.strip() for line in report if line.strip().startswith("not fused")})
    float_ops = sorted({line.split()[1] for line in ops if "composite cpu.q" not in line})
    return {"steps": len(steps), "integer_steps": len(integer), "other_steps": others, "ops": len(ops),
            "ops_in_integer_composites": len(claimed), "ops_outside": float_ops, "not_fused": not_fused}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models_dir")
    ap.add_argument("import_dir")
    ap.add_argument("exe")
    ap.add_argument("work_dir")
    ap.add_argument("--record", help="write the figures as a record into this directory")
    ap.add_argument("--compiler", help="the C++ compiler that built EXE, for the record")
    args = ap.parse_args()
    in_dir, out_dir = os.path.join(args.work_dir, "in"), os.path.join(args.work_dir, "out")
    os.makedirs(in_dir, exist_ok=True)
    os.makedirs(out_dir, exist_ok=True)

    with open(os.path.join(args.import_dir, "layers.json")) as f:
        layers = json.load(f)
    for name in MODELS:
        write_safetensors(os.path.join(in_dir, name + ".safetensors"),
                          read_safetensors(os.path.join(args.models_dir, name + ".input.safetensors")))
    for layer in layers:
        given = {**read_safetensors(os.path.join(args.models_dir, layer["model"] + ".input.safetensors")),
                 **read_safetensors(os.path.join(args.models_dir, layer["model"] + ".intermediate.safetensors"))}
        write_safetensors(os.path.join(in_dir, layer["namespace"] + ".safetensors"),
                          {k: given[k] for k in layer["inputs"]})
    started = time.monotonic()
    subprocess.run([args.exe, args.import_dir, in_dir, out_dir], check=True)
    run_seconds = time.monotonic() - started

    failures = []
    whole = {}
    print("== end to end: the dequantized output against ONNX Runtime's (QDQ as written), in LSB ==")
    print("| model | outputs | equal | within 1 LSB | max LSB | count of 0, 1, 2, ... LSB |")
    print("|---|---|---|---|---|---|")
    for name in MODELS:
        r = end_to_end(args.models_dir, out_dir, name)
        r["placement"] = placement(out_dir, name)
        whole[name] = r
        counts = ", ".join(f"{k}: {v}" for k, v in r["counts"].items())
        print(f"| {name} | {r['values']} | {r['equal']:.1%} | {r['within_1']:.1%} | {r['max']} | {counts} |")
        if r["max"] > MAX_END_TO_END or r["equal"] < EQUAL:
            failures.append(f"{name}: {r['max']} LSB from ONNX Runtime (bound {MAX_END_TO_END}), {r['equal']:.1%} equal "
                            f"(bound {EQUAL:.0%})")

    print("\n== layer by layer: each layer fed ONNX Runtime's quantized input, its quantized output ==")
    print("| model | layer | kind | values | equal | max LSB |")
    print("|---|---|---|---|---|---|")
    per_layer = []
    for layer in layers:
        ours = read_safetensors(os.path.join(out_dir, layer["namespace"] + ".safetensors"))[layer["output"]]
        ref = read_safetensors(os.path.join(args.models_dir, layer["model"] + ".intermediate.safetensors"))[layer["output"]]
        r = {"model": layer["model"], "node": layer["node"], "kind": layer["kind"],
             **lsb_counts(ours.astype(np.int64) - ref.astype(np.int64))}
        per_layer.append(r)
        print(f"| {r['model']} | {r['node']} | {r['kind']} | {r['values']} | {r['equal']:.2%} | {r['max']} |")
        if r["max"] > MAX_LAYER or r["equal"] < EQUAL:
            failures.append(f"{layer['namespace']} ({r['kind']}): {r['max']} LSB from ONNX Runtime (bound {MAX_LAYER}), "
                            f"{r['equal']:.2%} equal (bound {EQUAL:.0%})")

    print("\n== where the ops run (cpu) ==")
    for name, r in whole.items():
        p = r["placement"]
        print(f"{name}: {p['ops_in_integer_composites']} of {p['ops']} ops in integer composites; "
              f"{p['integer_steps']} of {p['steps']} steps integer, the others: {', '.join(p['other_steps'])}")
        for line in p["not_fused"]:
            print(f"    {line}")
    print(f"\nthe program ran every model and layer in {run_seconds:.2f} s")

    if args.record:
        sys.path.insert(0, os.path.join(HERE, "..", "..", "benchmarks"))
        import record
        import onnxruntime
        rec = record.header("int8_onnx_agreement", compiler=args.compiler and record.compiler_version(args.compiler),
                            command="ctest -R '^int8_deep_models$'",
                            tools={"onnxruntime": onnxruntime.__version__, "onnx": onnx.__version__})
        rec["figures"] = [{"case": name, **r} for name, r in whole.items()] + \
                         [{"case": f"{r['model']} layer", **r} for r in per_layer]
        print(f"compare_deep_models.py: wrote {record.write(rec, args.record)}")

    for f in failures:
        print(f"compare_deep_models.py: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
