"""What a card's software stack runs where it is narrower than the catalog says (knowledge/data/stack_support.toml):
model architectures and weight precisions per card and engine, used as a gate by the recommender."""

from __future__ import annotations

import datetime as dt
import functools
import tomllib
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knowledge.names import EngineName
from knowledge.schema import AttentionKind

Architecture = Literal["dense", "moe", "mla", "hybrid"]


class StackLimit(BaseModel):
    """The architectures and precisions one engine supports on the cards listed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    gpus: list[str] = Field(min_length=1)
    engine: EngineName
    runs: bool = Field(True, description="False: the engine does not run on these cards at all")
    architectures: list[Architecture] = Field(default_factory=list)
    precisions: list[str] = Field(default_factory=list)
    sources: list[str] = Field(min_length=1)
    as_of: dt.date
    confidence: Literal["H", "M", "L"]


@functools.cache
def load_limits() -> tuple[StackLimit, ...]:
    text = resources.files("knowledge.data").joinpath("stack_support.toml").read_text(encoding="utf-8")
    return tuple(StackLimit.model_validate(row) for row in tomllib.loads(text).get("limit", []))


def limits_for(gpu_id: str) -> list[StackLimit]:
    """The limits recorded for one card, engine by engine."""
    return [limit for limit in load_limits() if gpu_id in limit.gpus]


def engine_runs(gpu_id: str, engine: str) -> bool:
    """Whether ``engine`` runs on the card at all (vLLM does not run on a Mac)."""
    return not any(gpu_id in limit.gpus and limit.engine == engine and not limit.runs for limit in load_limits())


def architectures(moe: bool, attention: AttentionKind | str) -> set[Architecture]:
    """The features of a model a stack must support: routed experts, latent attention, linear-attention layers."""
    needs: set[Architecture] = {"moe"} if moe else {"dense"}
    if attention == AttentionKind.mla:
        needs.add("mla")
    if attention == AttentionKind.hybrid:
        needs.add("hybrid")
    return needs


def unsupported(gpu_id: str, engine: str, moe: bool, attention: AttentionKind | str,
                precision: str) -> StackLimit | None:
    """The limit that rules this model or precision out on this card and engine, or None when it runs."""
    needs = architectures(moe, attention)
    for limit in limits_for(gpu_id):
        if limit.engine == engine and not (limit.runs and needs <= set(limit.architectures)
                                           and precision.lower() in {p.lower() for p in limit.precisions}):
            return limit
    return None
