"""What a hosted LLM API costs for a traffic, and how that compares with owning a machine that serves it.

One function, :func:`api_cost`. The API bill is tokens × the provider's price per 1M tokens (uncached input, cached
input and output apart; a provider's off-peak hours at their discount for the share of traffic in them). The owned
machine, when given, costs its price spread over its life plus its electricity; break-even is the price divided
by what the machine saves each month.
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from knowledge.api_prices import api_model, api_price
from tools.inputs import ToolInput
from tools.ownership import MachineCostInput, machine_cost
from tools.pricing import CNY_PER_USD, MAX_CNY_PER_USD, BillCurrency, from_usd, to_usd
from tools.result import Note, note

DAYS_PER_MONTH = 365 / 12
# a chat or Q&A request when only the number of requests is known: a question with some context, a short answer
TYPICAL_PROMPT, TYPICAL_OUTPUT = 1000, 300
DEFAULT_PEAK_SHARE = 0.5  # traffic in a provider's peak hours: an office-hours service sends about half of it then


class ApiCostInput(ToolInput):
    """A day's traffic on one API model, and optionally the machine that would serve it instead."""

    model_config = ConfigDict(extra="forbid")

    api: str = Field(min_length=1, max_length=80, description="API model name ('gpt-4o-mini', 'DeepSeek V4 Pro')")
    daily_input_tokens: float = Field(ge=0, le=1e13, description="prompt tokens sent a day")
    daily_output_tokens: float = Field(ge=0, le=1e13, description="tokens generated a day")
    monthly_spend: float | None = Field(None, gt=0, le=1e10, description="what the buyer says the API costs a month, "
                                                                        "in `currency` (replaces the token bill)")
    daily_requests: float | None = Field(None, gt=0, le=1e11, description="requests a day, when no token counts are "
                                                                          "known: each at a typical request's tokens")
    prompt_tokens_each: int = Field(TYPICAL_PROMPT, ge=1, le=1_000_000, description="a request's prompt tokens")
    output_tokens_each: int = Field(TYPICAL_OUTPUT, ge=1, le=1_000_000, description="a request's output tokens")
    quoted_per_m: float | None = Field(None, gt=0, le=1e4, description="a price per 1M tokens the buyer quotes, input "
                                                                       "and output alike, in `currency` (replaces the "
                                                                       "listed prices)")
    cached_share: float = Field(0.0, ge=0, le=1, description="share of input tokens served from the prompt cache")
    peak_share: float = Field(DEFAULT_PEAK_SHARE, ge=0, le=1,
                              description="share of traffic in the provider's peak hours (where it bills them)")
    currency: BillCurrency = "USD"
    cny_per_usd: float = Field(CNY_PER_USD, gt=0, le=MAX_CNY_PER_USD)
    machine: MachineCostInput | None = Field(None, description="the machine that would serve the traffic instead: "
                                                                "priced and its electricity computed (its currency "
                                                                "is set to this one's)")
    machine_price: float | None = Field(None, gt=0, le=1e11, description="the owned machine's price, in `currency` "
                                                                         "(replaces the priced machine's)")
    machine_yearly_energy: float = Field(0.0, ge=0, le=1e10, description="its electricity a year, in `currency`")
    years: float = Field(3.0, gt=0, le=10, description="the machine's life: its price is spread over it")


class ApiCostResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    api: str = Field(description="API model id")
    api_name: str
    provider: str
    currency: BillCurrency
    daily_input_tokens: float = Field(description="the input tokens a day the bill is for")
    daily_output_tokens: float = Field(description="the output tokens a day the bill is for")
    input_price: float = Field(description="per 1M uncached input tokens, in `currency` (blended over peak hours)")
    cached_price: float
    output_price: float
    daily_cost: float
    monthly_cost: float
    yearly_cost: float
    price_as_of: str
    price_source: str
    years: float = Field(description="the machine's life its price is spread over")
    machine_price: float | None = Field(None, description="the owned machine's price, in `currency`")
    machine_yearly_energy: float | None = Field(None, description="its electricity a year, in `currency`")
    machine_monthly_energy: float | None = Field(None, description="its electricity a month, in `currency`")
    own_monthly_cost: float | None = Field(None, description="the machine's price ÷ its months of life + its "
                                                             "electricity a month, in `currency`")
    break_even_months: float | None = Field(None, description="months until the machine has saved its price "
                                                              "(None: no machine given, or it never does)")
    cheaper: str | None = Field(None, description="'api' or 'own' over the machine's life; None: no machine given")
    quoted: bool = Field(False, description="priced at the buyer's quoted price per 1M tokens, not a listed one")
    formula: list[Note]
    assumptions: list[Note]


def _in_currency(amount: float, row_currency: str, currency: BillCurrency, rate: float) -> float:
    if row_currency == currency:
        return amount
    return from_usd(to_usd(amount, row_currency, rate), currency, rate)  # type: ignore[arg-type]


def _machine(inp: ApiCostInput) -> tuple[float | None, float, list[Note]]:
    """The owned machine's price and yearly electricity in the input's currency, and the notes they rest on."""
    if inp.machine is None:
        return inp.machine_price, inp.machine_yearly_energy, []
    priced = machine_cost(inp.machine.model_copy(update={"currency": inp.currency, "cny_per_usd": inp.cny_per_usd,
                                                         "years": inp.years}))
    price = inp.machine_price if inp.machine_price is not None else priced.total_price
    return price, priced.yearly_energy_cost, [*priced.assumptions,
                                              note("api_cost.assume.load", hours=inp.machine.hours_per_day)]


def api_cost(inp: ApiCostInput) -> ApiCostResult:
    """The API bill a day, month and year for the traffic; with a machine, its monthly cost and break-even."""
    row = api_price(api_model(inp.api), inp.currency if inp.currency in ("USD", "CNY") else "USD")
    blend = 1.0 if row.off_peak_share is None else inp.peak_share + (1 - inp.peak_share) * row.off_peak_share
    per_m = {k: _in_currency(getattr(row, k) * blend, row.currency, inp.currency, inp.cny_per_usd)
             for k in ("input", "cached", "output")}
    if inp.quoted_per_m is not None:  # the price the buyer was quoted, for every token
        per_m = dict.fromkeys(per_m, inp.quoted_per_m)
    tokens_in, tokens_out = inp.daily_input_tokens, inp.daily_output_tokens
    by_requests = inp.daily_requests is not None and not (tokens_in or tokens_out)
    if by_requests:  # '500 users × 10 questions a day': each at a typical request's tokens
        tokens_in = (inp.daily_requests or 0) * inp.prompt_tokens_each
        tokens_out = (inp.daily_requests or 0) * inp.output_tokens_each
    cached = tokens_in * inp.cached_share
    daily = ((tokens_in - cached) * per_m["input"] + cached * per_m["cached"] + tokens_out * per_m["output"]) / 1e6
    monthly = daily * DAYS_PER_MONTH
    if inp.monthly_spend is not None:  # the bill they pay is the bill
        monthly, daily = inp.monthly_spend, inp.monthly_spend / DAYS_PER_MONTH
    price, energy_year, machine_notes = _machine(inp)
    own = breakeven = cheaper = None
    if price is not None:
        energy_month = energy_year / 12
        own = price / (inp.years * 12) + energy_month
        saving = monthly - energy_month
        breakeven = price / saving if saving > 0 else None
        cheaper = "own" if own < monthly else "api"
    assumptions = [note("api_cost.assume.spend")] if inp.monthly_spend is not None else []
    if by_requests:
        assumptions.append(note("api_cost.assume.requests", requests=inp.daily_requests, prompt=inp.prompt_tokens_each,
                                output=inp.output_tokens_each))
    assumptions += [note("api_cost.assume.quoted", price=inp.quoted_per_m) if inp.quoted_per_m is not None else
                    note("api_cost.assume.price", name=row.name, provider=row.provider, as_of=row.as_of.isoformat(),
                         source=row.source)]
    if row.off_peak_share is not None and inp.quoted_per_m is None:
        assumptions.append(note("api_cost.assume.peak", share=round(inp.peak_share * 100),
                                off_peak=round(row.off_peak_share * 100)))
    if row.currency != inp.currency and inp.quoted_per_m is None:
        assumptions.append(note("api_cost.assume.converted", rate=inp.cny_per_usd))
    assumptions += machine_notes
    formula = [] if inp.monthly_spend is not None else [note("api_cost.formula.bill"), note("api_cost.formula.month")]
    if price is not None:
        formula += [note("api_cost.formula.own", years=inp.years), note("api_cost.formula.break_even")]
    return ApiCostResult(
        api=row.id, api_name=row.name, provider=row.provider, currency=inp.currency,
        daily_input_tokens=tokens_in, daily_output_tokens=tokens_out,
        input_price=round(per_m["input"], 4), cached_price=round(per_m["cached"], 4),
        output_price=round(per_m["output"], 4), daily_cost=round(daily, 2), monthly_cost=round(monthly, 2),
        yearly_cost=round(daily * 365, 2), price_as_of=row.as_of.isoformat(), price_source=row.source,
        years=inp.years, machine_price=round(price, 2) if price is not None else None,
        machine_yearly_energy=round(energy_year, 2) if price is not None else None,
        machine_monthly_energy=round(energy_year / 12, 2) if price is not None else None,
        own_monthly_cost=round(own, 2) if own is not None else None,
        break_even_months=round(breakeven, 1) if breakeven is not None and math.isfinite(breakeven) else None,
        cheaper=cheaper, quoted=inp.quoted_per_m is not None, formula=formula, assumptions=assumptions)


__all__ = ["ApiCostInput", "ApiCostResult", "api_cost"]
