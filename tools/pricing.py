"""Money: currency conversion, electricity cost and buy-vs-rent break-even.

Defaults (all configurable through the inputs):

* exchange rate ``CNY_PER_USD = 7.2`` — an engineering default inside the 7.1–7.3 band the
  yuan traded in through 2024–2026 (as of 2026-06-01); pass your own rate for real quotes;
* electricity ``0.8 CNY/kWh`` (Chinese commercial tariff band 0.6–1.0) and ``0.15 USD/kWh``
  (US commercial average ≈ 0.13–0.17 in 2024–25);
* host (CPU, board, RAM, PSU, chassis, storage) estimates by platform class, in USD, for
  comparing whole boxes rather than bare GPUs.

Formulas:
    yearly kWh      = system power W / 1000 × 8,760 h × duty cycle
    yearly cost     = yearly kWh × price per kWh
    rent per month  = rental USD/GPU-hour × GPUs × 730 h × duty cycle
    break-even      = purchase USD / (rent per month − electricity per month)   [months]
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knowledge.schema import GPU
from tools.inputs import ToolInput
from tools.result import Note, note
from tools.units import CNY, USD

Currency = Literal["USD", "CNY"]
BillCurrency = Literal["USD", "CNY", "EUR", "GBP"]  # a running cost is said in the tariff's money

CNY_PER_USD = 7.2
MAX_CNY_PER_USD = 100.0  # an exchange rate a user may set: the yuan has traded at 6–8.3 per dollar since 1994
FX_AS_OF = dt.date(2026, 6, 1)
USD_PER_EUR = 1.15  # engineering default: the euro traded at about 1.05–1.18 USD through 2025–26; budgets only
USD_PER_GBP = 1.33  # engineering default: the pound traded at about 1.25–1.37 USD through 2025–26; budgets only
USD_PER_FOREIGN: dict[str, float] = {"EUR": USD_PER_EUR, "GBP": USD_PER_GBP}  # rates as of FX_AS_OF
# household/office defaults when no tariff is said; GBP: Ofgem price cap unit rate, Oct–Dec 2025 (26.35p, direct
# debit); EUR: Eurostat EU household average, first half of 2025 (€28.72 per 100 kWh, dataset nrg_pc_204)
KWH_PRICE: dict[str, float] = {"CNY": 0.8, "USD": 0.15, "GBP": 0.26, "EUR": 0.29}
SYMBOLS: dict[str, str] = {"USD": "$", "CNY": "¥", "EUR": "€", "GBP": "£"}
# the money a value-per-price figure is quoted per: ¥10,000 (万元) for yuan, 1,000 of the others
VALUE_UNIT: dict[str, float] = {"CNY": 10_000.0, "USD": 1_000.0, "EUR": 1_000.0, "GBP": 1_000.0}
HOURS_PER_YEAR = 8760.0
HOURS_PER_MONTH = 730.0

# Approximate host cost in USD by platform class (engineering estimates, 2026 street prices).
HOST_COST_USD: dict[str, float] = {
    "desktop_entry": 900.0,  # one consumer card: Ryzen 7 / Core i5, B650/B760 board, 32 GB DDR5, 1 kW PSU, case, 2 TB
    "desktop": 2500.0,  # Ryzen 9 / Core i9, X870/Z890 board, 128 GB DDR5, 1.6 kW PSU, case, 2 TB NVMe
    "workstation": 7000.0,  # Threadripper PRO / Xeon W, WRX90/W790 board, 256 GB RDIMM, 2 × PSU
    "server_small": 6000.0,  # 1U/2U single-socket GPU server for one or two PCIe cards, 256 GB, redundant PSUs
    "server": 15000.0,  # 2U/4U PCIe GPU server, EPYC/Xeon SP, 512 GB, redundant PSUs
    "baseboard": 60000.0,  # HGX/OAM node share beyond the GPUs: CPUs, switches, NICs, chassis
    "system": 0.0,  # a unified-memory system (DGX Spark, Strix Halo): its price is the whole computer
}


def to_usd(amount: float, currency: Currency | Literal["EUR", "GBP"], cny_per_usd: float = CNY_PER_USD) -> float:
    if currency in USD_PER_FOREIGN:  # a user's euro or pound budget; catalog prices are never in these
        return amount * USD_PER_FOREIGN[currency]
    return amount if currency == "USD" else amount / cny_per_usd


def from_usd(usd: float, currency: BillCurrency, cny_per_usd: float = CNY_PER_USD) -> float:
    """Dollars in ``currency`` (yuan at ``cny_per_usd``, euros and pounds at the rates as of FX_AS_OF)."""
    if currency in USD_PER_FOREIGN:
        return usd / USD_PER_FOREIGN[currency]
    return usd if currency == "USD" else usd * cny_per_usd


def to_cny(amount: float, currency: Currency, cny_per_usd: float = CNY_PER_USD) -> float:
    return amount if currency == "CNY" else amount * cny_per_usd


class GPUPrice(BaseModel):
    """One GPU's price in both currencies, and where each figure came from."""

    model_config = ConfigDict(extra="forbid")

    usd: USD | None
    cny: CNY | None
    rental_usd_per_hour: float | None = Field(description="USD per GPU-hour")
    note: Note


class SaidPrice(ToolInput):
    """A card's unit price as the buyer said it ('P40 ~$300', '3090 矿卡 4500 块'): it replaces the catalog's."""

    model_config = ConfigDict(extra="forbid")

    amount: float = Field(gt=0, le=1e8, description="price of one card")
    currency: Literal["USD", "CNY", "EUR", "GBP"] = "USD"


def gpu_price(gpu: GPU, cny_per_usd: float = CNY_PER_USD, said: SaidPrice | None = None) -> GPUPrice:
    """The price the buyer ``said`` for this card, else the catalog's, converting the missing currency at
    ``cny_per_usd``."""
    p = gpu.price
    if said is not None:
        usd = to_usd(said.amount, said.currency, cny_per_usd)
        return GPUPrice(usd=usd, cny=to_cny(usd, "USD", cny_per_usd),
                        rental_usd_per_hour=p.rental_usd_per_hour if p else None,
                        note=note("perf.price.said", gpu=gpu.name, amount=said.amount, currency=said.currency))
    if p is None or (p.usd is None and p.cny is None):
        return GPUPrice(usd=None, cny=None, rental_usd_per_hour=p.rental_usd_per_hour if p else None,
                        note=note("perf.price.none", gpu=gpu.name))
    usd = p.usd if p.usd is not None else to_usd(p.cny or 0, "CNY", cny_per_usd)
    cny = p.cny if p.cny is not None else to_cny(p.usd or 0, "USD", cny_per_usd)
    source = (note("perf.price.catalog", gpu=gpu.name, as_of=str(p.as_of)) if (p.usd and p.cny) else
              note("perf.price.catalog_converted", gpu=gpu.name, as_of=str(p.as_of),
                   currency="CNY" if p.usd else "USD", rate=cny_per_usd))
    return GPUPrice(usd=usd, cny=cny, rental_usd_per_hour=p.rental_usd_per_hour, note=source)


class CostInput(ToolInput):
    """A machine to buy (or rent instead)."""

    model_config = ConfigDict(extra="forbid")

    purchase_usd: float | None = Field(None, ge=0, description="what buying costs (GPUs + host)")
    power_w: float = Field(gt=0, description="sustained system power at the wall, W")
    rental_usd_per_hour: float | None = Field(None, gt=0, description="renting equivalent capacity, all GPUs")
    kwh_price: float | None = Field(None, gt=0, description="price per kWh; default by currency")
    currency: BillCurrency = "USD"
    duty_cycle: float = Field(1.0, gt=0, le=1, description="share of the year the machine runs at load")
    cny_per_usd: float = Field(CNY_PER_USD, gt=0, le=MAX_CNY_PER_USD, allow_inf_nan=False)
    rent_by_the_month: bool = Field(False, description="the rent is a monthly fee (包月): a month costs the same "
                                                       "whatever the hours used")


class CostResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    yearly_energy_kwh: float
    kwh_price: float
    currency: BillCurrency
    yearly_energy_cost: float = Field(description="in `currency`")
    yearly_energy_cost_usd: USD
    yearly_energy_cost_cny: CNY
    rent_usd_per_month: float | None
    break_even_months: float | None = Field(description="None when unknown or when renting is cheaper than "
                                                        "power")
    formula: list[Note] = Field(description="perf.formula.price.* notes")
    assumptions: list[Note]


def cost_of_ownership(inp: CostInput) -> CostResult:
    """Electricity per year and the months after which buying beats renting."""
    kwh_price = inp.kwh_price if inp.kwh_price is not None else KWH_PRICE[inp.currency]
    kwh = inp.power_w / 1000 * HOURS_PER_YEAR * inp.duty_cycle
    cost = kwh * kwh_price
    cost_usd = to_usd(cost, inp.currency, inp.cny_per_usd)
    rent_month = (inp.rental_usd_per_hour * HOURS_PER_MONTH * (1.0 if inp.rent_by_the_month else inp.duty_cycle)
                  if inp.rental_usd_per_hour else None)
    be = None
    if rent_month is not None and inp.purchase_usd is not None:
        saving = rent_month - cost_usd / 12
        be = inp.purchase_usd / saving if saving > 0 else None
    assumptions = [
        note("perf.cost.kwh_default" if inp.kwh_price is None else "perf.cost.kwh_given", price=kwh_price,
             currency=inp.currency),
        note("perf.cost.duty", duty=inp.duty_cycle, hours=inp.duty_cycle * 24),
        note("perf.cost.fx", rate=inp.cny_per_usd, as_of=str(FX_AS_OF)),
    ]
    if be is None and rent_month is not None:
        assumptions.append(note("perf.cost.no_break_even"))
    return CostResult(
        yearly_energy_kwh=round(kwh, 1), kwh_price=kwh_price, currency=inp.currency,
        yearly_energy_cost=round(cost, 2), yearly_energy_cost_usd=round(cost_usd, 2),
        yearly_energy_cost_cny=round(to_cny(cost_usd, "USD", inp.cny_per_usd), 2),
        rent_usd_per_month=round(rent_month, 2) if rent_month is not None else None,
        break_even_months=round(be, 1) if be is not None else None,
        formula=[
            note("perf.formula.price.yearly_kwh", power_w=inp.power_w, hours=HOURS_PER_YEAR, duty=inp.duty_cycle),
            note("perf.formula.price.yearly_cost", price=kwh_price, currency=inp.currency),
            note("perf.formula.price.break_even"),
        ],
        assumptions=assumptions,
    )
