#!/usr/bin/env python3
"""Checks that partita/model.hpp stays light, and that partita/embedded.hpp stays freestanding.

`partita/model.hpp` is the header for declaring and inspecting models (ops, leaves, `model<>`,
shapes, `print`). This compiles a file that includes only it, lists the files the compiler
opened (`-H`), and fails on any of: a header of a partita layer after ir (pattern, backend, pass,
runtime, backends), xsimd or Boost, or one of the standard headers a model does not need (streams,
threads). It reads which files are included, not how long they take, so its answer is the same on
every machine.

With --embedded it checks partita/embedded.hpp instead, the header a microcontroller's firmware
includes (docs/embedded.md): compiled with -fno-exceptions -fno-rtti, it may include every layer,
Boost.Hana and the reference and mcu backends, but no xsimd, no cpu or oneDNN backend, no
streams, threads, clocks or memory mapping (C stdio is declared, for `print`, and never called),
and not the heap-owning `compiled<>` or the safetensors reader.

    python3 tools/check_light_header.py [--compiler c++] [--include DIR] [--embedded]
"""

import argparse
import pathlib
import re
import subprocess
import sys

HEADER = "partita/model.hpp"
FORBIDDEN = [
    (re.compile(r"/partita/(pattern|backend|pass|runtime|backends)/"), "a partita layer after ir"),
    (re.compile(r"/xsimd/"), "xsimd"),
    (re.compile(r"/boost/"), "Boost"),
    (re.compile(r"/(ios|iostream|istream|ostream|sstream|fstream|thread|future)$"),
     "a standard header for streams or threads"),
]

EMBEDDED = "partita/embedded.hpp"
EMBEDDED_FORBIDDEN = [
    (re.compile(r"/partita/backends/(cpu|onednn)/"), "a backend that needs xsimd, threads or a library"),
    (re.compile(r"/partita/runtime/(executable|safetensors|profile|availability)\.hpp$"),
     "a runtime header that allocates, reads files or keeps time"),
    (re.compile(r"/xsimd/"), "xsimd"),
    (re.compile(r"/(ios|iostream|istream|ostream|sstream|fstream|thread|future|mutex|chrono)$"),
     "a standard header for streams, threads or clocks"),
    (re.compile(r"/sys/mman\.h$"), "memory mapping"),
]


def included_files(compiler: str, include: pathlib.Path, header: str = HEADER, flags: tuple[str, ...] = ()) -> list[str]:
    """The files the compiler opens for a file that includes `header` only, in -H order."""
    run = subprocess.run([compiler, "-std=c++20", "-fsyntax-only", "-H", *flags, f"-I{include}", "-x", "c++", "-"],
                         input=f"#include <{header}>\n", capture_output=True, text=True, check=False)
    if run.returncode != 0:
        sys.exit(f"{header} does not compile alone with {compiler} {' '.join(flags)}:\n{run.stderr}")
    return [m.group(1) for m in (re.match(r"^\.+ (.*)$", line) for line in run.stderr.splitlines()) if m]


def main() -> int:
    root = pathlib.Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compiler", default="c++", help="the C++ compiler (GCC or Clang)")
    parser.add_argument("--include", type=pathlib.Path, default=root / "include", help="partita's include folder")
    parser.add_argument("--embedded", action="store_true", help=f"check {EMBEDDED} instead")
    args = parser.parse_args()
    if args.embedded:
        files = included_files(args.compiler, args.include, EMBEDDED, ("-fno-exceptions", "-fno-rtti"))
        problems = [f"{path}: {why}" for path in files for pattern, why in EMBEDDED_FORBIDDEN if pattern.search(path)]
        verdict = (f"{EMBEDDED} includes {len(problems)} file(s) a freestanding build must not" if problems else
                   f"{EMBEDDED}: {len(files)} files, compiled without exceptions or RTTI; no xsimd, streams, "
                   "threads, clocks or heap-owning runtime")
        print("\n".join(problems + [verdict]))
        return 1 if problems else 0
    files = included_files(args.compiler, args.include)
    problems = [f"{path}: {why}" for path in files for pattern, why in FORBIDDEN if pattern.search(path)]
    verdict = (f"{HEADER} includes {len(problems)} file(s) it must not (it may include core and ir only)"
               if problems else f"{HEADER}: {len(files)} files, none of a backend, xsimd, Boost, streams or threads")
    print("\n".join(problems + [verdict]))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
