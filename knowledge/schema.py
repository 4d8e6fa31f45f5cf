"""Typed schemas of the catalogs: GPUs, models and CPU platforms.

Every entry carries its sources, an as-of date and a confidence grade. The prose about an entry (notes,
price and link notes, a platform's lane layout) is not here: it is messages in each language, read
through :mod:`knowledge.catalog_text`.
Throughput figures are always *dense* (no structured-sparsity doubling);
``None`` means "unknown" unless the precision is listed in
``GPU.unsupported``, in which case the hardware has no such path at all.
"""

from __future__ import annotations

import datetime as dt
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from knowledge.names import Vendor

Confidence = Literal["H", "M", "L"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Tier(StrEnum):
    """Market tier, following the source guide's three groups."""

    datacenter = "datacenter"
    workstation = "workstation"
    consumer = "consumer"


class FormFactor(StrEnum):
    pcie = "pcie"
    sxm = "sxm"
    oam = "oam"
    module = "module"  # other vendor modules (Ascend mezzanine, superchip boards)
    system = "system"  # a complete computer whose GPU shares the unified memory (DGX Spark, Strix Halo)


class Cooling(StrEnum):
    passive = "passive"  # no fan: needs server chassis airflow
    blower = "blower"  # exhausts out of the case, safe to stack
    open_air = "open-air"  # axial fans / flow-through, needs spacing
    liquid = "liquid"


class Precision(StrEnum):
    """Tensor-throughput precisions tracked per GPU."""

    fp64 = "fp64"
    fp32 = "fp32"
    tf32 = "tf32"
    bf16 = "bf16"
    fp16 = "fp16"
    fp8 = "fp8"
    int8 = "int8"
    fp4 = "fp4"


class Throughput(_Strict):
    """Dense peak throughput in TFLOPS (TOPS for int8). ``None`` = unknown or unsupported.

    ``fp64``/``fp32`` are the best the chip reaches (tensor/matrix FP64 where it exists);
    ``bf16``/``fp16`` are dense tensor figures with FP32 accumulate on GeForce parts.
    """

    fp64: float | None = Field(None, ge=0)
    fp64_vector: float | None = Field(None, ge=0, description="FP64 on the vector units when tensor/matrix FP64 "
                                                              "is faster (A100, H100, MI300); None: same as fp64")
    fp32: float | None = Field(None, ge=0)
    tf32: float | None = Field(None, ge=0)
    bf16: float | None = Field(None, ge=0)
    fp16: float | None = Field(None, ge=0)
    fp8: float | None = Field(None, ge=0)
    int8: float | None = Field(None, ge=0)
    fp4: float | None = Field(None, ge=0)

    def get(self, precision: Precision | str) -> float | None:
        return getattr(self, str(Precision(precision)))


class Interconnect(_Strict):
    """Multi-GPU link of one GPU."""

    kind: Literal[
        "nvlink", "nvlink-bridge", "infinity-fabric", "hccs", "mlu-link", "mtlink",
        "metaxlink", "blink", "ethernet", "pcie", "none",
    ]
    bandwidth_gbs: float = Field(0, ge=0, description="bidirectional GB/s per GPU (1 GB = 1e9 B)")
    max_gpus: int = Field(1, ge=1, description="largest group joined by the link (8 for a switch node)")
    p2p: bool | None = Field(None, description="PCIe/link peer-to-peer usable by NCCL-class libraries")


PriceKind = Literal["list", "street", "used", "channel-cn", "derived", "rental"]


class Price(_Strict):
    """What a card costs. ``kind``: how the purchase price was found — a list price or MSRP, a street price, a
    used-market price, a China channel price, one derived from other figures, or ``rental`` when only a rental
    rate is known; ``cny_kind`` when the yuan price is of another kind than the dollar one (a China channel
    price beside a US list price). What the figures rest on is the message ``catalog_text.gpu_price.<id>``."""

    usd: float | None = Field(None, gt=0)
    cny: float | None = Field(None, gt=0)
    rental_usd_per_hour: float | None = Field(None, gt=0)
    kind: PriceKind
    cny_kind: PriceKind | None = None
    confidence: Confidence = "M"
    as_of: dt.date
    sources: list[str] = Field(default_factory=list)


class DecodeMeasurement(_Strict):
    """A decode speed its owner measured on this GPU (one GPU, one request), used to calibrate predictions."""

    model: str
    precision: str
    tokens_per_s: float = Field(gt=0, le=100_000, allow_inf_nan=False)
    source: str


class GPU(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    name: str
    vendor: Vendor
    tier: Tier
    domestic: bool = Field(False, description="Chinese-designed accelerator (信创 candidates)")
    china_market: bool = Field(False, description="export-control variant sold in China (H20, H800, 4090 D …)")
    china_version_of: str | None = Field(None, description="the global card this China variant stands in for")
    architecture: str
    compute_capability: str | None = Field(None, pattern=r"^\d+\.\d+$")
    isa_target: str | None = Field(None, description="e.g. gfx942 for AMD")
    memory_gb: float = Field(
        gt=0, description="vendor-labelled capacity; GPU vendors' 'GB' of DRAM/HBM is binary (GiB, 2**30 B)"
    )
    memory_type: str
    bandwidth_gbs: float = Field(gt=0, description="memory bandwidth in GB/s (1e9 B/s)")
    ecc: bool | None
    throughput: Throughput
    sparse_throughput: Throughput | None = Field(
        None, description="vendor 2:4-sparsity marketing figures, kept apart from the dense ones"
    )
    unsupported: list[Precision] = Field(
        default_factory=list, description="precisions with no hardware path (distinguishes absent from unknown)"
    )
    tdp_w: float = Field(gt=0, description="board power / TBP in W")
    form_factor: FormFactor
    slot_width: float | None = Field(None, gt=0, description="PCIe slots occupied; None for modules")
    length_mm: float | None = Field(None, gt=0)
    cooling: Cooling
    display_outputs: int = Field(ge=0)
    power_connectors: list[str] = Field(default_factory=list)
    pcie_gen: int | None = Field(None, ge=3, le=6)
    pcie_lanes: int | None = Field(None, ge=1, le=16)
    interconnect: Interconnect
    software: list[str] = Field(min_length=1)
    inference_only: bool = Field(False, description="sold and supported for inference only: its software stack "
                                                    "does not train (Ascend 310P)")
    mig: bool = False
    devices: int = Field(1, ge=1, le=8, description="devices the runtime shows per package: a dual-die Ascend 910C "
                                                    "or MI250X is two, each with its share of memory, bandwidth "
                                                    "and compute; sizing is per device")
    gpu_assignable_gb: float | None = Field(
        None, gt=0, description="unified-memory systems: the part of the shared memory the GPU can be given (the "
                                "OS and page cache keep the rest); None for cards with their own memory")
    price: Price | None = None
    measured_decode: tuple[DecodeMeasurement, ...] = Field(
        (), description="the user's own measurements (GPU_ADVISOR_GPUS): decode predictions are scaled to them")
    measured_training_mfu: float | None = Field(
        None, gt=0, le=0.8, allow_inf_nan=False,
        description="the user's own training MFU on this GPU (GPU_ADVISOR_GPUS): training-time estimates use it")
    aliases: list[str] = Field(default_factory=list)
    sources: list[str] = Field(min_length=1)
    as_of: dt.date
    confidence: Confidence

    @model_validator(mode="after")
    def _system_fields(self) -> GPU:
        if (self.form_factor == FormFactor.system) != (self.gpu_assignable_gb is not None):
            raise ValueError(f"{self.id}: a unified-memory system (form_factor 'system') and only one gives "
                             "gpu_assignable_gb")
        return self

    @model_validator(mode="after")
    def _unsupported_has_no_value(self) -> GPU:
        for p in self.unsupported:
            if self.throughput.get(p) is not None:
                raise ValueError(f"{self.id}: {p} listed as unsupported but has a throughput value")
        return self

    def supports(self, precision: Precision | str) -> bool | None:
        """True/False when known; None when the catalog has no figure and no 'unsupported' mark."""
        p = Precision(precision)
        if p in self.unsupported:
            return False
        return True if self.throughput.get(p) is not None else None

    @property
    def memory_bytes(self) -> int:
        """Physical memory in bytes: an '80 GB' H100 holds 80 GiB (nvidia-smi: 81,559 MiB)."""
        return round(self.memory_gb * 2**30)

    @property
    def on_baseboard(self) -> bool:
        """Sold only on multi-GPU baseboards (SXM, OAM, modules), never as a card for a PCIe slot."""
        return self.form_factor.value in ("sxm", "oam", "module")


class AttentionKind(StrEnum):
    mha = "mha"
    gqa = "gqa"
    mqa = "mqa"
    mla = "mla"
    sliding = "sliding"  # interleaved sliding-window + global layers (Gemma 2/3, gpt-oss)
    hybrid = "hybrid"  # attention layers mixed with linear-attention / SSM layers
    none = "none"  # not a transformer LLM (diffusion UNet, …)


class Attention(_Strict):
    kind: AttentionKind
    num_heads: int = Field(ge=1)
    num_kv_heads: int = Field(ge=1)
    head_dim: int = Field(ge=1)
    v_head_dim: int | None = Field(None, ge=1, description="when V heads differ from K heads")
    kv_lora_rank: int | None = Field(None, ge=1, description="MLA latent width")
    qk_rope_head_dim: int | None = Field(None, ge=1, description="MLA decoupled RoPE width")
    sliding_window: int | None = Field(None, ge=1)
    full_attention_layers: int | None = Field(
        None, ge=0, description="layers with full (global) attention; the rest are sliding or linear"
    )
    linear_state_bytes_per_seq: int | None = Field(
        None, ge=0, description="constant recurrent state per sequence for linear/SSM layers (bf16)"
    )
    indexer_head_dim: int | None = Field(
        None,
        ge=1,
        description="DSA (DeepSeek-V3.2, GLM-5): width of the lightning-indexer key cached per token and layer "
        "beside the MLA latent, stored as FP8 with one fp32 scale per 128 values (config index_head_dim)",
    )
    global_head_dim: int | None = Field(
        None,
        ge=1,
        description="sliding-window models whose full-attention (global) layers use their own head size "
        "(Gemma 4: config global_head_dim 512 beside head_dim 256); None: the same as head_dim",
    )
    global_num_kv_heads: int | None = Field(
        None,
        ge=1,
        description="KV heads of those global layers (Gemma 4: config num_global_key_value_heads); None: the same "
        "as num_kv_heads. Their keys double as values (attention_k_eq_v), but only in the weights: the engines "
        "still cache a K and a V tensor per layer",
    )

    @model_validator(mode="after")
    def _check_kind(self) -> Attention:
        if self.num_heads % self.num_kv_heads:
            raise ValueError("num_heads must be a multiple of num_kv_heads")
        if self.kind == AttentionKind.mla and not (self.kv_lora_rank and self.qk_rope_head_dim):
            raise ValueError("MLA needs kv_lora_rank and qk_rope_head_dim")
        if self.kind == AttentionKind.sliding and not (self.sliding_window and self.full_attention_layers is not None):
            raise ValueError("sliding attention needs sliding_window and full_attention_layers")
        if self.kind == AttentionKind.hybrid and self.full_attention_layers is None:
            raise ValueError("hybrid attention needs full_attention_layers")
        if self.indexer_head_dim is not None and self.kind != AttentionKind.mla:
            raise ValueError("indexer_head_dim (DSA) is only modelled on top of MLA")
        if (self.global_head_dim or self.global_num_kv_heads) and self.kind != AttentionKind.sliding:
            raise ValueError("global_head_dim / global_num_kv_heads need sliding attention (the global layers' shape)")
        if self.global_num_kv_heads and self.num_heads % self.global_num_kv_heads:
            raise ValueError("num_heads must be a multiple of global_num_kv_heads")
        return self


class MoE(_Strict):
    num_experts: int = Field(ge=2)
    experts_per_token: int = Field(ge=1)
    shared_experts: int = Field(0, ge=0)


class Model(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]*$")
    name: str
    family: str
    kind: Literal["llm", "vlm", "diffusion", "asr", "embedding"]
    params_b: float = Field(gt=0, description="total parameters, billions")
    active_params_b: float | None = Field(None, gt=0, description="parameters used per token (MoE)")
    layers: int = Field(ge=1)
    hidden_size: int = Field(ge=1)
    intermediate_size: int | None = Field(None, ge=1)
    vocab_size: int = Field(ge=1)
    max_context: int = Field(ge=1)
    native_dtype: Literal["fp32", "bf16", "fp16", "fp8", "mxfp4", "int4"] = Field(
        "bf16",
        description="precision of the published weights; mxfp4 = MX FP4 experts, bf16 rest (gpt-oss); "
        "int4 = 4-bit integer routed experts in groups of 32 with a bf16 scale, bf16 rest (Kimi K2-Thinking, "
        "K2.5, K2.6)",
    )
    attention: Attention
    moe: MoE | None = None
    tie_word_embeddings: bool = False
    hf_repo: str | None = None
    license: str | None = None
    aliases: list[str] = Field(default_factory=list)
    sources: list[str] = Field(min_length=1)
    as_of: dt.date

    @model_validator(mode="after")
    def _check(self) -> Model:
        if self.active_params_b is not None and self.active_params_b > self.params_b:
            raise ValueError("active_params_b cannot exceed params_b")
        if self.moe is not None and self.moe.experts_per_token > self.moe.num_experts:
            raise ValueError("experts_per_token cannot exceed num_experts")
        fl = self.attention.full_attention_layers
        if fl is not None and fl > self.layers:
            raise ValueError("full_attention_layers cannot exceed layers")
        return self

    @property
    def active_b(self) -> float:
        """Parameters that drive per-token compute and bandwidth (billions)."""
        return self.active_params_b or self.params_b

    @property
    def is_moe(self) -> bool:
        return self.moe is not None


class Platform(_Strict):
    """A CPU platform: what it offers the GPUs (lanes, memory, power)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    name: str
    vendor: Literal["Intel", "AMD", "Ampere", "Huawei", "Hygon", "Phytium"]
    segment: Literal["desktop", "hedt", "workstation", "server"]
    socket: str
    sockets: int = Field(1, ge=1, le=8, description="CPU sockets in the typical platform")
    pcie_gen: int = Field(ge=3, le=6)
    cpu_pcie_lanes: int = Field(ge=8, description="CPU lanes usable by slots and NVMe, whole platform")
    gpu_slot_lanes: int = Field(ge=8, description="lanes wired to x16-class slots on typical boards")
    max_cores: int = Field(ge=2, description="cores of the largest CPU, per socket")
    memory_channels: int = Field(ge=1, description="per socket")
    memory_type: str
    max_memory_gb: int = Field(ge=8)
    typical_cpu_power_w: float = Field(gt=0, description="sustained package power (PL2/PPT) per socket")
    domestic: bool = False
    aliases: list[str] = Field(default_factory=list)
    sources: list[str] = Field(min_length=1)
    as_of: dt.date
    confidence: Confidence = "M"

    @field_validator("gpu_slot_lanes")
    @classmethod
    def _slots_le_lanes(cls, v: int, info) -> int:
        total = info.data.get("cpu_pcie_lanes")
        if total is not None and v > total:
            raise ValueError("gpu_slot_lanes cannot exceed cpu_pcie_lanes")
        return v
