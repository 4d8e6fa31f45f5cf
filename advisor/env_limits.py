"""Server limits read from environment variables: a number in range, or one line naming the variable."""

from __future__ import annotations

from typing import Any


def env_number(env: Any, name: str, default: float, low: float, high: float) -> float:
    """``env[name]`` as a number from ``low`` to ``high`` (``default`` when unset or blank); anything else
    raises ValueError naming the variable and the range."""
    raw = str(env.get(name, "") or "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not low <= value <= high:  # NaN fails too
        raise ValueError(f"{name} must be a number from {low:g} to {high:g}, not {raw[:40]!r}")
    return value
