"""The ``re`` module as the NLU uses it: every ``\\b`` in a pattern is an ASCII word boundary.

Python's ``\\b`` treats Chinese characters as word characters, so an English cue glued to Chinese
('300W呢', 'ups吗', 'awq做客服', '8卡服务器') never matched. Beside an ASCII letter or digit of a
pattern, :data:`ASCII_BOUNDARY` holds exactly where ``\\b`` does in ASCII text, and also next to CJK.
Modules import this in place of ``re``; compiled patterns pass through unchanged.
"""

from __future__ import annotations

import re as _re
from re import DOTALL, IGNORECASE, MULTILINE, UNICODE, VERBOSE, A, I, M, Match, Pattern, S, X, escape  # noqa: F401
from typing import Any

ASCII_BOUNDARY = r"(?:(?<![A-Za-z0-9_])|(?![A-Za-z0-9_]))"


def ascii_bounded(pattern: str) -> str:
    """``pattern`` with each ``\\b`` made an ASCII word boundary."""
    return pattern.replace(r"\b", ASCII_BOUNDARY)


def _p(pattern: Any) -> Any:
    return ascii_bounded(pattern) if isinstance(pattern, str) else pattern


def compile(pattern: Any, flags: int = 0) -> Pattern[str]:
    return _re.compile(_p(pattern), flags)


def search(pattern: Any, string: str, flags: int = 0) -> Match[str] | None:
    return _re.search(_p(pattern), string, flags)


def match(pattern: Any, string: str, flags: int = 0) -> Match[str] | None:
    return _re.match(_p(pattern), string, flags)


def fullmatch(pattern: Any, string: str, flags: int = 0) -> Match[str] | None:
    return _re.fullmatch(_p(pattern), string, flags)


def finditer(pattern: Any, string: str, flags: int = 0) -> Any:
    return _re.finditer(_p(pattern), string, flags)


def findall(pattern: Any, string: str, flags: int = 0) -> list[Any]:
    return _re.findall(_p(pattern), string, flags)


def sub(pattern: Any, repl: Any, string: str, count: int = 0, flags: int = 0) -> str:
    return _re.sub(_p(pattern), repl, string, count=count, flags=flags)


def split(pattern: Any, string: str, maxsplit: int = 0, flags: int = 0) -> list[str]:
    return _re.split(_p(pattern), string, maxsplit=maxsplit, flags=flags)
