#!/usr/bin/env python3
"""Benchmark records: one JSON file per run under benchmarks/results/ (the format is in
benchmarks/README.md, "Records").

As a module, the header every runner writes and the writer:

    import record
    r = record.header("importer_scale", command="scale.py --nodes 20000")
    r["figures"] = [{"graph": "chain", "nodes": 20000, "partita": {"seconds": 1.49}}]
    record.write(r, "benchmarks/results")

As a script, a record from Google Benchmark JSON (bench_runtime, bench_matmul, bench_concurrency,
and bench_torch.py's output, which uses the same format; several files merge into one run):

    python3 benchmarks/record.py gbench run.json [torch.json] --build-dir build --out benchmarks/results

Names `<case>/<implementation>/<threads>` become one row per case and thread count: Partita's
figures under "partita", every other implementation under "peers" with its "ratio", its time
over Partita's (above 1: Partita is faster). Standard library only.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys

FORMAT = 1
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_model() -> str:
    """The CPU as /proc/cpuinfo names it, with its family and model numbers (a guest's model name
    is often generic); platform.processor() elsewhere."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = f.read().splitlines()
    except OSError:
        return platform.processor() or platform.machine()
    field = {}
    for line in lines:
        key, _, value = line.partition(":")
        field.setdefault(key.strip(), value.strip())
    name = field.get("model name", platform.processor() or platform.machine())
    if "cpu family" in field and "model" in field:
        name += f", family {field['cpu family']} model {field['model']}"
    return name


def machine() -> dict:
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "system": platform.platform()}


def commit() -> str:
    """HEAD's short hash, with `+dirty` when the tree differs from it."""
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"
    return (head or "unknown") + ("+dirty" if head and dirty else "")


def compiler_version(cxx: str) -> str:
    """The first line of `cxx --version`, or cxx itself."""
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True).stdout.splitlines()
    except OSError:
        return cxx
    return out[0].strip() if out else cxx


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def header(benchmark: str, *, compiler: str | None = None, command: str | None = None,
           tools: dict | None = None) -> dict:
    """The fields every record starts with; the caller adds "figures" (and "notes" if it likes)."""
    r = {"format": FORMAT, "benchmark": benchmark, "date": now(), "commit": commit(), "machine": machine(),
         "compiler": compiler}
    if command:
        r["command"] = command
    if tools:
        r["tools"] = tools
    return r


def ratio(peer: float, partita: float) -> float:
    """A peer's figure over Partita's, to 3 decimals: for times, above 1 Partita is faster."""
    return round(peer / partita, 3)


def write(record: dict, directory: str) -> str:
    """Writes `record` as DIR/<benchmark>-<date>.json; returns the path."""
    os.makedirs(directory, exist_ok=True)
    stamp = record["date"].replace(":", "")
    path = os.path.join(directory, f"{record['benchmark']}-{stamp}.json")
    with open(path, "w") as f:
        json.dump(record, f, indent=2, ensure_ascii=False)
        f.write("\n")
    return path


# Google Benchmark JSON to a record.

KEPT_COUNTERS = ("GFLOP/s", "pct_peak", "alt_ratio", "vs_onednn", "max_rel_err", "runs_per_s")


def read_gbench(path: str) -> dict:
    """The JSON object at the start of path (bench_runtime prints its summary after it)."""
    with open(path) as f:
        text = f.read()
    start = text.find("{")
    if start < 0:
        raise SystemExit(f"record.py: {path}: no JSON in it (run with --benchmark_format=json)")
    return json.JSONDecoder().raw_decode(text[start:])[0]


def to_us(b: dict) -> float:
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b.get("time_unit", "ns")]
    return b["real_time"] * scale


def selected(benchmarks: list[dict]) -> list[dict]:
    """One file's runs: with --benchmark_repetitions the medians, otherwise each run."""
    medians = any(b.get("aggregate_name") == "median" for b in benchmarks)
    return [b for b in benchmarks if (b.get("aggregate_name") == "median") == medians]


def gbench_figures(benchmarks: list[dict]) -> list[dict]:
    """Rows by case and thread count; Partita under "partita", the rest under "peers" with ratios."""
    rows: dict[tuple, dict] = {}
    other = []
    for b in benchmarks:
        name = b.get("run_name", b["name"]).removesuffix("/real_time")
        figures = {"us": round(to_us(b), 3)}
        figures.update((k.replace("GFLOP/s", "gflops"), round(b[k], 4)) for k in KEPT_COUNTERS if k in b)
        parts = name.split("/")
        if len(parts) == 3 and parts[2].isdigit():
            row = rows.setdefault((parts[0], int(parts[2])), {"case": parts[0], "threads": int(parts[2])})
            if parts[1] == "partita":
                row["partita"] = figures
            else:
                row.setdefault("peers", {})[parts[1]] = figures
        else:
            other.append({"case": name, "partita": figures})
    for row in rows.values():
        mine = row.get("partita", {}).get("us")
        for peer in row.get("peers", {}).values():
            if mine:
                peer["ratio"] = ratio(peer["us"], mine)
    return list(rows.values()) + other


def cmake_compiler(build_dir: str) -> tuple[str | None, str | None]:
    """The C++ compiler and build type of a CMake build directory."""
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            cache = f.read()
    except OSError:
        return None, None
    cxx = re.search(r"^CMAKE_CXX_COMPILER:\w+=(.*)$", cache, re.M)
    kind = re.search(r"^CMAKE_BUILD_TYPE:\w+=(.*)$", cache, re.M)
    return (compiler_version(cxx.group(1)) if cxx else None), (kind.group(1) if kind else None)


def main() -> int:
    ap = argparse.ArgumentParser(description="Writes a benchmark record from Google Benchmark JSON.")
    sub = ap.add_subparsers(dest="what", required=True)
    g = sub.add_parser("gbench", help="bench_runtime, bench_matmul, bench_concurrency or bench_torch.py JSON")
    g.add_argument("files", nargs="+")
    g.add_argument("--name", help="the record's benchmark name (default: the first file's executable)")
    g.add_argument("--build-dir", default=os.path.join(ROOT, "build"), help="where the compiler is read from")
    g.add_argument("--compiler", help="the compiler, if not the build directory's")
    g.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results"))
    args = ap.parse_args()

    runs = [read_gbench(p) for p in args.files]
    context = runs[0].get("context", {})
    name = args.name or os.path.basename(context.get("executable", "bench_runtime"))
    compiler, build_type = cmake_compiler(args.build_dir)
    r = header(name, compiler=args.compiler and compiler_version(args.compiler) or compiler,
               command=" ".join(os.path.basename(run.get("context", {}).get("executable", "?")) for run in runs))
    tools = {k: v for run in runs for k, v in run.get("context", {}).items()
             if k in ("torch_version", "blas", "mhz_per_cpu")}
    if build_type:
        tools["build_type"] = build_type
    r["tools"] = tools
    if context.get("date"):
        r["run_started"] = context["date"]
    r["figures"] = gbench_figures([b for run in runs for b in selected(run.get("benchmarks", []))])
    print(f"record.py: wrote {write(r, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
