"""onnx and numpy, which every program of tests/onnx needs: without them the program is skipped
(exit 77, CTest's SKIP_RETURN_CODE), except under CI=true, where a missing package fails it."""
from __future__ import annotations

import os
import sys

SKIPPED = 77


def require(program: str) -> None:
    """Imports onnx and numpy, or ends `program` as a skip (a failure under CI=true)."""
    try:
        import numpy  # noqa: F401
        import onnx  # noqa: F401
    except ImportError as e:
        if os.environ.get("CI") == "true":
            print(f"{program}: {e.name} is required under CI=true (Debian: python3-onnx python3-numpy) "
                  f"for {sys.executable}", file=sys.stderr)
            sys.exit(1)
        print(f"{program}: skipped: no {e.name} for {sys.executable} (install python3-onnx and python3-numpy, "
              f"or configure with -DPARTITA_MODEL_PYTHON=/path/to/python3)")
        sys.exit(SKIPPED)
