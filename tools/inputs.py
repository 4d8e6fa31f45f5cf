"""The base of every tool's input model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ToolInput(BaseModel):
    """A tool's input: every figure must be a finite number (inf or NaN is refused by name, never computed
    into an 'inf GB fits' answer). Subclasses add their own config; pydantic merges the two."""

    model_config = ConfigDict(allow_inf_nan=False)
