"""What one import may spend: memory for constants, and wall-clock time.

A model file is untrusted: 219 bytes of `ConstantOfShape` can ask for gigabytes, and external
data can claim any length. Every tensor the importer loads or folds is charged to one budget
before it is allocated, and an import past the cap is refused naming the tensor or node and its
size. The time limit ends an import that runs too long with the same one-line message.
"""
from __future__ import annotations

import re
import signal
from contextlib import contextmanager
from typing import Iterator

from .errors import ImportFailure

# Defaults, documented in docs/onnx.md ("Untrusted models"): room for the largest models the
# importer is tested with (a few hundred megabytes of weights) many times over.
DEFAULT_MAX_MEMORY = 4 << 30
DEFAULT_TIME_LIMIT = 600

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """`"4G"` -> 4294967296; a number of bytes with an optional K, M, G or T (powers of 1024)."""
    m = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)i?B?\s*", text, flags=re.IGNORECASE)
    if m is None or int(m.group(1)) <= 0:
        raise ImportFailure(f"--max-memory {text!r}: expected a positive size such as 4G, 512M or 1048576")
    return int(m.group(1)) * _UNITS[m.group(2).upper()]


def size_text(nbytes: int) -> str:
    """`5.0 GiB`, `64 MiB`, `512 bytes`."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            value = nbytes / scale
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{nbytes} bytes"


class Budget:
    """The bytes of constants an import holds, against its cap."""

    def __init__(self, cap: int = DEFAULT_MAX_MEMORY):
        self.cap = cap
        self.used = 0

    def charge(self, what: str, elements: int, itemsize: int) -> None:
        """Counts a tensor of `elements` elements about to be allocated; past the cap, refuses
        the import with `what` (the node or tensor) and the size in the message."""
        nbytes = elements * itemsize
        if self.used + nbytes > self.cap:
            held = f", with {size_text(self.used)} already held" if self.used else ""
            raise ImportFailure(f"{what}: {elements} elements ({size_text(nbytes)}) would pass the importer's "
                                f"memory cap of {size_text(self.cap)}{held}; raise it with --max-memory")
        self.used += nbytes


class TimeLimitReached(BaseException):
    """Raised in the importer's own thread when its time limit runs out. A BaseException, so
    that the handlers that turn a library's errors into messages let it through."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Runs the body under a wall-clock limit (none when `seconds` is 0); past it, the body is
    interrupted by TimeLimitReached."""
    if seconds <= 0 or not hasattr(signal, "setitimer"):
        yield
        return

    def expired(signum, frame):  # noqa: ARG001
        raise TimeLimitReached()

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
