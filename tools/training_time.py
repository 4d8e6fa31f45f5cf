"""Training time from the FLOPs rule: 6·N·D (8·N·D with full recomputation) over achieved FLOP/s.

Forward and backward cost about 2 and 4 FLOPs per parameter per token; recomputing every
layer's forward during the backward adds another 2. The achieved rate is ``count × peak dense
FLOP/s × MFU``. This is the Megatron-LM form llm-analysis uses; attention FLOPs (12·L·h·s per
token) are not in 6·N·D, so an MFU quoted against it is "6ND MFU". For MoE, N is the active
parameter count.
"""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from knowledge.schema import GPU
from tools.efficiency import training_mfu
from tools.errors import ToolError
from tools.inputs import ToolInput
from tools.pricing import CNY_PER_USD
from tools.rates import compute_rate
from tools.rentals import typical_rate_usd
from tools.result import Note, Term, note
from tools.units import CNY, USD, Days, Hours, TokensPerS

_SUFFIX = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12, "P": 1e15}


def parse_count(text: str | float | int) -> float:
    """'1.4T' → 1.4e12, '300B' → 3e11, '2e12' → 2e12, '750M' → 7.5e8 (case-insensitive)."""
    if isinstance(text, int | float):
        value = float(text)
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([kKmMbBgGtTpP]?)\s*", str(text).replace(",", ""))
        if not m:
            raise ToolError(note("error.count.unreadable", text=repr(text)), suggestions=["1.4T", "300B", "2e12"])
        value = float(m.group(1)) * _SUFFIX[m.group(2).upper()]
    if not math.isfinite(value) or value <= 0:
        raise ToolError(note("error.count.not_positive", text=repr(text)))
    return value


MAX_TOKENS = 1e17  # far beyond any training run (frontier runs are ~1e13–1e14 tokens)


class TrainingTimeInput(ToolInput):
    """A training run: model size, tokens, hardware, efficiency."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    params: float = Field(ge=1e3, le=1e15, description="N: (active) parameters (a model has at least thousands)")
    tokens: float = Field(gt=0, le=MAX_TOKENS, description="D: training tokens")
    gpu: GPU
    count: int = Field(1, ge=1, le=1_000_000)
    mfu: float | None = Field(None, ge=0.001, le=1, description="default: the median of published end-to-end "
                                                               "runs on this class of GPU")
    recompute: Literal["none", "selective", "full"] = "none"
    market: Literal["cn", "global"] | None = Field(None, description="where the GPUs are rented: the median provider "
                                                                     "offer there prices the run (default: catalog)")
    frozen_base: bool = Field(False, description="LoRA/QLoRA: the base weights get no gradients (backward 2 FLOPs per "
                                                "parameter per token, not 4)")
    precision: str = Field("bf16", description="precision the matmuls run at")
    price_per_gpu_hour: float | None = Field(
        None, gt=0, le=1e6, allow_inf_nan=False, description="USD; default: catalog rental price"
    )
    model_name: str | None = None

    @model_validator(mode="after")
    def _check(self) -> TrainingTimeInput:
        if self.mfu is not None and self.mfu > 0.8:
            raise ToolError(note("error.train_time.mfu_too_high", mfu=self.mfu))
        return self


class TrainingTimeResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["training-time"] = "training-time"
    flops: float
    flops_factor: int = Field(description="6 (4 for a frozen base), 2 more with full recomputation")
    hours: Hours
    hours_range: tuple[Hours, Hours] = Field(description="at the MFU band holding 9 in 10 published runs "
                                                         "(the given MFU ×1.2 and ×0.8 when one is given)")
    days: Days
    gpu_hours: float = Field(description="GPU-hours (hours × GPUs)")
    tokens_per_s_per_gpu: TokensPerS
    achieved_flops_per_s: float = Field(description="whole cluster, FLOP/s")
    peak_flops_per_s_per_gpu: float = Field(description="dense peak, FLOP/s")
    compute_precision: str
    mfu: float
    mfu_range: tuple[float, float]
    count: int
    gpu: str
    price_per_gpu_hour: float | None = Field(description="USD per GPU-hour")
    price_source: Note | None
    cost_usd: USD | None
    cost_cny: CNY | None = Field(None, description="cost_usd at the exchange rate cny_per_usd")
    cny_per_usd: float = Field(CNY_PER_USD, description="the exchange rate cost_cny was converted at")
    terms: list[Term]
    assumptions: list[Note]
    warnings: list[Note]


def estimate_training_time(inp: TrainingTimeInput) -> TrainingTimeResult:
    """Hours, GPU-hours and cost of training ``params`` on ``tokens`` at a stated MFU."""
    rate = compute_rate(inp.gpu, inp.precision)
    fitted = training_mfu(inp.gpu)
    measured = inp.gpu.measured_training_mfu if inp.mfu is None else None
    mfu = inp.mfu or measured or fitted.mfu
    if inp.mfu is None and measured is None:
        low, high = fitted.low, fitted.high
    else:  # a given or measured MFU: ±20 % (±10 % for a measurement) for other sizes, sequence lengths, builds
        spread = 0.1 if measured else 0.2
        low, high = mfu * (1 - spread), min(mfu * (1 + spread), 0.8)
    k = (2 if inp.frozen_base else 4) + 2 + (2 if inp.recompute == "full" else 0)  # backward + forward + recomputed
    flops = k * inp.params * inp.tokens
    achieved = inp.count * rate.flops_per_s * mfu
    seconds = flops / achieved
    hours = seconds / 3600
    gpu_hours = hours * inp.count
    price = inp.price_per_gpu_hour
    source = note("perf.train_time.price_given") if inp.price_per_gpu_hour else None
    if price is None and inp.market and (offered := typical_rate_usd(inp.gpu.id, inp.market))[1]:
        price = offered[0]  # the median provider offer where the buyer rents, as buy-vs-rent prices it
        source = note(f"perf.train_time.price_market_{inp.market}", offers=offered[1])
    if price is None and inp.gpu.price and inp.gpu.price.rental_usd_per_hour:
        price = inp.gpu.price.rental_usd_per_hour
        source = note("perf.train_time.price_catalog", as_of=str(inp.gpu.price.as_of))
    for market in ("global", "cn") if price is None and inp.market is None else ():  # no catalog rate: where the
        offered = typical_rate_usd(inp.gpu.id, market)  # card is rented at all (an H800 only in China)
        if offered[1] and offered[0] is not None:
            price = offered[0]
            source = note(f"perf.train_time.price_market_{market}", offers=offered[1])
            break
    cost = gpu_hours * price if price else None
    tokens_per_gpu = inp.tokens / seconds / inp.count
    terms = [
        Term(
            name="training FLOPs",
            value=flops,
            unit="FLOP",
            formula=note("perf.formula.train_flops", k=k, params=inp.params, tokens=inp.tokens),
            explain=note(f"perf.explain.train_flops{'_frozen' if inp.frozen_base else ''}"
                         f"{'_recompute' if inp.recompute == 'full' else ''}", k=k),
        ),
        Term(
            name="achieved throughput",
            value=achieved,
            unit="FLOP/s",
            formula=note("perf.formula.train_achieved", count=inp.count, precision=rate.precision,
                         tflops=rate.flops_per_s / 1e12, mfu=mfu),
            explain=note("perf.explain.train_achieved"),
        ),
        Term(
            name="wall-clock time",
            value=hours,
            unit="h",
            formula=note("perf.formula.train_hours"),
            explain=note("perf.explain.train_hours"),
        ),
        Term(
            name="GPU-hours",
            value=gpu_hours,
            unit="GPU·h",
            formula=note("perf.formula.train_gpu_hours", count=inp.count),
            explain=note("perf.explain.train_gpu_hours"),
        ),
    ]
    if cost is not None:
        terms.append(
            Term(
                name="cost",
                value=cost,
                unit="USD",
                formula=note("perf.formula.train_cost", price=price, source=source),
                explain=note("perf.explain.train_cost"),
            )
        )
    assumptions = [
        note("perf.train_time.mfu_given", mfu=mfu) if inp.mfu is not None else
        note("perf.train_time.mfu_measured", mfu=mfu, gpu=inp.gpu.name, fitted=fitted.mfu) if measured else
        note("perf.train_time.mfu_fitted", mfu=mfu, low=low, high=high, runs=fitted.runs, families=fitted.families,
             gpu_class=note(f"perf.train_time.gpu_class_{fitted.gpu_class}")),
        note("perf.train_time.six_nd"),
        note("perf.train_time.params", params=inp.params),
    ]
    warnings = list(rate.warnings)
    if cost is None:
        warnings.append(note("perf.train_time.no_price"))
    return TrainingTimeResult(
        flops=flops,
        flops_factor=k,
        hours=hours,
        hours_range=(hours * mfu / high, hours * mfu / low),
        days=hours / 24,
        gpu_hours=gpu_hours,
        tokens_per_s_per_gpu=tokens_per_gpu,
        achieved_flops_per_s=achieved,
        peak_flops_per_s_per_gpu=rate.flops_per_s,
        compute_precision=rate.precision,
        mfu=mfu,
        mfu_range=(low, high),
        count=inp.count,
        gpu=inp.gpu.name,
        price_per_gpu_hour=price,
        price_source=source,
        cost_usd=cost,
        cost_cny=round(cost * CNY_PER_USD, 2) if cost is not None else None,
        terms=terms,
        assumptions=assumptions,
        warnings=warnings,
    )


def implied_mfu(params: float, tokens_per_s_per_gpu: float, peak_flops_per_s: float, factor: int = 6) -> float:
    """MFU a published tokens/s/GPU implies: factor·N·(tokens/s) / peak."""
    return factor * params * tokens_per_s_per_gpu / peak_flops_per_s
