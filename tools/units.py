"""Units used across the tools. Bytes are the unit of record; GB = 1e9 B and GiB = 2**30 B."""

from __future__ import annotations

GB = 10**9
GiB = 2**30
MiB = 2**20
TB = 10**12


def to_gb(n_bytes: float) -> float:
    """Bytes to decimal gigabytes (GB, 1e9 B)."""
    return n_bytes / GB


def to_gib(n_bytes: float) -> float:
    """Bytes to binary gibibytes (GiB, 2**30 B)."""
    return n_bytes / GiB


def fmt_bytes(n_bytes: float, unit: str = "GB", digits: int = 1) -> str:
    """Human label that always names its unit: '140.0 GB' or '130.4 GiB'."""
    scale = {"GB": GB, "GiB": GiB, "MiB": MiB, "TB": TB}[unit]
    return f"{n_bytes / scale:.{digits}f} {unit}"
