"""Published measurements the speed and time fits are made from (knowledge/data/*.toml), each with its source."""

from __future__ import annotations

import datetime as dt
import functools
import tomllib
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class TrainingRun(BaseModel):
    """One published training run: N (active) parameters trained on D tokens in ``gpu_hours`` on ``gpu``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    model: str
    params: float = Field(gt=0, description="active parameters")
    tokens: float = Field(gt=0)
    gpu: str = Field(description="catalog GPU id")
    gpu_hours: float = Field(gt=0)
    hours_from: Literal["stated", "gpus-days"] = Field("stated", description="stated, or GPUs × wall-clock days")
    family: str = Field(description="one publisher's series; left out together when a fit is checked")
    source: str
    url: str
    quote: str
    published: dt.date
    confidence: Literal["H", "M", "L"]
    use: bool = True
    why_not: str | None = None


@functools.cache
def load_training_runs() -> tuple[TrainingRun, ...]:
    """Every published run in training_runs.toml; those marked ``use = false`` say why they are not fitted."""
    raw = tomllib.loads(resources.files("knowledge.data").joinpath("training_runs.toml").read_text(encoding="utf-8"))
    runs = tuple(TrainingRun.model_validate(r) for r in raw["run"])
    if any(not r.use and not r.why_not for r in runs):
        raise ValueError("training_runs.toml: a run left out of the fit must say why (why_not)")
    return runs
