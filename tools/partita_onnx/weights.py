"""The weights: which constants become named weights, the safetensors file, the embedded copy.

Weights keep their ONNX names, so that `bind` finds them by the names a user sees in the ONNX
file. A name is changed only where Partita or safetensors cannot take it as it is (empty,
`__metadata__`, the `literal.` prefix Partita reserves for literals, control characters), and
constants the importer derives (a MatMul weight transposed for `dense`) get a suffix; the header
lists every such name next to its ONNX origin.
"""
from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass

import numpy as np

from .terms import cpp_string, dims

# numpy dtype -> (Partita dtype, safetensors dtype)
_DTYPES = {np.dtype(np.float32): ("f32", "F32"), np.dtype(np.int64): ("i64", "I64"),
           np.dtype(np.int32): ("i32", "I32"), np.dtype(np.int8): ("i8", "I8"), np.dtype(np.uint8): ("u8", "U8"),
           np.dtype(np.bool_): ("boolean", "BOOL")}


@dataclass
class WeightEntry:
    """One tensor of the weights file."""

    name: str  # as in the header and the file
    source: str  # the ONNX value it comes from
    data: np.ndarray  # little-endian, contiguous
    note: str = ""  # how it differs from the ONNX value, if it does

    @property
    def partita_dtype(self) -> str:
        return _DTYPES[self.data.dtype][0]

    def type_text(self) -> str:
        """`weight<"fc.weight", f32, 10, 512>`."""
        shape = (", " + dims(self.data.shape)) if self.data.ndim else ""
        return f'weight<"{cpp_string(self.name)}", {self.partita_dtype}{shape}>'


class UnsupportedWeight(ValueError):
    """A constant of an element type Partita has no use for (f16, bool, int16, ...)."""


_CONTROL = re.compile("[\x00-\x1f\x7f]")


def _sanitized(name: str) -> str:
    clean = _CONTROL.sub("_", name)
    if not clean:
        return "weight"
    if clean == "__metadata__" or clean.startswith("literal."):
        return "onnx." + clean
    return clean


class WeightTable:
    """The constants the header names as weights, in first-use order, each stored once."""

    def __init__(self) -> None:
        self.entries: dict[str, WeightEntry] = {}
        self._by_source: dict[tuple[str, str], WeightEntry] = {}

    def add(self, source: str, value: np.ndarray, variant: str = "", note: str = "") -> WeightEntry:
        """The weight holding constant `source` (or its `variant`, such as ".T" for a transposed
        copy, whose data is `value`); adds it on first use."""
        key = (source, variant)
        if key in self._by_source:
            return self._by_source[key]
        data = np.asarray(value)
        if data.dtype == np.float64:
            data, note = data.astype(np.float32), (note + "; " if note else "") + "f64 stored as f32"
        if data.dtype not in _DTYPES:
            raise UnsupportedWeight(f"constant '{source}' is {data.dtype}; Partita's weights are f32, i32, i64, i8 or u8")
        name = _sanitized(source + variant)
        base, k = name, 1
        while name in self.entries:
            k += 1
            name = f"{base}.{k}"
        if name != source and not variant:
            note = (note + "; " if note else "") + "renamed from the ONNX name"
        data = data.astype(data.dtype.newbyteorder("<"), copy=False)
        # np.ascontiguousarray would make a rank-0 tensor (a per-tensor scale) rank 1.
        entry = WeightEntry(name, source, data if data.flags.c_contiguous else np.ascontiguousarray(data), note)
        self.entries[name] = entry
        self._by_source[key] = entry
        return entry

    def ordered(self) -> list[WeightEntry]:
        """The entries in file order: wider element types first, so that every tensor starts
        aligned for its type in a data section that starts 8-aligned (safetensors has no gaps)."""
        return sorted(self.entries.values(), key=lambda e: -e.data.dtype.itemsize)

    def renamed(self) -> list[WeightEntry]:
        """The entries whose name or data differ from their ONNX constant."""
        return [e for e in self.entries.values() if e.note or e.name != e.source]

    def total_bytes(self) -> int:
        return sum(e.data.nbytes for e in self.entries.values())


def safetensors_bytes(table: WeightTable, metadata: dict[str, str]) -> tuple[bytes, dict[str, tuple[int, int]]]:
    """The safetensors file of `table`, and each tensor's [begin, end) within the whole file."""
    header: dict[str, object] = {"__metadata__": metadata}
    offset = 0
    spans = {}
    for e in table.ordered():
        header[e.name] = {"dtype": _DTYPES[e.data.dtype][1], "shape": list(e.data.shape),
                          "data_offsets": [offset, offset + e.data.nbytes]}
        spans[e.name] = (offset, offset + e.data.nbytes)
        offset += e.data.nbytes
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the data section starts 8-aligned, as the reference writer does
    start = 8 + len(text)
    blob = struct.pack("<Q", len(text)) + text + b"".join(e.data.tobytes() for e in table.ordered())
    return blob, {k: (start + b, start + end) for k, (b, end) in spans.items()}


_C_TYPES = {"f32": "float", "i64": "std::int64_t", "i32": "std::int32_t", "i8": "std::int8_t", "u8": "std::uint8_t",
            "boolean": "bool"}


def _float_literal(v: float, bits: int) -> str:
    """A float literal that reads back as exactly `v` (9 significant digits round-trip a float);
    a NaN as its bits (`bits`, the float's), sign and payload included."""
    if v != v:
        return f"std::bit_cast<float>(0x{bits:08x}u)"
    if v in (float("inf"), float("-inf")):
        return ("-" if v < 0 else "") + "std::numeric_limits<float>::infinity()"
    text = "%.9g" % v
    if not any(c in text for c in ".en"):
        text += ".0"
    return text + "f"


def _values(e: WeightEntry) -> list[str]:
    flat = e.data.reshape(-1)
    if e.partita_dtype == "f32":
        return [_float_literal(v, b) for v, b in zip(flat.tolist(), flat.view(np.uint32).tolist())]
    if e.partita_dtype == "i64":
        # The most negative int64 has no literal of its own.
        return [str(v) if v != -2**63 else "std::numeric_limits<std::int64_t>::min()" for v in flat.tolist()]
    if e.partita_dtype == "boolean":
        return ["true" if v else "false" for v in flat.tolist()]
    return [str(v) for v in flat.tolist()]


def array_source(table: WeightTable, namespace: str) -> str:
    """C++ that holds the weights as constexpr arrays and lists them in `NS::weights::tensors`.

    The arrays are ordinary constant data, so any object format and any linker keeps them (in
    flash on a microcontroller, where `static_executable` reads them in place); nothing is read
    at run time and nothing is copied. Every value is written so that it reads back exactly,
    NaNs as their bits.
    """
    lines = [
        "// The weights, compiled into the program as constant arrays: static_executable reads them where",
        f"// they lie. For compiled<>: exe.bind(partita::weight_set::of({namespace}::weights::tensors)).",
        "namespace weight_data {",
    ]
    rows = []
    for i, e in enumerate(table.ordered()):
        values = _values(e)
        dims_text = ", ".join(str(d) for d in e.data.shape)
        shape = f"partita::shape{{{e.data.ndim}, {{{dims_text}}}}}"
        if values:
            # 64 bytes, as bind aligns every weight (partita::alignment).
            lines.append(f"alignas(64) inline constexpr {_C_TYPES[e.partita_dtype]} w{i}[] = {{")
            for k in range(0, len(values), 8):
                lines.append("    " + ", ".join(values[k:k + 8]) + ",")
            lines.append("};")
            data = f"weight_data::w{i}"
        else:
            data = "nullptr"
        rows.append(f'      partita::static_tensor{{"{cpp_string(e.name)}", partita::dtype::{e.partita_dtype}, {shape}, {data}}},')
    lines.append("}  // namespace weight_data")
    lines += [
        "",
        f"/// The model's weights: `partita::static_executable<{namespace}::net, {namespace}::weights, partita::mcu>`.",
        "struct weights {",
        f"  static constexpr std::array<partita::static_tensor, {len(rows)}> tensors{{" + ("{" if rows else "};"),
    ]
    if rows:
        lines += rows + ["  }};"]
    lines.append("};")
    return "\n".join(lines)


def embedded_source(table: WeightTable, spans: dict[str, tuple[int, int]], namespace: str, file_size: int,
                    file_path: str) -> str:
    """C++ that compiles the weights file into the program and returns it as a `weight_set`.

    The file goes in with the assembler's `.incbin`, so megabytes of floats never become source
    text. The bytes live in a COMDAT section with a weak, hidden symbol: every translation unit
    that includes the header assembles them, and the linker keeps one copy (ELF only).
    """
    symbol = f"partita_{namespace}_weights"
    macro = f"{namespace.upper()}_WEIGHTS_FILE"
    rows = []
    for e in table.ordered():
        begin, end = spans[e.name]
        shape = dims(e.data.shape)
        rows.append(f'      {{"{cpp_string(e.name)}", {e.partita_dtype}, {begin}, {end - begin}, {e.data.ndim}, '
                    f'{{{shape}}}}},')
    return "\n".join([
        f"// The weights, compiled into the program from {macro}: define it (a string literal) before",
        "// including this header to read the file from elsewhere. The build does not know that the",
        "// object depends on the file: rebuild it when the file changes.",
        f"#ifndef {macro}",
        f'#define {macro} "{cpp_string(file_path)}"',
        "#endif",
        f'__asm__(".pushsection .rodata.{symbol},\\"aG\\",@progbits,{symbol},comdat\\n"',
        f'        ".weak {symbol}\\n.hidden {symbol}\\n.balign 64\\n{symbol}:\\n"',
        f'        ".incbin \\"" {macro} "\\"\\n"',
        f'        ".weak {symbol}_end\\n.hidden {symbol}_end\\n{symbol}_end:\\n.popsection\\n");',
        f'extern "C" const unsigned char {symbol}[];',
        f'extern "C" const unsigned char {symbol}_end[];',
        "",
        "/// The weights compiled into the program, for `exe.bind(weights())`; nothing is read from disk.",
        "/// The set refers to the program's own copy of the bytes (no copy is made until `bind`).",
        "inline partita::weight_set weights() {",
        "  struct tensor {",
        "    const char* name;",
        "    partita::dtype type;",
        "    std::size_t offset, bytes;",
        "    std::size_t rank;",
        "    std::int64_t dims[6];",
        "  };",
        "  static constexpr tensor table[] = {",
        *rows,
        "  };",
        f"  if ({symbol}_end - {symbol} != {file_size})",
        f'    throw partita::error("{namespace}::weights(): the embedded file is " +',
        f"                         std::to_string({symbol}_end - {symbol}) +",
        f'                         " bytes, expected {file_size}: it is not the file this header was generated with");',
        "  partita::weight_set set;",
        "  for (const tensor& t : table)",
        f"    set.add(t.name, t.type, std::as_bytes(std::span({symbol} + t.offset, t.bytes)),",
        "            std::span<const std::int64_t>(t.dims, t.rank));",
        "  return set;",
        "}",
    ])
