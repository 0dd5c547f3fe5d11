#!/usr/bin/env python3
"""Compares two builds of Partita on one runtime workload, in one process.

Each side is a git revision of this repository (exported with `git archive`) or `.` for the
working tree. Both are compiled from benchmarks/ab/variant.cpp with the library's namespaces
renamed per side, linked into one driver, and called in turn, each round in the opposite order;
the driver prints each side's median time and the median and quartiles of the per-round ratio
b / a (below 1: b is faster). Two processes run one after the other can each catch a different
speed of a virtual machine; calls in turn see the same one.

    python3 benchmarks/ab/ab.py HEAD~1 . --workload W6 --threads 2
    python3 benchmarks/ab/ab.py main . --workload W1 --cpu 1 --rounds 300

The driver exits with 1 where the two builds' first output values differ by more than 1e-4.
With --record DIR (benchmarks/results/ by convention) the run is written as a record
(benchmarks/README.md, "Records"): b's median time over a's and the quartiles of the ratio.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "benchmarks", "ab")
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import record  # noqa: E402 (benchmarks/record.py)
# Namespaces the workloads' code lives in: each side gets its own copy of every one.
NAMESPACES = ["partita", "models", "transformer", "bench", "workloads"]
# What a build of the workloads reads from a tree.
TREE_PATHS = ["include", "models", "examples/transformer", "benchmarks/runtime"]
# Calls per round: about 2-5 ms of work, so that a round is short against the guest's speed changes.
DEFAULT_CALLS = {"W1": 100, "W2": 10, "W3": 2, "W4": 300, "W5": 1, "W6": 2, "W7": 1}


def export(rev, into):
    """The tree of `rev` under `into` ('.' is the working tree itself, not copied)."""
    if rev == ".":
        return ROOT
    os.makedirs(into)
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev, *TREE_PATHS], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
    return into


def compile_side(cxx, flags, tree, side, workload, out):
    renames = [f"-D{n}={n}_build_{side}" for n in NAMESPACES]
    cmd = [cxx, "-std=c++20", "-O2", "-march=native", "-DNDEBUG", *flags, *renames,
           f"-DPARTITA_AB_WORKLOAD={workload[1:]}", f"-DPARTITA_AB_ENTRY=partita_ab_{side}",
           f"-I{tree}/include", f"-I{tree}", "-c", os.path.join(HERE, "variant.cpp"), "-o", out]
    return subprocess.Popen(cmd)


def write_record(args, out):
    """The driver's line as a record: the two sides' medians and the ratio b / a."""
    m = re.search(r"a ([\d.]+) us  b ([\d.]+) us  b/a median ([\d.]+)  quartiles ([\d.]+)-([\d.]+)", out)
    if not m:
        sys.exit("ab.py: no result line to record")
    a, b, med, q1, q3 = map(float, m.groups())
    r = record.header("ab", compiler=record.compiler_version(args.cxx),
                      command=f"ab.py {args.a} {args.b} --workload {args.workload} --threads {args.threads}")
    r["figures"] = [{"case": args.workload, "threads": args.threads, "a": args.a, "b": args.b,
                     "a_us": a, "b_us": b, "ratio": med, "ratio_quartiles": [q1, q3]}]
    r["notes"] = "ratio: b's time over a's, median of the per-round ratios (below 1: b is faster)"
    print(f"ab.py: wrote {record.write(r, args.record)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", help="git revision, or . for the working tree")
    ap.add_argument("b", help="git revision, or . for the working tree")
    ap.add_argument("--workload", default="W1", choices=sorted(DEFAULT_CALLS))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--calls", type=int, help="runs per side and round (default: per workload)")
    ap.add_argument("--cpu", help="pin to these CPUs (taskset -c), e.g. 1")
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    ap.add_argument("--flags", default="", help="extra compiler flags for both sides")
    ap.add_argument("--record", metavar="DIR", help="write the run as a record into DIR")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="partita-ab-")
    try:
        trees = [export(args.a, os.path.join(work, "a")), export(args.b, os.path.join(work, "b"))]
        objs = [os.path.join(work, "a.o"), os.path.join(work, "b.o")]
        flags = args.flags.split()
        procs = [compile_side(args.cxx, flags, t, s, args.workload, o) for t, s, o in zip(trees, "ab", objs)]
        if any(p.wait() != 0 for p in procs):
            sys.exit("ab.py: a build failed")
        exe = os.path.join(work, "ab")
        subprocess.run([args.cxx, "-std=c++20", "-O2", os.path.join(HERE, "driver.cpp"), *objs, "-pthread", "-o", exe],
                       check=True)
        run = [exe, str(args.threads), str(args.calls or DEFAULT_CALLS[args.workload]), str(args.rounds)]
        if args.cpu:
            run = ["taskset", "-c", args.cpu, *run]
        print(f"{args.workload}, {args.threads} thread(s): a = {args.a}, b = {args.b}", flush=True)
        done = subprocess.run(run, stdout=subprocess.PIPE, text=True)
        print(done.stdout, end="", flush=True)
        if args.record:
            write_record(args, done.stdout)
        sys.exit(done.returncode)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
