#!/usr/bin/env python3
"""W6 and W7 of bench_runtime in PyTorch, on the same weights and inputs, for a third column.

    bench_runtime --dump_weights=DIR                  (C++: weights, input and Partita's output)
    bench_torch.py DIR [--threads 1,2] [--min_time 2] [--compare bench_runtime.json] > torch.json

For each workload W (W6: the BERT-style encoder of examples/transformer, built by its export.py;
W7: torchvision's MobileNetV2) it reads DIR/W.safetensors (the weights under the Partita model's
names, which are the PyTorch state_dict names) and DIR/W.io.safetensors ("input", and "output":
Partita's cpu result), runs the model once and prints the largest difference to Partita's output,
which must stay within the C++ benchmark's tolerance (|a - b| / max(1, |b|) <= 1e-4), then times
it with torch.set_num_threads(t) for each t: eval(), torch.inference_mode(), a warm-up, then single
calls until both 30 calls and --min_time seconds are reached; the median is reported. Each model
is timed twice: as is (eager, `W/torch/t`), and scripted, frozen and passed through
torch.jit.optimize_for_inference (`W/torch_jit/t`: batch norm folded, convolutions on oneDNN in
blocked layouts), unless --eager_only.

stdout is Google Benchmark's JSON format (benchmarks named W6/torch/1, W6/torch_jit/1 ..., real_time in ns), so
the file merges with `bench_runtime --benchmark_format=json`'s. With --compare FILE (that output
of bench_runtime, repeatable) a table of the ratios to PyTorch goes to stderr.

Needs PyTorch (Debian: python3-torch, /usr/bin/python3) and, for W7, torchvision
(python3-torchvision); the safetensors files are read with numpy alone. Exit status: 0, 1 when an
output differs, 77 without PyTorch.

Debian's PyTorch links libblas.so.3, which is the reference (netlib) BLAS unless an optimized one
is installed: its Linear and matmul (all of W6, W7's classifier) are then some 30 times slower.
To time it on OpenBLAS without installing it system-wide:
    apt-get download libopenblas0-pthread && dpkg -x libopenblas0-pthread_*.deb ob
    LD_LIBRARY_PATH=$PWD/ob/usr/lib/x86_64-linux-gnu/openblas-pthread bench_torch.py DIR --tag _openblas
(the BLAS in use is printed; OpenBLAS's threads are set to t as well).
"""
import argparse
import ctypes
import json
import os
import platform
import statistics
import struct
import sys
import time

try:
    import numpy as np
    import torch
except ImportError:
    print("bench_torch.py: PyTorch (and numpy) are not installed (Debian: python3-torch)", file=sys.stderr)
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
TRANSFORMER = os.path.join(HERE, "..", "..", "examples", "transformer")
TOLERANCE = 1e-4  # bench_runtime's, on |a - b| / max(1, |b|)
DTYPES = {"F32": np.float32, "I64": np.int64, "I32": np.int32, "F64": np.float64}


def read_safetensors(path):
    """name -> numpy array: 8-byte little-endian header length, JSON header, raw little-endian data."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = memoryview(data)[8 + n:]
    tensors = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        begin, end = t["data_offsets"]
        dtype = np.dtype(DTYPES[t["dtype"]]).newbyteorder("<")
        tensors[name] = np.frombuffer(body[begin:end], dtype=dtype).reshape(t["shape"]).copy()
    return tensors


def encoder():
    """W6: export.py's Encoder (the PyTorch twin of examples/transformer/model.hpp)."""
    sys.path.insert(0, TRANSFORMER)
    from export import Encoder  # noqa: E402 (imports torch, which is there)
    return Encoder()


def mobilenet_v2():
    """W7: torchvision's MobileNetV2, width 1.0, 1000 classes (Dropout is the identity in eval())."""
    import torchvision
    return torchvision.models.mobilenet_v2()


WORKLOADS = {"W6": encoder, "W7": mobilenet_v2}


def load(model, weights):
    state = {k: torch.from_numpy(v) for k, v in weights.items()}
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [k for k in missing if not k.endswith("num_batches_tracked")]  # a training counter
    if missing or unexpected:
        raise SystemExit(f"bench_torch.py: weights do not fit the model: missing {missing}, unexpected {unexpected}")


def max_rel(got, expected):
    expected = expected.astype(np.float64)
    return float(np.max(np.abs(got.astype(np.float64) - expected) / np.maximum(1.0, np.abs(expected))))


def freeze(model, x):
    """The model scripted (traced where scripting fails), frozen and optimized for inference:
    batch norm folded into convolutions, and convolutions on oneDNN (MKL-DNN) in its blocked
    layouts where PyTorch was built with it."""
    import warnings
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        try:
            scripted = torch.jit.script(model)
        except Exception:  # noqa: BLE001 (any scripting failure)
            scripted = torch.jit.trace(model, (x,))
        return torch.jit.optimize_for_inference(torch.jit.freeze(scripted))


def median_ns(run, min_time, min_runs=30, warmup=5):
    for _ in range(warmup):
        run()
    times = []
    start = time.perf_counter()
    while len(times) < min_runs or time.perf_counter() - start < min_time:
        t0 = time.perf_counter_ns()
        run()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times), len(times)


def read_compared(paths):
    """The benchmark times (ns by name) in bench_runtime's JSON and any earlier bench_torch.py
    output (e.g. --tag _openblas); read before any timing, so that a bad file stops the run at once."""
    times = {}
    for path in paths:
        try:
            with open(path) as f:  # the JSON object first (bench_runtime's stdout has its summary after it)
                text = f.read()
        except OSError as e:
            sys.exit(f"bench_torch.py: --compare {path}: {e.strerror}")
        start = text.find("{")
        try:
            theirs = json.JSONDecoder().raw_decode(text[start:])[0]["benchmarks"] if start >= 0 else None
        except (json.JSONDecodeError, KeyError, TypeError):
            theirs = None
        if theirs is None:
            sys.exit(f"bench_torch.py: --compare {path}: no benchmark JSON in it (expected the output of "
                     "bench_runtime --benchmark_format=json, which --dump_weights does not run)")
        times.update((b["name"].removesuffix("/real_time"), b["real_time"]) for b in theirs
                     if b.get("run_type") != "aggregate")
    return times


def compare(compared, ours):
    """Prints each implementation's time and Partita's and oneDNN's ratios to each PyTorch variant,
    from the times `read_compared` read and this run's."""
    times = dict(compared)
    times.update((b["name"], b["real_time"]) for b in ours)
    variants = list(dict.fromkeys(n.split("/")[1] for n in times if "torch" in n.split("/")[1]))
    impls = ["partita", "onednn"] + variants
    ratios = [(a, v) for v in variants for a in ("partita", "onednn")]
    print(f"\n{'':4} {'threads':>7}" + "".join(f" {i + ' ms':>{max(10, len(i) + 3)}}" for i in impls) +
          "".join(f" {a + '/' + v:>{len(a) + len(v) + 1}}" for a, v in ratios), file=sys.stderr)
    for w, t in sorted({tuple(b["name"].split("/")[::2]) for b in ours}):
        ns = {i: times.get(f"{w}/{i}/{t}") for i in impls}
        row = f"{w:4} {t:>7}"
        for i in impls:
            width = max(10, len(i) + 3)
            row += f" {ns[i] / 1e6:>{width}.2f}" if ns[i] else f" {'-':>{width}}"
        for a, v in ratios:
            width = len(a) + len(v) + 1
            row += f" {ns[a] / ns[v]:>{width}.2f}" if ns[a] and ns[v] else f" {'-':>{width}}"
        print(row, file=sys.stderr)
    print("ratio = time / PyTorch's time (below 1: faster than PyTorch)", file=sys.stderr)


def blas():
    """The BLAS that PyTorch's libblas.so.3 resolved to, and OpenBLAS's thread setter if it is that
    one (PyTorch built with a generic BLAS does not pass its thread count on)."""
    try:
        lib = ctypes.CDLL("libblas.so.3")  # the copy already loaded for torch
    except OSError:
        return "unknown", None
    setter = getattr(lib, "openblas_set_num_threads", None)
    return ("openblas" if setter else "reference or other"), setter


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", help="the directory bench_runtime --dump_weights=DIR wrote")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--min_time", type=float, default=2.0, help="seconds timed per benchmark (default 2)")
    parser.add_argument("--workloads", default="W6,W7", help="comma-separated (default W6,W7)")
    parser.add_argument("--compare", metavar="JSON", action="append",
                        help="bench_runtime's JSON output (--benchmark_out=FILE --benchmark_out_format=json), or an "
                             "earlier bench_torch.py output; may be repeated")
    parser.add_argument("--eager_only", action="store_true", help="no torch_jit variant")
    parser.add_argument("--tag", default="", help="appended to the implementation's name: W6/torch<TAG>/1")
    args = parser.parse_args()
    compared = read_compared(args.compare) if args.compare else None

    torch.set_grad_enabled(False)
    blas_name, set_blas_threads = blas()
    print(f"bench_torch.py: PyTorch {torch.__version__}, BLAS: {blas_name}", file=sys.stderr)
    results, failed = [], False
    for w in args.workloads.split(","):
        weights = read_safetensors(os.path.join(args.dir, f"{w}.safetensors"))
        io = read_safetensors(os.path.join(args.dir, f"{w}.io.safetensors"))
        try:
            model = WORKLOADS[w]()
        except ImportError as e:
            print(f"bench_torch.py: {w} skipped: {e}", file=sys.stderr)
            continue
        load(model, weights)
        model.eval()
        x = torch.from_numpy(io["input"])
        expected = io["output"].astype(np.float64)
        with torch.inference_mode():
            got = model(x).numpy().astype(np.float64)
        if got.shape != expected.shape:
            raise SystemExit(f"bench_torch.py: {w}: output shape {got.shape}, Partita's {expected.shape}")
        diff = np.abs(got - expected)
        rel = max_rel(got, expected)
        ok = rel <= TOLERANCE  # False for NaN
        failed = failed or not ok
        print(f"{w}: max abs diff to Partita {float(np.max(diff)):.3g}, max rel {rel:.3g} "
              f"({'ok' if ok else 'DIFFERS'}), max |y| {float(np.max(np.abs(expected))):.3g}", file=sys.stderr)
        if not ok:
            continue
        variants = [("torch", model, rel)]
        if not args.eager_only:
            frozen = freeze(model, x)
            with torch.inference_mode():
                frozen_rel = max_rel(frozen(x).numpy(), expected)
            print(f"{w}: torch_jit (frozen, optimize_for_inference) max rel {frozen_rel:.3g}", file=sys.stderr)
            if frozen_rel <= TOLERANCE:
                variants.append(("torch_jit", frozen, frozen_rel))
            else:
                failed = True
        for impl, run, err in variants:
            impl += args.tag
            for t in (int(s) for s in args.threads.split(",")):
                torch.set_num_threads(t)
                if set_blas_threads:
                    set_blas_threads(t)
                with torch.inference_mode():
                    ns, n = median_ns(lambda: run(x), args.min_time)
                name = f"{w}/{impl}/{t}"
                print(f"{name}: {ns / 1e6:.2f} ms (median of {n})", file=sys.stderr)
                results.append({"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1,
                                "repetition_index": 0, "threads": 1, "iterations": n, "real_time": ns,
                                "cpu_time": ns, "time_unit": "ns", "max_rel_err": err})

    context = {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "host_name": platform.node(),
               "executable": os.path.abspath(__file__), "num_cpus": os.cpu_count(),
               "load_avg": list(os.getloadavg()), "library_build_type": "release",
               "torch_version": torch.__version__, "blas": blas_name, "torch_parallel": torch.__config__.parallel_info().split("\n")[0]}
    json.dump({"context": context, "benchmarks": results}, sys.stdout, indent=2)
    print()
    if compared is not None:
        compare(compared, results)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
