"""Text bound for a terminal, made unable to drive it: a model name or an argument read from a file may carry
escape sequences (colours, cursor moves, window titles, hyperlinks) that would otherwise run in the user's
terminal when printed."""

from __future__ import annotations

import re
from typing import Any, TextIO

# CSI (ESC [ … final), OSC (ESC ] … BEL or ESC \), other two-character escapes, the C0 / C1 controls except tab
# and newline, a carriage return not ending a line (it would let text overwrite what was printed before it on the
# line: 'fits\rdoes not fit'), and the bidirectional controls that reorder a line on screen (U+202E …)
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?|"
                      r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f]|\r(?!\n)|"
                      r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` without terminal control sequences, stray carriage returns and bidirectional controls."""
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
