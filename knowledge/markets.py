"""Where each GPU can be bought: status per region, computed from the card's own figures by the export rules'
tests (knowledge/data/markets.toml), with named exceptions for licensed, discontinued and grey-market parts.

The US rules classify a chip by its total processing performance (TPP = dense TOPS x operand bit length, the
highest over its precisions) and, for data-centre parts, by its performance density (TPP per mm² of die). A card's
China status therefore follows from its throughput, tier and die area and can never contradict its own specs;
the exceptions are the few products whose status is set by a licence, a vendor decision or a Chinese rule.
"""

from __future__ import annotations

import datetime as dt
import functools
import tomllib
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from knowledge.schema import GPU, Tier

Region = Literal["cn", "global"]
Status = Literal["available", "restricted", "unavailable"]
REGIONS: tuple[Region, ...] = ("cn", "global")

# operand bit length per catalogued precision, as the rules count it (TF32 counts as a 32-bit operation)
OPERAND_BITS: dict[str, int] = {"fp64": 64, "fp32": 32, "tf32": 32, "bf16": 16, "fp16": 16, "fp8": 8, "int8": 8,
                                "fp4": 4}
_TIE_ORDER = ("fp8", "int8", "fp4", "fp16", "bf16", "tf32", "fp32", "fp64")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Rule(_Strict):
    """An export rule or market fact; what it means to a buyer is the message ``market.rule.<id>``."""

    id: str
    date: dt.date
    sources: list[str] = Field(min_length=1)


class Control(_Strict):
    """One test of an export rule on a card's own figures: TPP at least ``tpp_min`` and, where given, performance
    density, link bandwidth and tier conditions. A card that passes the test needs a licence that is not granted."""

    rule: str
    clause: str
    tpp_min: float = Field(gt=0)
    density_min: float | None = Field(None, gt=0, description="TPP per mm² of die")
    interconnect_min_gbs: float | None = Field(None, gt=0, description="bidirectional chip-to-chip GB/s")
    datacenter_only: bool = Field(False, description="applies to parts designed or marketed for data centres")


class Die(_Strict):
    """The die area behind a card's performance density (all dies of a package summed)."""

    chip: str
    area_mm2: float = Field(gt=0)
    gpus: list[str] = Field(min_length=1)
    source: str


class LicenceWindow(_Strict):
    """A rule that lets named controlled parts be licensed case by case, within figure limits the rule sets."""

    rule: str
    tpp_max: float = Field(gt=0)
    bandwidth_max_gbs: float = Field(gt=0)
    gpus: list[str] = Field(min_length=1)
    as_of: dt.date
    confidence: Literal["H", "M", "L"]


class MarketEntry(_Strict):
    """A named exception: a status set by a licence, a vendor decision, a Chinese rule or a grey market."""

    region: Region
    status: Status
    rule: str
    gpus: list[str] = Field(min_length=1)
    as_of: dt.date
    confidence: Literal["H", "M", "L"]


class Figures(BaseModel):
    """What the export tests read from a card: its TPP (and the precision that sets it) and density."""

    model_config = ConfigDict(extra="ignore", frozen=True)  # ``density`` is computed, and dumped with the rest

    tpp: float
    precision: str | None
    die_mm2: float | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def density(self) -> float | None:
        """TPP per mm² of die, where the die area is recorded."""
        return round(self.tpp / self.die_mm2, 2) if self.die_mm2 else None


class Availability(_Strict):
    """A GPU's status in one region; ``rule`` is None when it is simply on sale there. ``clause`` and ``figures``
    say which test of the rule the card's own figures meet when the status was computed, not named."""

    gpu_id: str
    region: Region
    status: Status
    rule: Rule | None = None
    clause: str | None = None
    control: Control | None = None
    figures: Figures | None = None
    as_of: dt.date | None = None
    confidence: Literal["H", "M", "L"] | None = None


class Markets(_Strict):
    rules: list[Rule]
    controls: list[Control]
    dies: list[Die]
    windows: list[LicenceWindow]
    entries: list[MarketEntry]
    as_of: dt.date


@functools.cache
def load_markets() -> Markets:
    """The market table, validated: every rule referenced exists and no GPU is named twice for a region."""
    text = resources.files("knowledge.data").joinpath("markets.toml").read_text(encoding="utf-8")
    raw = tomllib.loads(text)
    markets = Markets(rules=[Rule.model_validate(r) for r in raw.get("rule", [])],
                      controls=[Control.model_validate(c) for c in raw.get("control", [])],
                      dies=[Die.model_validate(d) for d in raw.get("die", [])],
                      windows=[LicenceWindow.model_validate(w) for w in raw.get("licence_window", [])],
                      entries=[MarketEntry.model_validate(m) for m in raw.get("market", [])],
                      as_of=raw["as_of"])
    rule_ids = {r.id for r in markets.rules}
    referenced = [c.rule for c in markets.controls] + [w.rule for w in markets.windows] + \
        [e.rule for e in markets.entries]
    for rule in referenced:
        if rule not in rule_ids:
            raise ValueError(f"markets.toml: unknown rule {rule!r}")
    seen: set[tuple[str, str]] = set()
    named = [(g, e.region) for e in markets.entries for g in e.gpus] + [(g, "cn") for w in markets.windows
                                                                       for g in w.gpus]
    for key in named:
        if key in seen:
            raise ValueError(f"markets.toml: {key[0]} named twice for region {key[1]}")
        seen.add(key)
    dies = [g for d in markets.dies for g in d.gpus]
    if len(dies) != len(set(dies)):
        raise ValueError("markets.toml: a GPU has two die areas")
    return markets


def figures(gpu: GPU) -> Figures:
    """The card's TPP (highest dense rate x operand bits over its precisions) and die area where recorded."""
    rates = {p: (getattr(gpu.throughput, p) or 0.0) * bits for p, bits in OPERAND_BITS.items()}
    best = max(_TIE_ORDER, key=lambda p: rates[p])  # on a tie, the precision the figure is usually quoted in
    die = next((d.area_mm2 for d in load_markets().dies if gpu.id in d.gpus), None)
    return Figures(tpp=round(rates[best], 1), precision=best if rates[best] else None, die_mm2=die)


def needs_die_area(gpu: GPU) -> bool:
    """Whether the rules' density tests decide this card (a data-centre part between the TPP thresholds)."""
    markets = load_markets()
    tpp = figures(gpu).tpp
    dense_tests = [c for c in markets.controls if c.density_min is not None]
    top = min((c.tpp_min for c in markets.controls if c.density_min is None and c.interconnect_min_gbs is None),
              default=float("inf"))
    return (not gpu.domestic and gpu.tier == Tier.datacenter
            and any(tpp >= c.tpp_min for c in dense_tests) and tpp < top)


def control_met(gpu: GPU) -> tuple[Control, Figures] | None:
    """The first export test (in rule order) the card's own figures meet, or None."""
    fig = figures(gpu)
    for control in load_markets().controls:
        if fig.tpp < control.tpp_min:
            continue
        if control.datacenter_only and gpu.tier != Tier.datacenter:
            continue
        if control.interconnect_min_gbs is not None and gpu.interconnect.bandwidth_gbs < control.interconnect_min_gbs:
            continue
        if control.density_min is not None and (fig.density is None or fig.density < control.density_min):
            continue
        return control, fig
    return None


def _gpu(gpu_id: str) -> GPU | None:
    from knowledge.catalog import load_catalog  # the catalog's loader does not need the markets: no cycle at use

    return next((g for g in load_catalog().gpus if g.id == gpu_id), None)


def availability(gpu_id: str, region: Region) -> Availability:
    """Whether ``gpu_id`` can be bought new in ``region``, and under which rule if not freely."""
    markets = load_markets()
    rules = {r.id: r for r in markets.rules}
    for entry in markets.entries:
        if entry.region == region and gpu_id in entry.gpus:
            return Availability(gpu_id=gpu_id, region=region, status=entry.status, rule=rules[entry.rule],
                                as_of=entry.as_of, confidence=entry.confidence)
    gpu = _gpu(gpu_id)
    if gpu is None:
        return Availability(gpu_id=gpu_id, region=region, status="available")
    if region == "global":
        rule = "cn-domestic" if gpu.domestic else "cn-variant" if gpu.china_market else None
        if rule is None:
            return Availability(gpu_id=gpu_id, region=region, status="available")
        return Availability(gpu_id=gpu_id, region=region, status="unavailable", rule=rules[rule],
                            as_of=markets.as_of, confidence="M")
    window = next((w for w in markets.windows if gpu_id in w.gpus), None)
    if window is not None:
        return Availability(gpu_id=gpu_id, region=region, status="restricted", rule=rules[window.rule],
                            figures=figures(gpu), as_of=window.as_of, confidence=window.confidence)
    met = None if gpu.domestic else control_met(gpu)
    if met is None:
        return Availability(gpu_id=gpu_id, region=region, status="available")
    control, fig = met
    return Availability(gpu_id=gpu_id, region=region, status="unavailable", rule=rules[control.rule],
                        clause=control.clause, control=control, figures=fig, as_of=markets.as_of,
                        confidence="H" if control.density_min is None else "M")


def sold_in(gpu_id: str, region: Region | None) -> bool:
    """Whether ``gpu_id`` can be bought new in ``region`` (under a licence counts); any card when no region."""
    return region is None or availability(gpu_id, region).status != "unavailable"


def markets_as_of() -> dt.date:
    """The date the market table was last checked."""
    return load_markets().as_of
