"""Published measurements the speed and time fits are made from (knowledge/data/*_runs.toml), each with its source."""

from __future__ import annotations

import datetime as dt
import functools
import tomllib
from importlib import resources
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field


class Published(BaseModel):
    """Where a measurement comes from, and whether the fits use it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    family: str = Field(description="one source or one publisher's series; left out together when a fit is checked")
    source: str
    url: str
    quote: str
    published: dt.date
    use: bool = True
    why_not: str | None = None


class TrainingRun(Published):
    """One published training run: N (active) parameters trained on D tokens in ``gpu_hours`` on ``gpu``."""

    model: str
    params: float = Field(gt=0, description="active parameters")
    tokens: float = Field(gt=0)
    gpu: str = Field(description="catalog GPU id")
    gpu_hours: float = Field(gt=0)
    hours_from: Literal["stated", "gpus-days"] = Field("stated", description="stated, or GPUs × wall-clock days")
    confidence: Literal["H", "M", "L"]


class PrefillRun(Published):
    """One published prompt-processing speed: ``prompt_tokens`` of one request on ``count`` GPUs."""

    gpu: str = Field(description="catalog GPU id")
    count: int = Field(ge=1)
    model: str = Field(description="catalog model id")
    precision: str
    engine: Literal["llamacpp", "server"]
    backend: Literal["cuda", "rocm", "vulkan", "sycl", "metal"]
    prompt_tokens: int = Field(gt=0)
    pp_tokens_per_s: float = Field(gt=0)
    tg_tokens_per_s: float | None = Field(None, gt=0)
    build: str | None = None


Run = TypeVar("Run", bound=Published)


def _load(name: str, model: type[Run]) -> tuple[Run, ...]:
    raw = tomllib.loads(resources.files("knowledge.data").joinpath(name).read_text(encoding="utf-8"))
    runs = tuple(model.model_validate(r) for r in raw["run"])
    if any(not r.use and not r.why_not for r in runs):
        raise ValueError(f"{name}: a run left out of the fit must say why (why_not)")
    return runs


@functools.cache
def load_training_runs() -> tuple[TrainingRun, ...]:
    """Every published run in training_runs.toml; those marked ``use = false`` say why they are not fitted."""
    return _load("training_runs.toml", TrainingRun)


@functools.cache
def load_prefill_runs() -> tuple[PrefillRun, ...]:
    """Every published prompt speed in prefill_runs.toml; those marked ``use = false`` say why they are not fitted."""
    return _load("prefill_runs.toml", PrefillRun)
