#!/usr/bin/env python3
"""A fuzzer of tools/partita_import.py: mutated ONNX files, side files and arguments.

    fuzz_importer.py --seed S --count N [--jobs J] [--time-limit SEC] [--memory-limit MB]
                     [--findings DIR] [--compile-every K] [--allow-internal] [--tools DIR]
    fuzz_importer.py --replay FINDING_DIR [--debug]

The smoke run CTest registers (onnx_importer_fuzz) is a few thousand inputs with a fixed seed.
A longer run, on as many cores as there are:

    tests/onnx/fuzz_importer.py --count 100000 --seed $RANDOM --jobs $(nproc) --findings /tmp/fuzz

and, to compile a sample of the headers written as well (slow: a g++ run each):

    tests/onnx/fuzz_importer.py --count 20000 --seed $RANDOM --compile-every 50

--tools runs another copy of the importer (the folder holding partita_onnx/), for instance an
older commit's, `git archive COMMIT tools | tar -x -C /tmp/old`, to see which findings it had.

Input k of seed S is a function of (S, k) alone: a seed model (fuzz_corpus.py), then one to four
mutations, each drawn from its own generator, over the protobuf (tensor data, dims and types,
attributes, sparse and external tensors, ops, opsets, names with awkward payloads, huge folded
sizes), the file's bytes, the side files (escapes out of the model's folder, special files) and
the command line (namespace, --input-shape, --out, working directory). The importer runs in a
forked child of this process (onnx and numpy are imported once), in a fresh directory tree

    sandbox/secret.bin      a marker the importer must never read into its output
    sandbox/model/          the model and its side files
    sandbox/other/          another working directory
    sandbox/out             --out

under an address-space and a CPU-time limit, with a wall-clock limit enforced by this process.
An importer with a memory cap of its own (--max-memory) is given a quarter of the address-space
limit, so that an allocation the limit refuses is one the cap failed to count. The sandboxes
are made in /dev/shm when it exists ($PARTITA_FUZZ_WORK chooses another folder).

An input is a finding when the run breaks one of these rules:

    exit         the status is 0 or 2 (3, an internal error, only with --allow-internal)
    signal       no death by a signal; timeout: none past --time-limit; slow (with --slow SEC):
                 CPU time within SEC plus 1 ms per node of the model
    memory       no MemoryError or "out of memory", no numpy allocation refused by the
                 address-space limit (even one the importer caught), a peak resident size under
                 half the limit
    traceback    no "Traceback" in the output; warning: no "Warning"
    format       on failure, stderr is one line `partita_import: ...`, then lines indented by two
                 spaces; nothing else starts with `partita_import: `
    unprintable  no control character but the newline in stdout or stderr
    sandbox      nothing outside sandbox/out created, removed or changed
    secret       the marker is in no file written and not in the output
    escape       no exit 0 for a model whose external data lies outside its folder or in a
                 special file (a FIFO, /dev/zero, /proc)
    keyword      no exit 0 for a namespace that is a C++ keyword
    header       on exit 0, the header is UTF-8, free of control characters, and lexes as C++ (no string
                 literal broken by a newline, no comment spliced into the next line by a final
                 backslash, no block comment); with --compile-every K, every K-th header written
                 compiles (g++ -std=c++20 -fsyntax-only)

A finding is saved in --findings DIR (default: a new temporary folder) as
<class>-<seed>-<k>/: sandbox/ (the files as the importer saw them), case.json (how to run it)
and report.txt (the command line, exit status and output, the rules broken, the mutations).
The first few of each class are minimised: mutations that the finding does not need are dropped.
--replay runs one saved finding again and says whether it still is one (exit 1) or not (0).

The summary's last line is `fuzz_importer: N inputs, K findings (...)`; the exit status is 1
when there were findings, 0 when none, 77 (skipped) without onnx or numpy unless CI=true.
"""
from __future__ import annotations

import os

# Children are forked from this process: numpy's thread pools must not exist before the fork.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import copy  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import select  # noqa: E402
import shlex  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import stat  # noqa: E402
import struct  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

# The warning filters of a fresh interpreter: each child starts from them again, so that a
# warning this process saw once is printed by every child that triggers it.
_PRISTINE_WARNING_FILTERS = list(warnings.filters)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOLS = os.path.join(ROOT, "tools")
INCLUDE = os.path.join(ROOT, "include")

sys.path.insert(0, HERE)
import onnx_required  # noqa: E402

onnx_required.require("fuzz_importer")
import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import fuzz_corpus as corpus  # noqa: E402

cli = None  # partita_onnx.cli, from the folder --tools names (load_importer)
EXTRA_ARGS: list[str] = []  # arguments every run gets (--max-memory, where the importer has it)

PREFIX = "partita_import: "
# secret.bin is this block repeated: two ordinary floats (so that a tensor read from it survives
# as data) and an ASCII tag (so that a message quoting it shows).
MARKER = struct.pack("<2f", 1.2345678, -7.654321)
TAG = b"FUZZSCRT"
SECRET = (MARKER * 7 + TAG) * 1024
SANDBOX_TOKEN = "@SANDBOX@"

# -- payloads ------------------------------------------------------------------------------------

CPP_KEYWORDS = (
    "alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t "
    "class compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield "
    "decltype default delete do double dynamic_cast else enum explicit export extern false float for friend "
    "goto if inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private "
    "protected public register reinterpret_cast requires return short signed sizeof static static_assert "
    "static_cast struct switch template this thread_local throw true try typedef typeid typename union "
    "unsigned using virtual void volatile wchar_t while xor xor_eq").split()
# Names that are not keywords but are macros or the header's own names.
CPP_AWKWARD = ["NULL", "errno", "EOF", "stdin", "assert", "INFINITY", "NAN", "CHAR_BIT", "INT_MAX", "__cplusplus",
               "__LINE__", "_Pragma", "__attribute__", "std", "partita", "net", "model", "weights", "main",
               "in_x", "n0", "n1", "_Z1f", "__x", "_Upper", "x__y"]

PAYLOADS = [
    "line\nbreak", "\npartita_import: forged line", "\n  forged detail", "tail\n", "cr\rreturn", "crlf\r\nx",
    "*/", "/*", "a*/b", "/* open", "end */ int x; /*", '"', 'q"uote', '"); int x; ("', "\\", "back\\",
    "\\\nspliced", "??/", "tri??/", "??/\n", "??=define", "nul\x00byte", "\x00", "tab\tx", "vt\x0bff\x0c",
    "esc\x1b[2J\x1b[31m", "del\x7f", "nel\x85", "ls\u2028ps\u2029", "bom\ufeff", "é", "名前", "\U0001F600",
    "", " ", "  ", "-", "--out", "-h", "$HOME", "%s%n%x", "{}", "{0}", "'", "`id`", "..", "../x", "/abs",
    "a/b", "a.b", "a,b", "a=b", "x=1", "1abc",
] + CPP_KEYWORDS[:12] + CPP_AWKWARD

# Invalid UTF-8 sequences: a lone continuation, an overlong, a surrogate, a 5-byte form.
NON_UTF8 = [b"\xff", b"\x80", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\xc3\x28", b"\xfe\xfe"]


def long_payload(r: random.Random) -> str:
    unit = r.choice(["A", "\n", "*/", "é", "ab\\", '"'])
    return (unit * (10240 // len(unit) + 1))[:r.choice([256, 4096, 10240, 10241])]


def file_name(text: str) -> str:
    """`text` as one file name: no '/' or NUL, at most 200 bytes, not '.' or '..'."""
    raw = os.fsencode(text.replace("/", "_").replace("\x00", ""))[:200]
    name = os.fsdecode(raw)
    return name if name not in ("", ".", "..") else "_" + name


def payload(r: random.Random) -> str:
    """A name that is hard to print, quote or comment."""
    x = r.random()
    if x < 0.08:
        return long_payload(r)
    if x < 0.25:  # two payloads together, often around ordinary text
        return r.choice(["", "w."]) + r.choice(PAYLOADS) + r.choice(["", "_x"]) + r.choice(PAYLOADS)
    if x < 0.32:
        return "".join(chr(r.randrange(0, 0x80)) for _ in range(r.randrange(1, 12)))
    if x < 0.40:
        return r.choice(CPP_KEYWORDS)
    return r.choice(PAYLOADS)


def argv_payload(r: random.Random) -> str:
    """A command-line string: what a shell can pass (no NUL); non-UTF-8 bytes arrive as Python
    decodes them, escaped surrogates."""
    x = r.random()
    if x < 0.15:
        return os.fsdecode(b"ns" + r.choice(NON_UTF8))
    s = payload(r)
    return s.replace("\x00", "") if "\x00" in s else s


# -- cases ---------------------------------------------------------------------------------------

@dataclass
class Case:
    """One input as the mutators build it."""

    seed: str
    model: onnx.ModelProto
    files: dict[str, tuple] = field(default_factory=dict)  # path under sandbox -> ("file", bytes) ...
    model_name: str = "model.onnx"
    namespace: str = "m"
    shape_args: list[str] = field(default_factory=list)
    embed: bool = False
    out_kind: str = "dir"  # dir: absent, made by the importer; existing: a folder with files; file
    out_sub: str = ""  # a folder under out, given as --out
    cwd: str = "model"  # model, other or "" (the sandbox)
    absolute_paths: bool = False
    byte_ops: list[tuple] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    keyword_namespace: bool = False
    extra_args: list[str] = field(default_factory=list)
    tokens: int = 0

    def token(self, length: int) -> str:
        """A unique ASCII placeholder of `length` bytes, swapped for other bytes once serialized."""
        self.tokens += 1
        t = f"~Q{self.tokens:03d}"
        return (t + "q" * length)[:length] if length >= len(t) else t

    def shown(self, text: str) -> str:
        """`text` for the notes, with the placeholders' bytes in place."""
        for op in self.byte_ops:
            if op[0] == "replace" and op[1].decode() in text:
                text = text.replace(op[1].decode(), op[2].decode("utf-8", "backslashreplace"))
        return repr(text[:40]) + ("..." if len(text) > 40 else "")

    def name_payload(self, r: random.Random) -> str:
        """A payload for a protobuf string; one in six is invalid UTF-8 (patched in the bytes)."""
        if r.random() < 1 / 6:
            bad = b"n" + r.choice(NON_UTF8) + b"m" + r.choice(NON_UTF8) + b"z"
            bad += b"_" * max(0, 9 - len(bad))
            tok = self.token(len(bad))
            self.byte_ops.append(("replace", tok.encode(), bad))
            return tok
        return payload(r)


def all_tensors(m: onnx.ModelProto) -> list[onnx.TensorProto]:
    """Initializers, Constant values and tensors in attributes."""
    out = list(m.graph.initializer)
    for node in m.graph.node:
        for a in node.attribute:
            if a.HasField("t"):
                out.append(a.t)
            out.extend(a.tensors)
    for s in m.graph.sparse_initializer:
        out += [s.values, s.indices]
    return out


def value_names(m: onnx.ModelProto) -> list[str]:
    g = m.graph
    names = [i.name for i in g.input] + [o.name for o in g.output] + [t.name for t in g.initializer]
    for node in g.node:
        names += list(node.input) + list(node.output)
    return sorted({x for x in names if x})


def rename(m: onnx.ModelProto, old: str, new: str) -> None:
    """Renames value `old` everywhere the graph names it."""
    g = m.graph
    for node in g.node:
        for i, x in enumerate(node.input):
            if x == old:
                node.input[i] = new
        for i, x in enumerate(node.output):
            if x == old:
                node.output[i] = new
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.name == old:
            vi.name = new
    for t in g.initializer:
        if t.name == old:
            t.name = new
    for s in g.sparse_initializer:
        if s.values.name == old:
            s.values.name = new


def raw_form(t: onnx.TensorProto) -> bool:
    """Moves a tensor's typed data into raw_data; False when it cannot be read (external data is
    not: onnx would read it relative to this process's working directory)."""
    if t.HasField("raw_data"):
        return True
    if t.data_location == TensorProto.EXTERNAL:
        return False
    try:
        a = numpy_helper.to_array(t)
    except Exception:
        return False
    for f in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data", "string_data"):
        t.ClearField(f)
    t.raw_data = a.tobytes()
    return True


def itemsize(data_type: int) -> int:
    return {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 14: 8, 15: 16,
            16: 2}.get(data_type, 4)


def pick_tensor(c: Case, r: random.Random) -> onnx.TensorProto | None:
    ts = all_tensors(c.model)
    return r.choice(ts) if ts else None


def pick_node(c: Case, r: random.Random) -> onnx.NodeProto | None:
    return r.choice(c.model.graph.node) if c.model.graph.node else None


def add_output(m: onnx.ModelProto, name: str, elem: int, rank: int) -> None:
    vi = helper.make_tensor_value_info(name, elem, [f"d{i}" for i in range(rank)])
    m.graph.output.append(vi)


def i64(name: str, values) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values, dtype=np.int64), name)


def f32(name: str, values) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values, dtype=np.float32), name)


# -- mutators: tensors ---------------------------------------------------------------------------

def mut_raw_length(c: Case, r: random.Random) -> None:
    """raw_data shorter than one element, shorter or longer than the dims say, or empty."""
    t = pick_tensor(c, r)
    if t is None or not raw_form(t):
        return
    size, raw = itemsize(t.data_type), t.raw_data
    how = r.choice(["below-one", "below-one", "one-short", "half", "longer", "much-longer", "empty", "odd"])
    if how == "below-one":
        t.raw_data = raw[:r.randrange(1, size)] if size > 1 else b""
        if r.random() < 0.5:  # keep the dims, or make them say one element
            del t.dims[:]
            t.dims.extend([1] * r.randrange(0, 3))
    elif how == "one-short":
        t.raw_data = raw[:max(0, len(raw) - size)]
    elif how == "half":
        t.raw_data = raw[:len(raw) // 2]
    elif how == "longer":
        t.raw_data = raw + raw[:size] * r.randrange(1, 4)
    elif how == "much-longer":
        t.raw_data = raw * r.randrange(2, 50)
    elif how == "empty":
        t.raw_data = b""
    else:
        t.raw_data = raw + b"\x01" * r.randrange(1, size + 1)
    c.notes.append(f"raw_data of tensor {t.name!r}: {how} ({len(raw)} -> {len(t.raw_data)} bytes)")


def mut_dims(c: Case, r: random.Random) -> None:
    t = pick_tensor(c, r)
    if t is None:
        return
    how = r.choice(["zero", "negative", "huge", "add", "drop", "rank100", "swap"])
    dims = list(t.dims)
    if how == "zero":
        dims = [0] + dims[1:] if dims else [0]
    elif how == "negative":
        dims = [-1] + dims[1:] if dims else [-1]
    elif how == "huge":
        dims = dims[:-1] + [r.choice([2 ** 31, 2 ** 32 + 1, 2 ** 62, 2 ** 63 - 1])]
    elif how == "add":
        dims = dims + [r.randrange(1, 5)]
    elif how == "drop":
        dims = dims[1:]
    elif how == "rank100":
        dims = [1] * 100 + dims
    else:
        dims = dims[::-1]
    del t.dims[:]
    t.dims.extend(dims)
    c.notes.append(f"dims of tensor {t.name!r}: {how} -> {dims[:8]}{'...' if len(dims) > 8 else ''}")


ODD_TYPES = [0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 99, 2 ** 31 - 1, -1]


def mut_dtype(c: Case, r: random.Random) -> None:
    """A tensor's or a graph input's element type to another, odd or unknown enum."""
    dt = r.choice(ODD_TYPES)
    if r.random() < 0.7:
        t = pick_tensor(c, r)
        if t is None:
            return
        t.data_type = dt
        c.notes.append(f"data_type of tensor {t.name!r} -> {dt}")
    else:
        g = c.model.graph
        vi = r.choice(list(g.input) + list(g.output))
        vi.type.tensor_type.elem_type = dt
        c.notes.append(f"elem_type of {vi.name!r} -> {dt}")


INT64_VALUES = [0, -1, 1, 2, -2, 7, 2 ** 31 - 1, 2 ** 31, -2 ** 31 - 1, 2 ** 32, 2 ** 62, 2 ** 63 - 1, -2 ** 63]


def mut_int64(c: Case, r: random.Random) -> None:
    """An initializer replaced by int64 values (extremes among them), same name and shape."""
    g = c.model.graph
    if not g.initializer:
        return
    i = r.randrange(len(g.initializer))
    t = g.initializer[i]
    shape = tuple(t.dims)
    count = int(np.prod(shape)) if shape else 1
    if count > 4096:
        return
    values = np.array([r.choice(INT64_VALUES) for _ in range(count)], dtype=np.int64).reshape(shape)
    new = numpy_helper.from_array(values, t.name)
    g.initializer[i].CopyFrom(new)
    c.notes.append(f"initializer {t.name!r} -> int64 {values.reshape(-1)[:6].tolist()}")


def mut_sparse(c: Case, r: random.Random) -> None:
    """A sparse initializer (replacing a dense one of the same name, or new), valid or not; or a
    Constant holding a sparse_value."""
    g = c.model.graph
    dims = [r.randrange(1, 5), r.randrange(1, 5)]
    nnz = min(r.randrange(0, 4), dims[0] * dims[1])
    how = r.choice(["valid", "index-out-of-range", "count-mismatch", "bad-index-type", "huge-dims", "rank3-indices"])
    values = f32("sp_values", [r.uniform(-2, 2) for _ in range(nnz if how != "count-mismatch" else nnz + 2)])
    idx = sorted(r.sample(range(dims[0] * dims[1]), nnz))
    if how == "index-out-of-range":
        idx = [x + dims[0] * dims[1] + r.choice([0, 2 ** 40]) for x in idx] or [99]
    indices = i64("sp_indices", idx)
    if how == "bad-index-type":
        indices = f32("sp_indices", idx)
    if how == "rank3-indices":
        indices = i64("sp_indices", np.array(idx + [0] * (-len(idx) % 2), dtype=np.int64).reshape(1, -1, 1))
    if how == "huge-dims":
        dims = [2 ** 20, 2 ** 20]
    sp = onnx.SparseTensorProto()
    sp.values.CopyFrom(values)
    sp.indices.CopyFrom(indices)
    sp.dims.extend(dims)
    if r.random() < 0.5 and g.initializer:
        victim = r.choice(g.initializer)
        sp.values.name = victim.name
        keep = [t for t in g.initializer if t.name != victim.name]
        del g.initializer[:]
        g.initializer.extend(keep)
        g.sparse_initializer.append(sp)
        c.notes.append(f"initializer {victim.name!r} -> sparse ({how}, dims {dims})")
    elif r.random() < 0.5:
        sp.values.name = "sparse_extra"
        g.sparse_initializer.append(sp)
        c.notes.append(f"extra sparse initializer ({how}, dims {dims})")
    else:
        node = helper.make_node("Constant", [], ["sparse_const"], name="sparse_const", sparse_value=sp)
        g.node.insert(0, node)
        add_output(c.model, "sparse_const", TensorProto.FLOAT, len(dims))
        c.notes.append(f"Constant with sparse_value ({how}, dims {dims})")


# -- mutators: nodes, attributes, opsets ---------------------------------------------------------

ATTR_INTS = [0, -1, 1, 2, 3, -2 ** 63, 2 ** 62, 2 ** 31, 2 ** 63 - 1, 1000000]
ATTR_FLOATS = [0.0, -0.0, 1e-45, -1.0, 1e38, 3.5e38, float("nan"), float("inf"), float("-inf")]


def mut_attribute(c: Case, r: random.Random) -> None:
    """An attribute's type, value, or presence changed."""
    nodes = [x for x in c.model.graph.node if x.attribute] or list(c.model.graph.node)
    if not nodes:
        return
    node = r.choice(nodes)
    how = r.choice(["retype", "retype", "value", "value", "delete", "duplicate", "unknown", "undefined", "name"])
    if not node.attribute and how not in ("unknown",):
        how = "unknown"
    if how == "unknown":
        kind = r.choice(["int", "float", "str", "ints", "tensor"])
        value = {"int": r.choice(ATTR_INTS), "float": r.choice(ATTR_FLOATS), "str": payload(r).encode("utf-8", "replace"),
                 "ints": [r.choice(ATTR_INTS) for _ in range(r.randrange(0, 9))],
                 "tensor": f32("t", [1.0, 2.0])}[kind]
        name = r.choice(["axis", "axes", "perm", "pads", "strides", "kernel_shape", "group", "value", "to", "mode",
                         "epsilon", "alpha", "transA", "transB", "keepdims", "bogus", "split", "dilations"])
        node.attribute.append(helper.make_attribute(name, value))
        c.notes.append(f"node {node.name!r} {node.op_type}: attribute {name}={kind} added")
        return
    a = r.choice(node.attribute)
    if how == "retype":
        a.type = r.choice([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14])
        c.notes.append(f"node {node.name!r} {node.op_type}: attribute {a.name} type -> {a.type}")
    elif how == "undefined":
        a.type = 0
        c.notes.append(f"node {node.name!r} {node.op_type}: attribute {a.name} type UNDEFINED")
    elif how == "value":
        if a.type == onnx.AttributeProto.INT:
            a.i = r.choice(ATTR_INTS)
        elif a.type == onnx.AttributeProto.FLOAT:
            a.f = r.choice(ATTR_FLOATS)
        elif a.type == onnx.AttributeProto.INTS:
            del a.ints[:]
            a.ints.extend(r.choice(ATTR_INTS) for _ in range(r.choice([0, 1, 2, 3, 5, 9, 64])))
        elif a.type == onnx.AttributeProto.STRING:
            a.s = c.name_payload(r).encode("utf-8", "surrogateescape")
        elif a.type == onnx.AttributeProto.TENSOR:
            t = a.t
            raw_form(t)
            t.raw_data = t.raw_data[:r.randrange(0, max(1, len(t.raw_data)))]
        elif a.type == onnx.AttributeProto.FLOATS:
            del a.floats[:]
            a.floats.extend(r.choice(ATTR_FLOATS) for _ in range(r.randrange(0, 5)))
        c.notes.append(f"node {node.name!r} {node.op_type}: attribute {a.name} value changed")
    elif how == "delete":
        keep = [x for x in node.attribute if x is not a]
        name = a.name
        del node.attribute[:]
        node.attribute.extend(keep)
        c.notes.append(f"node {node.name!r} {node.op_type}: attribute {name} deleted")
    elif how == "duplicate":
        node.attribute.append(copy.deepcopy(a))
        c.notes.append(f"node {node.name!r} {node.op_type}: attribute {a.name} twice")
    else:
        a.name = c.name_payload(r)
        c.notes.append(f"node {node.name!r} {node.op_type}: an attribute renamed")


def mut_constant_tensor(c: Case, r: random.Random) -> None:
    """A Constant node whose value tensor holds bad data, read by an Add with a graph input."""
    t = f32("cv", [1.0, 2.0, 3.0, 4.0])
    how = r.choice(["short", "dims", "string", "empty", "no-data", "double-data"])
    if how == "short":
        t.raw_data = t.raw_data[:r.randrange(0, 4)] if t.HasField("raw_data") else b"\x01"
        if not t.HasField("raw_data"):
            del t.float_data[:]
    elif how == "dims":
        del t.dims[:]
        t.dims.extend([r.choice([3, 5, 2 ** 33, 0])])
    elif how == "string":
        t.data_type = TensorProto.STRING
        t.ClearField("raw_data")
        t.string_data.append(payload(r).encode("utf-8", "replace"))
    elif how == "empty":
        t = onnx.TensorProto()
        t.data_type = TensorProto.FLOAT
    elif how == "no-data":
        t.ClearField("raw_data")
        del t.float_data[:]
    else:
        t.float_data.extend([5.0, 6.0])
    node = helper.make_node("Constant", [], ["bad_const"], name="bad_const", value=t)
    g = c.model.graph
    g.node.insert(0, node)
    if g.input and r.random() < 0.5:
        g.node.append(helper.make_node("Add", [g.input[0].name, "bad_const"], ["bad_sum"], name="bad_sum"))
        add_output(c.model, "bad_sum", TensorProto.FLOAT, 2)
    else:
        add_output(c.model, "bad_const", TensorProto.FLOAT, 1)
    c.notes.append(f"Constant with a bad value tensor ({how})")


OPS = ["Relu", "Add", "Conv", "Gemm", "MatMul", "Reshape", "Softmax", "Erf", "ConstantOfShape", "Expand", "Range",
       "Tile", "Resize", "Constant", "Identity", "Dropout", "Cast", "Shape", "Gather", "Concat", "Split", "Slice",
       "LSTM", "NonZero", "TopK", "QuantizeLinear", "QLinearConv", "If", "Loop", "Scan", "Einsum", "Dense", "Gelu",
       "LayerNormalization", "BatchNormalization", "", "relu", "Unknown", "Upsample", "Pad", "Where", "Sum"]
DOMAINS = ["", "ai.onnx", "com.microsoft", "ai.onnx.ml", "partita", "ai.onnx.preview.training", "custom"]


def mut_op(c: Case, r: random.Random) -> None:
    node = pick_node(c, r)
    if node is None:
        return
    if r.random() < 0.6:
        old, node.op_type = node.op_type, r.choice(OPS) if r.random() < 0.9 else c.name_payload(r)
        c.notes.append(f"node {node.name!r}: op {old} -> {node.op_type!r}")
    else:
        node.domain = r.choice(DOMAINS) if r.random() < 0.8 else c.name_payload(r)
        if node.domain not in ("", "ai.onnx") and r.random() < 0.7:
            c.model.opset_import.append(helper.make_opsetid(node.domain, r.choice([1, 2, 13])))
        c.notes.append(f"node {node.name!r} {node.op_type}: domain -> {node.domain!r}")


def mut_opset(c: Case, r: random.Random) -> None:
    m = c.model
    how = r.choice(["version", "version", "duplicate", "none", "ir", "ir"])
    if how == "version":
        v = r.choice([0, 1, 7, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 99, 2 ** 31, 2 ** 62, -1])
        for o in m.opset_import:
            if o.domain in ("", "ai.onnx"):
                o.version = v
        c.notes.append(f"default opset -> {v}")
    elif how == "duplicate":
        m.opset_import.append(helper.make_opsetid(r.choice(["", "ai.onnx"]), r.choice([9, 13, 18, 30])))
        c.notes.append("default domain imported twice")
    elif how == "none":
        del m.opset_import[:]
        c.notes.append("no opset_import")
    else:
        m.ir_version = r.choice([0, 1, 2, 3, 4, 7, 8, 9, 10, 99, -1, 2 ** 62])
        c.notes.append(f"ir_version -> {m.ir_version}")


def mut_structure(c: Case, r: random.Random) -> None:
    """Nodes removed, duplicated, reordered, made cyclic; outputs pointed at odd values."""
    g = c.model.graph
    how = r.choice(["remove", "duplicate", "reverse", "cycle", "output-initializer", "output-twice", "drop-input",
                    "input-is-initializer", "value-info", "dangling", "self-loop"])
    nodes = list(g.node)
    if how == "remove" and nodes:
        del g.node[r.randrange(len(nodes))]
    elif how == "duplicate" and nodes:
        g.node.append(copy.deepcopy(r.choice(nodes)))
    elif how == "reverse":
        del g.node[:]
        g.node.extend(nodes[::-1])
    elif how == "cycle" and len(nodes) >= 2:
        a, b = nodes[0], nodes[-1]
        if a.input and b.output:
            a.input[0] = b.output[0]
    elif how == "self-loop" and nodes and nodes[0].input and nodes[0].output:
        nodes[0].input[0] = nodes[0].output[0]
    elif how == "output-initializer" and g.initializer:
        t = g.initializer[0]
        g.output.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    elif how == "output-twice" and g.output:
        g.output.append(copy.deepcopy(g.output[0]))
    elif how == "drop-input" and g.input:
        del g.input[0]
    elif how == "input-is-initializer" and g.initializer:
        t = g.initializer[-1]
        g.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    elif how == "value-info":
        names = value_names(c.model)
        if names:
            g.value_info.append(helper.make_tensor_value_info(r.choice(names), r.choice(ODD_TYPES[:12]),
                                                              [r.choice([0, 1, 7, "s"]) for _ in range(r.randrange(0, 4))]))
    elif how == "dangling" and nodes:
        node = r.choice(nodes)
        if node.input:
            node.input[r.randrange(len(node.input))] = "nowhere"
    c.notes.append(f"structure: {how}")


def mut_deep(c: Case, r: random.Random) -> None:
    """An If node whose branches nest `depth` graphs deep."""
    depth = r.choice([8, 40, 99, 101, 200])
    inner = helper.make_graph([helper.make_node("Constant", [], ["leaf"], value=f32("lv", [1.0]))], "leaf", [],
                              [helper.make_tensor_value_info("leaf", TensorProto.FLOAT, [1])])
    leaf = inner
    for k in range(depth):  # one branch nests, the other is the leaf: the size grows linearly
        node = helper.make_node("If", ["cond"], [f"o{k}"], then_branch=inner, else_branch=leaf)
        inner = helper.make_graph([node], f"g{k}", [], [helper.make_tensor_value_info(f"o{k}", TensorProto.FLOAT, [1])])
    g = c.model.graph
    g.initializer.append(numpy_helper.from_array(np.array(True), "cond"))
    g.node.append(helper.make_node("If", ["cond"], ["deep"], name="deep", then_branch=inner, else_branch=leaf))
    add_output(c.model, "deep", TensorProto.FLOAT, 1)
    c.notes.append(f"If nested {depth} deep")


def mut_exotic(c: Case, r: random.Random) -> None:
    """Parts of the format small models rarely use: local functions, tensors in subgraphs,
    string tensors, segments, graph-typed attributes on ordinary ops, value_info and metadata."""
    m, g = c.model, c.model.graph
    how = r.choice(["function", "subgraph-tensor", "string-tensor", "segment", "graph-attribute", "value-info-names",
                    "many-outputs", "training-info"])
    if how == "function":
        body = [helper.make_node(r.choice(["Relu", "Erf", "ConstantOfShape", "Unknown"]), ["fx"], ["fy"])]
        f = helper.make_function(r.choice(["custom", "", c.name_payload(r)]), r.choice(["Fn", "Relu", c.name_payload(r)]),
                                 ["fx"], ["fy"], body, [helper.make_opsetid("", 13)])
        m.functions.append(f)
        if g.input:
            g.node.append(helper.make_node(f.name, [g.input[0].name], ["fn_out"], domain=f.domain, name="call"))
            add_output(m, "fn_out", TensorProto.FLOAT, 2)
            m.opset_import.append(helper.make_opsetid(f.domain, 1))
    elif how == "subgraph-tensor":
        t = f32("inner", [1.0, 2.0])
        t.raw_data = t.raw_data[:r.choice([0, 1, 3, 7])]
        branch = helper.make_graph([helper.make_node("Constant", [], ["b"], value=t)], "branch", [],
                                   [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])])
        g.initializer.append(numpy_helper.from_array(np.array(True), "cond_sub"))
        g.node.append(helper.make_node("If", ["cond_sub"], ["sub_out"], name="if", then_branch=branch,
                                       else_branch=branch))
        add_output(m, "sub_out", TensorProto.FLOAT, 1)
    elif how == "string-tensor" and g.initializer:
        t = r.choice(g.initializer)
        t.ClearField("raw_data")
        for f in ("float_data", "int32_data", "int64_data", "double_data"):
            t.ClearField(f)
        t.data_type = TensorProto.STRING
        count = int(np.prod(t.dims)) if len(t.dims) and all(0 <= d < 64 for d in t.dims) else 1
        t.string_data.extend([b"\xff\xfe" + payload(r).encode("utf-8", "replace")] * count)
    elif how == "segment":
        t = pick_tensor(c, r)
        if t is not None:
            t.segment.begin, t.segment.end = r.choice([(0, 1), (5, 2), (-1, 2 ** 62)])
    elif how == "graph-attribute":
        node = pick_node(c, r)
        if node is not None:
            node.attribute.append(helper.make_attribute(r.choice(["body", "axis", "then_branch"]),
                                                        helper.make_graph([], "empty", [], [])))
    elif how == "value-info-names":
        for name in value_names(m)[:r.randrange(1, 6)]:
            g.value_info.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [c.name_payload(r), 2]))
    elif how == "many-outputs" and g.node:
        node = r.choice(g.node)
        node.output.extend(f"extra{k}" for k in range(r.choice([1, 5, 1000])))
    elif how == "training-info":
        ti = m.training_info.add()
        ti.algorithm.CopyFrom(helper.make_graph([], c.name_payload(r), [], []))
    c.notes.append(f"exotic: {how}")


def mut_input_dims(c: Case, r: random.Random) -> None:
    g = c.model.graph
    if not g.input:
        return
    vi = r.choice(g.input)
    t = vi.type.tensor_type
    how = r.choice(["param", "zero", "negative", "huge", "no-shape", "rank", "no-type"])
    if how == "no-shape":
        t.ClearField("shape")
    elif how == "no-type":
        vi.ClearField("type")
    elif how == "rank":
        t.shape.dim.add().dim_value = r.choice([1, 2, 3])
    elif t.shape.dim:
        d = r.choice(t.shape.dim)
        if how == "param":
            d.dim_param = c.name_payload(r)
        else:
            d.dim_value = {"zero": 0, "negative": -3, "huge": r.choice([2 ** 31, 2 ** 40, 2 ** 63 - 1])}[how]
    c.notes.append(f"input {vi.name!r}: {how}")


# -- mutators: huge folded sizes -----------------------------------------------------------------

HUGE_SHAPES = [[65536, 65536], [2 ** 33], [1, 2 ** 20, 2 ** 20], [2 ** 16, 2 ** 16, 2], [2 ** 31, 3]]
MEDIUM_SHAPES = [[4096, 4096], [2 ** 23], [2048, 8192]]


def mut_huge(c: Case, r: random.Random) -> None:
    """A node whose folded value has 2^32 elements or more (sometimes only 2^22 to 2^24, which
    numpy can hold but Erf then evaluates element by element)."""
    g = c.model.graph
    shape = r.choice(HUGE_SHAPES) if r.random() < 0.8 else r.choice(MEDIUM_SHAPES)
    op = r.choice(["ConstantOfShape", "ConstantOfShape", "Expand", "Tile", "Range", "Resize"])
    k = len(g.node)
    out = f"huge{k}"
    elem = TensorProto.FLOAT
    nodes, inits = [], []
    if op == "ConstantOfShape":
        if r.random() < 0.5:
            inits.append(i64(f"huge_shape{k}", shape))
        else:
            nodes.append(helper.make_node("Constant", [], [f"huge_shape{k}"], value=i64("hs", shape)))
        nodes.append(helper.make_node("ConstantOfShape", [f"huge_shape{k}"], [out], name=f"fill{k}",
                                      value=f32("v", [0.25])))
    elif op == "Expand":
        inits += [f32(f"huge_one{k}", [1.5]), i64(f"huge_shape{k}", shape)]
        nodes.append(helper.make_node("Expand", [f"huge_one{k}", f"huge_shape{k}"], [out], name=f"expand{k}"))
    elif op == "Tile":
        base = [2] * len(shape)
        inits += [f32(f"huge_base{k}", np.ones(base)), i64(f"huge_reps{k}", [max(1, s // 2) for s in shape])]
        nodes.append(helper.make_node("Tile", [f"huge_base{k}", f"huge_reps{k}"], [out], name=f"tile{k}"))
    elif op == "Range":
        total = int(np.prod(shape))
        if r.random() < 0.5:
            inits += [i64(f"r0_{k}", 0), i64(f"r1_{k}", total), i64(f"r2_{k}", 1)]
            elem = TensorProto.INT64
        else:
            inits += [f32(f"r0_{k}", 0.0), f32(f"r1_{k}", 1.0), f32(f"r2_{k}", 1.0 / total)]
        nodes.append(helper.make_node("Range", [f"r0_{k}", f"r1_{k}", f"r2_{k}"], [out], name=f"range{k}"))
        shape = [total]
    else:
        inits += [f32(f"img{k}", np.ones((1, 1, 2, 2))), f32(f"scales{k}", [1, 1, 65536, 65536])]
        nodes.append(helper.make_node("Resize", [f"img{k}", "", f"scales{k}"], [out], name=f"resize{k}", mode="nearest"))
        shape = [1, 1, 131072, 131072]
    if r.random() < 0.5 and elem == TensorProto.FLOAT:  # Erf folds too: once more the size of the value
        nodes.append(helper.make_node("Erf", [out], [out + "_erf"], name=f"erf{k}"))
        out += "_erf"
    g.initializer.extend(inits)
    g.node.extend(nodes)
    if g.output and r.random() < 0.5 and elem == TensorProto.FLOAT:
        g.node.append(helper.make_node("Add", [g.output[0].name, out], [out + "_sum"], name=f"sum{k}"))
        out += "_sum"
    add_output(c.model, out, elem, len(shape))
    c.notes.append(f"{op} of shape {shape} ({int(np.prod(shape))} elements){' then Erf' if '_erf' in out else ''}")


# -- mutators: names -----------------------------------------------------------------------------

def mut_names(c: Case, r: random.Random) -> None:
    """Payload names: nodes, values, initializers, inputs, outputs, domains, dim_params, docs."""
    m, g = c.model, c.model.graph
    for _ in range(r.choice([1, 1, 2, 3])):
        where = r.choice(["node", "node", "value", "value", "initializer", "input", "output", "domain", "dim_param",
                          "doc", "graph", "producer", "metadata"])
        p = c.name_payload(r)
        if where == "node" and g.node:
            r.choice(g.node).name = p
        elif where == "value":
            names = [x for x in value_names(m) if x not in {t.name for t in g.initializer}]
            if names:
                rename(m, r.choice(names), p)
        elif where == "initializer" and g.initializer:
            rename(m, r.choice(g.initializer).name, p)
        elif where == "input" and g.input:
            rename(m, r.choice(g.input).name, p)
        elif where == "output" and g.output:
            rename(m, r.choice(g.output).name, p)
        elif where == "domain" and g.node:
            node = r.choice(g.node)
            node.domain = p
            m.opset_import.append(helper.make_opsetid(p, 1))
        elif where == "dim_param" and g.input and g.input[0].type.tensor_type.shape.dim:
            g.input[0].type.tensor_type.shape.dim[0].dim_param = p
        elif where == "doc":
            target = r.choice([m, g] + list(g.node))
            target.doc_string = p
        elif where == "graph":
            g.name = p
        elif where == "producer":
            m.producer_name, m.producer_version = p, r.choice(["1.0", p])
        elif where == "metadata":
            e = m.metadata_props.add()
            e.key, e.value = p, p
        c.notes.append(f"name payload in {where}: {c.shown(p)}")


def mut_model_name(c: Case, r: random.Random) -> None:
    """The model file's own name: a payload a file name can hold (no '/', no NUL)."""
    if r.random() < 0.2:
        name = os.fsdecode(b"m" + r.choice(NON_UTF8) + b".onnx")
    else:
        name = file_name(payload(r)[:180] + r.choice([".onnx", "", ".onnx\n"]))
    c.model_name = name
    c.notes.append(f"model file name {name!r}")


# -- mutators: external data ---------------------------------------------------------------------

def _externalize(c: Case, r: random.Random, tensors: list[onnx.TensorProto], location: str) -> int:
    """Moves `tensors` into side file model/`location`; returns its size."""
    blob = bytearray()
    for t in tensors:
        if not raw_form(t):
            continue
        blob += b"\0" * (-len(blob) % 16)
        offset = len(blob)
        blob += t.raw_data
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        del t.external_data[:]
        for k, v in (("location", location), ("offset", str(offset)), ("length", str(len(blob) - offset))):
            e = t.external_data.add()
            e.key, e.value = k, v
    c.files["model/" + location] = ("file", bytes(blob))
    return len(blob)


def external_tensors(m: onnx.ModelProto) -> list[onnx.TensorProto]:
    return [t for t in all_tensors(m) if t.data_location == TensorProto.EXTERNAL]


def _set(t: onnx.TensorProto, key: str, value: str | None) -> None:
    keep = [(e.key, e.value) for e in t.external_data if e.key != key]
    if value is not None:
        keep.append((key, value))
    del t.external_data[:]
    for k, v in keep:
        e = t.external_data.add()
        e.key, e.value = k, v


def mut_external(c: Case, r: random.Random) -> None:
    """External data where it must not be read from: out of the model's folder, special files,
    links leading out; offsets and lengths beyond the file; malformed entries."""
    m = c.model
    ext = external_tensors(m)
    if not ext or r.random() < 0.3:
        pool = list(m.graph.initializer)
        if r.random() < 0.25:  # a Constant's value too, which onnx resolves against the working directory
            pool += [a.t for node in m.graph.node for a in node.attribute if a.HasField("t")]
        if not pool:
            return
        chosen = r.sample(pool, r.randrange(1, len(pool) + 1))
        location = r.choice(["w.bin", "data/w.bin", "w.bin"])
        while "model/" + location in c.files:  # a side file already holding other tensors
            location = "x" + location
        _externalize(c, r, chosen, location)
        ext = external_tensors(m)
        c.notes.append(f"{len(chosen)} tensors moved to external data")
    t = r.choice(ext)
    up = {"model": "..", "other": "..", "": "."}[c.cwd]
    how = r.choice(["escape", "escape", "absolute", "dev-zero", "environ", "fifo", "symlink-out", "symlink-dev",
                    "symlink-in", "dir", "offset-beyond", "length-beyond", "huge-length", "bad-number", "negative",
                    "empty-location", "nul", "self", "no-entries", "payload-file", "checksum", "unknown-key",
                    "deep-escape", "symlinked-folder"])
    length = next((e.value for e in t.external_data if e.key == "length"), "16")
    if how == "escape":
        _set(t, "location", "../secret.bin")
        _set(t, "offset", "0")
    elif how == "deep-escape":
        _set(t, "location", "data/../../secret.bin")
        _set(t, "offset", "64")
    elif how == "absolute":
        # /proc/self/cwd names the child's working directory: an absolute path to the secret
        # that does not depend on where the sandbox is.
        _set(t, "location", f"/proc/self/cwd/{up}/secret.bin")
        _set(t, "offset", "0")
    elif how == "dev-zero":
        _set(t, "location", "/dev/zero")
        _set(t, "offset", "0")
        if r.random() < 0.3:
            _set(t, "length", str(r.choice([2 ** 31, 2 ** 40])))
    elif how == "environ":
        _set(t, "location", "/proc/self/environ")
        _set(t, "offset", "0")
        _set(t, "length", r.choice([length, "4", None]))
    elif how == "fifo":
        c.files["model/pipe.bin"] = ("fifo",)
        _set(t, "location", "pipe.bin")
    elif how == "symlink-out":
        c.files["model/link.bin"] = ("symlink", "../secret.bin")
        _set(t, "location", "link.bin")
        _set(t, "offset", "0")
    elif how == "symlinked-folder":
        c.files["model/up"] = ("symlink", "..")
        _set(t, "location", "up/secret.bin")
        _set(t, "offset", "0")
    elif how == "symlink-dev":
        c.files["model/zero.bin"] = ("symlink", "/dev/zero")
        _set(t, "location", "zero.bin")
        _set(t, "offset", "0")
    elif how == "symlink-in":  # a link inside the folder: allowed either way
        loc = next((e.value for e in t.external_data if e.key == "location"), "w.bin").replace("\x00", "")
        c.files["model/inside.bin"] = ("symlink", loc or "w.bin")
        _set(t, "location", "inside.bin")
    elif how == "dir":
        _set(t, "location", r.choice([".", "data", "..", "/"]))
    elif how == "offset-beyond":
        _set(t, "offset", str(r.choice([10 ** 6, 2 ** 40, 2 ** 63 - 1])))
    elif how == "length-beyond":
        _set(t, "length", str(int(length) + r.choice([4, 4096, 2 ** 20]) if length.isdigit() else 4096))
    elif how == "huge-length":
        _set(t, "length", str(r.choice([2 ** 31, 2 ** 40, 2 ** 62, 2 ** 64 + 8])))
    elif how == "bad-number":
        _set(t, r.choice(["offset", "length"]), r.choice(["abc", "1e3", "0x10", "", " 4", "4.0", "١٢"]))
    elif how == "negative":
        _set(t, r.choice(["offset", "length"]), "-" + r.choice(["1", "4", "9223372036854775808"]))
    elif how == "empty-location":
        _set(t, "location", r.choice(["", None]))
    elif how == "nul":
        _set(t, "location", "w.bin\x00../../secret.bin")
    elif how == "self":
        _set(t, "location", c.model_name)
        _set(t, "offset", "0")
    elif how == "no-entries":
        del t.external_data[:]
    elif how == "payload-file":
        name = file_name(payload(r))
        loc = next((e.value for e in t.external_data if e.key == "location"), None)
        data = c.files.get("model/" + loc, ("file", b""))[1] if loc else b""
        c.files["model/" + name] = ("file", data if isinstance(data, bytes) else b"")
        _set(t, "location", name)
    elif how == "checksum":
        _set(t, "checksum", r.choice(["0" * 40, "zz", ""]))
    else:
        _set(t, c.name_payload(r), "1")
    c.notes.append(f"external data of {t.name!r}: {how}")


# -- mutators: command line ----------------------------------------------------------------------

def mut_namespace(c: Case, r: random.Random) -> None:
    x = r.random()
    if x < 0.4:
        c.namespace = r.choice(CPP_KEYWORDS)
    elif x < 0.55:
        c.namespace = r.choice(CPP_AWKWARD)
    elif x < 0.65:
        c.namespace = "a" * r.choice([255, 256, 4096])
    else:
        c.namespace = argv_payload(r)
    c.keyword_namespace = c.namespace in CPP_KEYWORDS
    c.notes.append(f"--namespace {c.namespace[:40]!r}")


def mut_input_shape(c: Case, r: random.Random) -> None:
    inputs = [i.name for i in c.model.graph.input] or ["x"]
    name = r.choice(inputs) if r.random() < 0.7 else argv_payload(r)
    dims = r.choice(["1,4", "2,8", "1,3,8,8", "0", "-1", "1,,2", "", "1e3", "0x10", "99999999999999999999",
                     "65536,65536", "65536,65536,65536", ",".join(["1"] * 100), "1=2", " 1", "١", "2,3,4"])
    spec = r.choice([f"{name}={dims}", f"={dims}", name, f"{name}={dims}={dims}"])
    c.shape_args.append(spec.replace("\x00", ""))
    c.notes.append(f"--input-shape {spec[:60]!r}")


def mut_limit_args(c: Case, r: random.Random) -> None:
    """The importer's own limits given odd values (an importer without them refuses the option)."""
    if r.random() < 0.5:
        value = r.choice(["0", "-1", "1", "1K", "1T", "999999999999999G", "abc", "", "4 G", "1e3", "0x10"])
        c.extra_args.append("--max-memory=" + value)
    else:
        value = r.choice(["0", "-1", "nan", "inf", "1e308", "1e-9", "0.001", "abc", ""])
        c.extra_args.append("--time-limit=" + value)
    c.notes.append(f"argument {c.extra_args[-1]!r}")


def mut_out(c: Case, r: random.Random) -> None:
    how = r.choice(["file", "file", "existing", "subdir", "embed"])
    if how == "file":
        c.out_kind = "file"
        c.out_sub = r.choice(["", "", "below"])
    elif how == "existing":
        c.out_kind = "existing"
    elif how == "subdir":
        c.out_sub = file_name(payload(r))
    else:
        c.embed = True
    c.notes.append(f"--out: {how} {c.out_sub[:40]!r}")


def mut_cwd(c: Case, r: random.Random) -> None:
    c.cwd = r.choice(["model", "other", ""])
    c.absolute_paths = r.random() < 0.5
    c.notes.append(f"cwd {c.cwd or 'sandbox'!r}, {'absolute' if c.absolute_paths else 'relative'} paths")


# -- mutators: bytes -----------------------------------------------------------------------------

def mut_bytes(c: Case, r: random.Random) -> None:
    """Raw damage to the serialized file, done once every other mutation is."""
    how = r.choice(["flip", "flip", "insert", "truncate", "delete", "duplicate", "varint", "zero"])
    c.byte_ops.append((how, r.random(), r.randrange(1, 17), r.randrange(2 ** 32)))
    c.notes.append(f"bytes: {how}")


def apply_byte_op(data: bytes, op: tuple) -> bytes:
    kind = op[0]
    if kind == "replace":
        return data.replace(op[1], op[2])
    _, where, count, salt = op
    r = random.Random(salt)
    b = bytearray(data)
    if not b:
        return data
    at = int(where * len(b)) % len(b)
    if kind == "flip":
        for _ in range(count):
            b[r.randrange(len(b))] ^= 1 << r.randrange(8)
    elif kind == "insert":
        b[at:at] = bytes(r.randrange(256) for _ in range(count))
    elif kind == "truncate":
        del b[at:]
    elif kind == "delete":
        del b[at:at + count]
    elif kind == "duplicate":
        b[at:at] = b[at:at + count * 8]
    elif kind == "varint":
        b[at:at + 1] = b"\xff" * count
    else:
        b[at:at + count] = b"\0" * len(b[at:at + count])
    return bytes(b)


# name, weight, mutator
MUTATORS = [
    ("raw-length", 8, mut_raw_length), ("dims", 4, mut_dims), ("dtype", 4, mut_dtype), ("int64", 4, mut_int64),
    ("sparse", 3, mut_sparse), ("attribute", 7, mut_attribute), ("constant-tensor", 3, mut_constant_tensor),
    ("op", 4, mut_op), ("opset", 3, mut_opset), ("structure", 4, mut_structure), ("deep", 1, mut_deep), ("exotic", 4, mut_exotic),
    ("input-dims", 3, mut_input_dims), ("huge", 5, mut_huge), ("names", 12, mut_names),
    ("model-name", 2, mut_model_name), ("external", 9, mut_external), ("namespace", 4, mut_namespace),
    ("input-shape", 3, mut_input_shape), ("limit-args", 1, mut_limit_args), ("out", 3, mut_out), ("cwd", 4, mut_cwd), ("bytes", 8, mut_bytes),
]
_MUTATOR_WEIGHTS = [w for _, w, _ in MUTATORS]

# -- generation ----------------------------------------------------------------------------------

_SEEDS: list[corpus.Seed] = []
_SEED_BYTES: list[bytes] = []


def load_seeds() -> None:
    global _SEEDS, _SEED_BYTES
    _SEEDS = corpus.seeds()
    _SEED_BYTES = [s.model.SerializeToString() for s in _SEEDS]


def plan(seed: int, index: int) -> tuple[str, list[str]]:
    """The seed model and the mutations of input `index` (each step is named by its position)."""
    r = random.Random(f"{seed}/{index}")
    if r.random() < 0.003:
        seed_name = f"big_chain:{r.randrange(2500, 3500)}"
    else:
        seed_name = _SEEDS[r.randrange(len(_SEEDS))].name
    x = r.random()
    if seed_name.startswith("big_chain:"):  # mutations that keep it whole, so that it reaches fusion
        return seed_name, [r.choice(["cwd", "names", "out", "model-name"]) for _ in range(int(x < 0.5))]
    steps = 0 if x < 0.03 else 1 if x < 0.4 else 2 if x < 0.75 else 3 if x < 0.93 else 4
    return seed_name, [r.choices(MUTATORS, _MUTATOR_WEIGHTS)[0][0] for _ in range(steps)]


def generate(seed: int, index: int, keep: list[int] | None = None) -> Spec:
    """Input `index` of `seed`; `keep` lists the steps to apply (all by default), for minimising."""
    seed_name, steps = plan(seed, index)
    if seed_name.startswith("big_chain:"):
        model, files, args = corpus.big_chain(int(seed_name.split(":")[1])), {}, []
    else:
        k = [s.name for s in _SEEDS].index(seed_name)
        model = onnx.ModelProto.FromString(_SEED_BYTES[k])
        files, args = _SEEDS[k].files, _SEEDS[k].shapes
    c = Case(seed_name, model)
    for path, data in files.items():
        c.files["model/" + path] = ("file", data)
    c.shape_args = list(args)
    by_name = {name: fn for name, _, fn in MUTATORS}
    applied = []
    for i, step in enumerate(steps):
        if keep is not None and i not in keep:
            continue
        try:
            by_name[step](c, random.Random(f"{seed}/{index}/{i}"))
        except Exception as e:  # a mutation that does not fit this model: the input goes on without it
            c.notes.append(f"{step}: not applied ({type(e).__name__}: {e})")
        applied.append(i)
    return finish(c, seed, index, steps, applied)


@dataclass
class Spec:
    """A generated input, ready to lay out and run; JSON-able but for the file contents."""

    seed: int
    index: int
    seed_model: str
    steps: list[str]
    applied: list[int]
    files: dict[str, tuple]
    argv: list[str]
    cwd: str
    out_kind: str
    out_path: str  # under the sandbox
    namespace: str
    expect_refusal: list[str]
    keyword_namespace: bool
    nodes: int
    notes: list[str]

    def to_json(self) -> dict:
        d = dict(self.__dict__)
        d["files"] = [{"path": p, "kind": e[0], **({"target": e[1]} if e[0] == "symlink" else {})}
                      for p, e in sorted(self.files.items())]
        return d


def finish(c: Case, seed: int, index: int, steps: list[str], applied: list[int]) -> Spec:
    data = c.model.SerializeToString()
    for op in c.byte_ops:
        data = apply_byte_op(data, op)
    files = dict(c.files)
    files["model/" + c.model_name] = ("file", data)
    base = {"model": "model", "other": "other", "": ""}[c.cwd]

    def path(p: str) -> str:
        if c.absolute_paths:
            return f"{SANDBOX_TOKEN}/{p}"
        return os.path.relpath(p, base or ".")

    out_path = "out" + ("/" + c.out_sub if c.out_sub else "")
    if c.out_kind == "file" and c.out_sub == "below":
        out_path = "out/below"
    model_arg = path("model/" + c.model_name)
    # A file named like an option ("-h") is passed as a user would: ./-h.
    if model_arg.startswith("-"):
        model_arg = os.path.join(".", model_arg)
    argv = [model_arg, "--out", path(out_path), "--namespace=" + c.namespace]
    argv += ["--input-shape=" + s for s in c.shape_args]
    if c.embed:
        argv.append("--embed-weights")
    argv += EXTRA_ARGS + c.extra_args
    return Spec(seed, index, c.seed, steps, applied, files, argv, base, c.out_kind, out_path, c.namespace,
                refusals(data, files), c.keyword_namespace, len(c.model.graph.node), c.notes)


def refusals(data: bytes, files: dict[str, tuple]) -> list[str]:
    """Why the model as written must be refused: external data out of its folder, or in a
    special file (read from the final bytes, so that later mutations are accounted for)."""
    try:
        with warnings.catch_warnings():  # protobuf warns of damaged bytes; the importer must say it
            warnings.simplefilter("ignore")
            m = onnx.ModelProto.FromString(data)
    except Exception:
        return []
    why = []
    for t in all_tensors(m):
        if t.data_location != TensorProto.EXTERNAL:
            continue
        loc = next((e.value for e in t.external_data if _text(e.key) == "location"), None)
        if loc is None:
            continue
        loc = _text(loc)
        where = _resolve(loc, files)
        if where:
            why.append(f"the external data of {_text(t.name)[:40]!r} at {loc[:60]!r} is {where}")
    return why


def _text(s: str | bytes) -> str:
    """A protobuf string field: protobuf returns bytes when they are not UTF-8."""
    return s.decode("utf-8", "surrogateescape") if isinstance(s, bytes) else s


def _resolve(loc: str, files: dict[str, tuple]) -> str | None:
    """Where side-file location `loc` of model/ leads, when that is outside model/ or not a
    regular file; None when it is inside (or does not exist)."""
    if "\x00" in loc:
        return None  # no file system path: open() refuses it
    if loc.startswith("/"):
        return "an absolute path"
    todo = loc.split("/")
    path = ["model"]
    hops = 0
    while todo:
        part = todo.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if len(path) <= 1:
                return "out of the model's folder"
            path.pop()
            continue
        path.append(part)
        entry = files.get("/".join(path))
        if entry and entry[0] == "symlink":
            hops += 1
            if entry[1].startswith("/") or hops > 8:
                return f"a link to {entry[1]}"
            path.pop()
            todo = entry[1].split("/") + todo
    entry = files.get("/".join(path))
    if entry and entry[0] == "fifo":
        return "a FIFO"
    return None


# -- the sandbox ---------------------------------------------------------------------------------

def write_files(files: dict, root: str) -> None:
    """Writes a spec's files under `root`: ("file", bytes), ("symlink", target) or ("fifo",)."""
    for p, e in sorted(files.items()):
        full = os.path.join(root, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        if e[0] == "file":
            with open(full, "wb") as f:
                f.write(e[1])
        elif e[0] == "symlink":
            os.symlink(e[1], full)
        elif e[0] == "fifo":
            os.mkfifo(full)


def lay_out(spec: Spec, sandbox: str) -> None:
    """Writes the sandbox: secret, model folder, other folder, decoys, out."""
    os.makedirs(os.path.join(sandbox, "model"))
    os.makedirs(os.path.join(sandbox, "other"))
    with open(os.path.join(sandbox, "secret.bin"), "wb") as f:
        f.write(SECRET)
    write_files(spec.files, sandbox)
    # A side file looked up in the working directory instead of the model's folder finds a
    # decoy there, holding the secret.
    if spec.cwd != "model":
        model_file = spec.argv[0].rsplit("/", 1)[-1]
        for p, e in sorted(spec.files.items()):
            rel = p[len("model/"):]
            if e[0] != "file" or not p.startswith("model/") or rel == model_file \
                    or rel.split("/")[0] in ("model", "other", "out", "secret.bin"):
                continue
            decoy = os.path.join(sandbox, spec.cwd, rel)
            if not os.path.lexists(decoy):
                os.makedirs(os.path.dirname(decoy), exist_ok=True)
                with open(decoy, "wb") as f:
                    f.write(SECRET)
    out = os.path.join(sandbox, "out")
    if spec.out_kind == "file":
        with open(out, "wb") as f:
            f.write(b"an existing file\n")
    elif spec.out_kind == "existing":
        os.makedirs(out)
        with open(os.path.join(out, spec.namespace.replace("/", "_")[:200] + ".hpp"), "w") as f:
            f.write("// an older header\n")


def snapshot(sandbox: str, out_kind: str) -> dict[str, tuple]:
    """Every entry of the sandbox but out/ (out itself when it is a file): type, size, content."""
    seen: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(sandbox):
        rel_dir = os.path.relpath(dirpath, sandbox)
        if rel_dir == ".":
            if out_kind != "file" and "out" in dirnames:
                dirnames.remove("out")
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                seen[rel] = ("link", os.readlink(full))
            elif stat.S_ISREG(st.st_mode):
                with open(full, "rb") as f:
                    seen[rel] = ("file", st.st_size, st.st_mtime_ns, f.read())
            else:
                seen[rel] = (stat.S_IFMT(st.st_mode), st.st_mode)
    return seen


# -- the child -----------------------------------------------------------------------------------

@dataclass
class Limits:
    """How each input runs and is judged."""

    time: float = 10.0
    memory_mb: int = 2048
    debug: bool = False
    allow_internal: bool = False
    compile_every: int = 0
    written: int = 0  # headers written so far, for --compile-every
    slow: float = 0.0  # CPU seconds (plus 1 ms a node) past which a run is slow; 0: not judged


def run_child(argv: list[str], cwd: str, io_dir: str, limits: Limits) -> None:
    """In the forked child: limits, redirections, the importer's main; never returns."""
    code = 70
    try:
        os.setpgid(0, 0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, name in ((1, "stdout"), (2, "stderr")):
            f = os.open(os.path.join(io_dir, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(f, fd)
            os.close(f)
        notes = open(os.path.join(io_dir, "notes"), "w", buffering=1)
        os.chdir(cwd)
        limit = limits.memory_mb << 20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        cpu = int(limits.time) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 30, 1 << 30))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        # The streams a fresh interpreter would have with its output in files.
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="strict")
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                      errors="backslashreplace", line_buffering=True)
        warnings.filters[:] = _PRISTINE_WARNING_FILTERS
        warnings._filters_mutated()  # type: ignore[attr-defined]  # forget the warnings already shown
        warnings.onceregistry.clear()
        _watch_allocations(notes)
        if limits.debug:
            os.environ["PARTITA_IMPORT_DEBUG"] = "1"
        # What `sys.exit(main())` in partita_import.py does with each ending.
        try:
            rc = cli.main(argv)
        except SystemExit as e:
            rc = e.code
        except BaseException:
            traceback.print_exc()
            rc = 1
        if rc is None:
            code = 0
        elif isinstance(rc, int):
            code = rc & 0xFF
        else:
            print(rc, file=sys.stderr)
            code = 1
        try:
            sys.stdout.flush()
        except Exception as e:
            print(f"Exception ignored on flushing sys.stdout: {e!r}", file=sys.stderr)
            code = 120
        sys.stderr.flush()
    except BaseException:
        try:
            os.write(2, ("fuzz_importer: the child failed before the importer ran:\n"
                         + traceback.format_exc()).encode("utf-8", "replace"))
        except Exception:
            pass
        code = 70
    os._exit(code)


def _watch_allocations(notes) -> None:
    """Records every numpy array allocation refused by the address-space limit: the importer
    asked for more memory than any sane model needs, even if it caught the MemoryError."""
    try:
        from numpy.core import _exceptions
    except ImportError:
        return
    cls = _exceptions._ArrayMemoryError
    original = cls.__init__

    def init(self, shape, dtype):  # type: ignore[no-untyped-def]
        try:
            notes.write(f"allocation refused: shape {tuple(shape)} {dtype}\n")
        except Exception:
            pass
        original(self, shape, dtype)

    cls.__init__ = init


# -- running many ----------------------------------------------------------------------------------

@dataclass
class Outcome:
    spec: Spec
    status: str  # "exit 0", "signal SIGSEGV", "timeout"
    code: int | None
    stdout: bytes
    stderr: bytes
    notes: str
    wall: float
    cpu: float
    maxrss_mb: float
    failures: list[tuple[str, str]] = field(default_factory=list)
    sandbox: str = ""

    @property
    def classes(self) -> list[str]:
        return sorted({k for k, _ in self.failures})


class Job:
    def __init__(self, spec: Spec, slot_dir: str):
        self.spec = spec
        self.slot_dir = slot_dir
        self.sandbox = os.path.join(slot_dir, "sandbox")
        self.io_dir = os.path.join(slot_dir, "io")
        self.pid = 0
        self.pidfd = -1
        self.start = 0.0
        self.deadline = 0.0
        self.killed = False
        self.before: dict = {}


def start_job(job: Job, limits: Limits) -> None:
    shutil.rmtree(job.slot_dir, ignore_errors=True)
    os.makedirs(job.io_dir)
    lay_out(job.spec, job.sandbox)
    job.before = snapshot(job.sandbox, job.spec.out_kind)
    argv = [a.replace(SANDBOX_TOKEN, job.sandbox) for a in job.spec.argv]
    cwd = os.path.join(job.sandbox, job.spec.cwd) if job.spec.cwd else job.sandbox
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        run_child(argv, cwd, job.io_dir, limits)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass  # the child did it first, or has ended
    job.pid = pid
    job.start = time.monotonic()
    job.deadline = job.start + limits.time
    try:
        job.pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        job.pidfd = -1


def kill_job(job: Job) -> None:
    job.killed = True
    for kill in (lambda: os.killpg(job.pid, signal.SIGKILL), lambda: os.kill(job.pid, signal.SIGKILL)):
        try:
            kill()
            return
        except OSError:
            continue


def reap(job: Job, limits: Limits) -> Outcome:
    _, status, ru = os.wait4(job.pid, 0)
    if job.pidfd >= 0:
        os.close(job.pidfd)
    wall = time.monotonic() - job.start

    def read(name: str) -> bytes:
        try:
            with open(os.path.join(job.io_dir, name), "rb") as f:
                return f.read()
        except OSError:
            return b""

    code = None
    if job.killed:
        state = "timeout"
    elif os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        state = "timeout" if sig == signal.SIGXCPU else f"signal {signal.Signals(sig).name}"
    else:
        code = os.WEXITSTATUS(status)
        state = f"exit {code}"
    o = Outcome(job.spec, state, code, read("stdout"), read("stderr"), read("notes").decode("utf-8", "replace"),
                wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, sandbox=job.sandbox)
    judge(o, job, limits)
    return o


def execute(specs, jobs: int, limits: Limits, work: str, on_done) -> None:
    """Runs each spec from the iterator `specs` in a child, `jobs` at once; `on_done(outcome)`
    for each as it ends."""
    free = [os.path.join(work, f"slot{k}") for k in range(jobs)]
    running: list[Job] = []
    exhausted = False
    try:
        while True:
            while free and not exhausted:
                spec = next(specs, None)
                if spec is None:
                    exhausted = True
                    break
                job = Job(spec, free.pop())
                try:
                    start_job(job, limits)
                except (OSError, ValueError) as e:  # a name the file system refuses: the input is skipped
                    print(f"fuzz_importer: input {spec.index} skipped: cannot lay out its files: {e}",
                          file=sys.stderr)
                    shutil.rmtree(job.slot_dir, ignore_errors=True)
                    free.append(job.slot_dir)
                    continue
                running.append(job)
            if not running:
                return
            now = time.monotonic()
            wait = max(0.0, min(j.deadline for j in running) - now)
            fds = [j.pidfd for j in running if j.pidfd >= 0]
            if len(fds) == len(running):
                ready, _, _ = select.select(fds, [], [], wait)
                done = [j for j in running if j.pidfd in ready]
            else:  # no pidfd: poll
                time.sleep(min(wait, 0.002))
                done = [j for j in running if _exited(j.pid)]
            now = time.monotonic()
            for j in running:
                if j not in done and now >= j.deadline and not j.killed:
                    kill_job(j)
            for j in done:
                running.remove(j)
                on_done(reap(j, limits))
                shutil.rmtree(j.slot_dir, ignore_errors=True)
                free.append(j.slot_dir)
    finally:
        for j in running:
            kill_job(j)
            try:
                os.wait4(j.pid, 0)
            except ChildProcessError:
                pass


def _exited(pid: int) -> bool:
    """True when child `pid` has ended (it stays a zombie for reap to collect)."""
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


# -- the oracle ----------------------------------------------------------------------------------

_MEMORY_TEXT = re.compile(r"MemoryError|Unable to allocate|bad_alloc|Cannot allocate memory|out of memory")
_INTERNAL = re.compile(r"internal error on .*?: (\w+(?:\.\w+)*):")


def _unprintable(text: str) -> str | None:
    for ch in text:
        o = ord(ch)
        if ch != "\n" and (o < 0x20 or o == 0x7F or 0x80 <= o < 0xA0):
            return repr(ch)
    return None


def judge(o: Outcome, job: Job, limits: Limits) -> None:
    spec, fail = o.spec, o.failures
    allow_internal = limits.allow_internal
    out = o.stdout.decode("utf-8", "replace")
    err = o.stderr.decode("utf-8", "replace")
    if o.status == "timeout":
        fail.append(("timeout", f"killed after {o.wall:.1f} s wall, {o.cpu:.1f} s CPU"))
    elif o.status.startswith("signal"):
        fail.append((o.status.replace(" ", ":"), o.status))
    elif o.code not in (0, 2):
        m = _INTERNAL.search(err)
        if o.code == 3:
            if not allow_internal or _MEMORY_TEXT.search(err):
                fail.append(("internal:" + (m.group(1) if m else "?"), err.strip().splitlines()[0][:300] if err.strip() else ""))
        else:
            fail.append((f"exit:{o.code}", f"exit status {o.code}"))
    budget = limits.slow + 0.001 * spec.nodes
    if limits.slow > 0 and o.status != "timeout" and o.cpu > budget:
        fail.append(("slow", f"{o.cpu:.1f} s of CPU time, over {budget:.1f} s"))
    said = _MEMORY_TEXT.search(out + err)
    if o.notes.strip():
        fail.append(("memory", o.notes.strip().splitlines()[0]))
    elif said:
        fail.append(("memory", f"the output says {said.group(0)!r}"))
    elif o.maxrss_mb > limits.memory_mb / 2:
        fail.append(("memory", f"a peak of {o.maxrss_mb:.0f} MB, over half the limit of {limits.memory_mb} MB"))
    if "Traceback" in out + err:
        fail.append(("traceback", "a Python traceback in the output"))
    if "Warning" in out + err:
        line = next(x for x in (out + err).splitlines() if "Warning" in x)
        fail.append(("warning", line[:200]))
    lines = err.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if lines and o.status.startswith("exit"):
        problems = []
        if not lines[0].startswith(PREFIX):
            problems.append(f"the first line does not start with {PREFIX!r}: {lines[0][:80]!r}")
        prefixed = sum(1 for x in lines if x.startswith(PREFIX))
        if prefixed > 1:
            problems.append(f"{prefixed} lines start with {PREFIX!r}")
        odd = [x for x in lines[1:] if not x.startswith("  ")]
        if odd:
            problems.append(f"{len(odd)} lines neither start the message nor are indented: {odd[0][:80]!r}")
        if problems:
            fail.append(("format", "; ".join(problems)))
    elif not lines and o.code not in (0, None):
        fail.append(("format", "a failure with nothing on stderr"))
    for name, text in (("stdout", out), ("stderr", err)):
        bad = _unprintable(text)
        if bad:
            fail.append(("unprintable", f"{name} holds {bad}"))
    after = snapshot(job.sandbox, spec.out_kind)
    changed = sorted(set(after) ^ set(job.before) | {k for k in after if k in job.before and after[k] != job.before[k]})
    if changed:
        fail.append(("sandbox", f"changed outside out/: {', '.join(changed[:5])}"))
    outputs = [o.stdout, o.stderr]
    out_dir = os.path.join(job.sandbox, "out")
    if os.path.isdir(out_dir) and not os.path.islink(out_dir):
        for dirpath, _, filenames in os.walk(out_dir):
            for name in filenames:
                full = os.path.join(dirpath, name)
                if os.path.isfile(full) and not os.path.islink(full):
                    with open(full, "rb") as f:
                        outputs.append(f.read())
    if any(MARKER in x or TAG in x for x in outputs):
        fail.append(("secret", "the marker of sandbox/secret.bin is in the output"))
    if o.code == 0:
        if spec.expect_refusal:
            fail.append(("escape", "written though " + "; ".join(spec.expect_refusal)))
        if spec.keyword_namespace:
            fail.append(("keyword", f"written with namespace {spec.namespace!r}, a C++ keyword"))
        hpp = os.path.join(job.sandbox, spec.out_path, spec.namespace + ".hpp")
        try:
            with open(hpp, "rb") as f:
                header = f.read()
        except OSError as e:
            fail.append(("header", f"exit 0 without {spec.out_path}/{spec.namespace}.hpp: {e.strerror}"))
        else:
            problem = check_header(header)
            limits.written += 1
            if problem:
                fail.append(("header", problem))
            elif limits.compile_every and limits.written % limits.compile_every == 0:
                problem = compile_check(hpp, job.io_dir)
                if problem:
                    fail.append(("compile", problem))


def check_header(data: bytes) -> str | None:
    """A lexical look at the header: UTF-8, no control characters, string literals closed on
    their line, no comment continued by a final backslash, no block comment."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"not UTF-8 at byte {e.start}"
    for number, line in enumerate(text.split("\n"), 1):
        bad = _unprintable(line.replace("\t", " "))
        if bad:
            return f"line {number} holds {bad}: {line[:100]!r}"
    i, n, line = 0, len(text), 1
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            if text[i:end].rstrip(" \t\f\v").endswith("\\"):
                return f"line {line}: a comment ending in a backslash splices the next line into it"
            i = end
            continue
        elif text.startswith("/*", i):
            return f"line {line}: a block comment"
        elif ch == '"' or ch == "'":
            j = i + 1
            while j < n and text[j] != ch:
                if text[j] == "\\":
                    j += 1
                if j < n and text[j] == "\n":
                    return f"line {line}: a literal broken by a newline"
                j += 1
            if j >= n:
                return f"line {line}: a literal not closed"
            i = j + 1
            continue
        elif ch == "\\" and text.startswith("\\\n", i):
            return f"line {line}: a backslash splices two lines"
        i += 1
    return None


def compile_check(hpp: str, io_dir: str) -> str | None:
    cxx = os.environ.get("PARTITA_ONNX_CXX", "g++")
    tu = os.path.join(io_dir, "tu.cpp")
    with open(tu, "w", encoding="utf-8") as f:
        f.write(f'#include "{hpp}"\nint main() {{}}\n')
    try:
        r = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-I", INCLUDE, tu], capture_output=True,
                           text=True, errors="replace", timeout=600)
    except subprocess.TimeoutExpired:
        return "the compiler ran past 600 s"
    except OSError as e:
        return f"cannot run {cxx}: {e.strerror}"
    if r.returncode != 0:
        first = next((x for x in r.stderr.splitlines() if "error" in x), r.stderr.strip()[:300])
        return f"{cxx} -fsyntax-only: {first[:300]}"
    return None


# -- findings ------------------------------------------------------------------------------------

def finding_name(o: Outcome) -> str:
    cls = re.sub(r"[^A-Za-z0-9_.-]", "_", o.classes[0])
    return f"{cls}-{o.spec.seed}-{o.spec.index}"


def report_text(o: Outcome, where: str = "<this folder>") -> str:
    spec = o.spec
    argv = [a.replace(SANDBOX_TOKEN, "$SANDBOX") for a in spec.argv]
    lines = [
        f"input {spec.index} of seed {spec.seed}: seed model {spec.seed_model}, steps {spec.steps} "
        f"(applied {spec.applied})",
        f"status: {o.status} after {o.wall:.2f} s wall, {o.cpu:.2f} s CPU, peak {o.maxrss_mb:.0f} MB",
        "broken rules:",
        *[f"  {k}: {v}" for k, v in o.failures],
        "mutations:",
        *[f"  {x}" for x in spec.notes],
        f"working directory: sandbox/{spec.cwd}",
        "command line (SANDBOX is the folder holding sandbox/'s files):",
        f"  cd \"$SANDBOX/{spec.cwd}\" && {shlex.quote(sys.executable)} {shlex.quote(os.path.join(TOOLS, 'partita_import.py'))} "
        + " ".join(shlex.quote(a) for a in argv),
        f"or: {shlex.quote(sys.executable)} {shlex.quote(os.path.abspath(__file__))} --replay {shlex.quote(where)}"
        + (f" --tools {shlex.quote(TOOLS)}" if TOOLS != os.path.join(ROOT, "tools") else ""),
        "--- stdout",
        o.stdout.decode("utf-8", "backslashreplace"),
        "--- stderr",
        o.stderr.decode("utf-8", "backslashreplace"),
    ]
    return "\n".join(lines) + "\n"


def save(o: Outcome, folder: str) -> str:
    d = os.path.join(folder, finding_name(o))
    shutil.rmtree(d, ignore_errors=True)
    sb = os.path.join(d, "sandbox")
    os.makedirs(os.path.join(sb, "model"))
    write_files(o.spec.files, sb)
    with open(os.path.join(d, "case.json"), "w", encoding="utf-8") as f:
        json.dump({**o.spec.to_json(), "status": o.status, "failures": o.failures}, f, indent=1)
    with open(os.path.join(d, "report.txt"), "w", encoding="utf-8", errors="backslashreplace") as f:
        f.write(report_text(o, d))
    return d


def load_finding(d: str) -> Spec:
    with open(os.path.join(d, "case.json"), encoding="utf-8") as f:
        j = json.load(f)
    files = {}
    for e in j["files"]:
        if e["kind"] == "file":
            with open(os.path.join(d, "sandbox", e["path"]), "rb") as f:
                files[e["path"]] = ("file", f.read())
        elif e["kind"] == "symlink":
            files[e["path"]] = ("symlink", e["target"])
        else:
            files[e["path"]] = (e["kind"],)
    return Spec(j["seed"], j["index"], j["seed_model"], j["steps"], j["applied"], files, j["argv"], j["cwd"],
                j["out_kind"], j["out_path"], j["namespace"], j["expect_refusal"], j["keyword_namespace"], j["nodes"],
                j["notes"])


def minimise(o: Outcome, limits: Limits, work: str) -> Outcome:
    """Drops the mutations the finding does not need, one at a time, keeping its first class."""
    target = o.classes[0]
    best = o
    keep = list(o.spec.applied)
    for step in list(keep):
        trial = [k for k in keep if k != step]
        spec = generate(o.spec.seed, o.spec.index, trial)
        got: list[Outcome] = []
        execute(iter([spec]), 1, limits, work, got.append)
        if got and target in got[0].classes:
            keep, best = trial, got[0]
    return best


# -- main ----------------------------------------------------------------------------------------

def load_importer(tools: str, memory_mb: int, seconds: float) -> None:
    """Imports partita_onnx from folder `tools`. An importer with a memory cap of its own
    (--max-memory) gets a quarter of the address-space limit: an allocation refused by the
    limit is then one the cap did not count. One with a time limit (--time-limit) gets 80 % of
    the wall-clock limit: a run that ends by the importer's own limit is a clean refusal, one
    the fuzzer must kill is a timeout."""
    global cli, TOOLS
    TOOLS = os.path.abspath(tools)
    sys.path.insert(0, TOOLS)
    from partita_onnx import cli as module
    cli = module
    options = cli._parser()._option_string_actions
    if "--max-memory" in options:
        EXTRA_ARGS[:] = [f"--max-memory={max(1, memory_mb // 4)}M"]
    if "--time-limit" in options:
        EXTRA_ARGS.append(f"--time-limit={0.8 * seconds:g}")


def work_dir() -> str:
    """A new folder for the sandboxes: in /dev/shm when there is one, since a sandbox is written
    and removed per input and a disk file system (ext4 with discard, say) takes milliseconds
    to remove each; $PARTITA_FUZZ_WORK chooses another place."""
    base = os.environ.get("PARTITA_FUZZ_WORK")
    if not base and os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK | os.X_OK):
        base = "/dev/shm"
    return tempfile.mkdtemp(prefix="partita_fuzz_", dir=base)


def summary_counts(counter: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def fuzz(args: argparse.Namespace, limits: Limits) -> int:
    load_seeds()
    findings_dir = args.findings or tempfile.mkdtemp(prefix="partita_fuzz_findings_")
    os.makedirs(findings_dir, exist_ok=True)
    work = work_dir()
    outcomes: dict[str, int] = {}
    classes: dict[str, int] = {}
    first: dict[str, str] = {}
    saved_per_class: dict[str, int] = {}
    to_minimise: list[Outcome] = []
    total = found = 0
    began = time.monotonic()
    last_note = began

    def on_done(o: Outcome) -> None:
        nonlocal total, found, last_note
        total += 1
        outcomes[o.status] = outcomes.get(o.status, 0) + 1
        if o.failures:
            found += 1
            for k in o.classes:
                classes[k] = classes.get(k, 0) + 1
            main_class = o.classes[0]
            n = saved_per_class.get(main_class, 0)
            if n < args.max_saved or any(k not in first for k in o.classes):  # one example of each class
                saved_per_class[main_class] = n + 1
                path = save(o, findings_dir)
                for k in o.classes:
                    first.setdefault(k, path)
                if n < args.minimise and o.status != "timeout":
                    to_minimise.append(o)
            if args.verbose:
                print(f"  {o.spec.index}: {', '.join(o.classes)} ({o.status})", flush=True)
        now = time.monotonic()
        if now - last_note > 15:
            last_note = now
            print(f"  ... {total} inputs, {found} findings, {total / (now - began):.0f}/s", flush=True)

    def specs():
        for k in range(args.start, args.start + args.count):
            if args.stop_after and found >= args.stop_after:
                return
            yield generate(args.seed, k)

    try:
        execute(specs(), args.jobs, limits, work, on_done)
        elapsed = time.monotonic() - began
        for o in to_minimise:
            m = minimise(o, limits, work)
            if m.spec.applied != o.spec.applied:
                old = os.path.join(findings_dir, finding_name(o))
                shutil.rmtree(old, ignore_errors=True)
                path = save(m, findings_dir)
                for k, v in list(first.items()):
                    if v == old:
                        first[k] = path
    except KeyboardInterrupt:
        elapsed = time.monotonic() - began
        print("fuzz_importer: interrupted", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"outcomes: {summary_counts(outcomes)}")
    if classes:
        print("findings by class (an input may break several rules):")
        for k, v in sorted(classes.items(), key=lambda kv: (-kv[1], kv[0])):
            print(f"  {k}: {v}, e.g. {first.get(k, '(not saved)')}")
        print(f"findings saved in {findings_dir}")
    rate = total / elapsed if elapsed > 0 else 0.0
    print(f"fuzz_importer: {total} inputs, {found} findings ({summary_counts(classes) or 'none'}); "
          f"seed {args.seed}, {elapsed:.1f} s, {rate:.0f} inputs/s")
    if not found and not args.findings:
        shutil.rmtree(findings_dir, ignore_errors=True)
    return 1 if found else 0


def replay(args: argparse.Namespace, limits: Limits) -> int:
    spec = load_finding(args.replay)
    with open(os.path.join(args.replay, "case.json"), encoding="utf-8") as f:
        if any(k == "compile" for k, _ in json.load(f).get("failures", [])):
            limits.compile_every = 1  # a header that did not compile is compiled again
    work = work_dir()
    got: list[Outcome] = []
    try:
        execute(iter([spec]), 1, limits, work, got.append)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    o = got[0]
    print(report_text(o, args.replay), end="")
    print(f"fuzz_importer: replay of {args.replay}: {o.status}, "
          + (f"still a finding ({', '.join(o.classes)})" if o.failures else "no longer a finding"))
    return 1 if o.failures else 0


def main() -> int:
    p = argparse.ArgumentParser(description="Fuzzes tools/partita_import.py (see the module's docstring).")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--start", type=int, default=0, help="the index of the first input (default 0)")
    p.add_argument("--jobs", type=int, default=1, help="children run at once")
    p.add_argument("--time-limit", type=float, default=10.0, metavar="SEC", help="wall-clock limit per input")
    p.add_argument("--memory-limit", type=int, default=2048, metavar="MB", help="address-space limit per input")
    p.add_argument("--findings", metavar="DIR", help="where findings are saved (default: a new temporary folder)")
    p.add_argument("--compile-every", type=int, default=0, metavar="K",
                   help="compile every K-th header written (g++ -fsyntax-only; default never)")
    p.add_argument("--allow-internal", action="store_true", help="exit 3 (an internal error) is not a finding")
    p.add_argument("--slow", type=float, default=0.0, metavar="SEC",
                   help="a run taking more CPU time than SEC plus 1 ms a node is a finding (default: not judged, "
                        "since CPU time depends on the machine and on its load)")
    p.add_argument("--max-saved", type=int, default=20, help="findings saved per class (default 20)")
    p.add_argument("--minimise", type=int, default=3, help="findings minimised per class (default 3)")
    p.add_argument("--stop-after", type=int, default=0, help="stop after this many findings (default: never)")
    p.add_argument("--verbose", action="store_true", help="a line per finding as it comes")
    p.add_argument("--replay", metavar="DIR", help="run one saved finding again")
    p.add_argument("--tools", default=TOOLS, metavar="DIR",
                   help="the folder holding the importer's package partita_onnx (default: this tree's tools/)")
    p.add_argument("--debug", action="store_true", help="with --replay: PARTITA_IMPORT_DEBUG=1 (tracebacks)")
    args = p.parse_args()
    limits = Limits(args.time_limit, args.memory_limit, args.debug, args.allow_internal, args.compile_every,
                    slow=args.slow)
    load_importer(args.tools, args.memory_limit, args.time_limit)
    if args.replay:
        return replay(args, limits)
    return fuzz(args, limits)


if __name__ == "__main__":
    sys.exit(main())
