#!/usr/bin/env python3
"""The results section of docs/performance.md and its chart, made from benchmarks/results/.

    /usr/bin/python3 benchmarks/report.py            rewrites the table and docs/images/performance.svg
    python3 benchmarks/report.py --check             exit 1 if the page's table is not what the records give

For each machine, the latest bench_runtime record: oneDNN's time over Partita's per workload, on
one and on two threads (above 1: Partita is faster). The table lies between the page's two
marker lines; the chart (matplotlib, Debian's python3-matplotlib) is written as SVG with a fixed
hash salt and no date, so that the same records give the same file. --check needs no matplotlib.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
PAGE = os.path.join(ROOT, "docs", "performance.md")
CHART = os.path.join(ROOT, "docs", "images", "performance.svg")
BEGIN = "<!-- made by benchmarks/report.py from benchmarks/results/: do not edit -->"
END = "<!-- end of benchmarks/report.py's table -->"
PEER = "onednn"


def load(folder: str = RESULTS) -> list[dict]:
    records = []
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        with open(path, encoding="utf-8") as f:
            r = json.load(f)
        r["file"] = os.path.basename(path)
        records.append(r)
    return records


def latest_per_machine(records: list[dict]) -> list[dict]:
    """The newest bench_runtime record with oneDNN as a peer on each CPU, newest first."""
    best: dict[str, dict] = {}
    for r in records:
        if r.get("benchmark") != "bench_runtime" or not any(PEER in f.get("peers", {}) for f in r["figures"]):
            continue
        cpu = r["machine"]["cpu"]
        if cpu not in best or (r["date"], r["file"]) > (best[cpu]["date"], best[cpu]["file"]):
            best[cpu] = r
    return sorted(best.values(), key=lambda r: (r["date"], r["file"]), reverse=True)


def short_cpu(r: dict) -> str:
    """The CPU without the parenthesised details."""
    return r["machine"]["cpu"].split(" (")[0]


def ratios(r: dict) -> dict[tuple[str, int], float]:
    return {(f["case"], f["threads"]): f["peers"][PEER]["ratio"] for f in r["figures"] if PEER in f.get("peers", {})}


def cases(runs: list[dict]) -> list[str]:
    return sorted({case for r in runs for case, _ in ratios(r)})


def table(runs: list[dict]) -> str:
    names = cases(runs)
    lines = ["| machine | commit | date | compiler | " + " | ".join(names) + " |",
             "|---|---|---|---|" + "---:|" * len(names)]
    for r in runs:
        q = ratios(r)
        cells = []
        for case in names:
            one, two = q.get((case, 1)), q.get((case, 2))
            cells.append(" / ".join("-" if v is None else f"{v:.2f}" for v in (one, two)))
        lines.append(f"| {short_cpu(r)} | {r['commit']} | {r['date'][:10]} | {r['compiler']} | "
                     + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"oneDNN's time over Partita's, one thread / two threads (above 1: Partita is faster); "
                 "each row is the latest `bench_runtime` record of its machine.")
    return "\n".join(lines)


def section(runs: list[dict]) -> str:
    return f"{BEGIN}\n\n{table(runs)}\n\n{END}"


def page_section(text: str) -> str | None:
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        return None
    return text[start:end + len(END)]


def chart(runs: list[dict], path: str) -> None:
    import matplotlib
    matplotlib.use("svg")
    matplotlib.rcParams["svg.hashsalt"] = "partita-performance"
    import matplotlib.pyplot as plt

    names = cases(runs)
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    width = 0.8 / max(1, len(runs))
    for ax, threads in zip(axes, (1, 2)):
        for i, r in enumerate(runs):
            q = ratios(r)
            xs = [k + (i - (len(runs) - 1) / 2) * width for k in range(len(names))]
            ax.bar(xs, [q.get((c, threads), 0) for c in names], width, label=f"{short_cpu(r)} ({r['commit']})")
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(names)), names)
        ax.set_title(f"{threads} thread{'s' if threads > 1 else ''}")
        ax.grid(axis="y", linewidth=0.3)
    axes[0].set_yscale("log")  # a ratio and its inverse lie as far from 1
    ticks = [0.5, 0.75, 1, 1.5, 2, 3, 4, 6]
    axes[0].set_yticks(ticks, [f"{t:g}" for t in ticks])
    axes[0].minorticks_off()
    axes[0].set_ylabel("oneDNN time / Partita time")
    axes[0].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare the page's table with the records, change nothing")
    ap.add_argument("--page", default=PAGE)
    ap.add_argument("--chart", default=CHART)
    args = ap.parse_args()

    runs = latest_per_machine(load())
    want = section(runs)
    with open(args.page, encoding="utf-8") as f:
        text = f.read()
    have = page_section(text)
    if have is None:
        print(f"report.py: {args.page} has no marker lines ({BEGIN!r} ... {END!r})", file=sys.stderr)
        return 1
    if args.check:
        if have != want:
            print(f"report.py: the table in {args.page} is not what benchmarks/results/ gives; "
                  "run /usr/bin/python3 benchmarks/report.py", file=sys.stderr)
            return 1
        return 0
    with open(args.page, "w", encoding="utf-8") as f:
        f.write(text.replace(have, want))
    chart(runs, args.chart)
    print(f"report.py: wrote {os.path.relpath(args.page, ROOT)} and {os.path.relpath(args.chart, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
