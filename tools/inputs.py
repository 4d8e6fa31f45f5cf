"""The base of every tool's input model."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict


def upper_bound(model: type[BaseModel], field: str) -> float | None:
    """The most ``field`` of ``model`` may hold (its ``le``), None where it sets no such bound: callers converting
    their own units into a tool's (GB to bytes, a budget to USD) refuse beyond it by their own field's name."""
    info = model.model_fields.get(field)
    return next((float(m.le) for m in info.metadata if getattr(m, "le", None) is not None), None) if info else None


class ToolInput(BaseModel):
    """A tool's input: every figure must be a finite number (inf or NaN is refused by name, never computed
    into an 'inf GB fits' answer). Subclasses add their own config; pydantic merges the two."""

    model_config = ConfigDict(allow_inf_nan=False)


def _known_vendors(names: list[str]) -> list[str]:
    """Each vendor said is one the catalog knows (any case); an unknown one is refused by name, with the list."""
    from knowledge.names import VENDORS  # tools sit above knowledge

    known = {v.lower(): v for v in VENDORS}
    unknown = [n for n in names if n.lower() not in known]
    if unknown:
        raise ValueError(f"unknown vendor {unknown[0][:40]!r} — known: {', '.join(VENDORS)}")
    return [known[n.lower()] for n in names]


VendorNames = Annotated[list[str], AfterValidator(_known_vendors)]
