#!/usr/bin/env python3
"""Checks that the manual's lists of files and the source tree agree.

docs/layout.md: every path in the first column of its tables must exist (a header path such as
`ir/module.hpp` is read under include/partita/), and every header under include/partita/, every
header under models/ and every tool under tools/ must be listed. docs/tour.md: every program of
tests/compile_fail/ must be listed, and every one listed must exist. README.md and docs/*.md:
every relative link must reach an existing file, and heading, if it names one. A file moved,
added or removed without its page fails this check.

    python3 tests/docs/check_tree.py [repository root]
"""

import pathlib
import re
import sys

LINK = re.compile(r"\]\(([^)\s]+)\)|<img src=\"([^\"]+)\"")
HEADING = re.compile(r"^#+\s+(.*)$")
LAYERS = ("core", "ir", "pattern", "backend", "pass", "runtime", "backends")
ROW = re.compile(r"^\|(?P<first>[^|]*)\|")
PATH = re.compile(r"`([^`\s]+)`")


def listed_paths(page: pathlib.Path) -> list[str]:
    paths = []
    for line in page.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if m:
            paths += PATH.findall(m.group("first"))
    return paths


def resolve(root: pathlib.Path, path: str) -> pathlib.Path:
    if path.split("/", 1)[0] in LAYERS:
        return root / "include" / "partita" / path
    return root / path


def expected(root: pathlib.Path) -> set[pathlib.Path]:
    files = set((root / "include" / "partita").rglob("*.hpp"))
    files |= set((root / "models").glob("*.hpp"))
    files |= {p for p in (root / "tools").rglob("*") if p.is_file() and p.name != "CMakeLists.txt"
              and "__pycache__" not in p.parts}
    return files


def anchors(page: pathlib.Path) -> set[str]:
    """GitHub's anchors for the page's headings: lower case, punctuation dropped, spaces to -."""
    out = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        m = None if fenced else HEADING.match(line)
        if m:
            text = re.sub(r"[^\w\- ]", "", m.group(1).replace("`", "").lower())
            out.add(text.replace(" ", "-"))
    return out


def broken_links(root: pathlib.Path) -> list[str]:
    """Relative links of README.md and docs/*.md whose file or heading does not exist."""
    problems = []
    for page in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        for m in LINK.finditer(page.read_text(encoding="utf-8")):
            target = m.group(1) or m.group(2)
            if re.match(r"^[a-z]+:", target):
                continue  # an external address
            path, _, anchor = target.partition("#")
            where = (page.parent / path).resolve() if path else page
            shown = page.relative_to(root).as_posix()
            if not where.exists():
                problems.append(f"{shown}: link to {target}: no such file")
            elif anchor and where.suffix == ".md" and anchor not in anchors(where):
                problems.append(f"{shown}: link to {target}: no such heading")
    return problems


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2]).resolve()
    page = root / "docs" / "layout.md"
    problems = []
    seen = set()
    for path in listed_paths(page):
        where = resolve(root, path)
        if path.endswith("/") and not where.is_dir() or not path.endswith("/") and not where.is_file():
            problems.append(f"docs/layout.md lists `{path}`, which does not exist")
        seen.add(where)
    for missing in sorted(expected(root) - seen):
        problems.append(f"docs/layout.md does not list {missing.relative_to(root).as_posix()}")
    tour = root / "docs" / "tour.md"
    fail_dir = root / "tests" / "compile_fail"
    listed = {p for p in listed_paths(tour) if p.endswith(".cpp")}
    actual = {p.relative_to(fail_dir).as_posix() for p in fail_dir.rglob("*.cpp")}
    problems += [f"docs/tour.md does not list tests/compile_fail/{p}" for p in sorted(actual - listed)]
    problems += [f"docs/tour.md lists tests/compile_fail/{p}, which does not exist" for p in sorted(listed - actual)]
    problems += broken_links(root)
    for p in problems:
        print(p, file=sys.stderr)
    if not problems:
        print(f"docs/layout.md lists every header and tool ({len(seen)} paths), "
              f"docs/tour.md every compile-fail test ({len(actual)}); every link resolves")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
