"""Value for money: what each configuration delivers per unit of its catalog price.

    price            = catalog unit price × count (converted to the buyer's currency at a stated rate)
    X per unit       = X × count / price × unit        (unit = 10,000 CNY, or 1,000 USD / EUR / GBP)
    leader(X)        = the configuration with the most X per unit, among those that hold the workload
    X ∈ {dense BF16 TFLOPS (FP16 where BF16 is absent), FP64 TFLOPS, memory GB (vendor label),
         bandwidth GB/s, decode tokens/s of a sized model and the requests of its context that fit at once
         (when given)}

Dense throughput only: sparse marketing figures are never used. A configuration without a catalog
price is listed under ``unpriced`` instead of being ranked.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knowledge import load_catalog
from knowledge.markets import Region, sold_in
from knowledge.schema import GPU
from tools.inputs import ToolInput, VendorNames
from tools.pricing import CNY_PER_USD, FX_AS_OF, MAX_CNY_PER_USD, USD_PER_FOREIGN, SaidPrice, gpu_price
from tools.result import Note, note

ValueCurrency = Literal["USD", "CNY", "EUR", "GBP"]
UNIT: dict[str, float] = {"CNY": 10_000.0, "USD": 1_000.0, "EUR": 1_000.0, "GBP": 1_000.0}
METRICS = ("bf16_tflops", "fp64_tflops", "fp32_tflops", "memory_gb", "bandwidth_gbs", "tokens_per_s",
           "concurrent_requests")


class ValueOption(BaseModel):
    """One configuration to price: a catalog GPU, how many, and optionally a measured-by-tool speed."""

    model_config = ConfigDict(extra="forbid")

    gpu: GPU
    count: int = Field(1, ge=1, le=4096)
    tokens_per_s: float | None = Field(None, ge=0, description="decode speed of the sized model on this "
                                                               "configuration (from perf_decode)")
    concurrent_requests: float | None = Field(None, ge=0, description="requests of the sized context that fit "
                                                                      "at once (from the inference sizing)")
    fits: bool | None = Field(None, description="whether the configuration holds the workload (from a sizing); "
                                                "one that does not is priced but never leads")


class ValueInput(ToolInput):
    model_config = ConfigDict(extra="forbid")

    options: list[ValueOption] = Field(min_length=1, max_length=8)
    currency: ValueCurrency = "USD"
    said_prices: dict[str, SaidPrice] = Field(default_factory=dict, max_length=16,
                                              description="GPU id → the unit price the buyer said (replaces the "
                                                          "catalog's)")
    cny_per_usd: float = Field(CNY_PER_USD, gt=0, le=MAX_CNY_PER_USD, allow_inf_nan=False)


class OptionValue(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gpu: str
    name: str
    count: int
    price: float = Field(description="configuration price in `currency`")
    price_note: Note
    fits: bool | None
    totals: dict[str, float] = Field(description="metric → configuration total (TFLOPS, GB, GB/s, tokens/s)")
    per_unit: dict[str, float] = Field(description="metric → amount per `unit` of currency")


class ValueResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    currency: ValueCurrency
    unit: float = Field(description="the money amount the per-unit figures refer to, in `currency`")
    options: list[OptionValue]
    leaders: dict[str, str] = Field(description="metric → GPU id giving the most per unit, among the priced "
                                                "configurations that hold the workload (only with ≥ 2 of them)")
    unpriced: list[str] = Field(description="GPU ids without a catalog price")
    formula: list[Note] = Field(description="perf.formula.value.* notes")
    assumptions: list[Note]


def _price_in(gpu: GPU, currency: ValueCurrency, cny_per_usd: float,
              said: SaidPrice | None = None) -> tuple[float, Note] | None:
    p = gpu_price(gpu, cny_per_usd, said)
    if said is not None and said.currency == currency:
        return said.amount, p.note
    if p.usd is None or p.cny is None:
        return None
    if currency == "CNY":
        return p.cny, p.note
    if currency in USD_PER_FOREIGN:
        rate = USD_PER_FOREIGN[currency]
        fx = note("perf.value.price_fx", price=p.note, currency=currency, rate=rate, as_of=str(FX_AS_OF))
        return p.usd / rate, fx
    return p.usd, p.note


def _totals(o: ValueOption) -> dict[str, float]:
    t = o.gpu.throughput
    out: dict[str, float] = {"memory_gb": o.gpu.memory_gb * o.count, "bandwidth_gbs": o.gpu.bandwidth_gbs * o.count}
    half = t.bf16 if t.bf16 is not None else t.fp16
    if half is not None:
        out["bf16_tflops"] = half * o.count
    if t.fp64 is not None:
        out["fp64_tflops"] = t.fp64 * o.count
    if t.fp32 is not None:
        out["fp32_tflops"] = t.fp32 * o.count  # single and mixed precision codes (GROMACS, AlphaFold)
    if o.tokens_per_s is not None:
        out["tokens_per_s"] = o.tokens_per_s
    if o.concurrent_requests is not None:
        out["concurrent_requests"] = o.concurrent_requests
    return out


def _valued(o: ValueOption, currency: ValueCurrency, cny_per_usd: float,
            said: SaidPrice | None = None) -> OptionValue | None:
    """One configuration's price and per-price figures; None without a catalog price (or one said)."""
    priced = _price_in(o.gpu, currency, cny_per_usd, said)
    if priced is None:
        return None
    unit_price, note = priced
    price = unit_price * o.count
    totals = _totals(o)
    return OptionValue(gpu=o.gpu.id, name=o.gpu.name, count=o.count, price=price, price_note=note, fits=o.fits,
                       totals=totals, per_unit={k: v / price * UNIT[currency] for k, v in totals.items()})


def value_for_money(inp: ValueInput) -> ValueResult:
    """Per-price throughput, memory, bandwidth and (when given) decode speed of each configuration."""
    unit = UNIT[inp.currency]
    options: list[OptionValue] = []
    unpriced: list[str] = []
    for o in inp.options:
        valued = _valued(o, inp.currency, inp.cny_per_usd, inp.said_prices.get(o.gpu.id))
        if valued is None:
            unpriced.append(o.gpu.id)
        else:
            options.append(valued)
    leaders: dict[str, str] = {}
    able = [o for o in options if o.fits is not False]
    if len(able) >= 2:
        for metric in METRICS:
            have = [o for o in able if metric in o.per_unit]
            if len(have) == len(able):
                leaders[metric] = max(have, key=lambda o: o.per_unit[metric]).gpu
    return ValueResult(
        currency=inp.currency, unit=unit, options=options, leaders=leaders, unpriced=unpriced,
        formula=[note("perf.formula.value.price"),
                 note("perf.formula.value.per_unit", unit=unit, currency=inp.currency)],
        assumptions=[note("perf.value.street"), note("perf.value.dense"), note("perf.value.gpu_only"),
                     note("perf.value.never_leads"),
                     note("perf.value.fx_foreign", cny_per_usd=inp.cny_per_usd, rate=USD_PER_FOREIGN[inp.currency],
                          currency=inp.currency) if inp.currency in USD_PER_FOREIGN
                     else note("perf.value.fx", cny_per_usd=inp.cny_per_usd)],
    )


TierName = Literal["consumer", "workstation", "datacenter"]
_DEFAULT_TIERS: list[TierName] = ["consumer", "workstation"]


class BestValueInput(ToolInput):
    """Which single cards give the most for the money, with no model or budget named yet."""

    model_config = ConfigDict(extra="forbid")

    tiers: list[TierName] = Field(
        default_factory=lambda: _DEFAULT_TIERS.copy(), min_length=1)
    min_memory_gb: float = Field(16, ge=0, le=1024, description="vendor-labelled memory per card")
    metric: Literal["bandwidth_gbs", "memory_gb", "bf16_tflops", "fp64_tflops"] = "bandwidth_gbs"
    vendors: VendorNames = Field(default_factory=list, description="allowed vendors; empty = any")
    region: Region | None = Field(None, description="only cards sold new there (knowledge/data/markets.toml)")
    currency: ValueCurrency = "USD"
    cny_per_usd: float = Field(CNY_PER_USD, gt=0, le=MAX_CNY_PER_USD, allow_inf_nan=False)
    limit: int = Field(5, ge=1, le=10)


class BestValueResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    metric: str
    currency: ValueCurrency
    unit: float
    ranked: list[OptionValue] = Field(description="most of `metric` per unit of money first")
    formula: list[Note] = Field(description="perf.formula.value.* notes")
    assumptions: list[Note]


def _listed(items: list[Note]) -> Note:
    """Items joined as 'a, b, c' (Chinese 'a、b、c'): nested two-item list notes."""
    return items[0] if len(items) == 1 else note("perf.value.list", a=items[0], b=_listed(items[1:]))


def best_value(inp: BestValueInput) -> BestValueResult:
    """Catalog cards of the given tiers with at least ``min_memory_gb``, ranked by ``metric`` per price."""
    allowed = {v.lower() for v in inp.vendors}
    candidates = [g for g in load_catalog().gpus if g.tier.value in inp.tiers and g.memory_gb >= inp.min_memory_gb
                  and (not allowed or g.vendor.lower() in allowed)
                  and sold_in(g.id, inp.region) and g.form_factor != "system"]  # cards, not whole computers
    valued = [v for g in candidates if (v := _valued(ValueOption(gpu=g), inp.currency, inp.cny_per_usd)) is not None
              and inp.metric in v.per_unit]
    valued.sort(key=lambda v: -v.per_unit[inp.metric])
    unit = UNIT[inp.currency]
    tiers = _listed([note(f"perf.tier.{t}") for t in inp.tiers])
    return BestValueResult(
        metric=inp.metric, currency=inp.currency, unit=unit, ranked=valued[:inp.limit],
        formula=[note("perf.formula.value.best", metric=note(f"perf.formula.value.metric.{inp.metric}"), unit=unit,
                      currency=inp.currency)],
        assumptions=[note("perf.value.one_card_vendors", tiers=tiers, memory_gb=inp.min_memory_gb,
                          vendors=", ".join(inp.vendors)) if inp.vendors
                     else note("perf.value.one_card", tiers=tiers, memory_gb=inp.min_memory_gb),
                     note("perf.value.street_used"), note("perf.value.dense_gpu_only")],
    )
