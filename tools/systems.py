"""A complete server or rack system as one buyable unit: ``system_info(SystemInfoInput) -> SystemInfoResult``.

What is inside (cards, CPUs, memory, power, cooling, height), what its cards add up to, and its price as a
source gives it (kind and date; a price older than six months is marked), in the buyer's currency; and
``system_for(gpu, count)``: the catalogued server with exactly those cards, for rent-vs-buy to price.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knowledge import load_catalog
from knowledge.markets import markets_as_of
from knowledge.offers import System, system_resolver, systems
from tools.inputs import ToolInput
from tools.pricing import CNY_PER_USD, MAX_CNY_PER_USD, Currency
from tools.rentals import STALE_AFTER_DAYS
from tools.result import Note, note

GB = 10**9


class SystemInfoInput(ToolInput):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="a system's id, name or alias ('DGX B200', 'Atlas 800 A3', 'GB200 NVL72')")
    gpu: str | None = Field(None, description="the card it is configured with, when it takes several "
                                              "('XE9680 with 8 H200'); default: its own")
    currency: Currency = "USD"
    cny_per_usd: float = Field(CNY_PER_USD, gt=0, le=MAX_CNY_PER_USD, allow_inf_nan=False)


class SystemPriceView(BaseModel):
    model_config = ConfigDict(extra="forbid")

    amount: float = Field(description="in the result's currency")
    converted: bool = Field(description="the source gives the other currency; converted at cny_per_usd")
    kind: str
    as_of: str
    undated: bool
    stale: bool = Field(description="older than six months when the catalog was last checked")
    source: str


class SystemInfoResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    name: str
    name_zh: str | None
    vendor: str
    form: Literal["server", "rack"]
    gpu_id: str | None
    gpu: str = Field(description="the card's name")
    gpu_zh: str | None = Field(None, description="the card's Chinese label, when it is a label and not a name")
    market_gpu: str | None = Field(None, description="the catalog card whose market status the system shares")
    gpu_count: int
    gpu_memory_total_bytes: int | None = Field(description="all cards' memory together, bytes (GB = 1e9)")
    cpu: str | None
    memory_bytes: int | None = Field(description="system RAM, bytes")
    max_power_w: float | None
    cooling: str | None
    rack_units: int | None
    currency: Currency
    price: SystemPriceView | None
    price_per_gpu: float | None = Field(description="price / gpu_count, in the result's currency")
    grey_market: bool
    as_of: str
    confidence: str
    sources: list[str]
    formula: list[Note]
    assumptions: list[Note]


def _price(s: System, currency: Currency, cny_per_usd: float) -> SystemPriceView | None:
    p = s.price
    if p is None:
        return None
    native = p.usd if currency == "USD" else p.cny
    if native is not None:
        amount, converted = native, False
    elif currency == "USD" and p.cny is not None:
        amount, converted = p.cny / cny_per_usd, True
    elif p.usd is not None:
        amount, converted = p.usd * cny_per_usd, True
    else:
        return None
    return SystemPriceView(amount=round(amount, 2), converted=converted, kind=p.kind, as_of=p.as_of.isoformat(),
                           undated=p.undated, stale=(markets_as_of() - p.as_of).days > STALE_AFTER_DAYS,
                           source=p.source)


def system_info(inp: SystemInfoInput) -> SystemInfoResult:
    """The system's contents, totals and price as its sources give them."""
    s = system_resolver().get(inp.name)
    if inp.gpu is not None and s.gpu is not None and load_catalog().gpu(inp.gpu).id != s.gpu:
        # configured with another card: the listed price was for its own, so none applies
        s = s.model_copy(update={"gpu": load_catalog().gpu(inp.gpu).id, "price": None})
    card = load_catalog().gpu(s.gpu) if s.gpu else None
    price = _price(s, inp.currency, inp.cny_per_usd)
    assumptions: list[Note] = []
    if price is None:
        assumptions.append(note("perf.system.no_price", name=s.name))
    elif price.converted:
        assumptions.append(note("perf.system.converted", rate=inp.cny_per_usd))
    if card is None:
        assumptions.append(note("perf.system.card_not_catalogued", card=s.gpu_label or "?"))
    return SystemInfoResult(
        id=s.id, name=s.name, name_zh=s.name_zh, vendor=s.vendor, form=s.form, gpu_id=s.gpu,
        gpu=card.name if card else s.gpu_label or "?", gpu_zh=None if card else s.gpu_label_zh,
        market_gpu=s.gpu or s.gpu_class,
        gpu_count=s.gpu_count,
        gpu_memory_total_bytes=int(card.memory_gb * GB * s.gpu_count) if card else None, cpu=s.cpu,
        memory_bytes=int(s.memory_gb * GB) if s.memory_gb else None, max_power_w=s.max_power_w, cooling=s.cooling,
        rack_units=s.rack_units, currency=inp.currency, price=price,
        price_per_gpu=round(price.amount / s.gpu_count, 2) if price else None, grey_market=s.grey_market,
        as_of=s.as_of.isoformat(), confidence=s.confidence,
        sources=list(s.sources), formula=[note("perf.formula.system.totals")], assumptions=assumptions)


def system_for(gpu_id: str, count: int, currency: Currency) -> System | None:
    """The priced one-chassis server holding exactly ``count`` of ``gpu_id``, its price in ``currency`` preferred
    (China channel prices only for CNY buyers); None when none is catalogued."""
    fits = [s for s in systems() if s.form == "server" and s.gpu == gpu_id and s.gpu_count == count and s.price
            and not s.grey_market and (currency == "CNY" or s.price.kind != "channel-cn")]
    own = "cny" if currency == "CNY" else "usd"
    fits.sort(key=lambda s: (getattr(s.price, own) is None, -(s.price.as_of.toordinal() if s.price else 0)))
    return fits[0] if fits else None
