#!/usr/bin/env python3
"""Turns the C++ code blocks of Partita's Markdown pages into translation units, one per page.

tests/docs/CMakeLists.txt runs this at configure time and builds what it writes, so a snippet
that stops compiling fails the build and the `docs` tests, with the compiler pointing at the
Markdown line (each block is preceded by a #line directive).

    python3 tools/extract_snippets.py --out DIR README.md docs/*.md   # write DIR/<page>.cpp ...
    python3 tools/extract_snippets.py --check README.md docs/*.md     # parse only, report errors

Convention (a page's reader never sees the directives: they are HTML comments):

* Every fenced block whose info string is `cpp` (or `c++`, `cxx`) is compiled. Other blocks
  (sh, cmake, text, none) are not.
* Each block goes into a namespace of its own, after `#include <partita/partita.hpp>` and with
  `using namespace partita;` in force, so blocks may reuse names (`net`, `exe`) freely.
* A block without a directive is namespace-scope code: type aliases, static_asserts, backend
  structs, functions. It may define `int main()`: inside the block's namespace that is an
  ordinary function, and the test calls it when the block is marked `run` (main() then needs no
  `return 0;`: the extractor declares it `auto main()`).
* A directive is an HTML comment right before the fence (blank lines between are allowed):
      <!-- snippet: fragment -->     statements: the block becomes the body of a function
      <!-- snippet: continue -->     the block continues the previous one on the page (same
                                     namespace; two fragments in a row share one function body)
      <!-- snippet: run -->          the test calls the block (its function, or its main())
                                     and fails if it throws or main() returns non-zero
      <!-- snippet: global -->       the block is emitted at global scope, before the others and
                                     without `using namespace partita;`: for what only global
                                     scope allows, such as specializing `partita::transfer<A, B>`
      <!-- skip: reason -->          not compiled; the reason is required (a block that needs a
                                     user's device library, say)
  Options combine: `<!-- snippet: fragment, continue, run -->`.
* Lines after the first line of a `snippet:` comment, up to `-->`, are hidden code placed before
  the block (in the function for a fragment): the declarations a fragment needs and the page
  does not show.
      <!-- snippet: fragment
      std::vector<float> image(784), scores(10);
      -->
* `#include` lines are hoisted to the top of the translation unit. Snippets include only
  <partita/partita.hpp> and <partita/backends/onednn/onednn.hpp> among Partita's headers (a
  header that moves must not break the manual), besides standard headers.
* A block that includes the oneDNN header (itself, or anything it continues or is continued
  by) goes to the page's second translation unit, <page>_onednn.cpp, built only when CMake has
  the partita::onednn target.

The output directory receives <page>.cpp (and <page>_onednn.cpp) for each page that has
compiled blocks, plus snippets.cmake, which lists them for CMake. Files are rewritten only when
their content changes, so an unchanged page does not rebuild.
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
ALLOWED_PARTITA_HEADERS = {"partita/partita.hpp", "partita/backends/onednn/onednn.hpp"}
ONEDNN_HEADER = "partita/backends/onednn/onednn.hpp"
OPTIONS = {"fragment", "continue", "run", "global"}


class SnippetError(Exception):
    pass


@dataclass
class Block:
    page: str  # path as written in #line directives and messages
    line: int  # 1-based line of the first code line
    code: list[str]
    options: set[str] = field(default_factory=set)
    prelude: list[str] = field(default_factory=list)
    prelude_line: int = 0

    @property
    def fragment(self) -> bool:
        return "fragment" in self.options

    def includes(self) -> list[str]:
        found = []
        for text in self.prelude + self.code:
            m = INCLUDE_RE.match(text)
            if m:
                found.append(m.group("angled") or m.group("quoted"))
        return found


def parse_directive(lines: list[str], end: int, page: str) -> tuple[str, set[str], list[str], int] | None:
    """The directive whose `-->` is on line `end` (0-based), if that comment is one of ours.
    Returns (kind, options, prelude lines, 1-based line of the first prelude line)."""
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
        return kind, set(), [], 0
    options = {o.strip() for o in first.split(",") if o.strip()}
    unknown = options - OPTIONS
    if unknown:
        raise SnippetError(f"{page}:{start + 1}: unknown snippet option(s) {sorted(unknown)}; known: {sorted(OPTIONS)}")
    return kind, options, body, start + 2


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
                _, options, prelude, prelude_line = directive
                blocks.append(Block(shown, i + 2, code, options, prelude, prelude_line))
            # A skipped block is simply left out.
        i = j + 1
    return blocks


def check_block(b: Block) -> None:
    for name in b.includes():
        if name.startswith("partita/") and name not in ALLOWED_PARTITA_HEADERS:
            raise SnippetError(
                f"{b.page}:{b.line}: snippets include <partita/partita.hpp> (and the oneDNN header), not <{name}>")
    if "run" in b.options and not b.fragment and not any(MAIN_RE.search(t) for t in b.code):
        raise SnippetError(f"{b.page}:{b.line}: a `run` block that is not a fragment must define int main()")


def chains(blocks: list[Block]) -> list[list[Block]]:
    """Blocks grouped by `continue`: each group shares one namespace."""
    out: list[list[Block]] = []
    for b in blocks:
        if "global" in b.options:
            if b.options & {"continue", "fragment", "run"}:
                raise SnippetError(f"{b.page}:{b.line}: `global` does not combine with other options")
            out.append([b])
            continue
        if "continue" in b.options:
            if out and "global" in out[-1][-1].options:
                raise SnippetError(f"{b.page}:{b.line}: a `global` block cannot be continued")
            if not out:
                raise SnippetError(f"{b.page}:{b.line}: `continue` on the first compiled block of the page")
            if out[-1][-1].fragment and not b.fragment:
                raise SnippetError(f"{b.page}:{b.line}: namespace-scope code cannot continue a fragment")
            out[-1].append(b)
        else:
            out.append([b])
    return out


def code_lines(lines: list[str], first_line: int, page: str) -> list[str]:
    """The lines with #line bookkeeping and hoisted includes blanked (line numbers stay right).
    `int main(` becomes `auto main(`: outside the global namespace main is an ordinary function,
    which would otherwise need the `return 0;` that the real main does without."""
    out = [f'#line {first_line} "{page}"']
    for text in lines:
        out.append("" if INCLUDE_RE.match(text) else MAIN_RE.sub("auto main(", text))
    return out


def render(unit: str, groups: list[list[Block]]) -> str:
    includes: list[str] = []
    for group in groups:
        for b in group:
            for name in b.includes():
                if name not in includes:
                    includes.append(name)
    head = [
        "// Generated by tools/extract_snippets.py from the C++ blocks of one page: do not edit.",
        "#include <partita/partita.hpp>",
    ]
    head += [f"#include <{name}>" for name in includes if name != "partita/partita.hpp"]
    head += [
        "#include <cstdio>",
        "#include <exception>",
        "#include <type_traits>",
        "#include <functional>",
        "",
        "// Snippets declare things to show them, not to use them.",
        '#pragma GCC diagnostic ignored "-Wunused-local-typedefs"',
        '#pragma GCC diagnostic ignored "-Wunused-variable"',
        '#pragma GCC diagnostic ignored "-Wunused-but-set-variable"',
        "",
    ]
    body: list[str] = []
    for group in groups:
        if "global" in group[0].options:
            body += code_lines(group[0].prelude, group[0].prelude_line, group[0].page) if group[0].prelude else []
            body += code_lines(group[0].code, group[0].line, group[0].page)
            body.append("")
    calls: list[tuple[str, str]] = []  # (qualified function, where)
    for n, group in enumerate(groups):
        if "global" in group[0].options:
            continue
        ns = f"snippet_{n}"
        body.append(f"namespace {ns} {{")
        body.append("using namespace partita;")
        function = None  # the function that consecutive fragments share
        for b in group:
            if b.fragment and function is None:
                function = f"fragment_{b.line}"
                body.append(f"[[maybe_unused]] void {function}() {{")
            if b.prelude:
                body += code_lines(b.prelude, b.prelude_line, b.page)
            body += code_lines(b.code, b.line, b.page)
            if "run" in b.options:
                target = f"{ns}::{function}" if b.fragment else f"{ns}::main"
                if not any(c[0] == target for c in calls):
                    calls.append((target, f"{b.page}:{b.line}"))
        if function is not None:
            body.append("}")
        body.append(f"}}  // namespace {ns}")
        body.append("")
    main = [
        "// A block's main() may return void (no return statement) or int.",
        "template <class F>",
        "int call_snippet(F f) {",
        "  if constexpr (std::is_void_v<std::invoke_result_t<F>>) {",
        "    f();",
        "    return 0;",
        "  } else {",
        "    return f();",
        "  }",
        "}",
        "",
        "int main() {",
    ]
    for fn, where in calls:
        main += [
            "  try {",
            f"    if (const int rc = call_snippet(&{fn}); rc != 0) {{",
            f'      std::fprintf(stderr, "{where}: the snippet returned %d\\n", rc);',
            "      return 1;",
            "    }",
            "  } catch (const std::exception& e) {",
            f'    std::fprintf(stderr, "{where}: the snippet threw: %s\\n", e.what());',
            "    return 1;",
            "  }",
        ]
    main += [f'  std::printf("{unit}: {len(calls)} snippet(s) run, every block compiled\\n");', "  return 0;", "}", ""]
    # After the last snippet, diagnostics point into the generated file again.
    text = head + body
    text.append(f'#line {len(text) + 2} "{unit}.cpp"')
    return "\n".join(text + main)


def page_id(rel: str) -> str:
    stem = re.sub(r"[^a-z0-9]+", "_", rel.lower().removesuffix(".md")).strip("_")
    if stem == "docs_readme":
        return "index"
    return stem.removeprefix("docs_")


def write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pages", nargs="+", type=Path)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="repository root; pages are named relative to it")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--out", type=Path, help="directory for the translation units")
    group.add_argument("--check", action="store_true", help="parse the pages and report errors only")
    args = parser.parse_args(argv)

    root = args.root.resolve()
    units: list[tuple[str, bool, int]] = []  # (unit name, needs oneDNN, number of blocks)
    texts: dict[str, str] = {}
    try:
        for path in sorted(p.resolve() for p in args.pages):
            try:
                shown = path.relative_to(root).as_posix()
            except ValueError:
                shown = path.as_posix()
            blocks = parse_page(path, shown)
            for b in blocks:
                check_block(b)
            host, onednn = [], []
            for group in chains(blocks):
                needs = any(ONEDNN_HEADER in b.includes() for b in group)
                (onednn if needs else host).append(group)
            pid = page_id(shown)
            for name, groups, needs in ((pid, host, False), (f"{pid}_onednn", onednn, True)):
                if groups:
                    units.append((name, needs, sum(len(g) for g in groups)))
                    texts[name] = render(name, groups)
    except SnippetError as e:
        print(f"extract_snippets: {e}", file=sys.stderr)
        return 1

    if args.check:
        for name, needs, count in units:
            print(f"{name}: {count} block(s){' (oneDNN)' if needs else ''}")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    manifest = ["# Generated by tools/extract_snippets.py: (unit, needs oneDNN) pairs.", "set(partita_doc_units)"]
    for name, needs, _ in units:
        write_if_changed(args.out / f"{name}.cpp", texts[name])
        manifest.append(f"list(APPEND partita_doc_units {name} {'ON' if needs else 'OFF'})")
    write_if_changed(args.out / "snippets.cmake", "\n".join(manifest) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
