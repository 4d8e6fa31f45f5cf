"""Where a GPU can be rented and for how much: ``rental_prices(RentalPricesInput) -> RentalPricesResult``.

Every offer of ``knowledge/data/rentals.toml`` for the GPU, cheapest first, in the buyer's currency, each with its
provider, billing, date and source; and the typical rate rent-vs-buy uses when the buyer quotes none: the median of
the provider-run hourly (on-demand) offers in the buyer's market (China for CNY buyers where such offers exist),
else the catalog's one rental figure.
"""

from __future__ import annotations

import statistics
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knowledge import load_catalog
from knowledge.markets import markets_as_of
from knowledge.offers import Billing, RentalOffer, rental_offers
from tools.inputs import ToolInput
from tools.pricing import CNY_PER_USD, MAX_CNY_PER_USD, Currency
from tools.result import Note, note

STALE_AFTER_DAYS = 183  # older than about six months when the catalog was last checked
MAX_SHOWN = 12


class RentalPricesInput(ToolInput):
    """One GPU's rental offers, in the buyer's currency and market."""

    model_config = ConfigDict(extra="forbid")

    gpu: str = Field(description="catalog GPU")
    currency: Currency = "USD"
    market: Literal["cn", "global"] | None = Field(None, description="the buyer's market; default: cn for CNY")
    cny_per_usd: float = Field(CNY_PER_USD, gt=0, le=MAX_CNY_PER_USD, allow_inf_nan=False)
    providers: list[str] = Field(default_factory=list, max_length=8, description="providers the buyer named: their "
                                                                                 "offers first")


class RentalQuote(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: str
    region: str
    billing: Billing
    gpus_per_instance: int
    per_gpu_hour: float = Field(description="per GPU-hour in the result's currency (a monthly rent / 730 h)")
    monthly_only: bool = Field(description="the provider quotes a month, not an hour")
    as_of: str
    stale: bool = Field(description="older than six months when the catalog was last checked")
    source: str
    confidence: str
    named: bool = Field(False, description="a provider the buyer named")


class RentalPricesResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gpu: str
    currency: Currency
    market: Literal["cn", "global"]
    offers: list[RentalQuote] = Field(description="cheapest first, at most 12")
    offers_total: int
    typical_per_gpu_hour: float | None = Field(description="what rent-vs-buy uses when no rate is quoted")
    typical_basis: Literal["median_on_demand", "catalog"] | None
    typical_count: int = Field(description="provider-run offers behind the median (0 for the catalog figure)")
    named_without_offer: list[str] = Field(description="providers named that have no recorded offer for this GPU")
    formula: list[Note]
    assumptions: list[Note]


def _in_market(offer: RentalOffer, market: str) -> bool:
    return (offer.region == "cn") == (market == "cn")


def offer_usd(offer: RentalOffer, cny_per_usd: float) -> float:
    """An offer's price per GPU-hour in dollars (a monthly rent over 730 h)."""
    return offer.hourly if offer.currency == "USD" else offer.hourly / cny_per_usd


def provider_rate_usd(gpu_id: str, provider: str, cny_per_usd: float = CNY_PER_USD) -> tuple[float, str] | None:
    """(USD per GPU-hour, billing) of a named provider's offer for the GPU: its on-demand price when it has one,
    else its cheapest; None when the provider has no recorded offer for it."""
    own = [o for o in rental_offers() if o.gpu == gpu_id and o.provider == provider]
    if not own:
        return None
    pick = min(own, key=lambda o: (o.billing != "on-demand", offer_usd(o, cny_per_usd)))
    return round(offer_usd(pick, cny_per_usd), 4), pick.billing


def typical_rate_usd(gpu_id: str, market: str, cny_per_usd: float = CNY_PER_USD) -> tuple[float | None, int]:
    """(USD per GPU-hour, number of offers behind it): the median provider-run offer in ``market`` (by the hour, or
    by the month spread over 730 h), the hourly ones outside China when China has none, else the catalog's rental
    figure (count 0); (None, 0) when neither."""
    provider_run = [o for o in rental_offers() if o.gpu == gpu_id and o.billing in ("on-demand", "monthly")]
    pool = ([o for o in provider_run if _in_market(o, market)]
            or [o for o in provider_run if o.region != "cn" and o.billing == "on-demand"])
    if pool:
        return round(statistics.median(offer_usd(o, cny_per_usd) for o in pool), 4), len(pool)
    try:
        price = load_catalog().gpu(gpu_id).price
    except LookupError:  # a card described by the caller, not one the catalog holds
        return None, 0
    return (price.rental_usd_per_hour if price else None), 0


def rental_prices(inp: RentalPricesInput) -> RentalPricesResult:
    """The GPU's rental offers, cheapest first in ``currency``, and the typical rate rent-vs-buy would use."""
    gpu = load_catalog().gpu(inp.gpu)
    market: Literal["cn", "global"] = inp.market or ("cn" if inp.currency == "CNY" else "global")
    rate = 1.0 if inp.currency == "USD" else inp.cny_per_usd
    # a buyer outside China cannot rent from the Chinese providers: their offers are listed for China only
    mine = [o for o in rental_offers() if o.gpu == gpu.id and (market == "cn" or o.region != "cn")]
    # the buyer's market first, then the rest; cheapest first within each
    named = set(inp.providers)
    mine.sort(key=lambda o: (o.provider not in named, not _in_market(o, market), offer_usd(o, inp.cny_per_usd)))
    checked = markets_as_of()
    quotes = [RentalQuote(provider=o.provider, region=o.region, billing=o.billing,
                          gpus_per_instance=o.gpus_per_instance,
                          per_gpu_hour=round(offer_usd(o, inp.cny_per_usd) * rate, 2),
                          monthly_only=o.per_gpu_hour is None,
                          as_of=o.as_of.isoformat(), stale=(checked - o.as_of).days > STALE_AFTER_DAYS,
                          source=o.source, confidence=o.confidence, named=o.provider in named) for o in mine]
    usd, count = typical_rate_usd(gpu.id, market, inp.cny_per_usd)
    assumptions = [note("perf.rentals.per_gpu")]
    if any(q.monthly_only for q in quotes):
        assumptions.append(note("perf.rentals.monthly"))
    if inp.currency != "USD":
        assumptions.append(note("perf.rentals.converted", rate=inp.cny_per_usd))
    if not quotes:
        assumptions.append(note("perf.rentals.none", gpu=gpu.name))
    return RentalPricesResult(
        gpu=gpu.name, currency=inp.currency, market=market, offers=quotes[:MAX_SHOWN], offers_total=len(quotes),
        typical_per_gpu_hour=round(usd * rate, 2) if usd else None,
        typical_basis=("median_on_demand" if count else "catalog") if usd else None, typical_count=count,
        named_without_offer=[n for n in inp.providers if not any(o.provider == n for o in mine)],
        formula=[note("perf.formula.rentals.typical")], assumptions=assumptions)
