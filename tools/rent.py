"""Buy or rent: ``rent_vs_buy(RentVsBuyInput) -> RentVsBuyResult``.

The machine is priced the way the recommender prices it (``recommend.host_for``: the same host class,
platform and power), the electricity and break-even arithmetic is ``pricing.cost_of_ownership``'s, and
the rental rate is the median of the GPU's on-demand offers in the buyer's market (``tools.rentals``) unless the
user quotes one.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knowledge import load_catalog
from tools.compat_rules.totals import PLATFORM_OVERHEAD_W
from tools.inputs import ToolInput
from tools.pricing import (
    CNY_PER_USD,
    HOST_COST_USD,
    MAX_CNY_PER_USD,
    CostInput,
    Currency,
    SaidPrice,
    cost_of_ownership,
    gpu_price,
)
from tools.recommend import host_for
from tools.rentals import provider_rate_usd, typical_rate_usd
from tools.result import Note, note
from tools.scale_out import NODE_GPUS
from tools.systems import system_for


class RentVsBuyInput(ToolInput):
    """A number of one GPU to buy, or to rent by the hour instead."""

    model_config = ConfigDict(extra="forbid")

    gpu: str = Field(description="catalog GPU")
    count: int = Field(1, ge=1, le=1024)
    hours_per_day: float = Field(24.0, gt=0, le=24, description="hours a day the GPUs are busy")
    months: float | None = Field(None, gt=0, le=120, description="length of the project; None = open-ended")
    currency: Currency = "USD"
    market: Literal["cn", "global"] | None = Field(None, description="where the buyer rents; default: cn for CNY")
    rented_gpu: str | None = Field(None, description="the card rented instead, when it is not the one bought ('buy a "
                                                     "5090 or keep renting a 4090'); default: `gpu`")
    rented_count: int | None = Field(None, ge=1, le=1024, description="how many of `rented_gpu` are rented; default: "
                                                                    "`count`")
    provider: str | None = Field(None, max_length=80, description="rent from this provider (its recorded price)")
    by_the_month: bool = Field(False, description="rented by the month (包月): a month is paid in full whatever the "
                                                  "hours a day")
    include_host: bool = Field(True, description="buying includes the computer the cards go in")
    kwh_price: float | None = Field(None, gt=0, lt=10, description="electricity per kWh in `currency`; default by "
                                                                   "currency")
    rental_usd_per_gpu_hour: float | None = Field(None, gt=0, lt=1000, description="a quoted rate; default: catalog")
    purchase_price: float | None = Field(None, gt=0, le=1e9, description="a quoted price of the whole purchase (cards "
                                                                        "and host, as quoted), in `currency`; "
                                                                        "default: catalog cards + host")
    cny_per_usd: float = Field(CNY_PER_USD, gt=0, le=MAX_CNY_PER_USD, allow_inf_nan=False)
    said_prices: dict[str, SaidPrice] = Field(default_factory=dict, max_length=16,
                                              description="GPU id → the unit price the buyer said (replaces the "
                                                          "catalog's)")


class RentVsBuyResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gpu: str
    count: int
    rented_gpu: str = Field(description="the card rented (the one bought unless another was named)")
    rented_count: int
    currency: Currency
    purchase: float | None = Field(description="GPUs (+ host when included), in `currency`")
    host: float | None = Field(description="the host's share of `purchase`, in `currency`")
    rent_per_month: float | None = Field(description="rental at the stated hours a day, in `currency`")
    rent_per_hour: float | None = Field(None, description="renting all the GPUs for one hour, in `currency`")
    rent_per_day: float | None = Field(None, description="renting all the GPUs around the clock for a day")
    energy_per_month: float = Field(description="electricity of owning, in `currency`")
    break_even_months: float | None
    project_rent: float | None = Field(description="renting for `months`, in `currency`")
    project_buy: float | None = Field(description="buying plus electricity for `months`, in `currency`")
    cheaper: Literal["rent", "buy"] | None
    price_as_of: str | None
    formula: list[Note] = Field(description="perf.formula.price.* and perf.formula.rent.* notes")
    assumptions: list[Note]




def rent_vs_buy(inp: RentVsBuyInput) -> RentVsBuyResult:
    """Months after which owning ``count`` GPUs beats renting them, and the cost of a project of ``months``."""
    gpu = load_catalog().gpu(inp.gpu)
    rented = load_catalog().gpu(inp.rented_gpu) if inp.rented_gpu else gpu
    rented_count = inp.rented_count or inp.count
    said = inp.said_prices.get(gpu.id)
    price = gpu_price(gpu, inp.cny_per_usd, said)
    platform, _, host_kind = host_for(gpu, inp.count)
    host_usd = HOST_COST_USD[host_kind] if inp.include_host else 0.0
    node_share = 1.0
    if host_kind == "baseboard" and inp.count < NODE_GPUS:  # SXM/OAM come as 8-GPU nodes: this many GPUs' share
        node_share = inp.count / NODE_GPUS
        host_usd *= node_share
    host_power = (platform.typical_cpu_power_w * platform.sockets + PLATFORM_OVERHEAD_W
                  if inp.include_host and host_kind != "system" else 0.0)  # a system's rating covers its CPU
    host_power *= node_share
    # a Chinese buyer pays the China street price where the catalog has one (export-control premium included)
    card_usd = (gpu.price.cny / inp.cny_per_usd if inp.currency == "CNY" and gpu.price and gpu.price.cny
                and said is None else price.usd)
    purchase_usd = card_usd * inp.count + host_usd if card_usd is not None else None
    system = (system_for(gpu.id, inp.count, inp.currency)
              if inp.include_host and said is None and inp.purchase_price is None else None)
    if system is not None and system.price is not None:  # a complete server of exactly these cards is priced
        own = system.price.cny if inp.currency == "CNY" else system.price.usd
        purchase_usd = (own / inp.cny_per_usd if inp.currency == "CNY" else own) if own is not None else (
            system.price.usd if system.price.usd is not None else (system.price.cny or 0) / inp.cny_per_usd)
        host_usd = 0.0
    if inp.purchase_price is not None:  # the buyer's own quote replaces the catalog's cards and host
        purchase_usd = inp.purchase_price if inp.currency == "USD" else inp.purchase_price / inp.cny_per_usd
    offered, offers = typical_rate_usd(rented.id, inp.market or ("cn" if inp.currency == "CNY" else "global"),
                                       inp.cny_per_usd)
    named = provider_rate_usd(rented.id, inp.provider, inp.cny_per_usd) if inp.provider else None
    per_gpu_hour = inp.rental_usd_per_gpu_hour or (named[0] if named else offered)
    monthly = inp.by_the_month
    rental = per_gpu_hour * rented_count if per_gpu_hour else None
    cost = cost_of_ownership(CostInput(purchase_usd=purchase_usd, power_w=gpu.tdp_w * inp.count + host_power,
                                       rental_usd_per_hour=rental, currency=inp.currency,
                                       duty_cycle=inp.hours_per_day / 24, cny_per_usd=inp.cny_per_usd,
                                       kwh_price=inp.kwh_price, rent_by_the_month=monthly))

    def cur(usd: float | None) -> float | None:
        return None if usd is None else round(usd if inp.currency == "USD" else usd * inp.cny_per_usd, 2)

    energy_month = cost.yearly_energy_cost / 12
    rent_month = cur(cost.rent_usd_per_month)
    rent_hour = cur(rental)
    rent_day = cur(rental * 24) if rental else None
    project_rent = project_buy = None
    cheaper: Literal["rent", "buy"] | None = None
    if inp.months is not None and rent_month is not None and purchase_usd is not None:
        project_rent = round(rent_month * inp.months, 2)
        project_buy = round((cur(purchase_usd) or 0) + energy_month * inp.months, 2)
        cheaper = "rent" if project_rent <= project_buy else "buy"
    elif cost.break_even_months is not None:
        cheaper = "buy" if cost.break_even_months <= 36 else "rent"
    kind = note(f"perf.host_kind.{host_kind}")
    host_note = (note("perf.rent.no_host") if not inp.include_host else
                 note("perf.rent.host", kind=kind, platform=platform.name, usd=host_usd) if node_share == 1 else
                 note("perf.rent.host_share", kind=kind, platform=platform.name, usd=host_usd, count=inp.count,
                      node=NODE_GPUS))
    rate_note = (note("perf.rent.rate_quoted", rate=inp.rental_usd_per_gpu_hour) if inp.rental_usd_per_gpu_hour
                 else note("perf.rent.rate_provider", provider=inp.provider, billing=named[1]) if named and inp.provider
                 else note("perf.rent.rate_offers", count=offers) if offers else note("perf.rent.rate_catalog"))
    bought = (note("perf.rent.price_quoted") if inp.purchase_price is not None else
              note("perf.rent.system", name=system.name, name_zh=system.name_zh or system.name, kind=system.price.kind,
                   as_of=str(system.price.as_of), undated=system.price.undated)
              if system is not None and system.price is not None else host_note)
    assumptions = [*cost.assumptions, bought, rate_note]
    if monthly:
        assumptions.append(note("perf.rent.by_the_month"))
    if price.usd is None:
        assumptions.append(note("perf.rent.no_price", gpu=gpu.name))
    if rental is None:
        assumptions.append(note("perf.rent.no_rental", gpu=rented.name))
    return RentVsBuyResult(
        gpu=gpu.name, count=inp.count, rented_gpu=rented.name, rented_count=rented_count, currency=inp.currency,
        purchase=cur(purchase_usd),
        host=cur(host_usd) if inp.include_host and system is None else None, rent_per_month=rent_month,
        rent_per_hour=rent_hour,
        rent_per_day=rent_day,
        energy_per_month=round(energy_month, 2), break_even_months=cost.break_even_months,
        project_rent=project_rent, project_buy=project_buy, cheaper=cheaper,
        price_as_of=str(gpu.price.as_of) if gpu.price else None,
        formula=[*cost.formula, note("perf.formula.rent.project_rent"), note("perf.formula.rent.project_buy")],
        assumptions=assumptions,
    )
