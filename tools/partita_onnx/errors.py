"""The errors the importer reports to its user, their exit codes, and how text from a model
file is shown in them."""
from __future__ import annotations

# Exit codes of partita_import.py: 0 written, 2 the model cannot be imported (or bad usage),
# 3 the importer itself failed.
EXIT_UNSUPPORTED = 2
EXIT_INTERNAL = 3

# How many characters of one name a message shows; the rest is counted, not printed.
SHOWN_CHARS = 200

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped_char(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(line: str) -> str:
    """`line` with every character that is not printable (line breaks, escapes to the terminal)
    written as a backslash escape: one message line stays one line on the terminal."""
    if line.isprintable():
        return line
    return "".join(ch if ch.isprintable() else _escaped_char(ch) for ch in line)


def first_line(e: BaseException) -> str:
    """The first line of an exception's message (a library's may run to many), or its type's
    name when it has none."""
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """A string taken from the model file (a name, a domain, a dim_param) as a message shows it:
    backslashes and unprintable characters escaped, and cut after `limit` characters."""
    if len(text) > limit:
        return shown(text[:limit], limit) + f"...({len(text)} characters)"
    return printable(text.replace("\\", "\\\\"))


class ImportFailure(Exception):
    """A model the importer cannot turn into C++, told in the user's terms.

    `lines` is the message: a first line saying what is wrong, then one line per culprit (an
    unsupported node, a dynamic input), all of them at once rather than the first found.
    """

    def __init__(self, headline: str, details: list[str] | None = None, code: int = EXIT_UNSUPPORTED):
        super().__init__(headline)
        self.headline = headline
        self.details = list(details or [])
        self.code = code

    def lines(self) -> list[str]:
        """The message, one string per line; details are indented under the headline. Each line
        is printable, whatever the model's names hold."""
        return [printable(self.headline)] + ["  " + printable(d) for d in self.details]
