"""Which GPU to rent for a job: ``rent_choices(RentChoicesInput) -> RentChoicesResult``.

Every GPU with recorded rental offers, at the smallest count (1, 2, 4, 8) that runs the workload by the
recommender's own gates (``recommend.workload_fit``), priced at its typical rental rate in the buyer's market
(``rentals.typical_rate_usd``) and at its cheapest offer; ranked by the cost of the job when the data set is
known, else by the cost of an hour.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knowledge import load_catalog
from knowledge.offers import rental_offers
from tools.errors import ToolError
from tools.inputs import ToolInput
from tools.pricing import CNY_PER_USD, MAX_CNY_PER_USD, Currency
from tools.recommend import RecommendInput, workload_fit
from tools.rentals import offer_usd, typical_rate_usd
from tools.result import Note, note

COUNTS = (1, 2, 4, 8)
MAX_CHOICES = 8


class RentChoicesInput(ToolInput):
    """A job to run on rented GPUs."""

    model_config = ConfigDict(extra="forbid")

    workload: Literal["inference", "training"]
    model: str = Field(description="catalog model")
    method: Literal["full", "lora", "qlora"] | None = Field(None, description="training; default lora")
    precision: str | None = None
    context: int = Field(8192, ge=1, le=10_000_000)
    concurrency: int = Field(1, ge=1, le=100_000)
    dataset_tokens: float | None = Field(None, gt=0, le=1e15, description="training tokens, all epochs")
    currency: Currency = "USD"
    market: Literal["cn", "global"] | None = Field(None, description="default: cn for CNY")
    cny_per_usd: float = Field(CNY_PER_USD, gt=0, le=MAX_CNY_PER_USD, allow_inf_nan=False)


class RentChoice(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gpu: str
    gpu_id: str
    count: int
    per_gpu_hour: float = Field(description="typical rate per GPU-hour, in the result's currency")
    hourly: float = Field(description="all the GPUs for one hour, at the typical rate")
    cheapest_provider: str
    cheapest_per_gpu_hour: float
    cheapest_billing: str
    cheapest_as_of: str
    tokens_per_s: float | None = Field(description="decode (inference) or training tokens/s, all GPUs")
    job_hours: float | None = Field(description="training: hours for the data set")
    job_cost: float | None = Field(description="job_hours × hourly, in the result's currency")


class RentChoicesResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workload: str
    model: str
    currency: Currency
    choices: list[RentChoice] = Field(description="cheapest first (by job cost when known, else by the hour)")
    formula: list[Note]
    assumptions: list[Note]


def rent_choices(inp: RentChoicesInput) -> RentChoicesResult:
    """The rentable GPUs that run the job, cheapest first, each at the smallest count that fits."""
    catalog = load_catalog()
    market = inp.market or ("cn" if inp.currency == "CNY" else "global")
    rate = 1.0 if inp.currency == "USD" else inp.cny_per_usd
    job = RecommendInput(workload=inp.workload, model=inp.model, method=inp.method, precision=inp.precision,
                         context=inp.context, concurrency=inp.concurrency, dataset_tokens=inp.dataset_tokens)
    reachable = [o for o in rental_offers() if market == "cn" or o.region != "cn"]
    choices: list[RentChoice] = []
    for gpu_id in sorted({o.gpu for o in reachable}):
        gpu = catalog.gpu(gpu_id)
        typical, _ = typical_rate_usd(gpu_id, market, inp.cny_per_usd)
        if typical is None:
            continue
        for count in COUNTS:
            try:
                fit = workload_fit(gpu, count, job)
            except ToolError:
                continue
            if not fit.fits:
                continue
            offers = [o for o in reachable if o.gpu == gpu_id]
            cheapest = min(offers, key=lambda o: offer_usd(o, inp.cny_per_usd))
            cheap_usd = offer_usd(cheapest, inp.cny_per_usd)
            hourly = typical * count * rate
            choices.append(RentChoice(
                gpu=gpu.name, gpu_id=gpu_id, count=count, per_gpu_hour=round(typical * rate, 2),
                hourly=round(hourly, 2), cheapest_provider=cheapest.provider,
                cheapest_per_gpu_hour=round(cheap_usd * rate, 2), cheapest_billing=cheapest.billing,
                cheapest_as_of=cheapest.as_of.isoformat(), tokens_per_s=fit.tokens_per_s, job_hours=fit.hours,
                job_cost=round(fit.hours * hourly, 2) if fit.hours else None))
            break
    choices.sort(key=lambda c: (c.job_cost if c.job_cost is not None else c.hourly * 1e6, c.hourly))
    assumptions = [note("perf.rent_choices.counts", counts=", ".join(map(str, COUNTS))),
                   note("perf.rentals.per_gpu")]
    if not inp.dataset_tokens and inp.workload == "training":
        assumptions.append(note("perf.rent_choices.no_data"))
    return RentChoicesResult(workload=inp.workload, model=catalog.model(inp.model).name if inp.model else "?",
                             currency=inp.currency, choices=choices[:MAX_CHOICES],
                             formula=[note("perf.formula.rent_choices.rank")], assumptions=assumptions)
