"""Text bound for a terminal, made unable to drive it: a model name or an argument read from a file may carry
escape sequences (colours, cursor moves, window titles, hyperlinks) that would otherwise run in the user's
terminal when printed."""

from __future__ import annotations

import re
from typing import Any, TextIO

# CSI (ESC [ … final), OSC (ESC ] … BEL or ESC \), other two-character escapes, and the C0 / C1 controls
# except tab, newline and carriage return (progress bars redraw their line with it)
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?|"
                      r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` without terminal control sequences."""
    return _CONTROL.sub("", text)


class PrintableStream:
    """A text stream that removes terminal control sequences from everything written to it."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(printable(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, encoding, buffer … of the real stream
        return getattr(self._stream, name)
