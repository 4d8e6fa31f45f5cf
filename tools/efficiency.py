"""Efficiency factors of the speed estimates, each fitted to or justified by a published figure.

Decode (batch 1) is modelled as streaming the bytes a token reads plus a fixed cost per layer:

    t_token = bytes_per_token / (bandwidth · η_stream) + layers · τ_layer

so the *effective* bandwidth efficiency ``η = bytes / (bandwidth · t_token)`` grows with the
bytes a token reads and falls on faster memory: small models on big GPUs are launch- and
latency-bound, big models approach η_stream. ``η_stream`` and ``τ_layer`` are the weighted
least-squares fit (relative error) to llama.cpp's published Llama-3-8B decode speeds on the
RTX 3090 and RTX 4090 in Q4_K_M and F16 (measurements.md row 14): the per-row efficiencies
are 0.56 / 0.59 (Q4_K_M) and 0.75 / 0.81 (F16) — one constant cannot fit both.

Splitting layers over n GPUs (llama.cpp ``--split-mode layer``) runs them one after another,
so it gives no speed-up; each hand-off adds a little. Row 16 (1/2/4/8 × RTX 4090: 127.74 /
122.56 / 117.61 / 116.13 tok/s) fits ``τ_hop · log2(n)``.

Tensor parallelism divides each GPU's bytes but adds two all-reduces per layer; for decode
these messages are tiny, so their cost is the link's latency. Those latencies are engineering
assumptions (order of magnitude of NCCL / vLLM custom all-reduce on each link class), not
fitted values; they are labelled so in every result.
"""

from __future__ import annotations

import math
import statistics
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from knowledge import load_catalog
from knowledge.measurements import TrainingRun, load_training_runs
from knowledge.schema import GPU, FormFactor
from tools.kv_cache import kv_cache_bytes
from tools.modelspec import ModelSpec
from tools.precision import resolve_precision
from tools.result import Note, note
from tools.units import GBps, Seconds, TokensPerS

# Llama-3-8B (Meta-Llama-3-8B config.json): 32 layers, hidden 4096, 8 KV heads × 128, vocab 128256.
_L3_8B = ModelSpec(
    name="Llama-3-8B (calibration)",
    source="custom",
    params=8_030_261_248,
    active_params=8_030_261_248,
    layers=32,
    hidden_size=4096,
    intermediate_size=14336,
    vocab_size=128256,
    max_context=8192,
    attention="gqa",
    num_heads=32,
    num_kv_heads=8,
    head_dim=128,
)
_ROW14 = "measurements.md row 14 (XiongjieDai/GPU-Benchmarks-on-LLM-Inference, llama.cpp, 2024-05)"
_ROW16 = "measurements.md row 16 (same source)"
_ROW14_ALL = "XiongjieDai/GPU-Benchmarks-on-LLM-Inference README (llama.cpp, 2024-05), datacenter rows"
_ROW14_APPLE = "XiongjieDai/GPU-Benchmarks-on-LLM-Inference README (llama.cpp, 2024-05), Apple silicon rows"


MemoryClass = Literal["gddr", "hbm", "unified", "apple"]


def memory_class(gpu: GPU) -> MemoryClass:
    """Which decode fit a GPU uses: unified-memory systems, HBM datacenter parts, or cards with GDDR (the default)."""
    if gpu.vendor == "Apple":  # Metal's kernels, not only the memory, set the pace
        return "apple"
    if gpu.form_factor == FormFactor.system:
        return "unified"
    return "hbm" if gpu.memory_type.upper().startswith("HBM") else "gddr"


class DecodeCalibrationPoint(BaseModel):
    """One published decode speed used to fit the model."""

    model_config = ConfigDict(frozen=True)

    gpu: str
    bandwidth_gbs: GBps  # datasheet GB/s
    model: str = "llama-3-8b"  # catalog id; Llama-3-8B uses the shape written out above
    precision: str
    measured_tokens_per_s: TokensPerS
    mean_context: int  # mean tokens in the cache while generating (tg1024 from an empty cache: 512)
    source: str


def _points(source: str, gpu: str, bandwidth: float, mean_context: int,
            *rows: tuple[str, str, float]) -> tuple[DecodeCalibrationPoint, ...]:
    return tuple(DecodeCalibrationPoint(gpu=gpu, bandwidth_gbs=bandwidth, model=model, precision=precision,
                                        measured_tokens_per_s=tps, mean_context=mean_context, source=source)
                 for model, precision, tps in rows)


_SPARK = "llama.cpp benches/dgx-spark.md (llama-bench tg32, build 6918, 2025-11)"
# One fit per memory class. Discrete GDDR cards: row 14 (RTX 3090 / 4090). HBM datacenter parts run
# llama.cpp at a lower share of their bandwidth; fitted on the A100 PCIe 80GB of the same table (row 14's
# source, Llama-3 8B and 70B). Unified memory: DGX Spark, two dense models. Every other published figure
# (bench/accuracy.py, held-out) checks these fits.
DECODE_CALIBRATION: dict[MemoryClass, tuple[DecodeCalibrationPoint, ...]] = {
    "gddr": (
        *_points(_ROW14, "RTX 3090", 936, 512, ("llama-3-8b", "Q4_K_M", 111.74)),
        *_points(_ROW14, "RTX 4090", 1008, 512, ("llama-3-8b", "Q4_K_M", 127.74)),
        *_points(_ROW14, "RTX 3090", 936, 512, ("llama-3-8b", "F16", 46.51)),
        *_points(_ROW14, "RTX 4090", 1008, 512, ("llama-3-8b", "F16", 54.34)),
    ),
    "hbm": _points(_ROW14_ALL, "A100 PCIe 80GB", 1935, 512, ("llama-3-8b", "Q4_K_M", 138.31),
                   ("llama-3-8b", "F16", 54.56), ("llama-3-70b", "Q4_K_M", 22.11)),
    "unified": _points(_SPARK, "DGX Spark", 273, 16, ("qwen2.5-7b", "Q8_0", 29.30), ("gemma-3-4b", "Q4_0", 78.97)),
    # Apple silicon (Metal): the M2 Ultra rows of the same table; its M1 Max and M3 Max rows are held out (tests)
    "apple": _points(_ROW14_APPLE, "M2 Ultra 76-core", 800, 512, ("llama-3-8b", "Q4_K_M", 76.28),
                     ("llama-3-8b", "F16", 36.25), ("llama-3-70b", "Q4_K_M", 12.13), ("llama-3-70b", "F16", 4.71)),
}
LAYER_SPLIT_CALIBRATION: tuple[tuple[int, float], ...] = ((1, 127.74), (2, 122.56), (4, 117.61), (8, 116.13))

# Band around a decode estimate: in-sample residuals are within ±5 %; newer llama.cpp builds and
# other engines run up to ~15–30 % faster (measurements.md notes), older drivers, busy hosts or
# long contexts slower.
DECODE_RANGE = (0.75, 1.25)

# Compute efficiencies (model FLOPs utilisation) — defaults the user can override.
PREFILL_MFU = 0.5  # prompt processing GEMMs at batch·tokens ≥ 512 on tensor cores
PREFILL_RANGE = (0.6, 1.4)
FP64_EFFICIENCY = {"dense-lu": 0.70, "dense-gemm": 0.85, "grid": 0.80}  # grid: share of bandwidth


class DecodeFit(BaseModel):
    """Fitted decode constants and their in-sample residuals."""

    model_config = ConfigDict(frozen=True)

    kind: MemoryClass
    eta_stream: float
    tau_layer_s: Seconds
    tau_hop_s: Seconds
    residuals: tuple[float, ...]  # measured time / predicted − 1, per calibration point

    def tokens_per_s(self, read_bytes: float, bandwidth_gbs: float, layers: int) -> float:
        """One sequence on one GPU: 1 / (bytes / (bandwidth · η) + layers · τ)."""
        return 1 / (read_bytes / (bandwidth_gbs * 1e9 * self.eta_stream) + layers * self.tau_layer_s)


def weight_read_bytes(spec: ModelSpec, precision: str, *, active: bool = True) -> float:
    """Weight bytes one decoded token reads: (active) weights, minus the untied input embedding.

    The input embedding is a row lookup (one row per token); llama.cpp even keeps it in host
    RAM. A tied embedding is read in full as the output projection. For MoE only the routed
    experts of the token are read (``active``): total − (1 − active/total share) of the experts.
    """
    p = resolve_precision(precision)
    total = float(spec.weight_bytes_at(p.name))
    if active and spec.active_params < spec.params:
        total *= 1 - (spec.params - spec.active_params) / spec.params
    if not spec.tie_word_embeddings:
        if (
            spec.embedding_bytes is not None
            and spec.weight_bytes is not None
            and total
            and (spec.weight_bytes_at(p.name) == spec.weight_bytes)
        ):
            emb = float(spec.embedding_bytes)
        else:
            bits = (p.embedding_bits_per_weight or p.bits_per_weight) if p.quantizes_embeddings else 16.0
            emb = spec.embedding_params * bits / 8
        total -= emb
    return max(total, 0.0)


def calibration_bytes(point: DecodeCalibrationPoint) -> tuple[float, int]:
    """Bytes one measured token read (weights + f16 KV at the mean context) and the model's layer count."""
    from tools.modelspec import load_model_spec

    spec = _L3_8B if point.model == "llama-3-8b" else load_model_spec(point.model)
    kv = kv_cache_bytes(spec, point.mean_context, 1, "fp16", 1)
    return weight_read_bytes(spec, point.precision) + kv, spec.layers


@cache
def decode_fit(kind: MemoryClass = "gddr") -> DecodeFit:
    """The decode constants of a memory class, fitted to its calibration points."""
    return fit_decode(kind, DECODE_CALIBRATION[kind])


def fit_decode(kind: MemoryClass, points: tuple[DecodeCalibrationPoint, ...]) -> DecodeFit:
    """Fit t = x/η + L·τ (x = bytes/bandwidth, L = layers) to ``points``, weights 1/t² (relative error)."""
    xs, ls, ts = [], [], []
    for pt in points:
        read, layers = calibration_bytes(pt)
        xs.append(read / (pt.bandwidth_gbs * 1e9))
        ls.append(float(layers))
        ts.append(1 / pt.measured_tokens_per_s)
    w = [1 / t**2 for t in ts]
    # weighted normal equations of t ≈ a·x + b·L (no intercept): a = 1/η, b = τ
    sxx = sum(wi * x * x for wi, x in zip(w, xs, strict=True))
    sll = sum(wi * n * n for wi, n in zip(w, ls, strict=True))
    sxl = sum(wi * x * n for wi, x, n in zip(w, xs, ls, strict=True))
    sxt = sum(wi * x * t for wi, x, t in zip(w, xs, ts, strict=True))
    slt = sum(wi * n * t for wi, n, t in zip(w, ls, ts, strict=True))
    det = sxx * sll - sxl * sxl
    slope, tau_layer = (sxt * sll - slt * sxl) / det, (sxx * slt - sxl * sxt) / det
    residuals = tuple(t / (x * slope + n * tau_layer) - 1 for x, n, t in zip(xs, ls, ts, strict=True))
    # Layer-split hand-off cost: least squares of Δt(n) = τ_hop·log2(n) against row 16.
    base = 1 / LAYER_SPLIT_CALIBRATION[0][1]
    pairs = [(math.log2(n), 1 / tps - base) for n, tps in LAYER_SPLIT_CALIBRATION[1:]]
    tau_hop = sum(a * d for a, d in pairs) / sum(a * a for a, _ in pairs)
    return DecodeFit(kind=kind, eta_stream=1 / slope, tau_layer_s=tau_layer, tau_hop_s=tau_hop, residuals=residuals)


class LinkModel(BaseModel):
    """How a group of GPUs exchanges activations."""

    model_config = ConfigDict(frozen=True)

    kind: str
    latency_s: Seconds  # one small all-reduce
    bandwidth_bytes_s: float  # one direction, per GPU
    note: Note


_FABRICS = {"nvlink", "infinity-fabric", "hccs", "mlu-link", "mtlink", "metaxlink", "blink"}
PCIE_X16_GBS = {3: 15.75, 4: 31.5, 5: 63.0, 6: 126.0}  # x16, one direction, GB/s, by PCIe generation


def link_model(gpu: GPU, count: int) -> LinkModel:
    """Link class of ``count`` GPUs of one kind: switch fabric, bridge pair, PCIe P2P or via host.

    Latencies are assumptions: ~10 µs for NVLink-class links (NCCL/vLLM custom all-reduce),
    ~25 µs PCIe peer-to-peer, ~50 µs when P2P is unavailable and data bounce through host memory.
    """
    link = gpu.interconnect
    pcie = PCIE_X16_GBS.get(gpu.pcie_gen or 4, 31.5) * 1e9 * (gpu.pcie_lanes or 16) / 16 * 0.8
    if link.kind in _FABRICS and count <= link.max_gpus and link.bandwidth_gbs:
        return LinkModel(
            kind=link.kind,
            latency_s=10e-6,
            bandwidth_bytes_s=link.bandwidth_gbs * 1e9 / 2,
            note=note("perf.link.fabric", kind=link.kind, gbs=link.bandwidth_gbs),
        )
    if link.kind == "nvlink-bridge" and count <= link.max_gpus and link.bandwidth_gbs:
        return LinkModel(
            kind="nvlink-bridge",
            latency_s=10e-6,
            bandwidth_bytes_s=link.bandwidth_gbs * 1e9 / 2,
            note=note("perf.link.bridge", gbs=link.bandwidth_gbs),
        )
    if link.p2p:
        return LinkModel(
            kind="pcie-p2p",
            latency_s=25e-6,
            bandwidth_bytes_s=pcie,
            note=note("perf.link.p2p"),
        )
    return LinkModel(
        kind="pcie-host",
        latency_s=50e-6,
        bandwidth_bytes_s=pcie / 2,
        note=note("perf.link.host"),
    )


def allreduce_time(link: LinkModel, message_bytes: float, ranks: int) -> float:
    """Ring all-reduce: latency + 2·(n−1)/n · message / bandwidth."""
    if ranks <= 1:
        return 0.0
    return link.latency_s + 2 * (ranks - 1) / ranks * message_bytes / link.bandwidth_bytes_s


# --- training utilisation ---------------------------------------------------------------------------------------

MfuClass = Literal["ampere", "hopper"]
FAST_CLASS_TFLOPS = 600  # dense bf16: H100/H200/B200/MI300X and up reach a smaller share of their peak
# The stated range holds this share of the published runs: 0.9 is the smallest share whose band, fitted without a
# publisher, still holds ≥ 80 % of that publisher's runs (bench/accuracy.py, leave one family out).
MFU_BAND_SHARE = 0.9


class TrainingMfu(BaseModel):
    """The MFU a training-time estimate assumes, with the band of the published runs behind it."""

    model_config = ConfigDict(frozen=True)

    mfu: float
    low: float
    high: float
    gpu_class: MfuClass
    runs: int
    families: int


def gpu_class(gpu: GPU) -> MfuClass:
    """A100-class GPUs, or the faster class (dense BF16 ≥ 600 TFLOPS) that reaches a smaller share of its peak."""
    return "hopper" if (gpu.throughput.bf16 or gpu.throughput.fp16 or 0) >= FAST_CLASS_TFLOPS else "ampere"


def run_mfu(run: TrainingRun) -> float:
    """MFU a published run implies: 6·N·D over its GPU-hours at the GPU's dense BF16 peak."""
    gpu = load_catalog().gpu(run.gpu)
    return 6 * run.params * run.tokens / (run.gpu_hours * 3600 * (gpu.throughput.bf16 or 0) * 1e12)


def quantile(values: list[float], q: float) -> float:
    """Linear-interpolated quantile of ``values`` (sorted here)."""
    v = sorted(values)
    pos = q * (len(v) - 1)
    lo = int(pos)
    return v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (pos - lo)


@cache
def training_mfu_fit(leave_out: str | None = None) -> dict[MfuClass, TrainingMfu]:
    """Per GPU class: the median MFU of the published end-to-end runs, and the band holding 90 % of them.

    Whole runs include restarts, stalls, evaluation and checkpointing, so they sit well below benchmark MFU
    (LLM Foundry's 8–128-GPU benchmarks: ~0.52 on A100, ~0.41 on H100). The band is the 5th–95th percentile of
    every run's MFU over its own class's median, both classes pooled. ``leave_out`` drops one family of runs
    (the accuracy bench predicts each family from the others).
    """
    runs = [r for r in load_training_runs() if r.use and r.family != leave_out]
    by_class: dict[MfuClass, list[tuple[float, str]]] = {"ampere": [], "hopper": []}
    for r in runs:
        by_class[gpu_class(load_catalog().gpu(r.gpu))].append((run_mfu(r), r.family))
    medians = {k: statistics.median(m for m, _ in v) for k, v in by_class.items()}
    ratios = [m / medians[k] for k, v in by_class.items() for m, _ in v]
    tail = (1 - MFU_BAND_SHARE) / 2
    lo, hi = quantile(ratios, tail), quantile(ratios, 1 - tail)
    return {k: TrainingMfu(mfu=medians[k], low=medians[k] * lo, high=medians[k] * hi, gpu_class=k, runs=len(v),
                           families=len({f for _, f in v})) for k, v in by_class.items()}


def training_mfu(gpu: GPU, leave_out: str | None = None) -> TrainingMfu:
    """The MFU of published end-to-end runs on this class of GPU (model size shows no steady trend in them)."""
    return training_mfu_fit(leave_out)[gpu_class(gpu)]
