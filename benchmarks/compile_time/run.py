#!/usr/bin/env python3
"""Compile-time benchmark for Partita.

Generates models of N nodes (N counts every node of the flattened graph: the input, the weights
and the ops) as chains of residual blocks

    struct bK : relu<add<bias_add<conv2d<bK-1, weight<"wK">, {.padding = {1, 1}}>, weight<"cK">>, bK-1>> {};

(6 nodes each: 2 weights and 4 ops), topped up with a few one-node `relu` blocks so that the graph
has exactly N nodes. Each generated translation unit checks the count with a static_assert.

For every N it compiles, with the project's flags:
  plan        declare + flatten + plan: static_assert on plan_of<module_of<net>>::value
  passes      declare + flatten + the BYOC passes (partition<net, npu, reference>: composites,
              annotation, region merging, partitioning) + plan of the partitioned module
  executable  the full compiled<net, reference>, run() instantiated, main(), to an object file
  cpu         the same for compiled<net, cpu>: cpu's pattern table runs on the model (every block
              becomes a fused conv2d+bias+add+relu composite) and its kernels are instantiated
  cost        declare + flatten + cost-based partitioning (cost_partition<net, npu, cpu>: every
              candidate of both backends, the search, coalescing) + plan of the result
and once, as the floors:
  headers     an empty translation unit that includes partita/partita.hpp
  model_header  the same with partita/model.hpp, the header that only declares models
recording wall seconds and peak compiler memory (maximum resident set size). With a Clang
compiler the script adds -fconstexpr-steps=16777216, as the partita::partita CMake target does.

One more kind, `models` (not in the default --only), compiles CNN-like graphs instead of the chain:
the same executable translation unit as `cpu` (compiled<net, cpu>, run() instantiated, main(), to
an object) on a model of exactly N nodes built from motifs of real models, in this repeating order

  resnet    ResNet basic block: conv2d 3x3 + batch_norm + relu, conv2d 3x3 + batch_norm, residual
            add, relu (17 nodes: 10 weights, 7 ops)
  mbconv    MobileNetV2 depthwise-separable block: 1x1 expand conv2d + batch_norm + clip<0, 6>
            (relu6), 3x3 depthwise conv2d (.groups = channels) + batch_norm + clip, 1x1 project
            conv2d + bias_add (20 nodes: 12 weights, 8 ops)
  se        squeeze-excite: global_avg_pool2d, 1x1 conv2d + bias_add + relu down to a quarter of
            the channels, 1x1 conv2d + bias_add + sigmoid back up, multiply with the block's input
            (broadcast N,C,1,1 x N,C,H,W) (12 nodes: 4 weights, 8 ops)
  dense     DenseNet-BC dense block: two layers of batch_norm + relu + 1x1 conv2d + batch_norm + relu
            + 3x3 conv2d to `growth` channels, each concatenate<1, its input, the new channels>,
            then a transition (batch_norm + relu + 1x1 conv2d) back to the base channel count
            (42 nodes: 20 weights, 22 ops)

Each round takes, in that order, the motifs that still fit (so every round has all four while a
whole round fits), and fewer than 12 one-node `relu` blocks make up the exact count: every model of
92 nodes or more holds all four motifs. Every motif maps 8 channels to 8 (MODEL_CHANNELS) on a 4x4
image, with at most 16 channels inside, so the kernels stay tiny and what is measured is compile
time. `--only models --sizes 250,500,1000` runs them alone; each translation unit checks its node
count with the same static_assert, and the record's row gives the mix under "models_graph".

Prints the run as a record (benchmarks/README.md, "Records"), or as a markdown table with
--markdown; --output FILE or --record DIR (benchmarks/results/) writes the record. Standard
library only. Exits non-zero if a compile fails, printing the head of the compiler's
error output.
"""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INCLUDE = os.path.join(ROOT, "include")
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import record  # noqa: E402 (benchmarks/record.py)

# Small tensors so that kernels stay tiny: NCHW = 1 x CHANNELS x SPATIAL x SPATIAL.
CHANNELS = 4
SPATIAL = 4

BLOCK_NODES = 6  # conv2d, bias_add, add, relu + two weights
HEADER = "#include <partita/partita.hpp>\nusing namespace partita;\n"


def model_source(n):
    """C++ declarations of a model with exactly n flattened nodes; returns (source, ops, blocks)."""
    if n < 1:
        raise ValueError("a model needs at least one node (its input)")
    rest = n - 1  # the input
    blocks, tops = divmod(rest, BLOCK_NODES)
    shape = f"1, {CHANNELS}, {SPATIAL}, {SPATIAL}"
    lines = [f'using b0 = input<"x", f32, {shape}>;']
    k = 0
    for _ in range(blocks):
        k += 1
        lines.append(
            f"struct b{k} : relu<add<bias_add<conv2d<b{k - 1}, "
            f'weight<"w{k}", f32, {CHANNELS}, {CHANNELS}, 3, 3>, {{.padding = {{1, 1}}}}>, '
            f'weight<"c{k}", f32, {CHANNELS}>>, b{k - 1}>> {{}};'
        )
    for _ in range(tops):
        k += 1
        lines.append(f"struct b{k} : relu<b{k - 1}> {{}};")
    lines.append(f"using net = model<b{k}>;")
    lines.append(f"static_assert(module_of<net>::value.nodes.size() == {n});")
    ops = 4 * blocks + tops
    return "\n".join(lines) + "\n", ops, blocks


def plan_tu(n):
    src, ops, blocks = model_source(n)
    return HEADER + src + "static_assert(plan_of<module_of<net>>::value.arena_bytes > 0);\n", ops, blocks


NPU = """
struct npu {
  static constexpr fixed_string name = "npu";
  struct state {};
  using patterns = pattern_table<composite<"npu.conv2d_bias", bias_add_p<conv2d_p<any, constant>, constant>, only_f32>>;
  static constexpr bool supports(const op_view& v) { return v.is(op_id::add) || v.is(op_id::relu); }
};
"""


def passes_tu(n):
    src, ops, blocks = model_source(n)
    body = NPU + """using parts = partition<net, npu, reference>;
static_assert(count_functions<parts, "npu"> >= 1);
static_assert(plan_of<parts, npu, reference>::value.arena_bytes > 0);
"""
    return HEADER + src + body, ops, blocks


def cost_tu(n):
    src, ops, blocks = model_source(n)
    body = NPU + """using parts = cost_partition<net, npu, cpu>;
static_assert(parts::search.candidates > 0);
static_assert(plan_of<parts, npu, cpu>::value.arena_bytes > 0);
"""
    return HEADER + src + body, ops, blocks


def executable_tu(n, backend="reference"):
    src, ops, blocks = model_source(n)
    return executable_text(src, backend, CHANNELS * SPATIAL * SPATIAL), ops, blocks


def executable_text(src, backend, elems):
    """The executable translation unit: src's `net` compiled for backend, run() instantiated, main()."""
    body = f"""
float run_once(compiled<net, {backend}>& exe, const float* x, float* y) {{
  exe.run(std::span<const float>(x, {elems}), std::span<float>(y, {elems}));
  return y[0];
}}

int main(int argc, char**) {{
  compiled<net, {backend}> exe;
  std::vector<float> x({elems}, static_cast<float>(argc)), y({elems});
  try {{
    return static_cast<int>(run_once(exe, x.data(), y.data()));
  }} catch (const partita::error&) {{
    return 0;  // the weights are not bound: only compilation is measured
  }}
}}
"""
    return "#include <span>\n#include <vector>\n" + HEADER + src + body


def cpu_tu(n):
    return executable_tu(n, "cpu")


# The `models` kind: CNN-like graphs of real-model motifs (see the docstring). Every motif maps
# MODEL_CHANNELS to MODEL_CHANNELS channels on a SPATIAL x SPATIAL image.
MODEL_CHANNELS = 8
MBCONV_EXPAND = 2  # MobileNetV2 expansion: 16 channels inside the block
SE_REDUCTION = 4   # squeeze-excite bottleneck: 2 channels
DENSE_GROWTH = 4   # DenseNet growth rate; 8 -> 12 -> 16 channels, bottleneck 1x1 to 4 * growth = 16


class graph_text:
    """Emits the C++ of a model, counting the nodes that its expressions add to the flattened graph."""

    def __init__(self):
        self.lines, self.weights, self.ops = [], 0, 0

    def weight(self, name, *dims):
        self.weights += 1
        return f'weight<"{name}", f32, {", ".join(map(str, dims))}>'

    def op(self, text):
        self.ops += 1
        return text

    def conv(self, x, name, cout, cin, k, attrs=""):
        return self.op(f"conv2d<{x}, {self.weight(name, cout, cin, k, k)}{attrs}>")

    def bias(self, x, name, c):
        return self.op(f"bias_add<{x}, {self.weight(name, c)}>")

    def bn(self, x, name, c):
        params = ", ".join(self.weight(f"{name}.{p}", c) for p in "gbmv")  # gamma, beta, mean, var
        return self.op(f"batch_norm<{x}, {params}>")

    def relu(self, x):
        return self.op(f"relu<{x}>")

    def relu6(self, x):
        return self.op(f"clip<{x}, 0.f, 6.f>")

    def node(self, name, expr):
        self.lines.append(f"struct {name} : {expr} {{}};")
        return name


PAD = ", {.padding = {1, 1}}"


def resnet_motif(g, b, x):
    c = MODEL_CHANNELS
    h = g.node(f"{b}_1", g.relu(g.bn(g.conv(x, f"{b}.conv1", c, c, 3, PAD), f"{b}.bn1", c)))
    y = g.bn(g.conv(h, f"{b}.conv2", c, c, 3, PAD), f"{b}.bn2", c)
    return g.node(b, g.relu(g.op(f"add<{y}, {x}>")))


def mbconv_motif(g, b, x):
    c, e = MODEL_CHANNELS, MODEL_CHANNELS * MBCONV_EXPAND
    h = g.node(f"{b}_1", g.relu6(g.bn(g.conv(x, f"{b}.expand", e, c, 1), f"{b}.bn1", e)))
    dw = f"conv2d<{h}, {g.weight(f'{b}.dw', e, 1, 3, 3)}, {{.padding = {{1, 1}}, .groups = {e}}}>"
    h = g.node(f"{b}_2", g.relu6(g.bn(g.op(dw), f"{b}.bn2", e)))
    return g.node(b, g.bias(g.conv(h, f"{b}.project", c, e, 1), f"{b}.project_b", c))


def se_motif(g, b, x):
    c, r = MODEL_CHANNELS, MODEL_CHANNELS // SE_REDUCTION
    s = g.op(f"global_avg_pool2d<{x}>")
    s = g.node(f"{b}_1", g.relu(g.bias(g.conv(s, f"{b}.fc1", r, c, 1), f"{b}.fc1_b", r)))
    s = g.node(f"{b}_2", g.op(f"sigmoid<{g.bias(g.conv(s, f'{b}.fc2', c, r, 1), f'{b}.fc2_b', c)}>"))
    return g.node(b, g.op(f"multiply<{s}, {x}>"))  # N,C,1,1 x N,C,H,W


def dense_motif(g, b, x):
    c, k = MODEL_CHANNELS, DENSE_GROWTH
    for layer in (1, 2):
        p = f"{b}.l{layer}"
        h = g.node(f"{b}_{2 * layer - 1}", g.conv(g.relu(g.bn(x, f"{p}.bn1", c)), f"{p}.conv1", 4 * k, c, 1))
        new = g.conv(g.relu(g.bn(h, f"{p}.bn2", 4 * k)), f"{p}.conv2", k, 4 * k, 3, PAD)
        x = g.node(f"{b}_{2 * layer}", g.op(f"concatenate<1, {x}, {new}>"))
        c += k
    return g.node(b, g.conv(g.relu(g.bn(x, f"{b}.trans.bn", c)), f"{b}.trans.conv", MODEL_CHANNELS, c, 1))


MOTIFS = {"resnet": resnet_motif, "mbconv": mbconv_motif, "se": se_motif, "dense": dense_motif}


def motif_nodes(name):
    g = graph_text()
    MOTIFS[name](g, "b1", "b0")
    return g.weights + g.ops


def models_source(n):
    """C++ of a CNN-like model with exactly n flattened nodes; returns (source, graph info)."""
    if n < 1:
        raise ValueError("a model needs at least one node (its input)")
    sizes = {m: motif_nodes(m) for m in MOTIFS}
    g = graph_text()
    g.lines.append(f'using b0 = input<"x", f32, 1, {MODEL_CHANNELS}, {SPATIAL}, {SPATIAL}>;')
    rest, k, x = n - 1, 0, "b0"
    counts = dict.fromkeys(MOTIFS, 0)
    # Rounds in MOTIFS order, each taking the motifs that still fit, so that the relu padding stays
    # below the smallest motif; while a whole round fits, every round has all four.
    plan, taken = [], True
    while taken:
        taken = False
        for m in MOTIFS:
            if sizes[m] <= rest:
                plan.append(m)
                rest -= sizes[m]
                taken = True
    for m in plan:
        k += 1
        g.lines.append(f"// b{k}: {m} ({sizes[m]} nodes)")
        x = MOTIFS[m](g, f"b{k}", x)
        counts[m] += 1
    pads = rest
    if pads:
        g.lines.append(f"// {pads} one-node relu block{'s' if pads > 1 else ''} to make up the count")
    for _ in range(pads):
        k += 1
        x = g.node(f"b{k}", g.relu(x))
    assert 1 + g.weights + g.ops == n, (n, g.weights, g.ops)
    g.lines.append(f"using net = model<{x}>;")
    g.lines.append(f"static_assert(module_of<net>::value.nodes.size() == {n});")
    info = {"ops": g.ops, "weights": g.weights, "motifs": counts, "relu_pad": pads}
    return "\n".join(g.lines) + "\n", info


def models_tu(n):
    src, info = models_source(n)
    return executable_text(src, "cpu", MODEL_CHANNELS * SPATIAL * SPATIAL), info


def headers_tu(header="partita/partita.hpp"):
    return f"#include <{header}>\nint main() {{ return 0; }}\n"


class CompileError(Exception):
    pass


def run_child(cmd):
    """Runs cmd; returns (returncode, stderr text, wall seconds, CPU seconds, peak RSS in KiB)."""
    with tempfile.TemporaryFile("w+") as err, tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        if os.access("/usr/bin/time", os.X_OK):
            t0 = time.monotonic()
            proc = subprocess.run(["/usr/bin/time", "-o", tf.name, "-f", "%e %U %S %M"] + cmd,
                                  stdout=subprocess.DEVNULL, stderr=err)
            wall = time.monotonic() - t0
            fields = tf.read().split()
            cpu, kib = 0.0, 0
            if len(fields) >= 4:  # the last line; earlier ones may report a signal
                wall, cpu, kib = float(fields[-4]), float(fields[-3]) + float(fields[-2]), int(fields[-1])
            code = proc.returncode
        else:
            # No /usr/bin/time: the rusage of this one child, from wait4.
            t0 = time.monotonic()
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.monotonic() - t0
            proc.returncode = os.waitstatus_to_exitcode(status)
            code, kib = proc.returncode, usage.ru_maxrss
            cpu = usage.ru_utime + usage.ru_stime
        err.seek(0)
        return code, err.read(), wall, cpu, kib


def measure(cmd, repeat):
    """Runs cmd `repeat` times; returns (wall s, CPU s, peak RSS MiB) of the run using least CPU."""
    best = None
    for _ in range(repeat):
        code, err, wall, cpu, kib = run_child(cmd)
        if code != 0:
            head = "\n".join(err.splitlines()[:40])
            raise CompileError(f"compile failed ({code}): {shlex.join(cmd)}\n{head}")
        mib = kib / 1024.0
        if best is None or cpu < best[1]:
            best = (wall, cpu, mib)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="25,100,400,1600", help="comma-separated node counts (default: %(default)s)")
    ap.add_argument("--compiler", default="g++", help="C++ compiler (default: %(default)s)")
    ap.add_argument("--flags", default="-std=c++20 -O2", help="compiler flags (default: %(default)s)")
    ap.add_argument("--extra-flags", default="", help="flags appended to --flags; write --extra-flags=-fconstexpr-ops-limit=N (with '=')")
    ap.add_argument("--output", default=None, help="write the record (JSON) to this file")
    ap.add_argument("--record", metavar="DIR", help="write the record into DIR (benchmarks/results/ by convention)")
    ap.add_argument("--markdown", action="store_true", help="print a markdown table")
    ap.add_argument("--keep", default=None, metavar="DIR", help="keep the generated sources in DIR")
    ap.add_argument("--repeat", type=int, default=1, help="compile each TU this many times, keep the run with least CPU time")
    ap.add_argument("--only", default="plan,passes,executable",
                    help="which TUs to compile per size, of plan, passes, executable, cpu, cost, models (default: %(default)s)")
    args = ap.parse_args()

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    kinds = [k.strip() for k in args.only.split(",") if k.strip()]
    for k in kinds:
        if k not in TU_KINDS:
            ap.error(f"unknown TU kind {k!r}")
    flags = shlex.split(args.flags) + shlex.split(args.extra_flags)
    compiler = shutil.which(args.compiler) or args.compiler
    # What the partita::partita CMake target adds for Clang: its default bound on one constant
    # evaluation (2^20 steps) stops at about 600 nodes.
    if "clang" in os.path.basename(compiler) and not any(f.startswith("-fconstexpr-steps") for f in flags):
        flags.append("-fconstexpr-steps=16777216")

    workdir = args.keep or tempfile.mkdtemp(prefix="partita-compile-time-")
    os.makedirs(workdir, exist_ok=True)

    def compile_tu(name, text):
        path = os.path.join(workdir, name + ".cpp")
        with open(path, "w") as f:
            f.write(text)
        obj = os.path.join(workdir, name + ".o")
        cmd = [compiler] + flags + ["-I" + INCLUDE, "-c", path, "-o", obj]
        wall, cpu, mib = measure(cmd, args.repeat)
        if not args.keep:
            os.remove(obj)
        print(f"  {name:<18} {wall:8.2f} s wall {cpu:8.2f} s cpu {mib:9.1f} MiB", file=sys.stderr, flush=True)
        return {"seconds": round(wall, 3), "cpu_seconds": round(cpu, 3), "peak_mib": round(mib, 1)}

    result = record.header("compile_time", compiler=record.compiler_version(compiler),
                           command=shlex.join([args.compiler] + flags + ["-I", "include", "-c", "<tu>.cpp"]))
    result["node_count"] = "all nodes of the flattened graph: the input, weights and ops"
    result["tensor"] = [1, CHANNELS, SPATIAL, SPATIAL]
    result["figures"] = []
    version = result["compiler"]
    if "models" in kinds:
        result["models"] = {
            "tensor": [1, MODEL_CHANNELS, SPATIAL, SPATIAL],
            "motif_nodes": {m: motif_nodes(m) for m in MOTIFS},
            "compiled": "compiled<net, cpu>, run() instantiated, main(), to an object",
        }
    status = 0
    try:
        print(f"{version}; {shlex.join(flags)}", file=sys.stderr)
        result["figures"].append({"kind": "headers", "nodes": 0, "partita": compile_tu("headers", headers_tu())})
        result["figures"].append({"kind": "model_header", "nodes": 0,
                                  "partita": compile_tu("model_header", headers_tu("partita/model.hpp"))})
        for n in sizes:
            for kind in kinds:
                row = {"kind": kind, "nodes": n}
                if kind == "models":
                    text, row["models_graph"] = models_tu(n)
                else:
                    text, row["ops"], row["blocks"] = TU_KINDS[kind](n)
                row["partita"] = compile_tu(f"{kind}_{n}", text)
                result["figures"].append(row)
    except CompileError as e:
        print(e, file=sys.stderr)
        if "constexpr-ops-limit" in str(e):
            print("hint: rerun with --extra-flags=-fconstexpr-ops-limit=134217728", file=sys.stderr)
        status = 1
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    if args.output:
        with open(args.output, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
    if args.record:
        print(f"run.py: wrote {record.write(result, args.record)}", file=sys.stderr)
    if args.markdown and len(result["figures"]) > 1:
        print(markdown(result, kinds))
    elif not args.markdown:
        print(json.dumps(result, indent=2))
    return status


def markdown(result, kinds):
    chain = [k for k in kinds if k != "models"]
    head = ["N (nodes)"] + (["op nodes"] if chain else []) + (["models: op nodes", "models: motifs"] if "models" in kinds else [])
    info = len(head) - 1
    for k in kinds:
        head += [f"{k} s", f"{k} MiB"]
    align = ["---:"] * len(head)
    if "models" in kinds:
        align[info] = ":---"  # the motif mix is text
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]

    def cells(m):
        return [f"{m['seconds']:.2f}", f"{m['peak_mib']:.0f}"]

    by_size = {}
    for row in result["figures"]:
        if row["kind"] in FLOORS:
            lines.append("| " + " | ".join([FLOORS[row["kind"]]] + ["-"] * info + cells(row["partita"]) * len(kinds)) + " |")
        else:
            by_size.setdefault(row["nodes"], {})[row["kind"]] = row
    for n, rows in by_size.items():
        c = [str(n)]
        if chain:
            c.append(str(next(r["ops"] for k, r in rows.items() if k != "models")))
        if "models" in kinds:
            g = rows["models"]["models_graph"]
            mix = ", ".join(f"{v} {m}" for m, v in g["motifs"].items() if v)
            c += [str(g["ops"]), mix + (f" + {g['relu_pad']} relu" if g["relu_pad"] else "")]
        for k in kinds:
            c += cells(rows[k]["partita"])
        lines.append("| " + " | ".join(c) + " |")
    if "models" in kinds:
        m = result["models"]
        sizes = ", ".join(f"{k} {v}" for k, v in m["motif_nodes"].items())
        lines.append("")
        lines.append(f"models: {m['compiled']}, on f32{m['tensor']}; nodes per motif: {sizes}.")
    return "\n".join(lines)


# The rows without a model, as the markdown table names them.
FLOORS = {"headers": "headers only", "model_header": "partita/model.hpp only"}
TU_KINDS = {"plan": plan_tu, "passes": passes_tu, "executable": executable_tu, "cpu": cpu_tu, "cost": cost_tu,
            "models": models_tu}


if __name__ == "__main__":
    sys.exit(main())
