"""Partita expressions, as the mapping table builds them and the emitter prints them.

A `Term` is one Partita op type applied to argument terms: `relu<$0>` with one argument, or a
leaf (`weight<"fc.weight", f32, 10, 512>`) with none. `$0`, `$1`, ... stand for the arguments,
so that C++ braces in attributes (`{.stride = {2, 2}}`) need no escaping. The emitter decides
which terms become named node types; a term prints as its name or as its expansion.
"""
from __future__ import annotations

import re
from typing import Callable, Sequence

import numpy as np

from .graph import Node, Shape

_ARG = re.compile(r"\$(\d+)")


class Term:
    """One Partita node expression.

    `shape` is the static shape ONNX inferred for the value (None for parts of an expansion
    that have no ONNX value, which are never named); `origin` is the ONNX node it came from;
    `tensor` is False for a tuple (`split`), which only `get` may read.
    """

    def __init__(self, fmt: str, args: Sequence["Term"] = (), shape: Shape | None = None,
                 origin: Node | None = None, tensor: bool = True, leaf: bool = False):
        self.fmt = fmt
        self.args = list(args)
        self.shape = shape
        self.origin = origin
        self.tensor = tensor
        self.leaf = leaf
        self.name: str | None = None  # set by the emitter when the term becomes a named type
        self.value: str | None = None  # the ONNX value the term computes, when it is one

    def render(self, ref: Callable[["Term"], str]) -> str:
        """The C++ type, with each argument printed by `ref` (its name, or its expansion)."""
        return _ARG.sub(lambda m: ref(self.args[int(m.group(1))]), self.fmt)


def fmt_float(v: float) -> str:
    """A float as a C++ float literal that reads back to the same float32 (`0.5f`, `1e-05f`)."""
    f = np.float32(v)
    if np.isnan(f):
        return "std::numeric_limits<float>::quiet_NaN()"
    if np.isinf(f):
        return ("-" if f < 0 else "") + "std::numeric_limits<float>::infinity()"
    text = str(f)  # numpy prints the shortest string that round-trips
    if "e" not in text and "." not in text:
        text += ".0"
    return text + "f"


def dims(values: Sequence[int]) -> str:
    """`1, 3, 224, 224`."""
    return ", ".join(map(str, map(int, values)))


def cpp_string(text: str) -> str:
    """`text` as the contents of a C++ string literal (quotes, backslashes, control bytes escaped;
    any other character that is not printable, or that ends a line for some readers (U+0085,
    U+2028), as the hex escapes of its UTF-8 bytes, so that the header's lines stay lines)."""
    out = []
    for ch in text:
        if ch in "\"\\":
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}\"\"")  # the empty literal ends the hex escape
        elif ord(ch) > 0x7F and (not ch.isprintable() or len(("x" + ch + "x").splitlines()) > 1):
            out.append("".join(f"\\x{b:02x}\"\"" for b in ch.encode("utf-8")))
        else:
            out.append(ch)
    return "".join(out)


def apply(template: str, *args: Term, shape: Shape | None = None, origin: Node | None = None) -> Term:
    """`apply("relu<$0>", x)`: a term of one op over argument terms."""
    return Term(template, args, shape, origin)
