"""The command line of partita_import.py: load, clean up, map, write; every problem at once."""
from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import warnings

import numpy as np

from . import calibrate, emit, fold, fuse, limits, loader, ops, weights as weights_mod
from .errors import EXIT_INTERNAL, ImportFailure, first_line, printable, shown
from .graph import Graph, Node
from .terms import Term

# Why some well-known ops have no mapping, said instead of a bare "no mapping".
_REASONS = {
    "NonZero": "its output shape depends on the data (a mask's indices): keep the mask and select with Where",
    "NonMaxSuppression": "its output shape depends on the data (Partita's non_max_suppression, written in C++, has "
                         "a static maximum and a count)",
    "GatherND": "Partita has gather and gather_elements (by a NonZero's indices, its output shape depends on the "
                "data)",
    "If": "control flow at run time: Partita's models are static graphs (export with the branch taken)",
    "Loop": "control flow at run time: Partita's models are static graphs (export with the loop unrolled)",
    "Scan": "control flow at run time: Partita's models are static graphs (export with the loop unrolled)",
    "LogSoftmax": "Partita has no log_softmax op",
    "DynamicQuantizeLinear": "it computes its scale and zero point at run time, and Partita quantizes with "
                             "constant ones: quantize the model statically (calibrated scales, QDQ form)",
    "DynamicQuantizeMatMul": "dynamic quantization: quantize the model statically (calibrated scales, QDQ form)",
    "MatMulIntegerToFloat": "dynamic quantization: quantize the model statically (calibrated scales, QDQ form)",
}

_DTYPE_NAMES = {np.dtype(np.float32): "f32", np.dtype(np.int64): "i64", np.dtype(np.int32): "i32",
                np.dtype(np.int8): "i8", np.dtype(np.uint8): "u8", np.dtype(np.bool_): "boolean"}


def _type_text(g: Graph, name: str) -> str:
    dt = g.dtype(name)
    s = g.shapes.get(name) if name not in g.consts else tuple(g.consts[name].shape)
    dims = "[" + ", ".join("?" if d is None else str(d) for d in s) + "]" if s is not None else "[?]"
    return f"{_DTYPE_NAMES.get(dt, str(dt) if dt is not None else '?')}{dims}"


def _opset_of(g: Graph, domain: str) -> str:
    for o in g.model.opset_import:
        if o.domain == domain or (domain in ("", "ai.onnx") and o.domain in ("", "ai.onnx")):
            return f"{o.domain or 'ai.onnx'} opset {o.version}"
    return f"{domain} (importer)" if domain == fuse.PARTITA else f"{domain} (not imported)"


def problem_line(g: Graph, n: Node, reason: str) -> str:
    """`node '/x/NonZero' NonZero (ai.onnx opset 13), inputs f32[1, 3]: why`."""
    inputs = ", ".join(_type_text(g, i) for i in n.inputs if i) or "none"
    op = n.op + (" from " + ", ".join(n.fused) if n.fused else "")
    return f"node '{shown(n.name or '<unnamed>')}' {shown(op)} ({shown(_opset_of(g, n.domain))}), inputs {inputs}: {reason}"


def _allowed_non_float(n: Node, position: int) -> bool:
    # Index inputs are integers, and so are quantized tensors; comparisons, logical ops, Where,
    # Cast and Trilu read any dtype; everything else Partita computes in f32.
    return (n.op == "Gather" and position == 1) or n.op in ops.ANY_DTYPE_OPS \
        or (n.op == "DequantizeLinear" and position == 0)


def map_graph(g: Graph, table: weights_mod.WeightTable) -> tuple[ops.Mapper, list[tuple[str, Term]]]:
    """Maps every node; raises one ImportFailure listing every node that cannot be mapped."""
    m = ops.Mapper(g, table)
    taken: set[str] = set()
    inputs = []
    for name in g.inputs:
        dt = _DTYPE_NAMES.get(g.dtype(name))
        if dt is None:
            raise ImportFailure(f"{shown(g.path)}: input '{shown(name)}' is {g.dtype(name)}; Partita's inputs are f32, i32, "
                                f"i64, i8, u8 or bool")
        t = emit.input_term(name, dt, g.shape(name), taken)
        t.value = name
        m.terms[name] = t
        inputs.append((name, t))
    problems: list[str] = []
    # Nodes of ops with no mapping at all, wherever they are: the root causes, reported first and
    # every one of them, even downstream of another problem (a detector's NonZero and TopK behind
    # a comparison the importer could not map must not hide).
    unmapped: dict[str, list[str]] = {}
    poisoned: set[str] = set()
    for n in g.nodes:
        known = n.domain in ("", "ai.onnx") or (n.domain == fuse.PARTITA and n.op in ops.OWN_OPS)
        mapping = ops.MAPPERS.get(n.op) if known else None
        if mapping is None:
            # An op the importer folds (Shape, ConstantOfShape...) is left only where its input is
            # not static: behind another problem, a consequence of it.
            if known and (n.op in fold.EVALUATORS or n.op in ("Shape", "Size")) and any(i in poisoned for i in n.inputs):
                poisoned.update(n.outputs)
                continue
            reason = _REASONS.get(n.op, "Partita has no mapping for this op" if known else "an op of a custom domain")
            unmapped.setdefault(n.op, []).append(problem_line(g, n, reason))
            poisoned.update(n.outputs)
            continue
        if any(i in poisoned for i in n.inputs):
            poisoned.update(n.outputs)  # reported at its first cause
            continue
        reason = None
        for k, i in enumerate(n.inputs):
            if i and g.const(i) is None and g.dtype(i) not in (np.dtype(np.float32), None) \
                    and not _allowed_non_float(n, k):
                reason = f"input {k} is {_DTYPE_NAMES.get(g.dtype(i), g.dtype(i))} at run time; Partita computes in f32"
                break
        if reason is None:
            m.node = n
            try:
                terms = mapping(m, n)
            except ops.Unsupported as e:
                reason = str(e)
            else:
                for o, t in zip(n.outputs, terms):
                    if o and t is not None:
                        m.terms[o] = t
                        if t.value is None:
                            t.value = o
                continue
        problems.append(problem_line(g, n, reason))
        poisoned.update(n.outputs)
    for o in g.outputs:
        if o not in m.terms and o not in poisoned:
            problems.append(f"output '{shown(g.aliases.get(o, o))}' is "
                            + ("a constant: nothing to compute" if g.const(o) is not None else "not computed by any node"))
    if problems or unmapped:
        # The ops with no mapping first, the most frequent first, each with its count.
        by_count = sorted(unmapped.items(), key=lambda kv: -len(kv[1]))
        roots = [line for _, lines in by_count for line in lines]
        count = len(roots) + sum(1 for p in problems if p.startswith("node "))
        head = f"{shown(g.path)}: {count} node{'s' if count != 1 else ''} cannot be imported:" if count else \
            f"{shown(g.path)}: the model cannot be imported:"
        summary = [f"ops with no mapping: " + ", ".join(f"{shown(op)} ({len(lines)})" for op, lines in by_count)] \
            if unmapped else []
        raise ImportFailure(head, summary + roots + problems)
    return m, inputs


def import_model(path: str, out_dir: str, namespace: str, input_shapes: dict[str, list[int]], embed: str | None,
                 budget: limits.Budget | None = None) -> str:
    """Imports the model at `path`; returns a one-line summary of what was written. `embed` is
    None (the weights stay in the safetensors file), "incbin" (the file compiled in with the
    assembler) or "arrays" (constexpr arrays in the header). Constants loaded and folded are
    charged to `budget` (by default, the default cap)."""
    budget = budget or limits.Budget()
    model, opset = loader.load(path, input_shapes, budget)
    g = Graph(model, path, opset)
    g.budget = budget
    fold.clean_up(g)
    fuse.fuse(g)
    table = weights_mod.WeightTable()
    m, inputs = map_graph(g, table)
    outputs = [m.terms[o] for o in g.outputs]

    st_path = os.path.join(out_dir, namespace + ".safetensors")
    hpp = os.path.join(out_dir, namespace + ".hpp")
    blob, spans = weights_mod.safetensors_bytes(table, {"format": "pt", "generator": "partita_import",
                                                        "source": shown(os.path.basename(path))})
    embedded = None
    if embed == "arrays":
        embedded = weights_mod.array_source(table, namespace)
    elif embed:
        embedded = weights_mod.embedded_source(table, spans, namespace, len(blob), os.path.abspath(st_path)) \
            if table.entries else "/// The model has no weights.\ninline partita::weight_set weights() { return {}; }"
    text = emit.header(g, inputs, outputs, table, namespace, os.path.basename(path), namespace + ".safetensors",
                       embedded, light=embed == "arrays")
    try:
        os.makedirs(out_dir, exist_ok=True)
        with open(st_path, "wb") as f:
            f.write(blob)
        with open(hpp, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise ImportFailure(f"--out '{shown(out_dir)}': cannot write {shown(e.filename or out_dir)} "
                            f"({e.strerror})") from None
    return (f"{hpp}: {len(g.nodes)} ONNX nodes after clean-up, {len(table.entries)} weights "
            f"({table.total_bytes() / 1e6:.1f} MB) in {st_path}" + (f" (embedded: {embed})" if embed else ""))


# Names a namespace may not take: C++20's keywords and alternative tokens, the namespaces the
# header itself opens or uses, and the C library's object-like macros.
_NOT_NAMESPACES = frozenset("""
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class
    compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype
    default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
    int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public register
    reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch template
    this thread_local throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t
    while xor xor_eq final override import module
    partita std
    NULL EOF errno stdin stdout stderr assert offsetof BUFSIZ CHAR_BIT RAND_MAX EXIT_SUCCESS EXIT_FAILURE
    """.split())


def namespace_problem(name: str) -> str | None:
    """Why `name` cannot be the header's namespace (and the files' stem), or None."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return "expected a C++ identifier"
    if name in _NOT_NAMESPACES:
        return "a C++ keyword, or a name the header or the C library already uses"
    if "__" in name or re.match(r"_[A-Z]", name):
        return "a name C++ reserves (two underscores, or an underscore and a capital)"
    return None


class _Parser(argparse.ArgumentParser):
    """argparse, with its errors as the importer's one-line failures."""

    def error(self, message: str):  # type: ignore[override]
        raise ImportFailure(f"{message} (see --help)")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="partita_import.py",
        description="Writes a Partita model (DIR/NS.hpp) and its weights (DIR/NS.safetensors) from an ONNX file.")
    p.add_argument("model", help="the .onnx file")
    p.add_argument("--out", required=True, metavar="DIR", help="the directory to write into")
    p.add_argument("--namespace", required=True, metavar="NS", help="the C++ namespace, and the files' stem")
    p.add_argument("--input-shape", action="append", default=[], metavar="NAME=D0,D1,...",
                   help="a static shape for a graph input with dynamic dimensions (repeatable)")
    p.add_argument("--embed-weights", nargs="?", const="incbin", choices=["incbin", "arrays"], default=None,
                   metavar="incbin|arrays",
                   help="compile the weights into the program instead of reading a file: 'incbin' (the default) "
                        "the safetensors file through the assembler, NS::weights() a weight_set over it; 'arrays' "
                        "constexpr arrays in the header and the table NS::weights::tensors, for static_executable "
                        "and microcontrollers (any object format)")
    p.add_argument("--max-memory", default=None, metavar="SIZE",
                   help=f"the most memory the model's constants may take, loaded and folded (default "
                        f"{limits.size_text(limits.DEFAULT_MAX_MEMORY)}; K, M, G suffixes)")
    p.add_argument("--time-limit", type=float, default=limits.DEFAULT_TIME_LIMIT, metavar="SECONDS",
                   help=f"give up after this long (default {limits.DEFAULT_TIME_LIMIT} s; 0: no limit)")
    q = p.add_argument_group("static int8 quantization of a float model (docs/onnx.md, Calibration)")
    q.add_argument("--quantize", choices=["int8"], default=None,
                   help="calibrate the float model on --calibrate's samples and import its QDQ form")
    q.add_argument("--calibrate", metavar="SAMPLES.safetensors",
                   help="sample inputs, one tensor per graph input by name, batches stacked on a new axis 0")
    q.add_argument("--calibrate-method", choices=calibrate.METHODS, default="minmax",
                   help="activation ranges: min/max (default), or a percentile of |x|")
    q.add_argument("--percentile", type=float, default=None, metavar="P",
                   help="with --calibrate-method percentile: the percentile of |x| kept (default 99.999)")
    per = q.add_mutually_exclusive_group()
    per.add_argument("--per-channel", dest="per_channel", action="store_true", default=True,
                     help="weights get a scale per output channel (default)")
    per.add_argument("--per-tensor", dest="per_channel", action="store_false",
                     help="weights get one scale per tensor")
    q.add_argument("--write-qdq", metavar="OUT.onnx", help="also keep the quantized (QDQ) model in this file")
    return p


def _check_arguments(args: argparse.Namespace) -> None:
    """Refuses bad arguments before any work is done."""
    why = namespace_problem(args.namespace)
    if why is not None:
        raise ImportFailure(f"--namespace '{shown(args.namespace)}': {why}")
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise ImportFailure(f"--out '{shown(args.out)}' exists and is not a directory")
    if not (0 <= args.time_limit <= 1e8):  # setitimer takes no more; NaN fails too
        raise ImportFailure(f"--time-limit {args.time_limit}: expected a number of seconds, or 0 for no limit")
    if bool(args.quantize) != bool(args.calibrate):
        raise ImportFailure("--quantize int8 and --calibrate SAMPLES.safetensors go together")
    if args.write_qdq and not args.quantize:
        raise ImportFailure("--write-qdq needs --quantize int8")
    if args.percentile is not None and (args.calibrate_method != "percentile" or not 0 < args.percentile <= 100):
        raise ImportFailure(f"--percentile {args.percentile}: expected a number in (0, 100], with "
                            f"--calibrate-method percentile")


def _source(args: argparse.Namespace, shapes: dict[str, list[int]], budget: limits.Budget, scratch: str) -> str:
    """The model to import: the file given, or with --quantize its QDQ form (written to
    --write-qdq, or into `scratch`)."""
    if not args.quantize:
        return args.model
    options = calibrate.Options(method=args.calibrate_method, per_channel=args.per_channel)
    if args.percentile is not None:
        options.percentile = args.percentile
    stem = os.path.splitext(os.path.basename(args.model))[0]
    out = args.write_qdq or os.path.join(scratch, stem + ".qdq.onnx")
    return calibrate.quantize_file(args.model, args.calibrate, options, out, budget, shapes)


def _report(e: ImportFailure) -> int:
    lines = e.lines()
    print("partita_import: " + lines[0], file=sys.stderr)
    for line in lines[1:]:
        print(line, file=sys.stderr)
    return e.code


def _bare_embed(argv: list[str]) -> list[str]:
    """`--embed-weights` not followed by one of its values stays the bare flag (incbin), so that
    it may come right before the model's path, as it could before it took a value."""
    out = list(argv)
    for k, a in enumerate(out):
        if a == "--embed-weights" and (k + 1 == len(out) or out[k + 1] not in ("incbin", "arrays")):
            out[k] = "--embed-weights=incbin"
    return out


def main(argv: list[str] | None = None) -> int:
    # Warnings from numpy or protobuf are not the user's business: problems are reported as
    # ImportFailure lines, and a warning that matters is turned into one where it arises.
    warnings.simplefilter("ignore")
    model = "the model"
    try:
        args = _parser().parse_args(_bare_embed(sys.argv[1:] if argv is None else argv))
        model = args.model
        _check_arguments(args)
        budget = limits.Budget(limits.parse_size(args.max_memory) if args.max_memory is not None
                               else limits.DEFAULT_MAX_MEMORY)
        shapes = loader.parse_input_shapes(args.input_shape)
        try:
            with limits.time_limit(args.time_limit), tempfile.TemporaryDirectory() as scratch:
                summary = import_model(_source(args, shapes, budget, scratch), args.out, args.namespace, shapes,
                                       args.embed_weights, budget)
        except limits.TimeLimitReached:
            raise ImportFailure(f"{shown(args.model)}: the import took longer than its time limit of "
                                f"{args.time_limit:g} s; raise it with --time-limit") from None
        except MemoryError:
            raise ImportFailure(f"{shown(args.model)}: out of memory while importing; the model's constants are "
                                f"capped at {limits.size_text(budget.cap)} (--max-memory), and the machine has "
                                f"less") from None
        print(printable(summary))
        return 0
    except ImportFailure as e:
        return _report(e)
    except Exception as e:  # a bug of the importer, not of the model: no traceback, a report
        if os.environ.get("PARTITA_IMPORT_DEBUG"):
            raise
        return _report(ImportFailure(f"internal error on {shown(model)}: {type(e).__name__}: {shown(first_line(e), 500)} "
                                     f"(set PARTITA_IMPORT_DEBUG=1 for the traceback)", code=EXIT_INTERNAL))
