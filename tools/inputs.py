"""The base of every tool's input model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


def upper_bound(model: type[BaseModel], field: str) -> float | None:
    """The most ``field`` of ``model`` may hold (its ``le``), None where it sets no such bound: callers converting
    their own units into a tool's (GB to bytes, a budget to USD) refuse beyond it by their own field's name."""
    info = model.model_fields.get(field)
    return next((float(m.le) for m in info.metadata if getattr(m, "le", None) is not None), None) if info else None


class ToolInput(BaseModel):
    """A tool's input: every figure must be a finite number (inf or NaN is refused by name, never computed
    into an 'inf GB fits' answer). Subclasses add their own config; pydantic merges the two."""

    model_config = ConfigDict(allow_inf_nan=False)
