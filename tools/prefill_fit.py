"""Prefill efficiency per kernel path, fitted to published prompt speeds (knowledge/data/prefill_runs.toml).

A prompt of s tokens costs ``2·P_active·s`` FLOPs plus causal attention; the share of the dense peak an engine
reaches on it depends on its kernels far more than on the GPU: llama.cpp's CUDA kernels (cuBLAS for F16, int8
MMQ for quantised files) run near the 16-bit peak of GeForce cards, its ROCm, Vulkan and SYCL builds far below
theirs, and the server engines (vLLM, SGLang, TensorRT-LLM, LMDeploy) in between on datacenter parts. One
efficiency per path is the median over that path's published runs; its band holds ``PREFILL_BAND_SHARE`` of
the path's runs (of all runs pooled when the path has fewer than ``MIN_OWN_BAND``).
"""

from __future__ import annotations

import statistics
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from knowledge import load_catalog
from knowledge.measurements import PrefillRun, load_prefill_runs
from knowledge.schema import GPU
from tools.kv_cache import attention_flops_per_token
from tools.modelspec import ModelSpec, load_model_spec
from tools.rates import compute_rate

PrefillPath = Literal["llamacpp-cuda", "llamacpp-other", "server"]
PATHS: tuple[PrefillPath, ...] = ("llamacpp-cuda", "llamacpp-other", "server")
# 0.9 is the smallest share whose band, fitted without a source, still holds ≥ 80 % of that source's runs
# (bench/accuracy.py, leave one source out).
PREFILL_BAND_SHARE = 0.9
MIN_OWN_BAND = 5  # a path with fewer runs takes the band of all runs pooled


class PrefillEfficiency(BaseModel):
    """The share of the dense peak a prompt runs at on one kernel path, with the band of the runs behind it."""

    model_config = ConfigDict(frozen=True)

    path: PrefillPath
    efficiency: float
    low: float
    high: float
    runs: int
    families: int


def prefill_path(engine: str, gpu: GPU) -> PrefillPath:
    """llama.cpp on NVIDIA (CUDA), llama.cpp on other GPUs (ROCm, Vulkan, SYCL), or a server engine."""
    if engine == "llamacpp":
        return "llamacpp-cuda" if gpu.vendor.lower() == "nvidia" else "llamacpp-other"
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


def run_efficiency(run: PrefillRun) -> float:
    """The share of the dense peak a published run implies: its FLOPs over its time at the path's rate.

    Server engines split a model over GPUs with tensor parallelism (all GPUs work at once); llama.cpp splits it by
    layers, so one request's prompt runs through the GPUs one after another."""
    gpu = load_catalog().gpu(run.gpu)
    engine = "llamacpp" if run.engine == "llamacpp" else "vllm"
    rate = compute_rate(gpu, run.precision, engine).flops_per_s
    working = run.count if run.engine == "server" else 1
    seconds = run.prompt_tokens / run.pp_tokens_per_s
    spec = load_model_spec(run.model)
    share = expert_gemm_share(spec, run.prompt_tokens, engine)
    return prefill_flops(spec, run.prompt_tokens) / (seconds * rate * working * share)


def _quantile(values: list[float], q: float) -> float:
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo = int(pos)
    return v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (pos - lo)


@cache
def prefill_fit(leave_out: str | None = None) -> dict[PrefillPath, PrefillEfficiency]:
    """Per path, the median efficiency of its published runs; ``leave_out`` drops one source (the accuracy bench).

    A path left with no runs takes the median of all runs."""
    runs = [r for r in load_prefill_runs() if r.use and r.family != leave_out]
    by_path: dict[PrefillPath, list[tuple[float, str]]] = {p: [] for p in PATHS}
    for r in runs:
        by_path[prefill_path(r.engine if r.engine == "llamacpp" else "vllm", load_catalog().gpu(r.gpu))].append(
            (run_efficiency(r), r.family))
    everything = statistics.median(e for v in by_path.values() for e, _ in v)
    medians = {p: statistics.median(e for e, _ in v) if v else everything for p, v in by_path.items()}
    ratios = {p: [e / medians[p] for e, _ in v] for p, v in by_path.items()}
    pooled = [r for v in ratios.values() for r in v]
    tail = (1 - PREFILL_BAND_SHARE) / 2
    out = {}
    for p, v in by_path.items():
        own = ratios[p] if len(ratios[p]) >= MIN_OWN_BAND else pooled
        lo, hi = _quantile(own, tail), _quantile(own, 1 - tail)
        out[p] = PrefillEfficiency(path=p, efficiency=medians[p], low=medians[p] * lo, high=medians[p] * hi,
                                   runs=len(v), families=len({f for _, f in v}))
    return out
