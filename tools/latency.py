"""Time to first token for users who send requests over time, not all at the same instant.

``ttft_under_load(LoadInput) -> LoadResult``. Each of ``users`` chat sessions sends a prompt, reads the answer
as it streams and thinks before sending the next: one request every ``answer_tokens`` ÷ (its share of the
decode speed) + ``think_s`` seconds. Prompts then arrive at λ = users ÷ interval per second, and prefill of one
prompt takes S (the single-prompt time to first token); the prefill stage is busy u = λ·S of the time. With
prompts queueing for it (M/D/1), the mean time to first token is S · (1 + u / (2·(1 − u))); at u ≥ 1 the queue
grows without bound. The burst case (every user's prompt at the same instant) stays the perf tools' worst case.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from knowledge.schema import GPU
from tools.inputs import ToolInput
from tools.modelspec import ModelSpec
from tools.perf import DecodeInput, PrefillInput, SpeedEngine, estimate_decode, estimate_prefill
from tools.result import Note, note
from tools.units import Seconds, TokensPerS

DEFAULT_ANSWER_TOKENS = 300  # a chat answer's length when none is said
DEFAULT_THINK_S = 30.0  # reading the answer and typing the next question


class LoadInput(ToolInput):
    """``users`` chat sessions on one configuration, each sending a ``prompt_tokens`` prompt now and then."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    model: ModelSpec
    gpu: GPU
    count: int = Field(1, ge=1, le=64)
    precision: str = "bf16"
    prompt_tokens: int = Field(2048, ge=1, le=10_000_000)
    users: int = Field(1, ge=1, le=100_000, description="sessions active at the same time")
    answer_tokens: int = Field(DEFAULT_ANSWER_TOKENS, ge=1, le=1_000_000)
    think_s: float = Field(DEFAULT_THINK_S, ge=0, le=86_400, description="seconds between an answer and the next "
                                                                          "prompt")
    engine: SpeedEngine | None = None


class LoadResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ttft_one_s: Seconds = Field(description="one prompt alone")
    ttft_s: Seconds | None = Field(description="mean under this load; None when prefill cannot keep up")
    per_user_tokens_per_s: TokensPerS
    request_interval_s: Seconds = Field(description="between one user's prompts")
    prompts_per_s: float
    prefill_utilisation: float = Field(description="share of the time the prefill stage is busy")
    formula: list[Note]
    assumptions: list[Note]


def ttft_under_load(inp: LoadInput) -> LoadResult:
    """Mean time to first token for ``users`` sessions sending prompts over time (M/D/1 queue on prefill)."""
    one = estimate_prefill(PrefillInput(model=inp.model, gpu=inp.gpu, count=inp.count, precision=inp.precision,
                                        prompt_tokens=inp.prompt_tokens, engine=inp.engine))
    decode = estimate_decode(DecodeInput(model=inp.model, gpu=inp.gpu, count=inp.count, precision=inp.precision,
                                         context=inp.prompt_tokens + inp.answer_tokens, batch=inp.users,
                                         engine=inp.engine))
    per_user = decode.tokens_per_s / inp.users
    interval = inp.answer_tokens / max(per_user, 1e-9) + inp.think_s
    rate = inp.users / interval
    busy = rate * one.ttft_s
    mean = one.ttft_s * (1 + busy / (2 * (1 - busy))) if busy < 1 else None
    return LoadResult(
        ttft_one_s=one.ttft_s, ttft_s=round(mean, 4) if mean is not None else None,
        per_user_tokens_per_s=round(per_user, 2), request_interval_s=round(interval, 2),
        prompts_per_s=round(rate, 4), prefill_utilisation=round(busy, 4),
        formula=[note("latency.formula", users=inp.users, answer=inp.answer_tokens, think=inp.think_s)],
        assumptions=[note("latency.assume", answer=inp.answer_tokens, think=inp.think_s)])
