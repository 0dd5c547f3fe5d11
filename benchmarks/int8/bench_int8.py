#!/usr/bin/env python3
"""int8 models as a user runs them: Partita against its own float model and ONNX Runtime.

    bench_int8.py [--models resnet18,mobilenet_v2] [--threads 1,2] [--runs 21] [--dir BUILD/benchmarks/int8]
                  [--out benchmarks/results] [--notes TEXT]

For each model of tests/int8/make_models.py that benchmarks/int8/CMakeLists.txt built (the int8
QDQ model NAME.onnx and its float original NAME.float.onnx, imported and compiled for the cpu
backend into the module bench_int8_NAME), and each thread count T, four implementations are
called in turn, one call each per round, the order rotating from round to round, --runs rounds
after a warm-up:

  partita_int8   the imported QDQ model compiled for cpu (its regions fused into integer kernels)
  partita_float  the float original imported and compiled for cpu
  ort_int8       ONNX Runtime on the same QDQ file, all graph optimizations (its integer kernels),
                 intra_op_num_threads = T, its workers not spinning between calls
  ort_float      ONNX Runtime on the float original, likewise

Calls in turn see the same speed of a virtual machine, where two timed loops one after the other
may not. Each figure is the median over the rounds; `alt_ratio` is the median of the per-round
ratios. A pause of --gap-ms before each turn lets the previous implementation's threads go idle;
then each implementation runs untimed for --warm-ms before its timed call, so that the idle
cores are back at full speed (harness.alternated).

Then each int8 convolution and dense layer's rate: the profiling module (PARTITA_PROFILE) runs
the int8 model --profile-runs times on T threads, and each layer's multiply-adds per second are
stated as a share of T times one core's measured `vpmaddwd` peak (madd_peak.hpp).

It prints one table and writes a record (benchmarks/README.md, "Records") named bench_int8: one
row per model and thread count, Partita's int8 figures under "partita", the three others under
"peers" with "ratio" (their time over Partita int8's: above 1, Partita int8 is faster), and the
layers. Needs numpy and onnxruntime (the int8 tests' interpreter, .venv).
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import harness  # noqa: E402  benchmarks/harness.py
import record  # noqa: E402  benchmarks/record.py

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402

IMPLS = ("partita_int8", "partita_float", "ort_int8", "ort_float")


class Module(harness.Module):
    """bench_int8_NAME(.so): Partita's int8 (variant 0) and float (1) executables of one model."""

    def __init__(self, path: str):
        super().__init__(path, "bench_int8.py")


def ort_session(path: str, threads: int) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3  # not the optimizer's notes on unused initializers
    # ORT's workers keep spinning long after a call, past the gap, taking a core from whatever
    # runs next (benchmarks/README.md), so they do not spin here. That can leave ORT's 2-thread
    # runs no faster than its 1-thread ones (seen on a Sapphire Rapids guest); bench_peers.py
    # lets them spin and pauses longer instead.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def ort_runner(session: ort.InferenceSession, x: np.ndarray):
    name = session.get_inputs()[0].name
    feed = {name: x}
    run = session.run

    def call():
        call.out = run(None, feed)[0]
    call()
    return call


def layers(module: Module, x: np.ndarray, threads: int, runs: int, peak: float) -> list[dict]:
    """Each int8 convolution and dense step of the profiling module: µs, multiply-adds, G MAC/s
    and that rate as a percentage of `threads` × one core's `vpmaddwd` peak."""
    h = module.create(0)
    try:
        call = module.runner(h, x, threads)
        for _ in range(3):
            call()
        module.lib.pbi_reset_profile(h)
        for _ in range(runs):
            call()
        steps = module.profile(h)
    finally:
        module.lib.pbi_destroy(h)
    total = sum(s["us"] for s in steps)
    rows = []
    for s in steps:
        if not s["macs"] or s["us"] <= 0:
            continue
        gmacs = s["macs"] / s["us"] / 1e3
        rows.append({"step": s["step"], "what": s["what"], "shape": s["shape"], "us": round(s["us"], 2),
                     "share": round(s["us"] / total, 4), "macs": int(s["macs"]), "gmacs": round(gmacs, 3),
                     "pct_peak": round(100 * gmacs / (peak * threads), 1) if peak else None})
    return rows


def measure(name: str, args, peak: float) -> list[dict]:
    models = os.path.join(args.dir, "models", name)
    path = os.path.join(args.dir, f"bench_int8_{name}.so")
    if not os.path.exists(path):
        raise SystemExit(f"bench_int8.py: {path} is missing: build bench_int8_{name} (resnet18 and mobilenet_v2 "
                         "need -DPARTITA_BUILD_MEASUREMENT_TOOLS=ON)")
    module = Module(path)
    x = next(iter(harness.read_safetensors(os.path.join(models, name + ".input.safetensors")).values()))
    reference = next(iter(harness.read_safetensors(os.path.join(models, name + ".output.safetensors")).values()))
    handles = {"partita_int8": module.create(0), "partita_float": module.create(1)}
    profiler = Module(os.path.join(args.dir, f"bench_int8_{name}_profile.so"))
    rows = []
    try:
        for threads in args.threads:
            calls = {n: module.runner(handles[n], x, threads) for n in ("partita_int8", "partita_float")}
            calls["ort_int8"] = ort_runner(ort_session(os.path.join(models, name + ".onnx"), threads), x)
            calls["ort_float"] = ort_runner(ort_session(os.path.join(models, name + ".float.onnx"), threads), x)
            calls = {n: calls[n] for n in IMPLS}
            harness.alternated(calls, args.warmup, args.gap_ms / 1e3)
            times = harness.alternated(calls, args.runs, args.gap_ms / 1e3, args.warm_ms / 1e3)
            med = {n: statistics.median(t) for n, t in times.items()}
            mine = times["partita_int8"]
            row = {"case": name, "threads": threads,
                   "partita": {"us": round(med["partita_int8"], 2),
                               "max_abs_diff_from_reference": float(np.abs(calls["partita_int8"].out.reshape(-1)
                                                                            - reference.reshape(-1)).max())},
                   "peers": {}}
            for n in IMPLS[1:]:
                row["peers"][n] = {"us": round(med[n], 2), "ratio": record.ratio(med[n], med["partita_int8"]),
                                   "alt_ratio": round(statistics.median(p / q for p, q in zip(times[n], mine)), 3)}
            row["layers"] = layers(profiler, x, threads, args.profile_runs, peak)
            rows.append(row)
    finally:
        for h in handles.values():
            module.lib.pbi_destroy(h)
    return rows


def table(rows: list[dict]) -> str:
    lines = ["| model | threads | Partita int8 µs | Partita float µs | ORT int8 µs | ORT float µs "
             "| int8 vs ORT int8 | int8 vs own float | int8 layers % of peak |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        p = r["peers"]
        pct = [layer["pct_peak"] for layer in r["layers"] if layer["pct_peak"] is not None]
        span = f"{min(pct):.0f}–{max(pct):.0f} (median {statistics.median(pct):.0f})" if pct else "-"
        lines.append(f"| {r['case']} | {r['threads']} | {r['partita']['us']:.0f} | {p['partita_float']['us']:.0f} "
                     f"| {p['ort_int8']['us']:.0f} | {p['ort_float']['us']:.0f} | {p['ort_int8']['alt_ratio']:.2f} "
                     f"| {p['partita_float']['alt_ratio']:.2f} | {span} |")
    lines.append("")
    lines.append("Ratios: the other's time over Partita int8's, medians of per-round ratios (above 1: Partita int8 "
                 "is faster).")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="resnet18,mobilenet_v2")
    harness.add_run_arguments(ap, runs=21, warmup=3, where="int8")
    ap.add_argument("--profile-runs", type=int, default=10, help="runs of the profiling module")
    args = ap.parse_args()

    names = [n for n in args.models.split(",") if n]
    load_before = os.getloadavg()
    peak = Module(os.path.join(args.dir, f"bench_int8_{names[0]}_profile.so")).lib.pbi_madd_peak_gmacs()
    rows = [row for name in names for row in measure(name, args, peak)]
    print(table(rows))

    build = os.path.dirname(os.path.dirname(os.path.abspath(args.dir)))
    compiler, build_type = record.cmake_compiler(build)
    size = None
    try:
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            size = next((line.split("=", 1)[1].strip() for line in f if line.startswith("PARTITA_BENCH_INT8_SIZE:")), None)
    except OSError:
        pass
    r = record.header("bench_int8", compiler=compiler, command="bench_int8.py " + " ".join(sys.argv[1:]),
                      tools={"onnxruntime": ort.__version__, "numpy": np.__version__,
                             "python": platform.python_version(), "build_type": build_type,
                             "vision_input_side": int(size) if size else None})
    r["peak"] = {"madd_gmacs_per_core": round(peak, 3),
                 "what": "vpmaddwd (16 multiply-adds per 256-bit instruction) with vpaddd, 12 chains, one core"}
    harness.finish_record(r, rows, load_before, args.notes, args.out, "bench_int8.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
