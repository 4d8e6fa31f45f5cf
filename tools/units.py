"""Units used across the tools. Bytes are the unit of record; GB = 1e9 B and GiB = 2**30 B.

Result fields declare their unit in the type — ``per_gpu_bytes: Bytes``, ``bandwidth_gbs: GBps`` — so
readers (the grounding check, the presenters) take the unit from the schema instead of the field name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin

from pydantic import BaseModel

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


@dataclass(frozen=True)
class Unit:
    """Unit marker for ``Annotated`` result fields: ``name`` is the unit, ``dim`` the quantity, ``factor``
    converts one unit to the dimension's base (bytes, bytes/s, W, s, tokens/s, FLOP/s, USD, CNY)."""

    name: str
    dim: str
    factor: float = 1.0


Bytes = Annotated[int, Unit("B", "bytes")]
BytesF = Annotated[float, Unit("B", "bytes")]
GBytes = Annotated[float, Unit("GB", "bytes", GB)]
GBps = Annotated[float, Unit("GB/s", "bytes/s", GB)]
TokensPerS = Annotated[float, Unit("tokens/s", "tokens/s")]
Tokens = Annotated[int, Unit("tokens", "tokens")]
Watts = Annotated[float, Unit("W", "W")]
Seconds = Annotated[float, Unit("s", "s")]
Hours = Annotated[float, Unit("h", "s", 3600)]
Days = Annotated[float, Unit("d", "s", 86400)]
TFLOPS = Annotated[float, Unit("TFLOPS", "flops", 1e12)]
USD = Annotated[float, Unit("USD", "USD")]
CNY = Annotated[float, Unit("CNY", "CNY")]


def unit_of(model: type[BaseModel], field: str) -> Unit | None:
    """The ``Unit`` declared on ``model.field`` (``None`` when the field has none)."""
    info = model.model_fields.get(field)
    if info is None:
        return None
    found = next((m for m in info.metadata if isinstance(m, Unit)), None)
    return found if found is not None else _unit_in(info.annotation)


def _unit_in(annotation: Any) -> Unit | None:
    """A Unit inside ``Annotated[...]``, also under ``X | None`` and ``list[X]``/``tuple[X, ...]``."""
    if get_origin(annotation) is Annotated:
        return next((m for m in get_args(annotation)[1:] if isinstance(m, Unit)), None)
    for arg in get_args(annotation):
        found = _unit_in(arg)
        if found is not None:
            return found
    return None
