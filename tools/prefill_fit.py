"""Prefill speed per kernel path, fitted to published prompt speeds (knowledge/data/prefill_runs.toml).

A prompt of s tokens costs ``2·P_active·s`` FLOPs plus causal attention. The rate an engine reaches on it depends
on its kernels more than on the GPU: llama.cpp on NVIDIA reaches a share of the dense fp16 peak that saturates
on fast cards (its 512-token micro-batches do not fill an H100), its Metal build on Apple silicon a large share of
the GPU's FP16 (= FP32) rate, its ROCm, Vulkan and SYCL builds far less,
and the server engines (vLLM, SGLang, TensorRT-LLM, LMDeploy) a steady share on datacenter parts. Per path the
rate is ``e·peak / (1 + e·peak / cap)``, fitted in log space to the path's published runs (no cap below
``MIN_CAP_RUNS`` runs); its band holds ``PREFILL_BAND_SHARE`` of the runs' ratios to the fit (of all runs pooled
when the path has fewer than ``MIN_OWN_BAND``).
"""

from __future__ import annotations

import math
import statistics
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knowledge import load_catalog
from knowledge.measurements import PrefillRun, load_prefill_runs
from knowledge.schema import GPU
from tools.efficiency import quantile
from tools.kv_cache import attention_flops_per_token
from tools.modelspec import ModelSpec, load_model_spec
from tools.rates import compute_rate

PrefillPath = Literal["llamacpp-cuda", "llamacpp-metal", "llamacpp-other", "server"]
PATHS: tuple[PrefillPath, ...] = ("llamacpp-cuda", "llamacpp-metal", "llamacpp-other", "server")
# 0.9 is the smallest share whose band, fitted without a source, still holds ≥ 80 % of that source's runs
# (bench/accuracy.py, leave one source out).
PREFILL_BAND_SHARE = 0.9
MIN_OWN_BAND = 5  # a path with fewer runs takes the band of all runs pooled
MIN_CAP_RUNS = 8  # a path with fewer runs is fitted without a cap
# The grid the efficiency and the cap are searched on (a cap of None: no saturation).
CAP_GRID_TFLOPS = (25, 35, 50, 70, 100, 140, 200, 280, 400, 560, 800)
EFF_MIN, EFF_MAX, EFF_STEPS = 0.02, 2.0, 121


class PrefillEfficiency(BaseModel):
    """How fast a prompt runs on one kernel path: ``efficiency`` of the dense peak, saturating at ``cap`` FLOP/s
    (None: no cap), with the band of the published runs around it."""

    model_config = ConfigDict(frozen=True)

    path: PrefillPath
    efficiency: float
    cap_flops_per_s: float | None
    low: float = Field(description="band, as a multiple of the modelled rate")
    high: float
    runs: int
    families: int

    def achieved(self, peak_flops_per_s: float) -> float:
        """FLOP/s a prompt reaches on a GPU of this dense peak: e·peak, saturating at the cap."""
        return _achieved(self.efficiency, self.cap_flops_per_s, peak_flops_per_s)


def _achieved(efficiency: float, cap: float | None, peak: float) -> float:
    rate = efficiency * peak
    return rate / (1 + rate / cap) if cap else rate


def prefill_path(engine: str, gpu: GPU) -> PrefillPath:
    """llama.cpp on NVIDIA (CUDA), on Apple silicon (Metal), on other GPUs (ROCm, Vulkan, SYCL), or a server
    engine."""
    if engine == "llamacpp":
        vendor = gpu.vendor.lower()
        return "llamacpp-cuda" if vendor == "nvidia" else "llamacpp-metal" if vendor == "apple" else "llamacpp-other"
    return "server"


GEMM_TILE_ROWS = 128  # rows of one tensor-core GEMM tile: fewer rows leave part of every tile idle


def expert_gemm_share(spec: ModelSpec, tokens: int, engine: str) -> float:
    """How much slower an MoE's prompt runs than a dense model's: each expert multiplies only the tokens routed to
    it (chunk · k / E rows), and a GEMM of m rows runs at about m / (m + tile rows) of its speed. llama.cpp works
    in chunks of 512 tokens (n_ubatch), the server engines on the whole prompt. 1 for dense models."""
    if not (spec.is_moe and spec.num_experts and spec.experts_per_token):
        return 1.0
    chunk = min(tokens, 512 if engine == "llamacpp" else tokens)
    rows = chunk * spec.experts_per_token / spec.num_experts
    return (rows / (rows + GEMM_TILE_ROWS)) / (chunk / (chunk + GEMM_TILE_ROWS))


def prefill_flops(spec: ModelSpec, tokens: int, batch: int = 1) -> float:
    """2·P_active per prompt token plus causal attention (token i attends to i tokens: ≈ s²/2 pairs a layer)."""
    return 2 * spec.active_params * tokens * batch + batch * attention_flops_per_token(spec, tokens) * tokens / 2


def _run_rates(run: PrefillRun) -> tuple[float, float]:
    """(the GPU's dense peak on the run's path, the FLOP/s the run achieved), per GPU that works on the prompt.

    Server engines split a model over GPUs with tensor parallelism (all GPUs work at once); llama.cpp splits it by
    layers, so one request's prompt runs through the GPUs one after another."""
    gpu = load_catalog().gpu(run.gpu)
    engine = "llamacpp" if run.engine == "llamacpp" else "vllm"
    peak = compute_rate(gpu, run.precision, engine).flops_per_s
    working = run.count if run.engine == "server" else 1
    seconds = run.prompt_tokens / run.pp_tokens_per_s
    spec = load_model_spec(run.model)
    share = expert_gemm_share(spec, run.prompt_tokens, engine)
    return peak, prefill_flops(spec, run.prompt_tokens) / (seconds * working * share)


def _fit_path(points: list[tuple[float, float]]) -> tuple[float, float | None]:
    """(efficiency, cap) minimising the squared log error over (peak, achieved) points; a path with fewer than
    ``MIN_CAP_RUNS`` runs gets the median efficiency and no cap."""
    if len(points) < MIN_CAP_RUNS:
        return statistics.median(a / p for p, a in points), None
    best: tuple[float, float, float | None] | None = None
    for cap in (*(c * 1e12 for c in CAP_GRID_TFLOPS), None):
        for step in range(EFF_STEPS):
            e = EFF_MIN * (EFF_MAX / EFF_MIN) ** (step / (EFF_STEPS - 1))
            sq = sum(math.log(a / _achieved(e, cap, p)) ** 2 for p, a in points)
            if best is None or sq < best[0]:
                best = (sq, e, cap)
    assert best is not None
    return best[1], best[2]


@cache
def prefill_fit(leave_out: str | None = None) -> dict[PrefillPath, PrefillEfficiency]:
    """Per path, the efficiency (and cap) fitted to its published runs; ``leave_out`` drops one source (the accuracy
    bench predicts each source from the others). A path left with no runs takes the fit of all runs pooled."""
    by_path: dict[PrefillPath, list[tuple[tuple[float, float], str]]] = {p: [] for p in PATHS}
    for r in load_prefill_runs():
        if r.use and r.family != leave_out:
            path = prefill_path("llamacpp" if r.engine == "llamacpp" else "vllm", load_catalog().gpu(r.gpu))
            by_path[path].append((_run_rates(r), r.family))
    pooled = [pt for v in by_path.values() for pt, _ in v]
    out = {}
    tail = (1 - PREFILL_BAND_SHARE) / 2
    for path, runs in by_path.items():
        points = [pt for pt, _ in runs] or pooled
        e, cap = _fit_path(points)
        model = PrefillEfficiency(path=path, efficiency=e, cap_flops_per_s=cap, low=1, high=1, runs=len(runs),
                                  families=len({f for _, f in runs}))
        ratios = [a / model.achieved(p) for p, a in (points if len(points) >= MIN_OWN_BAND else pooled)]
        out[path] = model.model_copy(update={"low": quantile(ratios, tail), "high": quantile(ratios, 1 - tail)})
    return out
