"""GPUs the user describes by their numbers, for cards the catalog lacks (an RTX 3080, a new part).

``GPU_ADVISOR_GPUS`` names a TOML file of ``[[gpu]]`` tables::

    [[gpu]]
    name = "RTX 3080"           # how it is asked for
    memory_gib = 10
    bandwidth_gbs = 760         # GB/s (1e9 B/s)
    bf16_tflops = 59.5          # dense tensor TFLOPS (not the 2:4-sparse figure)
    fp64_tflops = 0.47          # optional
    tdp_w = 320
    pcie_gen = 4                # optional, with pcie_lanes
    pcie_lanes = 16

    [[measured]]                # optional: a decode speed you measured (one GPU, one request)
    gpu = "RTX 3080"            # a GPU above or a catalog one
    model = "llama-3.1-8b"
    precision = "Q4_K_M"
    decode_tokens_per_s = 101   # e.g. llama-bench's tg128

    [[measured]]                # optional: the MFU of your own training runs on that GPU
    gpu = "RTX 3080"
    training_mfu = 0.35

Measured speeds calibrate that GPU's decode predictions, a measured MFU replaces the published-runs default of
its training-time estimates (both shown as such in every answer).

Each becomes a catalog GPU under the name given, whose source says it is the user's own figures (confidence
"L"), with no price:
the calculators size and time it; recommendations, which need a price, leave it out. A file that cannot be
used is reported by :func:`load_user_gpus` as one line, and the catalog carries on without it.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import tomllib
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from knowledge.paths import expand_user, regular_file
from knowledge.schema import GPU

ENV = "GPU_ADVISOR_GPUS"
M = TypeVar("M", bound=BaseModel)
MAX_FILE_BYTES = 1_000_000


class Measured(BaseModel):
    """One measurement as written in the file: a decode speed (with its model and precision) or a training MFU."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    gpu: str = Field(min_length=1, max_length=80)
    model: str | None = Field(None, min_length=1, max_length=120)
    precision: str | None = Field(None, min_length=1, max_length=20)
    decode_tokens_per_s: float | None = Field(None, gt=0, le=100_000)
    training_mfu: float | None = Field(None, gt=0, le=0.8, description="model FLOPs utilisation of a training run")

    @model_validator(mode="after")
    def _one_kind(self) -> Measured:
        if (self.decode_tokens_per_s is None) == (self.training_mfu is None):
            raise ValueError("give decode_tokens_per_s (with model and precision) or training_mfu")
        if self.decode_tokens_per_s is not None and not (self.model and self.precision):
            raise ValueError("a decode speed needs its model and precision")
        return self


class GPUProfile(BaseModel):
    """One GPU as its owner describes it (every figure a finite number in a plausible range)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str = Field(min_length=1, max_length=80, description="how it is asked for ('RTX 3080')")
    vendor: Literal["NVIDIA", "AMD", "Intel"] = "NVIDIA"
    memory_gib: float = Field(gt=0, le=4096)
    bandwidth_gbs: float = Field(gt=0, le=100_000)
    bf16_tflops: float = Field(gt=0, le=100_000, description="dense tensor BF16/FP16 TFLOPS")
    fp64_tflops: float | None = Field(None, ge=0, le=100_000)
    tdp_w: float = Field(gt=0, le=10_000)
    pcie_gen: int | None = Field(None, ge=3, le=6)
    pcie_lanes: int | None = Field(None, ge=1, le=16)


def load_user_gpus(env: Any = None) -> tuple[list[GPU], list[Measured], str | None]:
    """The GPUs and measurements of the file ``$GPU_ADVISOR_GPUS`` names (none when unset), and a one-line
    problem, if any (then nothing is taken from the file)."""
    env = os.environ if env is None else env
    raw = str(env.get(ENV, "") or "").strip()
    if not raw:
        return [], [], None
    path = expand_user(raw)
    try:
        if regular_file(path).stat().st_size > MAX_FILE_BYTES:
            return [], [], f"{ENV}: {path.name} is larger than {MAX_FILE_BYTES:,} bytes; not read"
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        as_of = dt.date.fromtimestamp(path.stat().st_mtime)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return [], [], f"{ENV}: cannot read {path.name} ({str(exc)[:120]}); nothing taken from it"
    try:
        profiles = _entries(data, "gpu", GPUProfile, path.name)
        measured = _entries(data, "measured", Measured, path.name)
    except ValueError as exc:
        return [], [], f"{ENV}: {path.name}{exc}; nothing taken from it"
    return [as_gpu(p, path.name, as_of) for p in profiles], measured, None


def _entries(data: dict[str, Any], key: str, model: type[M], file: str) -> list[M]:
    """The ``[[key]]`` tables of ``data`` validated as ``model``; ValueError saying which one is wrong."""
    tables = data.get(key, [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise ValueError(f" should hold [[{key}]] tables")
    out = []
    for n, table in enumerate(tables[:100], start=1):
        try:
            out.append(model.model_validate(table))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "entry"
            raise ValueError(f", {key} {n}: {where}: {first.get('msg', 'invalid')}") from None
    return out


def as_gpu(p: GPUProfile, file: str, as_of: dt.date) -> GPU:
    """A catalog entry for ``p``; what the profile does not say is left unknown, never guessed."""
    slug = re.sub(r"[^a-z0-9]+", "-", p.name.lower()).strip("-") or "gpu"
    return GPU.model_validate({
        "id": f"user-{slug}",
        "name": p.name,
        "vendor": p.vendor,
        "tier": "consumer",
        "architecture": "user-described",
        "memory_gb": p.memory_gib,
        "memory_type": "unknown",
        "bandwidth_gbs": p.bandwidth_gbs,
        "ecc": None,
        "throughput": {"bf16": p.bf16_tflops, "fp16": p.bf16_tflops, "fp64": p.fp64_tflops},
        "tdp_w": p.tdp_w,
        "form_factor": "pcie",
        "cooling": "open-air",
        "display_outputs": 0,
        "pcie_gen": p.pcie_gen,
        "pcie_lanes": p.pcie_lanes,
        "interconnect": {"kind": "pcie"},
        "software": {"NVIDIA": ["CUDA"], "AMD": ["ROCm"], "Intel": ["oneAPI"]}[p.vendor],
        "aliases": [],
        "sources": [f"the user's own figures ({file})"],
        "as_of": as_of,
        "confidence": "L",
    })
