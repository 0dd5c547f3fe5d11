#!/usr/bin/env python3
"""Where a zoo model's time goes in Partita and in ONNX Runtime, side by side.

    profile_peers.py NAME [--threads 1] [--runs 20] [--dir BUILD/benchmarks/peers] [--top 12]
                     [--out benchmarks/results] [--notes TEXT]

Runs the profiling module bench_peer_NAME_profile (PARTITA_PROFILE: every step timed; build it
with `cmake --build BUILD --target bench_peer_NAME_profile`) and ONNX Runtime's own profiler
(`enable_profiling`, the same settings as bench_peers.py) on the same ONNX file and input,
--runs calls each after a warm-up, on T threads. The two runtimes fuse differently (Partita's
expand and depthwise convolutions are one step, ONNX Runtime's FusedConv takes the activation),
so steps are not paired one to one; they are grouped where both agree on the boundary:

  - a 4-D output [N, C, H, W] goes to the group of its resolution (H×W): a network's stage;
  - any other output goes to the group of its kind: matmul (dense, matmul, Gemm, MatMul),
    norm, softmax, or other.

It prints one table per model and thread count (group, Partita µs, ONNX Runtime µs, their ratio
above 1 where Partita is faster, and each side's share of its total), then each side's slowest
steps, and writes a record named profile_peers (benchmarks/README.md, "Records"). Needs numpy
and onnxruntime.
"""
from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import platform
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_peers  # noqa: E402  the peers' settings
import harness  # noqa: E402  benchmarks/harness.py
import record  # noqa: E402  benchmarks/record.py

import numpy as np  # noqa: E402

KINDS = (("softmax", ("softmax",)), ("norm", ("norm",)),
         ("matmul", ("dense", "matmul", "gemm", "attention")))


def group(shape: list[int], what: str) -> str:
    if len(shape) == 4:
        return f"{shape[2]}×{shape[3]}"
    w = what.lower()
    for kind, words in KINDS:
        if any(word in w for word in words):
            return kind
    return "other"


def partita_steps(name: str, args) -> list[dict]:
    path = os.path.join(args.dir, f"bench_peer_{name}_profile.so")
    if not os.path.exists(path):
        raise SystemExit(f"profile_peers.py: {path} is missing: cmake --build BUILD --target bench_peer_{name}_profile")
    module = harness.Module(path, "profile_peers.py")
    x = next(iter(harness.read_safetensors(os.path.join(args.dir, "models", name, name + ".input.safetensors")).values()))
    handle = module.create(0)
    try:
        call = module.runner(handle, x, args.threads)
        for _ in range(3):
            call()
        module.lib.pbi_reset_profile(handle)
        for _ in range(args.runs):
            call()
        steps = module.profile(handle)  # each step's mean over the calls
    finally:
        module.destroy(handle)
    return [{"name": f"{s['step']} {s['what']}", "what": s["what"], "shape": json.loads(s["shape"]), "us": s["us"]}
            for s in steps]


def ort_steps(name: str, args) -> list[dict]:
    import onnxruntime as ort
    models = os.path.join(args.dir, "models", name)
    x = next(iter(harness.read_safetensors(os.path.join(models, name + ".input.safetensors")).values())).copy()
    with tempfile.TemporaryDirectory() as tmp:
        opts = bench_peers.ort_options(args.threads)
        opts.enable_profiling = True
        opts.profile_file_prefix = os.path.join(tmp, "ort")
        session = ort.InferenceSession(os.path.join(models, name + ".onnx"), opts, providers=["CPUExecutionProvider"])
        feed = {session.get_inputs()[0].name: x}
        for _ in range(3):
            session.run(None, feed)
        for _ in range(args.runs):
            session.run(None, feed)
        session.end_profiling()
        with open(glob.glob(os.path.join(tmp, "ort*.json"))[0], encoding="utf-8") as f:
            events = json.load(f)
    # Node events of the last --runs calls: every call has the same nodes, in order.
    nodes = [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    per_call = len(nodes) // (args.runs + 3)
    nodes = nodes[-per_call * args.runs:]
    totals: dict[str, dict] = {}
    for e in nodes:
        key = e["name"][: -len("_kernel_time")]
        shape = []
        for out in e["args"].get("output_type_shape", []):
            shape = next(iter(out.values()))
            break
        t = totals.setdefault(key, {"name": key, "what": e["args"].get("op_name", "?"), "shape": shape, "us": 0.0})
        t["us"] += e["dur"] / args.runs
    return list(totals.values())


def grouped(steps: list[dict]) -> dict[str, float]:
    out: dict[str, float] = collections.OrderedDict()
    for s in steps:
        g = group(s["shape"], s["what"])
        out[g] = out.get(g, 0.0) + s["us"]
    return out


def compare(name: str, args) -> dict:
    mine, theirs = partita_steps(name, args), ort_steps(name, args)
    a, b = grouped(mine), grouped(theirs)
    ta, tb = sum(a.values()), sum(b.values())
    rows = []
    for g in list(a) + [g for g in b if g not in a]:
        pa, pb = a.get(g, 0.0), b.get(g, 0.0)
        rows.append({"group": g, "partita_us": round(pa, 1), "ort_us": round(pb, 1),
                     "ratio": round(pb / pa, 3) if pa > 0 else None})
    print(f"\n{name}, {args.threads} thread(s): Partita {ta:.0f} µs in {len(mine)} steps, "
          f"ONNX Runtime {tb:.0f} µs in {len(theirs)} nodes (sums of the profiled steps)")
    print("| group | Partita µs | ORT µs | ORT / Partita | Partita share | ORT share |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "-"
        print(f"| {r['group']} | {r['partita_us']:.0f} | {r['ort_us']:.0f} | {ratio} | "
              f"{100 * r['partita_us'] / ta:.0f} % | {100 * r['ort_us'] / tb:.0f} % |")
    slowest = {}
    for who, steps in (("partita", mine), ("ort", theirs)):
        top = sorted(steps, key=lambda s: -s["us"])[: args.top]
        slowest[who] = [{"name": s["name"], "what": s["what"], "shape": s["shape"], "us": round(s["us"], 1)} for s in top]
        print(f"\n{who}: slowest steps")
        for s in slowest[who]:
            print(f"  {s['us']:9.1f} µs  {s['what']:<34} {s['shape']}  {s['name']}")
    return {"case": name, "threads": args.threads, "partita_us": round(ta, 1), "ort_us": round(tb, 1),
            "groups": rows, "slowest": slowest}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", help="comma-separated zoo names")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--top", type=int, default=12, help="slowest steps listed for each side")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--dir", default=os.path.join(root, "build", "benchmarks", "peers"))
    ap.add_argument("--out", default=os.path.join(root, "benchmarks", "results"))
    ap.add_argument("--notes")
    args = ap.parse_args()
    import onnxruntime
    load_before = os.getloadavg()
    rows = [compare(n, args) for n in args.models.split(",") if n]
    build = os.path.dirname(os.path.dirname(os.path.abspath(args.dir)))
    compiler, build_type = record.cmake_compiler(build)
    r = record.header("profile_peers", compiler=compiler, command="profile_peers.py " + " ".join(sys.argv[1:]),
                      tools={"numpy": np.__version__, "python": platform.python_version(), "build_type": build_type,
                             "onnxruntime": onnxruntime.__version__})
    harness.finish_record(r, rows, load_before, args.notes, args.out, "profile_peers.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
