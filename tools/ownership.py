"""What a machine costs to buy and to run: cards, host, wall power, electricity over a horizon, and how
many of its nodes a rack's power budget holds.

One function, :func:`machine_cost`. The wall power is the compatibility checker's (GPU board power + CPU +
platform overhead, divided by PSU efficiency), the host is the one the recommender prices a build with
(:func:`tools.recommend.host_for`), and the electricity arithmetic is :func:`tools.pricing.cost_of_ownership`'s.
"""

from __future__ import annotations

import math
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from knowledge import load_catalog
from tools.compat import check_build
from tools.compat_rules.totals import BASEBOARD_OVERHEAD
from tools.compat_rules.types import MAX_GPUS_OF_ONE, BuildInput, Chassis, GPUCount
from tools.errors import ToolError
from tools.inputs import ToolInput
from tools.pricing import (
    CNY_PER_USD,
    HOST_COST_USD,
    KWH_PRICE,
    BillCurrency,
    CostInput,
    SaidPrice,
    cost_of_ownership,
    from_usd,
    gpu_price,
    to_usd,
)
from tools.recommend import host_for
from tools.result import Note, note

Currency = BillCurrency



class MachineCostInput(ToolInput):
    """A machine of ``nodes`` identical nodes, each with ``count`` × ``gpu``."""

    model_config = ConfigDict(extra="forbid")

    gpu: str = Field(min_length=1, description="catalog GPU name or alias")
    count: int = Field(1, ge=1, le=MAX_GPUS_OF_ONE, description="GPUs per node")
    nodes: int = Field(1, ge=1, le=4096)
    hours_per_day: float = Field(24.0, gt=0, le=24, description="hours a day the machine runs at load")
    years: float = Field(3.0, gt=0, le=30, description="horizon of the electricity cost")
    kwh_price: float | None = Field(None, gt=0, lt=10, description="per kWh in `currency`; default by currency")
    currency: Currency = "USD"
    rack_kw: float | None = Field(None, gt=0, le=1000, description="power available per rack, kW")
    racks: int | None = Field(None, ge=1, le=10_000, description="racks to fill: with rack_kw, as many nodes as they "
                                                                   "hold (replaces nodes)")
    include_host: bool = Field(True, description="price a host per node (False: the cards only)")
    platform: str | None = Field(None, description="catalog CPU platform of each node, when said (its power counts)")
    cny_per_usd: float = Field(CNY_PER_USD, gt=0, le=100)
    said_prices: dict[str, SaidPrice] = Field(default_factory=dict, max_length=16,
                                              description="GPU id → the unit price the buyer said (replaces the "
                                                          "catalog's)")
    ups_va: float | None = Field(None, gt=0, le=1_000_000, description="a UPS the buyer has or plans, VA")
    chassis: Chassis | None = Field(None, description="the chassis the build check assumed (its CPU's power counts)")
    gpu_power_limit_w: float | None = Field(None, gt=0, le=2000, description="a power limit set on each GPU, W")
    node_power_w: float | None = Field(None, gt=0, le=500_000, description="a catalogued system's own maximum "
                                                                          "power, W (replaces the estimate)")
    pue: float | None = Field(None, ge=1.0, le=3.0, description="the facility's power usage effectiveness: the "
                                                                "electricity bill counts cooling and losses too")
    supply_voltage_v: float | None = Field(None, ge=100, le=480, description="the circuit's voltage (line to line "
                                                                             "for three-phase), V")
    phases: Literal[1, 3] = Field(1, description="single-phase or three-phase supply")


# A UPS's real-power limit is its VA × power factor: online double-conversion units are rated at 0.9 (Eaton 9SX
# 1500 VA = 1,350 W), desktop line-interactive ones at about 0.6 (APC Back-UPS Pro BX1500M: 1,500 VA = 900 W,
# its manual's specifications). Kept below 80 % of that limit, as for a circuit.
UPS_PF_ONLINE = 0.9
UPS_PF_DESKTOP = 0.6
UPS_LOAD_SHARE = 0.8

# A breaker carries a continuous load at 80 % of its rating (US NEC 210.19/210.20; the usual practice elsewhere),
# and comes in standard sizes: NEC 240.6(A) up to 125 A, IEC 60898 ratings for 230/400 V sites.
CONTINUOUS_SHARE = 0.8
BREAKERS_US = (15, 20, 25, 30, 35, 40, 45, 50, 60, 70, 80, 90, 100, 110, 125)
BREAKERS_IEC = (10, 16, 20, 25, 32, 40, 50, 63, 80, 100, 125)
US_VOLTAGES = (120, 208, 240, 277, 480)  # North American service voltages: NEC breaker sizes


class MachineCostResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gpu: str = Field(description="catalog GPU id")
    count: int
    nodes: int
    currency: Currency
    cards_price: float | None = Field(description="all cards, in `currency`; None when the card has no price")
    host_price: float = Field(description="hosts of all nodes, in `currency` (0 when excluded or built in)")
    total_price: float | None = Field(description="cards + hosts, in `currency`")
    node_wall_w: float = Field(description="one node's draw at the wall at full load, W")
    total_wall_w: float
    yearly_kwh: float = Field(description="all nodes, at the stated hours a day")
    kwh_price: float
    yearly_energy_cost: float = Field(description="in `currency`")
    years: float
    energy_cost: float = Field(description="over `years`, in `currency`")
    ownership_cost: float | None = Field(description="price + electricity over `years`, in `currency`")
    nodes_per_rack: int | None = Field(None, description="nodes one rack's power holds (None: no rack power given)")
    racks: int | None = None
    ups_va_online: float = Field(description="one node's UPS size, VA, online double-conversion (power factor 0.9)")
    ups_va_desktop: float = Field(description="one node's UPS size, VA, desktop line-interactive (power factor 0.6)")
    ups_limit_w: tuple[float, float] | None = Field(None, description="the UPS said: its real-power limit at 80 %, "
                                                                      "W (desktop, online power factor)")
    ups_holds: bool | None = Field(None, description="None: it depends on the UPS type (holds only if online)")
    pue: float | None = Field(None, description="the facility PUE the electricity counts (None: IT load only)")
    feed_amps: float | None = Field(None, description="one node's current at full load on the supply said, A per "
                                                      "phase")
    breaker_a: int | None = Field(None, description="the smallest standard breaker that carries it continuously "
                                                    "(80 % rule), A; None past 125 A or with no supply said")
    formula: list[Note]
    assumptions: list[Note]


def _in(currency: Currency, usd: float, cny_per_usd: float) -> float:
    return from_usd(usd, currency, cny_per_usd)


def machine_cost(inp: MachineCostInput) -> MachineCostResult:
    """Price, wall power and electricity of ``nodes`` × ``count`` × ``gpu``; rack fit when ``rack_kw`` is given."""
    gpu = load_catalog().gpu(inp.gpu)
    if inp.count > gpu.interconnect.max_gpus and gpu.form_factor.value != "pcie" and gpu.interconnect.max_gpus:
        raise ToolError(note("ownership.too_many_per_node", gpu=gpu.name, count=inp.count,
                             most=gpu.interconnect.max_gpus))
    _, box, host = host_for(gpu, inp.count, inp.platform, inp.chassis)  # the box the recommender prices
    chassis = inp.chassis or (box if box in get_args(Chassis) else None)  # a Mac or a DGX Spark is its own box
    report = check_build(BuildInput(gpus=[GPUCount(gpu=gpu.id, count=inp.count, power_limit_w=inp.gpu_power_limit_w)],
                                    platform=inp.platform, chassis=chassis))  # type: ignore[arg-type]
    node_w = inp.node_power_w or report.totals.wall_draw_w  # a system's own figure, else the build check's
    per_rack = math.floor(inp.rack_kw * 1000 / node_w) if inp.rack_kw else None
    if inp.racks and per_rack:  # '20 个这样的柜子全上 H100': the racks filled
        inp = inp.model_copy(update={"nodes": inp.racks * per_rack})
    total_w = node_w * inp.nodes
    price = gpu_price(gpu, inp.cny_per_usd, inp.said_prices.get(gpu.id))
    card_usd = price.usd * inp.count * inp.nodes if price.usd is not None else None
    host_usd = HOST_COST_USD[host] * inp.nodes if inp.include_host else 0.0
    facility_w = total_w * (inp.pue or 1.0)  # cooling and losses on top of the IT load, when a PUE is said
    cost = cost_of_ownership(CostInput(power_w=facility_w, kwh_price=inp.kwh_price, currency=inp.currency,
                                       duty_cycle=inp.hours_per_day / 24, cny_per_usd=inp.cny_per_usd))
    cards = _in(inp.currency, card_usd, inp.cny_per_usd) if card_usd is not None else None
    if inp.currency == "CNY" and price.cny is not None:  # a Chinese buyer pays the China price where one is known
        cards = price.cny * inp.count * inp.nodes
    hosts = _in(inp.currency, host_usd, inp.cny_per_usd)
    total = cards + hosts if cards is not None else None
    energy = cost.yearly_energy_cost * inp.years
    ups_limit = (inp.ups_va * UPS_PF_DESKTOP * UPS_LOAD_SHARE, inp.ups_va * UPS_PF_ONLINE * UPS_LOAD_SHARE) \
        if inp.ups_va else None
    holds = None if ups_limit is None else True if node_w <= ups_limit[0] else False if node_w > ups_limit[1] \
        else None
    amps, breaker = feed(node_w, inp.supply_voltage_v, inp.phases) if inp.supply_voltage_v else (None, None)
    wall = (note("ownership.assume.system_power", watts=round(inp.node_power_w)) if inp.node_power_w
            else note("ownership.assume.baseboard", share=BASEBOARD_OVERHEAD) if host == "baseboard"
            else note("ownership.assume.wall", psu=0.9))
    assumptions = [wall, *cost.assumptions,
                   note("ownership.assume.host", host=note(f"perf.host_kind.{host}"), usd=HOST_COST_USD[host])
                   if inp.include_host
                   else note("ownership.assume.no_host"), price.note]
    return MachineCostResult(
        gpu=gpu.id, count=inp.count, nodes=inp.nodes, currency=inp.currency,
        cards_price=round(cards, 2) if cards is not None else None, host_price=round(hosts, 2),
        total_price=round(total, 2) if total is not None else None, node_wall_w=round(node_w, 1),
        total_wall_w=round(total_w, 1), yearly_kwh=cost.yearly_energy_kwh, kwh_price=cost.kwh_price,
        yearly_energy_cost=cost.yearly_energy_cost, years=inp.years, energy_cost=round(energy, 2),
        ownership_cost=round(total + energy, 2) if total is not None else None,
        nodes_per_rack=per_rack, racks=math.ceil(inp.nodes / per_rack) if per_rack else None,
        ups_va_online=round(node_w / UPS_PF_ONLINE / UPS_LOAD_SHARE, -1),
        ups_va_desktop=round(node_w / UPS_PF_DESKTOP / UPS_LOAD_SHARE, -1),
        ups_limit_w=(round(ups_limit[0]), round(ups_limit[1])) if ups_limit else None, ups_holds=holds,
        pue=inp.pue, feed_amps=amps, breaker_a=breaker,
        formula=[note("ownership.formula.energy_pue" if inp.pue else "ownership.formula.energy", watts=round(total_w),
                      hours=inp.hours_per_day, years=inp.years, price=cost.kwh_price, currency=inp.currency,
                      pue=inp.pue or 1.0),
                 *([note("ownership.formula.feed", watts=round(node_w), volts=inp.supply_voltage_v,
                         root=("√3 × " if inp.phases == 3 else ""), share=CONTINUOUS_SHARE)]
                   if inp.supply_voltage_v else []),
                 note("ownership.formula.price"),
                 *([note("ownership.formula.rack", kw=inp.rack_kw, watts=round(node_w))] if inp.rack_kw else []),
                 note("ownership.formula.ups", watts=round(node_w), online=UPS_PF_ONLINE, desktop=UPS_PF_DESKTOP,
                      share=UPS_LOAD_SHARE)],
        assumptions=assumptions)


def feed(watts: float, volts: float, phases: int) -> tuple[float, int | None]:
    """A load's current per phase (unity power factor: server PSUs correct to about 0.99) and the smallest standard
    breaker that carries it continuously, by the sizes of the voltage's country (None past 125 A)."""
    amps = watts / (volts * (math.sqrt(3) if phases == 3 else 1.0))
    sizes = BREAKERS_US if round(volts) in US_VOLTAGES else BREAKERS_IEC
    breaker = next((size for size in sizes if size * CONTINUOUS_SHARE >= amps), None)
    return round(amps, 1), breaker


__all__ = ["KWH_PRICE", "MachineCostInput", "MachineCostResult", "machine_cost", "to_usd"]
