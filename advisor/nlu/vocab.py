"""The cue vocabulary in ``advisor/nlu/data/cues.toml``, compiled once per process."""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources

from advisor.ascii_re import ascii_bounded


@cache
def _table() -> dict[str, dict[str, dict[str, list[str]]]]:
    text = resources.files("advisor.nlu").joinpath("data/cues.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


@cache
def cue(section: str, name: str) -> re.Pattern[str] | None:
    """One pattern joining every language's fragments of ``[section.name]``; None when it has none."""
    entry = _table().get(section, {}).get(name, {})
    fragments = [ascii_bounded(f) for lang in sorted(entry) for f in entry[lang]]
    if not fragments:
        return None
    return re.compile("|".join(f"(?:{f})" for f in fragments), re.IGNORECASE)


def names(section: str) -> list[str]:
    """The entries of ``section`` in file order."""
    return list(_table().get(section, {}))


def matches(section: str, name: str, text: str) -> re.Match[str] | None:
    """The first match of the cue ``[section.name]`` in ``text``."""
    pattern = cue(section, name)
    return pattern.search(text) if pattern else None


def required(section: str, name: str) -> re.Pattern[str]:
    """Like :func:`cue`, for entries the code cannot work without (a missing one is a packaging bug)."""
    pattern = cue(section, name)
    if pattern is None:
        raise LookupError(f"cue vocabulary has no [{section}.{name}] entry")
    return pattern
