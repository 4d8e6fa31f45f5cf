"""Different cards used together: llama.cpp splits a model's layers over every GPU it sees, in proportion to
their memory, so two unlike cards ('2080 Ti 11GB + 1080 Ti 11GB', '4080 + 3090') hold what their memory holds
together and generate at the pace of the bytes each must stream.

:func:`pooled_fit` sizes the model once (llama.cpp accounting, one GPU), adds each further card's own compute
buffer and overhead, compares with the sum of the memory the engine sees on each card, and times a token as the
sum over cards of (its share of the weights ÷ its bandwidth × the calibrated streaming efficiency), plus the
per-layer cost and the hand-off between cards (:func:`tools.efficiency.decode_fit`).
"""

from __future__ import annotations

import math

from pydantic import BaseModel, ConfigDict, Field

from knowledge import load_catalog
from tools.compat_rules.types import GPUCount
from tools.efficiency import decode_fit, memory_class, weight_read_bytes
from tools.gpu_memory import engine_visible_bytes
from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory
from tools.inputs import ToolInput
from tools.modelspec import load_model_spec
from tools.result import Note, note
from tools.units import Bytes

MAX_CARDS = 8


class PooledInput(ToolInput):
    """A model to run on a set of different cards in one machine."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1, description="catalog model")
    precision: str = Field("Q4_K_M", description="GGUF quant or a precision llama.cpp runs (F16, Q8_0 …)")
    context: int = Field(8192, ge=1, le=1_048_576, description="tokens per sequence")
    cards: list[GPUCount] = Field(min_length=1, max_length=MAX_CARDS, description="the cards, each with a count")


class PooledCard(BaseModel):
    model_config = ConfigDict(extra="forbid")

    gpu: str
    name: str
    usable_bytes: Bytes = Field(description="what llama.cpp sees on this card")
    share: float = Field(description="share of the layers this card holds (by its memory)")
    bandwidth_gbs: float


class PooledResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    precision: str
    cards: list[PooledCard]
    need_bytes: Bytes = Field(description="weights + KV cache + compute buffers + one overhead per card")
    usable_bytes: Bytes = Field(description="all cards together")
    fits: bool
    headroom_bytes: int
    tokens_per_s: float = Field(description="one sequence, all layers on the GPUs (meaningful when it fits)")
    slowest: str = Field(description="the card whose share takes longest per token")
    formula: list[Note]
    assumptions: list[Note]


def pooled_fit(inp: PooledInput) -> PooledResult:
    """Whether the model fits the cards together (llama.cpp layer split) and its decode speed there."""
    catalog = load_catalog()
    devices = [catalog.gpu(c.gpu) for c in inp.cards for _ in range(c.count)]
    spec = load_model_spec(inp.model)
    one = estimate_inference_memory(InferenceMemoryInput(model=inp.model, precision=inp.precision,
                                                         context=inp.context, gpus=1, engine="llamacpp"))
    b = one.breakdown
    need = b.weights + b.kv_cache + b.activations + b.overhead * len(devices)
    usable = [engine_visible_bytes(g)[0] for g in devices]
    total = sum(usable)
    shares = [u / total for u in usable]
    read = weight_read_bytes(spec, inp.precision)
    per_card = [share * read / (g.bandwidth_gbs * 1e9 * decode_fit(memory_class(g)).eta_stream)
                for share, g in zip(shares, devices, strict=True)]
    fit = decode_fit(memory_class(devices[0]))
    seconds = sum(per_card) + spec.layers * fit.tau_layer_s + fit.tau_hop_s * math.log2(len(devices))
    slowest = devices[per_card.index(max(per_card))]
    return PooledResult(
        model=spec.name, precision=one.precision,
        cards=[PooledCard(gpu=g.id, name=g.name, usable_bytes=u, share=round(s, 4), bandwidth_gbs=g.bandwidth_gbs)
               for g, u, s in zip(devices, usable, shares, strict=True)],
        need_bytes=need, usable_bytes=total, fits=need <= total, headroom_bytes=total - need,
        tokens_per_s=round(1 / seconds, 1), slowest=slowest.name,
        formula=[note("pooled.formula.need", cards=len(devices)), note("pooled.formula.split"),
                 note("pooled.formula.speed")],
        assumptions=[note("pooled.assume.engine"), note("pooled.assume.same_machine")])
