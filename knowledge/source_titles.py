"""What a catalog source key stands for ('S-NV-ADA-WP' → 'NVIDIA Ada Lovelace architecture whitepaper'), from
knowledge/data/sources/reference.toml, so a reply names the source and never a bare key."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

_FILE = Path(__file__).parent / "data" / "sources" / "reference.toml"
SHORT_TITLE = 60  # characters of a title a reply shows


@cache
def _titles() -> dict[str, str]:
    return {key: str(row.get("title", key)) for key, row in tomllib.loads(_FILE.read_text("utf-8")).items()
            if isinstance(row, dict)}


def source_title(ref: str) -> str:
    """The source's short title (its text before a comma or parenthesis); a URL or an unknown key as given."""
    title = _titles().get(ref.split(" ")[0])
    if title is None:
        return ref.split(" ")[0][:SHORT_TITLE]
    short = title.split(" (")[0].split(", ")[0].split(" — ")[0]
    if len(short) <= SHORT_TITLE:
        return short
    return short[:SHORT_TITLE].rsplit(" ", 1)[0] + "…"  # cut at a word, marked
