"""Files the app reads from its user (GPU files, sessions, model configs) parsed within size and depth bounds.

``json`` and ``tomllib`` recurse once per level of nesting: 900 ``[`` in a 1.8 kB file end in a
``RecursionError`` far from the file that caused it. Here the text is measured first — its size, then how deeply
its brackets and braces nest outside strings and comments, by one linear scan that never recurses — and only a
text within both bounds is parsed; the parsed data's depth is checked after (TOML's dotted keys and table headers
nest without brackets). Every refusal is a :class:`BoundsError`, one line naming the file and the problem.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any, Final, Literal

from knowledge.errors import AdvisorError
from knowledge.paths import regular_file

MAX_DEPTH: Final = 64  # no file the app reads nests past ~12 levels
Format = Literal["json", "toml"]

# One token per string (to its closing quote, or to the end of its line or text when unterminated, so a match
# never fails and is never retried), comment or bracket; what lies between tokens is skipped.
_TOKENS: Final = {
    "json": re.compile(r'"[^"\\]*(?:\\[\s\S][^"\\]*)*(?:"|\\?\Z)|[\[\]{}]'),
    "toml": re.compile(r'"""[\s\S]*?(?:"""|\Z)|\'\'\'[\s\S]*?(?:\'\'\'|\Z)'
                       r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*(?:"|\\?$)|\'[^\'\n]*(?:\'|$)|#[^\n]*|[\[\]{}]', re.M),
}


class BoundsError(AdvisorError, ValueError):
    """A file that cannot be used: ``str()`` is ``'<where>: <problem>'``, one line."""

    def __init__(self, where: str, problem: str):
        self.where = where
        self.problem = problem
        super().__init__(f"{where}: {problem}")


def nested_too_deeply(limit: int) -> str:
    return f"nested too deeply: more than {limit} levels"


def text_depth(text: str, fmt: Format, stop_at: int = MAX_DEPTH) -> int:
    """How deeply ``text`` nests ``[]``/``{}`` outside strings (and TOML comments), counted up to one past
    ``stop_at``; never recurses. A TOML ``[[table]]`` header counts as two."""
    depth = deepest = 0
    for match in _TOKENS[fmt].finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop_at:
                    break
        elif token in ("]", "}"):
            depth = max(depth - 1, 0)
    return deepest


def data_depth(data: Any, stop_at: int = MAX_DEPTH) -> int:
    """How deeply parsed ``data`` nests lists and dicts, counted up to one past ``stop_at``; never recurses."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        node, level = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if deepest > stop_at:
            break
        stack.extend((child, level + 1) for child in children)
    return deepest


def read_text(path: Path, max_bytes: int, where: str | None = None) -> str:
    """The UTF-8 text of the regular file ``path``; BoundsError past ``max_bytes`` (no more is read).
    OSError and UnicodeDecodeError pass through, for callers with their own words for them."""
    with regular_file(path).open("rb") as fh:
        raw = fh.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise BoundsError(where or path.name, f"larger than {max_bytes:,} bytes")
    return raw.decode("utf-8")


def parse(text: str, fmt: Format, where: str, max_depth: int = MAX_DEPTH) -> Any:
    """``text`` parsed as JSON or TOML once its nesting is known to be within ``max_depth``."""
    if text_depth(text, fmt, max_depth) > max_depth:
        raise BoundsError(where, nested_too_deeply(max_depth))
    try:
        data = json.loads(text) if fmt == "json" else tomllib.loads(text)
    except RecursionError:  # the scan above misjudged a string: still one line, never a traceback
        raise BoundsError(where, nested_too_deeply(max_depth)) from None
    except ValueError as exc:  # JSONDecodeError, TOMLDecodeError, a number past int()'s digit limit
        raise BoundsError(where, f"not valid {fmt.upper()}: {_one_line(exc)}") from None
    if data_depth(data, max_depth) > max_depth:
        raise BoundsError(where, nested_too_deeply(max_depth))
    return data


def read(path: Path, fmt: Format, max_bytes: int, max_depth: int = MAX_DEPTH, where: str | None = None) -> Any:
    """The file ``path`` parsed as JSON or TOML within ``max_bytes`` and ``max_depth``; every problem (missing,
    not a regular file, too large, not UTF-8, not valid, too deep) a BoundsError."""
    where = where or path.name
    try:
        text = read_text(path, max_bytes, where)
    except OSError as exc:
        raise BoundsError(where, f"cannot be read: {exc.strerror or type(exc).__name__}") from None
    except UnicodeDecodeError as exc:
        raise BoundsError(where, f"not UTF-8 text (byte {exc.start:,})") from None
    return parse(text, fmt, where, max_depth)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 160 else text[:159] + "…"
