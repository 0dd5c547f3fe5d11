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
ratios. A pause of --gap-ms between calls lets the previous implementation's threads go idle.

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
import ctypes
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import record  # noqa: E402  benchmarks/record.py

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402

IMPLS = ("partita_int8", "partita_float", "ort_int8", "ort_float")
FLAGS = ("avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "amx_tile", "amx_int8")


def read_safetensors(path: str) -> dict[str, np.ndarray]:
    """The F32 tensors of a safetensors file, by name."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        head = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in head.items():
        if name == "__metadata__" or t["dtype"] != "F32":
            continue
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype=np.float32).reshape(t["shape"])
    return out


def lscpu() -> tuple[str | None, list[str]]:
    """lscpu's model name and the int8-relevant flags the CPU has."""
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return None, []
    name, flags = None, []
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "Model name":
            name = value.strip()
        elif key.strip() == "Flags":
            have = set(value.split())
            flags = [f for f in FLAGS if f in have]
    return name, flags


class Module:
    """bench_int8_NAME(.so): Partita's int8 and float executables of one model."""

    def __init__(self, path: str):
        self.lib = ctypes.CDLL(path)
        lib = self.lib
        lib.pbi_error.restype = ctypes.c_char_p
        lib.pbi_create.restype = ctypes.c_void_p
        lib.pbi_create.argtypes = [ctypes.c_int]
        lib.pbi_destroy.argtypes = [ctypes.c_void_p]
        lib.pbi_input_elements.restype = lib.pbi_output_elements.restype = ctypes.c_long
        lib.pbi_set_threads.argtypes = [ctypes.c_void_p, ctypes.c_int]
        lib.pbi_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        lib.pbi_profile.restype = ctypes.c_long
        lib.pbi_profile.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_long]
        lib.pbi_reset_profile.argtypes = [ctypes.c_void_p]
        lib.pbi_madd_peak_gmacs.restype = ctypes.c_double
        self.out_elements = lib.pbi_output_elements()
        self.in_elements = lib.pbi_input_elements()

    def fail(self, what: str):
        raise SystemExit(f"bench_int8.py: {what}: {self.lib.pbi_error().decode()}")

    def create(self, variant: int) -> int:
        h = self.lib.pbi_create(variant)
        if not h:
            self.fail(f"variant {variant}")
        return h

    def runner(self, handle: int, x: np.ndarray, threads: int):
        """A call that runs the executable once on x; the output array is the call's .out."""
        if self.lib.pbi_set_threads(handle, threads) != 0:
            self.fail("set_threads")
        x = np.ascontiguousarray(x, dtype=np.float32).reshape(-1)
        assert x.size == self.in_elements
        out = np.zeros(self.out_elements, dtype=np.float32)
        run, xp, op = self.lib.pbi_run, x.ctypes.data, out.ctypes.data

        def call():
            if run(handle, xp, op) != 0:
                self.fail("run")
        call.out = out
        return call

    def profile(self, handle: int) -> list[dict]:
        need = self.lib.pbi_profile(handle, None, 0)
        buf = ctypes.create_string_buffer(need + 1)
        self.lib.pbi_profile(handle, buf, need + 1)
        return [json.loads(line) for line in buf.value.decode().splitlines() if line]


def ort_session(path: str, threads: int) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3  # not the optimizer's notes on unused initializers
    # ORT's workers keep spinning long after a call, past the gap, taking a core from whatever
    # runs next (benchmarks/README.md); without spinning ORT alone runs as fast, and calls in
    # turn stop disturbing each other.
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


def alternated(calls: dict, rounds: int, gap: float) -> dict[str, list[float]]:
    """Microseconds of each call per round, the calls in turn, each round starting one further on
    and every other round in reverse order."""
    names = list(calls)
    times = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        if r % 2:
            order.reverse()
        for n in order:
            time.sleep(gap)
            start = time.perf_counter_ns()
            calls[n]()
            times[n].append((time.perf_counter_ns() - start) / 1e3)
    return times


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
    x = next(iter(read_safetensors(os.path.join(models, name + ".input.safetensors")).values()))
    reference = next(iter(read_safetensors(os.path.join(models, name + ".output.safetensors")).values()))
    handles = {"partita_int8": module.create(0), "partita_float": module.create(1)}
    profiler = Module(os.path.join(args.dir, f"bench_int8_{name}_profile.so"))
    rows = []
    try:
        for threads in args.threads:
            calls = {n: module.runner(handles[n], x, threads) for n in ("partita_int8", "partita_float")}
            calls["ort_int8"] = ort_runner(ort_session(os.path.join(models, name + ".onnx"), threads), x)
            calls["ort_float"] = ort_runner(ort_session(os.path.join(models, name + ".float.onnx"), threads), x)
            calls = {n: calls[n] for n in IMPLS}
            alternated(calls, args.warmup, args.gap_ms / 1e3)
            times = alternated(calls, args.runs, args.gap_ms / 1e3)
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
    ap.add_argument("--threads", default="1,2", type=lambda s: [int(t) for t in s.split(",")])
    ap.add_argument("--runs", type=int, default=21, help="timed rounds (each calls every implementation once)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed rounds first")
    ap.add_argument("--profile-runs", type=int, default=10, help="runs of the profiling module")
    ap.add_argument("--gap-ms", type=float, default=20, help="pause before each call")
    ap.add_argument("--dir", default=os.path.join(record.ROOT, "build", "benchmarks", "int8"),
                    help="the build directory's benchmarks/int8")
    ap.add_argument("--out", default=os.path.join(record.ROOT, "benchmarks", "results"))
    ap.add_argument("--notes", help="anything worth knowing about the run (another load on the machine...)")
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
    model_name, flags = lscpu()
    r["machine"]["lscpu_model_name"] = model_name
    r["machine"]["flags"] = flags
    # Other programs on the machine slow some calls; the load average (1, 5, 15 minutes) before and
    # after the run says whether there were any.
    r["machine"]["load_average"] = {"before": [round(v, 2) for v in load_before],
                                    "after": [round(v, 2) for v in os.getloadavg()]}
    r["peak"] = {"madd_gmacs_per_core": round(peak, 3),
                 "what": "vpmaddwd (16 multiply-adds per 256-bit instruction) with vpaddd, 12 chains, one core"}
    r["figures"] = rows
    if args.notes:
        r["notes"] = args.notes
    path = record.write(r, args.out)
    with open(path, encoding="utf-8") as f:
        json.load(f)
    print(f"bench_int8.py: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
