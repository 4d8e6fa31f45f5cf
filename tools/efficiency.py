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
from functools import cache

from pydantic import BaseModel, ConfigDict

from knowledge.schema import GPU
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


class DecodeCalibrationPoint(BaseModel):
    """One published decode speed used to fit the model."""

    model_config = ConfigDict(frozen=True)

    gpu: str
    bandwidth_gbs: GBps  # datasheet GB/s
    precision: str
    measured_tokens_per_s: TokensPerS
    gen_tokens: int  # tokens generated in the benchmark (tg1024 from an empty cache)
    source: str


DECODE_CALIBRATION: tuple[DecodeCalibrationPoint, ...] = (
    DecodeCalibrationPoint(
        gpu="RTX 3090",
        bandwidth_gbs=936,
        precision="Q4_K_M",
        measured_tokens_per_s=111.74,
        gen_tokens=1024,
        source=_ROW14,
    ),
    DecodeCalibrationPoint(
        gpu="RTX 4090",
        bandwidth_gbs=1008,
        precision="Q4_K_M",
        measured_tokens_per_s=127.74,
        gen_tokens=1024,
        source=_ROW14,
    ),
    DecodeCalibrationPoint(
        gpu="RTX 3090",
        bandwidth_gbs=936,
        precision="F16",
        measured_tokens_per_s=46.51,
        gen_tokens=1024,
        source=_ROW14,
    ),
    DecodeCalibrationPoint(
        gpu="RTX 4090",
        bandwidth_gbs=1008,
        precision="F16",
        measured_tokens_per_s=54.34,
        gen_tokens=1024,
        source=_ROW14,
    ),
)
LAYER_SPLIT_CALIBRATION: tuple[tuple[int, float], ...] = ((1, 127.74), (2, 122.56), (4, 117.61), (8, 116.13))

# Band around a decode estimate: in-sample residuals are within ±5 %; newer llama.cpp builds and
# other engines run up to ~15–30 % faster (measurements.md notes), older drivers, busy hosts or
# long contexts slower.
DECODE_RANGE = (0.75, 1.25)

# Compute efficiencies (model FLOPs utilisation) — defaults the user can override.
PREFILL_MFU = 0.5  # prompt processing GEMMs at batch·tokens ≥ 512 on tensor cores
PREFILL_RANGE = (0.6, 1.4)
TRAINING_MFU = 0.40  # conservative; the LLaMA runs on 2048 A100 imply 0.43–0.51 (row 22)
FP64_EFFICIENCY = {"dense-lu": 0.70, "dense-gemm": 0.85, "grid": 0.80}  # grid: share of bandwidth


class DecodeFit(BaseModel):
    """Fitted decode constants and their in-sample residuals."""

    model_config = ConfigDict(frozen=True)

    eta_stream: float
    tau_layer_s: Seconds
    tau_hop_s: Seconds
    residuals: tuple[float, ...]  # predicted / measured − 1, per DECODE_CALIBRATION row


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


def _calibration_bytes(point: DecodeCalibrationPoint) -> float:
    kv_per_token = 2 * _L3_8B.layers * _L3_8B.num_kv_heads * _L3_8B.head_dim * 2  # f16 cache
    mean_context = point.gen_tokens / 2
    return weight_read_bytes(_L3_8B, point.precision) + kv_per_token * mean_context


@cache
def decode_fit() -> DecodeFit:
    """Fit t = x/η + L·τ (x = bytes/bandwidth) to DECODE_CALIBRATION, weights 1/t (relative error)."""
    xs, ts = [], []
    for pt in DECODE_CALIBRATION:
        xs.append(_calibration_bytes(pt) / (pt.bandwidth_gbs * 1e9))
        ts.append(1 / pt.measured_tokens_per_s)
    w = [1 / t**2 for t in ts]
    sw = sum(w)
    mx = sum(wi * x for wi, x in zip(w, xs, strict=True)) / sw
    mt = sum(wi * t for wi, t in zip(w, ts, strict=True)) / sw
    sxx = sum(wi * (x - mx) ** 2 for wi, x in zip(w, xs, strict=True))
    sxt = sum(wi * (x - mx) * (t - mt) for wi, x, t in zip(w, xs, ts, strict=True))
    slope = sxt / sxx
    fixed = mt - slope * mx
    eta, tau_layer = 1 / slope, fixed / _L3_8B.layers
    residuals = tuple((t / (x / eta + fixed)) - 1 for x, t in zip(xs, ts, strict=True))
    # Layer-split hand-off cost: least squares of Δt(n) = τ_hop·log2(n) against row 16.
    base = 1 / LAYER_SPLIT_CALIBRATION[0][1]
    pairs = [(math.log2(n), 1 / tps - base) for n, tps in LAYER_SPLIT_CALIBRATION[1:]]
    tau_hop = sum(a * d for a, d in pairs) / sum(a * a for a, _ in pairs)
    return DecodeFit(eta_stream=eta, tau_layer_s=tau_layer, tau_hop_s=tau_hop, residuals=residuals)


class LinkModel(BaseModel):
    """How a group of GPUs exchanges activations."""

    model_config = ConfigDict(frozen=True)

    kind: str
    latency_s: Seconds  # one small all-reduce
    bandwidth_bytes_s: float  # one direction, per GPU
    note: Note


_FABRICS = {"nvlink", "infinity-fabric", "hccs", "mlu-link", "mtlink", "metaxlink", "blink"}
_PCIE_GBS = {3: 15.75, 4: 31.5, 5: 63.0, 6: 126.0}  # x16, one direction, GB/s


def link_model(gpu: GPU, count: int) -> LinkModel:
    """Link class of ``count`` GPUs of one kind: switch fabric, bridge pair, PCIe P2P or via host.

    Latencies are assumptions: ~10 µs for NVLink-class links (NCCL/vLLM custom all-reduce),
    ~25 µs PCIe peer-to-peer, ~50 µs when P2P is unavailable and data bounce through host memory.
    """
    link = gpu.interconnect
    pcie = _PCIE_GBS.get(gpu.pcie_gen or 4, 31.5) * 1e9 * (gpu.pcie_lanes or 16) / 16 * 0.8
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
