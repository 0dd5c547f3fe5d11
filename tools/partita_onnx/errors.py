"""The errors the importer reports to its user, and their exit codes."""
from __future__ import annotations

# Exit codes of partita_import.py: 0 written, 2 the model cannot be imported (or bad usage),
# 3 the importer itself failed.
EXIT_UNSUPPORTED = 2
EXIT_INTERNAL = 3


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
        """The message, one string per line; details are indented under the headline."""
        return [self.headline] + ["  " + d for d in self.details]
