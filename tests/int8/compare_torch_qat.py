#!/usr/bin/env python3
"""Partita's int8 path against ONNX Runtime on the models of PyTorch's quantization-aware training.

    compare_torch_qat.py MODELS_DIR IMPORT_DIR EXE WORK_DIR

MODELS_DIR holds make_models.py's torch_qat_* models (PyTorch's QDQ export, opset 13) and ONNX
Runtime's output with graph optimizations off. ONNX Runtime refuses PyTorch 1.13's scales and zero
points of shape [1] ("Scale and Zero-point must be a scalar"), so make_models.py ran it on a copy
with those reshaped to scalars (scalar_qdq); Partita imports the export as written and reads them
as per tensor. Runs EXE (torch_qat_models.cpp) and checks, in units of the output's scale (LSB):

- end to end, the dequantized output within MAX_END_TO_END LSB of ONNX Runtime's;
- every Clip between a DequantizeLinear and a QuantizeLinear (PyTorch's ReLU6, which eager-mode
  QAT cannot fuse into the convolution) runs as the integer composite cpu.qclamp, and the
  placement report has no "not fused" line for a clip.
Prints the figures and what stays in float. Exits 1 when a check fails, 77 (skipped) when numpy or
onnx is missing, except under CI=true.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
try:
    import numpy as np  # noqa: F401
    import onnx
except ImportError as e:
    if os.environ.get("CI") == "true":
        print(f"compare_torch_qat.py: {e.name} is required under CI=true", file=sys.stderr)
        sys.exit(1)
    print(f"compare_torch_qat.py: skipped: {e.name} is not installed for {sys.executable}")
    sys.exit(77)
sys.path.insert(0, HERE)
from compare_deep_models import end_to_end, placement, read_safetensors, write_safetensors  # noqa: E402

MODELS = ("torch_qat_cnn", "torch_qat_mobilenet_v2")
# The QDQ graph's float ops (PyTorch's conv, divide and batch norm of a fused conv-bn, the pool
# and the classifier) run in float in both, in different orders; a requantization that lands
# within a float rounding of a half may round the other way (1 LSB, the project's rule), and each
# flip moves the next layers' sums by a fraction of their output's step, so end to end a few flips
# may reach 2 LSB, as on the other deep models (compare_deep_models.py).
MAX_END_TO_END = 2


def qdq_clips(model: onnx.ModelProto) -> int:
    """Clips that read a DequantizeLinear and feed only QuantizeLinear nodes."""
    made = {o: n for n in model.graph.node for o in n.output}
    readers: dict[str, list] = {}
    for n in model.graph.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)
    return sum(1 for n in model.graph.node if n.op_type == "Clip"
               and getattr(made.get(n.input[0]), "op_type", "") == "DequantizeLinear"
               and readers.get(n.output[0]) and all(r.op_type == "QuantizeLinear" for r in readers[n.output[0]]))


def clips_placed(out_dir: str, name: str) -> tuple[int, int]:
    """From the placement report: clip ops, and those claimed by cpu.qclamp."""
    with open(os.path.join(out_dir, name + ".explain.txt")) as f:
        clips = [line for line in f if line.startswith("%") and line.split()[1] == "clip"]
    return len(clips), sum("composite cpu.qclamp" in line for line in clips)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for a in ("models_dir", "import_dir", "exe", "work_dir"):
        ap.add_argument(a)
    args = ap.parse_args()
    in_dir, out_dir = os.path.join(args.work_dir, "in"), os.path.join(args.work_dir, "out")
    os.makedirs(in_dir, exist_ok=True)
    os.makedirs(out_dir, exist_ok=True)
    for name in MODELS:
        write_safetensors(os.path.join(in_dir, name + ".safetensors"),
                          read_safetensors(os.path.join(args.models_dir, name + ".input.safetensors")))
    started = time.monotonic()
    subprocess.run([args.exe, args.import_dir, in_dir, out_dir], check=True)
    run_seconds = time.monotonic() - started

    failures = []
    print("| model | outputs | equal | max LSB | clips between QDQ | clips as cpu.qclamp | ops in integer composites |")
    print("|---|---|---|---|---|---|---|")
    for name in MODELS:
        r = end_to_end(args.models_dir, out_dir, name)
        p = placement(out_dir, name)
        between = qdq_clips(onnx.load(os.path.join(args.models_dir, name + ".onnx")))
        clips, qclamp = clips_placed(out_dir, name)
        print(f"| {name} | {r['values']} | {r['equal']:.1%} | {r['max']} | {between} | {qclamp} of {clips} | "
              f"{p['ops_in_integer_composites']} of {p['ops']} |")
        print(f"    in float: {', '.join(p['ops_outside'])}")
        for line in p["not_fused"]:
            print(f"    {line}")
        if r["max"] > MAX_END_TO_END:
            failures.append(f"{name}: {r['max']} LSB from ONNX Runtime (bound {MAX_END_TO_END})")
        if qclamp < between:
            failures.append(f"{name}: {qclamp} of the {between} clips between QDQ pairs run as cpu.qclamp")
        if any("clip" in line for line in p["not_fused"]):
            failures.append(f"{name}: the placement report has a clip that did not fuse")
    print(f"the program ran both models in {run_seconds:.2f} s")
    for f in failures:
        print(f"compare_torch_qat.py: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
