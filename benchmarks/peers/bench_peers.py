#!/usr/bin/env python3
"""The zoo's models as users run them: Partita against ONNX Runtime, OpenVINO and PyTorch, on the
same ONNX file and input.

    bench_peers.py [--models a,b] [--threads 1,2] [--runs 11] [--peers ort,openvino,torch]
                   [--gap-ms 50] [--warm-ms 50] [--dir BUILD/benchmarks/peers] [--out benchmarks/results] [--notes TEXT]

For each model that benchmarks/peers/CMakeLists.txt built (zoo.py exports NAME.onnx, the importer
brings it in as NAME::net, compiled for the cpu backend into the module bench_peer_NAME) and each
thread count T, the implementations are called in turn, one timed call each per round, the order
rotating from round to round, --runs rounds after a warm-up (benchmarks/harness.py). Each turn
starts with a pause (--gap-ms) that lets the previous implementation's threads go idle, then
untimed calls for --warm-ms that bring the cores back to full speed, then the timed call: the
steady latency of a model serving requests, which every implementation reaches the same way:

  partita    the imported model, cpu backend, T threads
  ort        ONNX Runtime's CPU provider on the same file: all graph optimizations,
             intra_op_num_threads = T, its workers spinning as by default (without it its
             2-thread runs can be no faster than its 1-thread ones); they keep spinning for
             tens of milliseconds after a call, hence the pause of 50 ms before each turn
  openvino   OpenVINO's CPU plugin on the same file: PERFORMANCE_HINT LATENCY,
             INFERENCE_NUM_THREADS = T, INFERENCE_PRECISION_HINT f32 (on a CPU with bf16 or AMX it
             would otherwise run bf16, which is not the same computation)
  torch      the PyTorch model zoo.py exported, traced, frozen and optimize_for_inference'd under
             no_grad with torch.set_num_threads(T), or eager where tracing fails

Before timing, each implementation's output is compared with PyTorch's (the export's
NAME.output.safetensors) and the largest difference relative to the output's largest magnitude
is recorded; a model whose Partita output is off by more than 1e-3 of that stops the run. Each
figure is the median over the rounds; `alt_ratio`, the median of the per-round ratios, is the one
to read. OpenMP's workers (PyTorch) are made passive (OMP_WAIT_POLICY): they would take a core from
whatever runs next.

It prints one table and writes a record (benchmarks/README.md, "Records") named bench_peers: one
row per model and thread count, Partita's time under "partita", the peers under "peers" with
"ratio" and "alt_ratio" (their time over Partita's: above 1, Partita is faster), and each
implementation's difference from PyTorch. A batch of images (zoo.py's NAME_batchN) adds "batch"
to its rows and "images_per_s" to each implementation's figures, and a second table of those.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import harness  # noqa: E402  benchmarks/harness.py
import record  # noqa: E402  benchmarks/record.py

import numpy as np  # noqa: E402

PEERS = ("ort", "openvino", "torch")
TOLERANCE = 1e-3


def ort_options(threads: int):
    """ONNX Runtime's session settings for T threads (profile_peers.py uses them too)."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return opts


def ort_runner(path: str, x: np.ndarray, threads: int):
    import onnxruntime as ort
    session = ort.InferenceSession(path, ort_options(threads), providers=["CPUExecutionProvider"])
    feed = {session.get_inputs()[0].name: x}

    def call():
        call.out = session.run(None, feed)[0]
    call()
    return call


def openvino_runner(path: str, x: np.ndarray, threads: int):
    import openvino as ov
    core = ov.Core()
    compiled = core.compile_model(core.read_model(path), "CPU",
                                  {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": threads,
                                   "INFERENCE_PRECISION_HINT": "f32"})
    request = compiled.create_infer_request()
    output = compiled.outputs[0]

    def call():
        request.infer({0: x})
        call.out = request.get_tensor(output).data
    call()
    return call


def torch_runner(name: str, threads: int):
    import torch
    import zoo
    model, x = zoo.build(name)
    torch.set_num_threads(threads)
    with torch.no_grad():
        try:
            fast = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.trace(model, (x,))))
            fast(x)
            mode, run = "traced, frozen, optimize_for_inference", fast
        except Exception:  # noqa: BLE001  some models do not trace; eager is then PyTorch's best
            mode, run = "eager", model

    def call():
        with torch.no_grad():
            call.out = run(x)
    call()
    call.mode = mode
    return call


def difference(out, expected: np.ndarray) -> float:
    got = np.asarray(out, dtype=np.float32).reshape(-1)
    scale = float(np.abs(expected).max()) or 1.0
    return float(np.abs(got - expected.reshape(-1)).max()) / scale


def measure(name: str, args) -> list[dict]:
    import torch
    models = os.path.join(args.dir, "models", name)
    path = os.path.join(args.dir, f"bench_peer_{name}.so")
    if not os.path.exists(path):
        raise SystemExit(f"bench_peers.py: {path} is missing: build bench_peer_{name} (every model but w4_lenet "
                         "needs -DPARTITA_BUILD_MEASUREMENT_TOOLS=ON)")
    module = harness.Module(path, "bench_peers.py")
    onnx_path = os.path.join(models, name + ".onnx")
    x = next(iter(harness.read_safetensors(os.path.join(models, name + ".input.safetensors")).values())).copy()
    expected = next(iter(harness.read_safetensors(os.path.join(models, name + ".output.safetensors")).values()))
    batch = int(x.shape[0]) if x.ndim == 4 else 1  # images per call, for throughput
    handle = module.create(0)
    rows = []
    try:
        for threads in args.threads:
            calls = {"partita": module.runner(handle, x, threads)}
            if "ort" in args.peers:
                calls["ort"] = ort_runner(onnx_path, x, threads)
            if "openvino" in args.peers:
                calls["openvino"] = openvino_runner(onnx_path, x, threads)
            if "torch" in args.peers:
                calls["torch"] = torch_runner(name, threads)
            calls["partita"]()
            diffs = {n: round(difference(c.out if n != "torch" else c.out.numpy(), expected), 8)
                     for n, c in calls.items()}
            if diffs["partita"] > TOLERANCE:
                raise SystemExit(f"bench_peers.py: {name}: Partita's output differs from PyTorch's by "
                                 f"{diffs['partita']:.3g} of its largest magnitude (more than {TOLERANCE})")
            harness.alternated(calls, args.warmup, args.gap_ms / 1e3)
            times = harness.alternated(calls, args.runs, args.gap_ms / 1e3, args.warm_ms / 1e3)
            med = {n: statistics.median(t) for n, t in times.items()}
            mine = times["partita"]
            row = {"case": name, "threads": threads,
                   "partita": {"us": round(med["partita"], 2), "difference_from_torch": diffs["partita"]},
                   "peers": {}}
            if batch > 1:
                row["batch"] = batch
                row["partita"]["images_per_s"] = round(batch * 1e6 / med["partita"], 1)
            for n in calls:
                if n == "partita":
                    continue
                row["peers"][n] = {"us": round(med[n], 2), "ratio": record.ratio(med[n], med["partita"]),
                                   "alt_ratio": round(statistics.median(p / q for p, q in zip(times[n], mine)), 3),
                                   "difference_from_torch": diffs[n]}
                if n == "torch":
                    row["peers"][n]["mode"] = calls[n].mode
                if batch > 1:
                    row["peers"][n]["images_per_s"] = round(batch * 1e6 / med[n], 1)
            rows.append(row)
            del calls
            torch.set_num_threads(1)
    finally:
        module.destroy(handle)
    return rows


def table(rows: list[dict], peers: tuple[str, ...]) -> str:
    head = "| model | threads | Partita µs | " + " | ".join(f"{p} µs | {p} / Partita" for p in peers) + " |"
    lines = [head, "|---|---:|---:|" + "---:|---:|" * len(peers)]
    for r in rows:
        cells = []
        for p in peers:
            f = r["peers"].get(p)
            cells.append(f"{f['us']:.0f} | {f['alt_ratio']:.2f}" if f else "- | -")
        lines.append(f"| {r['case']} | {r['threads']} | {r['partita']['us']:.0f} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Ratios: the peer's time over Partita's, medians of per-round ratios (above 1: Partita is faster).")
    batched = [r for r in rows if r.get("batch")]
    if batched:
        lines += ["", "| model | batch | threads | Partita images/s | "
                  + " | ".join(f"{p} images/s" for p in peers) + " |",
                  "|---|---:|---:|---:|" + "---:|" * len(peers)]
        for r in batched:
            cells = [f"{r['peers'][p]['images_per_s']:.0f}" if p in r["peers"] else "-" for p in peers]
            lines.append(f"| {r['case']} | {r['batch']} | {r['threads']} | {r['partita']['images_per_s']:.0f} | "
                         + " | ".join(cells) + " |")
    return "\n".join(lines)


def built_models(directory: str) -> list[str]:
    import zoo
    return [n for n in zoo.NAMES if os.path.exists(os.path.join(directory, f"bench_peer_{n}.so"))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", help="comma-separated zoo names (default: every model built)")
    harness.add_run_arguments(ap, runs=11, warmup=2, where="peers", gap_ms=50)
    ap.add_argument("--peers", default=",".join(PEERS), type=lambda s: tuple(p for p in s.split(",") if p))
    args = ap.parse_args()
    unknown = [p for p in args.peers if p not in PEERS]
    if unknown:
        raise SystemExit(f"bench_peers.py: unknown peer {unknown[0]!r}; the peers are {', '.join(PEERS)}")

    names = [n for n in args.models.split(",") if n] if args.models else built_models(args.dir)
    if not names:
        raise SystemExit(f"bench_peers.py: no bench_peer_*.so in {args.dir}")
    load_before = os.getloadavg()
    rows = []
    for name in names:
        rows.extend(measure(name, args))
        print(table(rows[-len(args.threads):], args.peers).splitlines()[1 + len(args.threads)], flush=True)
    print(table(rows, args.peers))

    build = os.path.dirname(os.path.dirname(os.path.abspath(args.dir)))
    compiler, build_type = record.cmake_compiler(build)
    tools = {"numpy": np.__version__, "python": platform.python_version(), "build_type": build_type}
    for peer, package in (("ort", "onnxruntime"), ("openvino", "openvino"), ("torch", "torch")):
        if peer in args.peers:
            tools[package] = __import__(package).__version__
    r = record.header("bench_peers", compiler=compiler, command="bench_peers.py " + " ".join(sys.argv[1:]),
                      tools=tools)
    harness.finish_record(r, rows, load_before, args.notes, args.out, "bench_peers.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
