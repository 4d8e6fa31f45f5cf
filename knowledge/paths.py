"""Paths the user types: ``~`` expanded the way a shell would, without pathlib's surprises."""

from __future__ import annotations

from pathlib import Path


def expand_user(path: str | Path) -> Path:
    """``Path(path).expanduser()``; a ``~name`` of no such user stays as written (pathlib raises RuntimeError)."""
    try:
        return Path(path).expanduser()
    except RuntimeError:
        return Path(path)
