"""Paths the user types: ``~`` expanded the way a shell would, without pathlib's surprises."""

from __future__ import annotations

import errno
import stat
from pathlib import Path


def expand_user(path: str | Path) -> Path:
    """``Path(path).expanduser()``; a ``~name`` of no such user stays as written (pathlib raises RuntimeError)."""
    try:
        return Path(path).expanduser()
    except RuntimeError:
        return Path(path)


def regular_file(path: Path) -> Path:
    """``path`` when it is a regular file; an OSError (EINVAL) for a folder, FIFO, device or socket, which
    would block or never end when read ('/dev/zero' as a session, a named pipe as a model file)."""
    if not stat.S_ISREG(path.stat().st_mode):
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return path
