#!/usr/bin/env python3
"""Checks the shape of include/partita: layers, banners and header sizes.

Each top-level folder is one layer, and a header may include headers of its own layer or of an
earlier one only:

    core -> ir -> pattern -> backend -> pass -> runtime -> backends

(`partita/partita.hpp`, the umbrella header, includes them all; `partita/model.hpp`, the light one,
includes core and ir only, so that declaring a model pulls in no backend.) Every header also opens with a
one-line banner (a `///` comment right after `#pragma once`) saying what it holds, and stays
under MAX_LINES lines unless it holds a single class and says so in a line containing
`A single class` (with the reason).

Exit status 1 lists every violation; run from anywhere: `python3 tools/check_headers.py`.
"""

import pathlib
import re
import sys

LAYERS = ["core", "ir", "pattern", "backend", "pass", "runtime", "backends"]
MAX_LINES = 400
# The headers above the layer folders, and the last layer each may include.
UMBRELLAS = {"partita.hpp": "backends", "model.hpp": "ir", "embedded.hpp": "backends"}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]partita/([^>"]+)[>"]')


def layer_of(relative: str) -> int:
    """The layer index of a path relative to include/partita (-1 for an umbrella header)."""
    top = relative.split("/", 1)[0]
    return LAYERS.index(top) if top in LAYERS else -1


def floor_of(relative: str) -> int:
    """The last layer a header may include: its own, or an umbrella header's (-1 for neither)."""
    return LAYERS.index(UMBRELLAS[relative]) if relative in UMBRELLAS else layer_of(relative)


def check(root: pathlib.Path) -> list[str]:
    base = root / "include" / "partita"
    problems = []
    for path in sorted(base.rglob("*.hpp")):
        relative = path.relative_to(base).as_posix()
        lines = path.read_text(encoding="utf-8").splitlines()
        own = floor_of(relative)
        if own < 0:
            problems.append(f"{relative}: not in a layer folder ({', '.join(LAYERS)})")
            continue

        if len(lines) < 2 or lines[0].strip() != "#pragma once" or not lines[1].startswith("/// "):
            problems.append(f"{relative}: no banner: line 2 must be a `/// ` comment saying what the header holds")

        if len(lines) > MAX_LINES and not any("A single class" in line for line in lines):
            problems.append(f"{relative}: {len(lines)} lines (more than {MAX_LINES}): split it on its seams, "
                            f"or say `A single class` and why")

        for number, line in enumerate(lines, 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target = match.group(1)
            if not (base / target).is_file():
                problems.append(f"{relative}:{number}: includes partita/{target}, which does not exist")
                continue
            theirs = layer_of(target)
            if theirs > own:
                who = f"'{relative}'" if relative in UMBRELLAS else f"layer '{LAYERS[own]}'"
                problems.append(f"{relative}:{number}: includes partita/{target}: {who} may not "
                                f"include the later layer '{LAYERS[theirs]}' (order: {' -> '.join(LAYERS)})")
            elif theirs < 0 and not (relative in UMBRELLAS and target == "model.hpp"):
                # An umbrella header may build on the light one; no layer header includes either.
                problems.append(f"{relative}:{number}: includes the umbrella header partita/{target}")
    return problems


def main() -> int:
    root = pathlib.Path(__file__).resolve().parent.parent
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s) in include/partita")
        return 1
    print(f"include/partita: layers, banners and sizes are in order ({' -> '.join(LAYERS)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
