"""Where each GPU can be bought: status per region with the rule behind it (knowledge/data/markets.toml)."""

from __future__ import annotations

import datetime as dt
import functools
import tomllib
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Region = Literal["cn", "global"]
Status = Literal["available", "restricted", "unavailable"]
REGIONS: tuple[Region, ...] = ("cn", "global")


class Rule(BaseModel):
    """An export rule or market fact; what it means to a buyer is the message ``market.rule.<id>``."""

    model_config = ConfigDict(extra="forbid")

    id: str
    date: dt.date
    sources: list[str] = Field(min_length=1)


class MarketEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    region: Region
    status: Literal["restricted", "unavailable"]
    rule: str
    gpus: list[str] = Field(min_length=1)
    as_of: dt.date
    confidence: Literal["H", "M", "L"]


class Availability(BaseModel):
    """A GPU's status in one region; ``rule`` is None when it is simply on sale there."""

    gpu_id: str
    region: Region
    status: Status
    rule: Rule | None = None
    as_of: dt.date | None = None
    confidence: Literal["H", "M", "L"] | None = None


class Markets(BaseModel):
    rules: list[Rule]
    entries: list[MarketEntry]


@functools.cache
def load_markets() -> Markets:
    """The market table, validated: every entry's rule exists and no GPU is listed twice for a region."""
    text = resources.files("knowledge.data").joinpath("markets.toml").read_text(encoding="utf-8")
    raw = tomllib.loads(text)
    markets = Markets(rules=[Rule.model_validate(r) for r in raw.get("rule", [])],
                      entries=[MarketEntry.model_validate(m) for m in raw.get("market", [])])
    rule_ids = {r.id for r in markets.rules}
    seen: set[tuple[str, str]] = set()
    for entry in markets.entries:
        if entry.rule not in rule_ids:
            raise ValueError(f"markets.toml: unknown rule {entry.rule!r}")
        for gpu in entry.gpus:
            if (gpu, entry.region) in seen:
                raise ValueError(f"markets.toml: {gpu} listed twice for region {entry.region}")
            seen.add((gpu, entry.region))
    return markets


def availability(gpu_id: str, region: Region) -> Availability:
    """Whether ``gpu_id`` can be bought new in ``region``, and under which rule if not freely."""
    markets = load_markets()
    for entry in markets.entries:
        if entry.region == region and gpu_id in entry.gpus:
            rule = next(r for r in markets.rules if r.id == entry.rule)
            return Availability(gpu_id=gpu_id, region=region, status=entry.status, rule=rule, as_of=entry.as_of,
                                confidence=entry.confidence)
    return Availability(gpu_id=gpu_id, region=region, status="available")


def sold_in(gpu_id: str, region: Region | None) -> bool:
    """Whether ``gpu_id`` can be bought new in ``region`` (under a licence counts); any card when no region."""
    return region is None or availability(gpu_id, region).status != "unavailable"


def markets_as_of() -> dt.date:
    """The date the market table was last checked (its newest entry)."""
    return max(entry.as_of for entry in load_markets().entries)
