#!/usr/bin/env python3
"""One ONNX model test: export from PyTorch, import, compile on cpu, run, compare with PyTorch.

    run_model_test.py MODEL WORK_DIR [--tolerance 1e-4] [--embed-weights]

MODEL is one of export_model.py's. The compiler is $PARTITA_ONNX_CXX (default g++) with
$PARTITA_ONNX_CXXFLAGS (default -std=c++20 -O1); the compile runs under /usr/bin/time -v when
it exists, and the test prints its wall time and peak memory next to the largest absolute
difference from PyTorch and the executable's size. --embed-weights imports with
--embed-weights and compiles the weights into the executable. Without PyTorch, torchvision, onnx or numpy it exits 77 (skipped),
except under CI=true, where that fails.
"""
import os
import re
import shlex
import subprocess
import sys
import time

SKIPPED = 77
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def missing(what):
    if os.environ.get("CI") == "true":
        print(f"run_model_test: {what} is required under CI=true for {sys.executable}", file=sys.stderr)
        return 1
    print(f"run_model_test: skipped: no {what} for {sys.executable} "
          f"(or configure with -DPARTITA_MODEL_PYTHON=/path/to/python3)")
    return SKIPPED


def compile_model(work, embedded):
    """Compiles run_model.cpp against WORK/imported.hpp; returns (executable, seconds, peak MiB)."""
    cxx = os.environ.get("PARTITA_ONNX_CXX", "g++")
    flags = shlex.split(os.environ.get("PARTITA_ONNX_CXXFLAGS", "-std=c++20 -O1"))
    if "clang" in os.path.basename(cxx) and not any("constexpr-steps" in f for f in flags):
        flags.append("-fconstexpr-steps=16777216")
    exe = os.path.join(work, "run_model")
    if embedded:
        flags.append("-DRUN_MODEL_EMBEDDED_WEIGHTS")
    cmd = [cxx, *flags, "-pthread", "-I", os.path.join(ROOT, "include"), "-I", work,
           os.path.join(HERE, "run_model.cpp"), "-o", exe]
    timed = os.path.exists("/usr/bin/time")
    start = time.monotonic()
    r = subprocess.run((["/usr/bin/time", "-v"] if timed else []) + cmd, capture_output=True, text=True)
    seconds = time.monotonic() - start
    if r.returncode != 0:
        print(" ".join(shlex.quote(c) for c in cmd), file=sys.stderr)
        print(r.stderr[-8000:], file=sys.stderr)
        raise SystemExit(f"run_model_test: compiling failed ({r.returncode})")
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr) if timed else None
    return exe, seconds, (int(peak.group(1)) / 1024 if peak else None)


def main():
    args = sys.argv[1:]
    tolerance = 1e-4
    embedded = "--embed-weights" in args
    if embedded:
        args.remove("--embed-weights")
    if "--tolerance" in args:
        k = args.index("--tolerance")
        tolerance = float(args[k + 1])
        del args[k:k + 2]
    if len(args) != 2:
        print("usage: run_model_test.py MODEL WORK_DIR [--tolerance T] [--embed-weights]", file=sys.stderr)
        return 2
    name, work = args
    try:
        import numpy as np
        import onnx  # noqa: F401  (the importer's)
    except ImportError as e:
        return missing(f"{e.name} (Debian: python3-{e.name})")

    rc = subprocess.call([sys.executable, os.path.join(HERE, "export_model.py"), name, work])
    if rc == SKIPPED:
        return missing("PyTorch or torchvision (Debian: python3-torch python3-torchvision)")
    if rc != 0:
        print(f"run_model_test: export_model.py failed ({rc})", file=sys.stderr)
        return 1
    rc = subprocess.call([sys.executable, os.path.join(ROOT, "tools", "partita_import.py"),
                          os.path.join(work, "model.onnx"), "--out", work, "--namespace", "imported"]
                         + (["--embed-weights"] if embedded else []))
    if rc != 0:
        print(f"run_model_test: partita_import.py failed ({rc})", file=sys.stderr)
        return 1
    exe, seconds, peak = compile_model(work, embedded)
    rc = subprocess.call([exe, work])
    if rc != 0:
        print(f"run_model_test: {exe} failed ({rc})", file=sys.stderr)
        return 1

    got = np.fromfile(os.path.join(work, "output.bin"), dtype=np.float32)
    want = np.fromfile(os.path.join(work, "expected.bin"), dtype=np.float32)
    if got.shape != want.shape:
        print(f"run_model_test: {got.size} outputs, PyTorch has {want.size}", file=sys.stderr)
        return 1
    err = float(np.abs(got.astype(np.float64) - want).max())
    cxx = os.path.basename(os.environ.get("PARTITA_ONNX_CXX", "g++"))
    memory = f"{peak:.0f} MiB" if peak is not None else "unknown (no /usr/bin/time)"
    size = os.path.getsize(exe) / 2**20
    print(f"run_model_test: {name}: {cxx} compiled it in {seconds:.1f} s, peak memory {memory}, "
          f"executable {size:.1f} MiB{' (weights embedded)' if embedded else ''}; "
          f"max abs error vs PyTorch {err:.2e} (outputs up to {float(np.abs(want).max()):.2f}, "
          f"tolerance {tolerance:.0e})")
    if not err <= tolerance:
        print(f"run_model_test: {name}: max abs error {err:.2e} exceeds {tolerance:.0e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
