#!/usr/bin/env python3
"""Turns the C++ code blocks of Partita's Markdown pages into source files, one per block.

tests/docs/CMakeLists.txt runs this at configure time and builds what it writes, so a snippet
that stops compiling fails the build and the `docs` tests, with the compiler pointing at the
Markdown line (each block is preceded by a #line directive).

    python3 tools/extract_snippets.py --out DIR README.md docs/*.md   # write DIR/<page>_<n>.cpp ...
    python3 tools/extract_snippets.py --check README.md docs/*.md     # parse only, report errors

Convention: each block is compiled exactly as a reader who pastes it alone into a file gets it.

* Every fenced block whose info string is `cpp` (or `c++`, `cxx`) is compiled. Other blocks
  (sh, cmake, text, none) are not.
* A block is a file of its own, compiled at global scope with nothing added: it shows its own
  `#include <partita/partita.hpp>` and `using namespace partita;` (or qualifies names), and the
  standard headers it uses. Its `main`, if it has one, is the program's `main`.
* A directive is an HTML comment right before the fence (blank lines between are allowed); the
  rendered page does not show it:
      <!-- snippet: run -->          the test runs the block's program (it must define main),
                                     which fails if main returns non-zero or throws
      <!-- snippet: continue -->     the block continues the previous compiled block of the page,
                                     in the same file, after it: what a reader has who pastes
                                     both blocks, in order, into one file (the page's text says
                                     so); it need not repeat the includes
      <!-- snippet: fails           the block must not compile: the test builds it and checks
      expect text: <text>            the compiler's output with tests/compile_fail/check.cmake,
      -->                            whose `expect` lines (at least one) follow the first line
      <!-- skip: reason -->          not compiled; the reason is required (a block that needs a
                                     user's device library, say)
  Options combine: `<!-- snippet: continue, run -->`.
* Among Partita's headers, blocks include only <partita/partita.hpp> and, after it,
  <partita/backends/onednn/onednn.hpp>, or the freestanding <partita/embedded.hpp> alone (a
  header that moves must not break the manual).
* A file whose blocks include the oneDNN header is built only when CMake has the
  partita::onednn target.

The output directory receives <page>_<n>.cpp for the n-th file of each page (1-based, in page
order; a block marked `continue` adds to the file before it), plus snippets.cmake, which lists
them for CMake. Files are rewritten only when their content changes, so an unchanged page does
not rebuild.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

CPP_INFO = {"cpp", "c++", "cxx"}
FENCE_RE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^\s`]*)")
DIRECTIVE_RE = re.compile(r"^\s*<!--\s*(?P<kind>snippet|skip)\s*:(?P<rest>.*)$")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*(?:<(?P<angled>[^>]+)>|"(?P<quoted>[^"]+)")')
MAIN_RE = re.compile(r"\bint\s+main\s*\(")
EXPECT_RE = re.compile(r"^\s*expect( text| no text)?( \([A-Za-z]+\))?: \S")
PARTITA_HEADER = "partita/partita.hpp"
ONEDNN_HEADER = "partita/backends/onednn/onednn.hpp"
EMBEDDED_HEADER = "partita/embedded.hpp"
ALLOWED_PARTITA_HEADERS = {PARTITA_HEADER, ONEDNN_HEADER, EMBEDDED_HEADER}
OPTIONS = {"run", "continue", "fails"}


class SnippetError(Exception):
    pass


@dataclass
class Block:
    page: str  # path as written in #line directives and messages
    line: int  # 1-based line of the first code line
    code: list[str]
    options: set[str] = field(default_factory=set)
    expect: list[str] = field(default_factory=list)  # check.cmake's lines, for a `fails` block

    def includes(self) -> list[str]:
        found = []
        for text in self.code:
            m = INCLUDE_RE.match(text)
            if m:
                found.append(m.group("angled") or m.group("quoted"))
        return found

    def defines_main(self) -> bool:
        return any(MAIN_RE.search(t) for t in self.code)


@dataclass
class Unit:
    """One source file: a block and the blocks that continue it."""
    name: str
    blocks: list[Block]

    def has(self, option: str) -> bool:
        return any(option in b.options for b in self.blocks)

    def includes(self) -> list[str]:
        return [name for b in self.blocks for name in b.includes()]


def parse_directive(lines: list[str], end: int, page: str) -> tuple[str, set[str], list[str]] | None:
    """The directive whose `-->` is on line `end` (0-based), if that comment is one of ours.
    Returns (kind, options, the comment's further lines)."""
    if not lines[end].rstrip().endswith("-->"):
        return None
    start = end
    while start >= 0 and "<!--" not in lines[start]:
        start -= 1
    if start < 0:
        return None
    m = DIRECTIVE_RE.match(lines[start])
    if not m:
        return None
    first = m.group("rest")
    body: list[str] = []
    if start == end:
        first = first.rstrip()[: -len("-->")]
    else:
        body = lines[start + 1 : end]
        last = lines[end].rstrip()[: -len("-->")]
        if last.strip():
            body.append(last)
    kind = m.group("kind")
    if kind == "skip":
        if not first.strip():
            raise SnippetError(f"{page}:{start + 1}: `<!-- skip: ... -->` needs a reason")
        return kind, set(), []
    options = {o.strip() for o in first.split(",") if o.strip()}
    unknown = options - OPTIONS
    if unknown:
        raise SnippetError(f"{page}:{start + 1}: unknown snippet option(s) {sorted(unknown)}; known: {sorted(OPTIONS)}")
    body = [t.strip() for t in body if t.strip()]
    if "fails" in options:
        bad = [t for t in body if not EXPECT_RE.match(t)]
        if bad or not body:
            raise SnippetError(f"{page}:{start + 1}: a `fails` block lists the compiler's expected output, one "
                               f"`expect text: ...` (or `expect: <regex>`) line each, and nothing else")
    elif body:
        raise SnippetError(f"{page}:{start + 1}: only a `fails` directive has further lines (no hidden code: "
                           f"a block is compiled as the reader sees it)")
    return kind, options, body


def parse_page(path: Path, shown: str) -> list[Block]:
    lines = path.read_text(encoding="utf-8").split("\n")
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE_RE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m.group("indent")), m.group("fence"), m.group("info").lower()
        # The closing fence: the same character, at least as long, nothing after it.
        j = i + 1
        while j < len(lines):
            close = lines[j].strip()
            if close.startswith(fence[0] * len(fence)) and not close.strip(fence[0]):
                break
            j += 1
        if j == len(lines):
            raise SnippetError(f"{shown}:{i + 1}: code block is never closed")
        if info in CPP_INFO:
            # The directive: the last non-blank line before the fence, if it closes our comment.
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            directive = parse_directive(lines, k, shown) if k >= 0 else None
            code = [text[indent:] if not text[:indent].strip() else text.lstrip() for text in lines[i + 1 : j]]
            if directive is None:
                blocks.append(Block(shown, i + 2, code))
            elif directive[0] == "snippet":
                _, options, expect = directive
                blocks.append(Block(shown, i + 2, code, options, expect))
            # A skipped block is simply left out.
        i = j + 1
    return blocks


def check_block(b: Block) -> None:
    for name in b.includes():
        if name.startswith("partita/") and name not in ALLOWED_PARTITA_HEADERS:
            raise SnippetError(
                f"{b.page}:{b.line}: snippets include <partita/partita.hpp> (and the oneDNN header) or "
                f"<partita/embedded.hpp>, not <{name}>")


def units_of(page_id: str, blocks: list[Block]) -> list[Unit]:
    """Blocks grouped into files: a `continue` block joins the file before it."""
    out: list[Unit] = []
    for b in blocks:
        if "continue" in b.options:
            if not out:
                raise SnippetError(f"{b.page}:{b.line}: `continue` on the first compiled block of the page")
            if "fails" in b.options or out[-1].has("fails"):
                raise SnippetError(f"{b.page}:{b.line}: a `fails` block neither continues nor is continued")
            out[-1].blocks.append(b)
        else:
            out.append(Unit(f"{page_id}_{len(out) + 1}", [b]))
    for u in out:
        first = u.blocks[0]
        if PARTITA_HEADER not in u.includes() and EMBEDDED_HEADER not in u.includes():
            raise SnippetError(f"{first.page}:{first.line}: the block does not #include <{PARTITA_HEADER}> "
                               f"(or <{EMBEDDED_HEADER}>): a reader who pastes it alone needs it")
        if u.has("run") and not any(b.defines_main() for b in u.blocks):
            raise SnippetError(f"{first.page}:{first.line}: a `run` block must define int main()")
        if u.has("run") and u.has("fails"):
            raise SnippetError(f"{first.page}:{first.line}: a block cannot both `run` and `fail`")
    return out


def render(u: Unit) -> str:
    """The blocks as written, each after a #line directive that points at its Markdown line."""
    first = u.blocks[0]
    text = [f"// Generated by tools/extract_snippets.py from {first.page}, line {first.line}: do not edit."]
    # check.cmake reads a `fails` block's expectations from the source's `// expect` lines.
    text += [f"// {e}" for b in u.blocks for e in b.expect]
    for b in u.blocks:
        text.append(f'#line {b.line} "{b.page}"')
        text += b.code
    return "\n".join(text) + "\n"


def page_id(rel: str) -> str:
    stem = re.sub(r"[^a-z0-9]+", "_", rel.lower().removesuffix(".md")).strip("_")
    if stem == "docs_readme":
        return "index"
    return stem.removeprefix("docs_")


def write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def kind_of(u: Unit) -> str:
    if u.has("fails"):
        return "fails"
    if u.has("run"):
        return "run"
    return "program" if any(b.defines_main() for b in u.blocks) else "object"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="+", type=Path)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="repository root; pages are named relative to it")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--out", type=Path, help="directory for the source files")
    group.add_argument("--check", action="store_true", help="parse the pages and report errors only")
    args = parser.parse_args(argv)

    root = args.root.resolve()
    units: list[Unit] = []
    try:
        for path in sorted(p.resolve() for p in args.pages):
            try:
                shown = path.relative_to(root).as_posix()
            except ValueError:
                shown = path.as_posix()
            blocks = parse_page(path, shown)
            for b in blocks:
                check_block(b)
            units += units_of(page_id(shown), blocks)
    except SnippetError as e:
        print(f"extract_snippets: {e}", file=sys.stderr)
        return 1

    if args.check:
        for u in units:
            needs = " (oneDNN)" if ONEDNN_HEADER in u.includes() else ""
            print(f"{u.name}: {u.blocks[0].page}:{u.blocks[0].line}, {len(u.blocks)} block(s), {kind_of(u)}{needs}")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    manifest = [
        "# Generated by tools/extract_snippets.py: (file, kind, needs oneDNN) triples; the kind is",
        "# run (a program the test runs), program (one that is only built), object (no main), or",
        "# fails (must not compile).",
        "set(partita_doc_units)",
    ]
    for u in units:
        write_if_changed(args.out / f"{u.name}.cpp", render(u))
        needs = "ON" if ONEDNN_HEADER in u.includes() else "OFF"
        manifest.append(f"list(APPEND partita_doc_units {u.name} {kind_of(u)} {needs})")
    write_if_changed(args.out / "snippets.cmake", "\n".join(manifest) + "\n")
    # Files of blocks since removed from the pages would only confuse a reader of the directory.
    keep = {f"{u.name}.cpp" for u in units}
    for stale in args.out.glob("*.cpp"):
        if stale.name not in keep:
            stale.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
