"""Pieces shared by tool results: explained terms, memory breakdowns."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Term(BaseModel):
    """One term of a computed figure, with its formula and a one-line explanation in both languages.

    Frozen: results may share a term that does not change between calls."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    value: float = Field(description="in the unit named by `unit`")
    unit: str = Field(description="'bytes', 'tokens/s', 's', 'W', …")
    formula: str
    explain_en: str
    explain_zh: str


class MemoryBreakdown(BaseModel):
    """Bytes per category; 0 where a category does not apply."""

    model_config = ConfigDict(extra="forbid")

    weights: int = Field(0, ge=0)
    kv_cache: int = Field(0, ge=0)
    activations: int = Field(0, ge=0)
    gradients: int = Field(0, ge=0)
    optimizer: int = Field(0, ge=0)
    overhead: int = Field(0, ge=0)

    @property
    def total(self) -> int:
        return self.weights + self.kv_cache + self.activations + self.gradients + self.optimizer + self.overhead
