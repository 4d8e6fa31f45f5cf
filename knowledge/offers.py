"""What a buyer can rent and what complete systems they can buy: cloud rental offers by provider
(``data/rentals.toml``) and servers and rack systems with their host (``data/servers.toml``), each row with its
source and date; every GPU they name must be a catalog GPU."""

from __future__ import annotations

import datetime as dt
import tomllib
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from knowledge.catalog import CatalogError, load_catalog
from knowledge.resolve import Resolver

Region = Literal["us", "eu", "global", "cn"]
Billing = Literal["on-demand", "community", "spot", "reserved-1y", "reserved-3y", "monthly"]
HOURS_PER_MONTH = 730  # 8,760 h / 12


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RentalOffer(_Strict):
    """One provider's price for one GPU, per GPU, in its own currency."""

    provider: str = Field(min_length=1)
    region: Region
    gpu: str = Field(description="catalog GPU id")
    gpus_per_instance: int = Field(ge=1, le=72)
    per_gpu_hour: float | None = Field(None, gt=0, lt=1000)
    per_gpu_month: float | None = Field(None, gt=0, lt=1e6, description="a monthly rent with no hours basis given")
    currency: Literal["USD", "CNY"]
    billing: Billing
    as_of: dt.date
    source: str = Field(pattern=r"^https?://")
    confidence: Literal["H", "M", "L"]
    note: str = ""

    @model_validator(mode="after")
    def _one_rate(self) -> RentalOffer:
        if (self.per_gpu_hour is None) == (self.per_gpu_month is None):
            raise ValueError("give per_gpu_hour or per_gpu_month, not both or neither")
        return self

    @property
    def hourly(self) -> float:
        """Per GPU-hour in ``currency``; a monthly rent spread over a month of round-the-clock hours."""
        return self.per_gpu_hour if self.per_gpu_hour is not None else (self.per_gpu_month or 0) / HOURS_PER_MONTH


class Provider(_Strict):
    """A rental provider as buyers name it."""

    name: str
    name_en: str | None = Field(None, description="the name shown in English, where it differs")
    name_zh: str | None = Field(None, description="the name shown in Chinese, where it differs")
    aliases: list[str] = Field(min_length=1)
    region: Region


class SystemPrice(_Strict):
    usd: float | None = Field(None, gt=0)
    cny: float | None = Field(None, gt=0)
    kind: Literal["list", "street", "channel-cn", "reported", "estimate"]
    as_of: dt.date
    source: str = Field(pattern=r"^https?://")
    undated: bool = Field(False, description="the source carries no date; as_of is the day it was read")


class System(_Strict):
    """A complete server or rack system: the cards with their host, bought as one unit."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    name: str
    name_zh: str | None = Field(None, description="the name Chinese buyers use, where it differs")
    vendor: str
    form: Literal["server", "rack"]
    gpu: str | None = Field(None, description="catalog GPU id")
    gpu_label: str | None = Field(None, description="the card, when the catalog lacks it")
    gpu_label_zh: str | None = None
    gpu_class: str | None = Field(None, description="a catalogued card of the same generation (market status)")
    gpu_count: int = Field(ge=1, le=100_000)
    cpu: str | None = None
    memory_gb: float | None = Field(None, gt=0)
    max_power_w: float | None = Field(None, gt=0)
    cooling: Literal["air", "liquid"] | None = None
    rack_units: int | None = Field(None, ge=1)
    price: SystemPrice | None = None
    grey_market: bool = Field(False, description="sold outside the maker's channels (no warranty, export-controlled)")
    aliases: list[str] = Field(default_factory=list)
    as_of: dt.date
    sources: list[str] = Field(min_length=1)
    confidence: Literal["H", "M", "L"]
    note: str = ""

    @model_validator(mode="after")
    def _card_named(self) -> System:
        if (self.gpu is None) == (self.gpu_label is None):
            raise ValueError("give gpu (a catalog id) or gpu_label, not both or neither")
        return self


def _rows(name: str, table: str) -> list[dict[str, object]]:
    text = resources.files("knowledge").joinpath(f"data/{name}").read_text(encoding="utf-8")
    return list(tomllib.loads(text).get(table, []))


def _checked_gpu(where: str, gpu: str | None) -> None:
    if gpu is not None and gpu not in {g.id for g in load_catalog().gpus}:
        raise CatalogError(f"{where}: unknown GPU id {gpu!r}")


@cache
def rental_offers() -> tuple[RentalOffer, ...]:
    """Every rental offer, validated; each names a catalog GPU."""
    out: list[RentalOffer] = []
    for i, row in enumerate(_rows("rentals.toml", "offer")):
        try:
            offer = RentalOffer.model_validate(row)
        except ValidationError as exc:
            raise CatalogError(f"rentals.toml: offer {i + 1}: {exc}") from exc
        _checked_gpu(f"rentals.toml: offer {i + 1}", offer.gpu)
        out.append(offer)
    return tuple(out)


@cache
def providers() -> tuple[Provider, ...]:
    """The rental providers buyers name (those with offers and those without), with their aliases."""
    try:
        return tuple(Provider.model_validate(row) for row in _rows("rentals.toml", "provider"))
    except ValidationError as exc:
        raise CatalogError(f"rentals.toml: provider: {exc}") from exc


def provider_name(name: str, lang: str) -> str:
    """A provider's name as shown in ``lang`` ('中国电信江苏' in Chinese, 'Alibaba Cloud' in English)."""
    found = next((p for p in providers() if p.name == name), None)
    if found is None:
        return name
    return (found.name_zh if lang == "zh" else found.name_en) or found.name


@cache
def systems() -> tuple[System, ...]:
    """Every complete server and rack system, validated; ids unique, catalog GPUs only."""
    out: list[System] = []
    for row in _rows("servers.toml", "system"):
        try:
            system = System.model_validate(row)
        except ValidationError as exc:
            raise CatalogError(f"servers.toml: system {row.get('id', '?')!r}: {exc}") from exc
        if any(s.id == system.id for s in out):
            raise CatalogError(f"servers.toml: duplicate id {system.id!r}")
        _checked_gpu(f"servers.toml: {system.id}", system.gpu)
        _checked_gpu(f"servers.toml: {system.id}", system.gpu_class)
        out.append(system)
    return tuple(out)


@cache
def system_resolver() -> Resolver[System]:
    """Systems by id, name or alias ('DGX B200', 'Atlas 800 A3', 'CloudMatrix 384')."""
    return Resolver("system", systems(), lambda s: [s.id, s.name, *s.aliases], lambda s: s.name)
