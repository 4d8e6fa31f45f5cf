"""Inference memory per GPU, engine by engine: weights, KV cache, activations, overhead.

Engines account differently, and the result says which accounting it follows:

* **vLLM** reserves ``total × gpu_memory_utilization`` up front, subtracts the weights, the
  activation peak of a profile run at ``max_num_batched_tokens`` and non-torch memory, and
  turns the rest into 16-token KV blocks (``vllm/v1/worker/gpu_worker.py``).
* **llama.cpp** allocates the weights (token embeddings stay in host RAM), one KV ring of
  ``n_ctx`` cells shared by all parallel slots, and a compute buffer reserved at
  ``n_ubatch``; layers that do not fit are left in system RAM (``-ngl``).
* **transformers** (and anything generic) holds weights + KV + the prefill activations, plus
  the CUDA context.

Multi-GPU results are per GPU (the largest one), never a pooled sum.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from knowledge import load_catalog
from knowledge.messages import has
from knowledge.schema import GPU, FormFactor
from tools.devices import device_view
from tools.engines import EngineName, InferenceEngine, get_engine
from tools.engines.base import Activations
from tools.errors import ToolError
from tools.gguf_mix import gguf_file_bytes
from tools.gpu_memory import engine_visible_bytes, inline_ecc_on
from tools.inputs import ToolInput
from tools.kv_cache import (
    KVLayout,
    kv_bytes,
    kv_bytes_per_token,
    kv_formula,
    kv_layout,
)
from tools.modelspec import SPEC_LIMITS, ModelSpec, PerSpecCache, check_tensor_parallel, load_model_spec
from tools.precision import PrecisionSpec, resolve_kv_dtype, resolve_precision
from tools.result import MemoryBreakdown, Note, Term, note
from tools.units import Bytes, GiB, MiB, Tokens

# --- calibrated constants (the engines' own live in tools.engines) -----------------------------
MAX_CONTEXT_SEARCH = 1 << 24


class InferenceMemoryInput(ToolInput):
    """What the user wants to run. ``context`` is per sequence and must be given explicitly."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(None, description="catalog name, or path to a .gguf / config.json / folder")
    spec: ModelSpec | None = Field(None, description="an already-built spec (custom models)")
    params_b: float | None = Field(
        None, gt=0, le=SPEC_LIMITS["params"] / 1e9, allow_inf_nan=False, description="custom model size in billions"
    )
    layers: int | None = Field(None, ge=1, le=SPEC_LIMITS["layers"])
    hidden_size: int | None = Field(None, ge=1, le=SPEC_LIMITS["hidden_size"])
    num_heads: int | None = Field(None, ge=1, le=SPEC_LIMITS["num_heads"])
    num_kv_heads: int | None = Field(None, ge=1, le=SPEC_LIMITS["num_kv_heads"])
    head_dim: int | None = Field(None, ge=1, le=SPEC_LIMITS["head_dim"])
    vocab_size: int | None = Field(None, ge=1, le=SPEC_LIMITS["vocab_size"])
    precision: str | None = Field(None, description="weight precision; default: the files' own or native dtype")
    kv_dtype: str | None = Field(None, description="KV-cache dtype; default fp16 (bf16 for bf16 models on vLLM)")
    context: int = Field(ge=1, le=MAX_CONTEXT_SEARCH, description="tokens per sequence (prompt + output)")
    batch: int = Field(1, ge=1, le=1_000_000, description="concurrent sequences")
    gpus: int = Field(1, ge=1, le=4096)
    parallel: Literal["tp", "pp"] | None = Field(None, description="default: tp for vLLM, layer split otherwise")
    # one stage per node: up to all 4096 GPUs at 8 per node (a 1,024-card plan is 128 stages)
    pipeline_stages: int = Field(1, ge=1, le=512, description="tensor parallel only: the layers split into this many "
                                                           "stages (nodes), tensor parallel inside each over "
                                                           "gpus / stages GPUs — how vLLM runs across nodes")
    gpu: str | None = Field(None, description="catalog GPU name for the fit check")
    gpu_memory_bytes: int | None = Field(
        None, gt=0, le=10 * 2**40, description="override: total bytes the engine sees on each GPU"
    )
    engine: EngineName = "vllm"
    mem_fraction_static: float | None = Field(None, gt=0, lt=1, allow_inf_nan=False,
                                              description="SGLang's static pool; default: SGLang's own rule")
    gpu_memory_utilization: float = Field(0.92, gt=0, le=1.0, allow_inf_nan=False)
    max_num_batched_tokens: int = Field(8192, ge=1, le=10_000_000)
    max_num_seqs: int = Field(256, ge=1, le=100_000)
    profile_logits_all_tokens: bool = Field(
        False, description="vLLM 0.7-era V1 profile: LM head over every profiled token (row 8's log)"
    )
    n_ubatch: int = Field(512, ge=1, le=1_000_000)
    n_gpu_layers: int | None = Field(None, ge=0, le=100_000)
    flash_attention: bool = Field(True, description="llama.cpp -fa (auto = on for CUDA in current builds)")

    @model_validator(mode="after")
    def _one_model(self) -> InferenceMemoryInput:
        if (self.model is not None) + (self.spec is not None) + (self.params_b is not None) != 1:
            raise ToolError(note("error.inference.one_model"))
        if self.gpus % self.pipeline_stages:
            raise ToolError(note("error.inference.stages_divide", gpus=self.gpus, stages=self.pipeline_stages))
        return self


class InferenceMemoryResult(BaseModel):
    """Memory of one inference configuration, per GPU, with its formula and assumptions."""

    model_config = ConfigDict(extra="forbid")

    model: str
    engine: EngineName
    precision: str
    kv_dtype: str
    context: Tokens = Field(description="tokens per sequence")
    batch: int
    gpus: int
    parallel: Literal["tp", "pp"]
    params: int
    active_params: int
    weights_total_bytes: Bytes = Field(description="the whole model's weights (all GPUs together)")
    kv_bytes_per_token: Bytes = Field(description="per GPU, all attention layers")
    total_bytes: Bytes = Field(description="sum of the per-GPU figures (replicated overhead counted per GPU)")
    per_gpu_bytes: Bytes = Field(description="largest GPU's need")
    breakdown: MemoryBreakdown = Field(description="largest GPU")
    cpu_bytes: Bytes = Field(0, description="host RAM for tensors kept off the GPU (llama.cpp)")
    terms: list[Term]
    assumptions: list[Note]
    warnings: list[Note]
    gpu: str | None = None
    gpu_memory_bytes: Bytes | None = Field(None, description="per GPU, as the engine sees it")
    fits: bool | None = None
    headroom_bytes: Bytes | None = Field(None, description="per GPU; negative when short")
    reserved_bytes: Bytes | None = Field(None, description="vLLM: total × gpu_memory_utilization per GPU")
    kv_budget_bytes: Bytes | None = Field(
        None,
        description="per GPU bytes left for KV cache; negative when weights and activations alone do not fit",
    )
    kv_capacity_tokens: Tokens | None = None
    kv_blocks: int | None = None
    max_concurrency: float | None = Field(None, description="sequences of `context` tokens that fit")
    max_context_tokens: Tokens | None = Field(None, description="longest context that fits at `batch` sequences")
    gpu_layers: int | None = None
    offload_layers: int | None = None
    all_layers_bytes: Bytes | None = Field(None, description="llama.cpp when VRAM is short: the per-GPU need with "
                                                             "every layer on the GPU (per_gpu_bytes and the "
                                                             "breakdown then describe the offloaded split)")


# --- weights ---------------------------------------------------------------------------------


# Internal intermediates are plain dataclasses: they are built from validated inputs, many times
# per estimate, and never leave this module (the result is a validated pydantic model).
@dataclass(frozen=True, slots=True)
class _Weights:
    total: int
    embedding: int
    output: int
    prefix: tuple[int, ...]  # prefix[i] = bytes of the first i layers

    @classmethod
    def of(cls, total: int, embedding: int, output: int, layers: tuple[int, ...]) -> _Weights:
        return cls(total, embedding, output, tuple(itertools.accumulate(layers, initial=0)))

    def layer_bytes(self, layers: range) -> int:
        """Bytes of a contiguous range of layers."""
        return self.prefix[layers.stop] - self.prefix[layers.start] if layers else 0


_WEIGHT_PARTS: PerSpecCache[_Weights] = PerSpecCache()


def _weight_parts(spec: ModelSpec, prec: PrecisionSpec) -> _Weights:
    """Split the weights into token embedding, output head and per-layer bytes (once per spec object)."""
    return _WEIGHT_PARTS.get(spec, prec.name, lambda: _split_weights(spec, prec))


def _split_weights(spec: ModelSpec, prec: PrecisionSpec) -> _Weights:
    total = spec.weight_bytes_at(prec.name)
    exact = spec.weight_bytes is not None and total == spec.weight_bytes
    if exact and spec.embedding_bytes is not None and spec.layer_bytes:
        # Everything outside the blocks and token_embd (output head, final norm, rope tables) sits with
        # the head; a tied head is duplicated onto the GPU by llama.cpp.
        rest = total - spec.embedding_bytes - sum(spec.layer_bytes)
        out = rest if spec.output_bytes is not None else rest + spec.embedding_bytes
        return _Weights.of(total, spec.embedding_bytes, out, spec.layer_bytes)
    emb_bits = 16.0 if not prec.quantizes_embeddings else (prec.embedding_bits_per_weight or prec.bits_per_weight)
    embedding = round(spec.embedding_params * emb_bits / 8)
    # llama.cpp keeps output.weight at Q6_K or better in its mixes
    out_bits = max(prec.base_bits_per_weight, 6.5625) if prec.family == "gguf" else emb_bits
    output = embedding if spec.tie_word_embeddings else round(spec.embedding_params * out_bits / 8)
    body = max(0, total - embedding - (0 if spec.tie_word_embeddings else output))
    per_layer = body // spec.layers
    return _Weights.of(total, embedding, output, (per_layer,) * spec.layers)


def _stages(n_layers: int, parts: int) -> list[range]:
    """Contiguous layer ranges, as equal as possible (first stages take the remainder)."""
    base, extra = divmod(n_layers, parts)
    out, start = [], 0
    for i in range(parts):
        size = base + (1 if i < extra else 0)
        out.append(range(start, start + size))
        start += size
    return out


# --- the estimate ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Config:
    spec: ModelSpec
    prec: PrecisionSpec
    kv_dtype: str
    parallel: Literal["tp", "pp"]
    weights: _Weights
    act_bytes: int
    engine: InferenceEngine
    activations: Activations  # the engine's activation coefficients, fixed by model and settings
    # sizers by -ngl value (None: every layer): fixed per config, asked for by every search step
    sizers: dict[int | None, _Sizer] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class _Placement:
    """Where the weights sit for one layer split: the largest GPU's share and what stays on the host."""

    weights: int  # on the largest GPU
    kv_layers: int  # layers whose cache sits on the largest GPU
    head_on_largest: bool
    gpu_layers: int  # layers on any GPU
    host_layers: int  # llama.cpp: layers left in system RAM (the first ones)
    host_weights: int  # llama.cpp: embedding, the head when not offloaded, and the host layers
    all_weights: int  # on all GPUs together
    stages: int


def _placement(cfg: _Config, gpus: int, gpu_layers: int | None, llamacpp: bool) -> _Placement:
    """Layer placement for a layer split over ``gpus`` stages (llama.cpp: of its last ``gpu_layers`` layers)."""
    spec, w = cfg.spec, cfg.weights
    n_layers = spec.layers
    if llamacpp:
        on_gpu = n_layers if gpu_layers is None else min(gpu_layers, n_layers)
        output_on_gpu = gpu_layers is None or gpu_layers > n_layers
        first = n_layers - on_gpu  # -ngl N puts the last N layers on the GPU
        stages = [range(first + st.start, first + st.stop) for st in _stages(on_gpu, gpus)] if on_gpu else [range(0)]
        stage_w = [w.layer_bytes(st) for st in stages]
        out_b = w.output if output_on_gpu else 0
        stage_w[-1] += out_b
        host = w.embedding + (0 if output_on_gpu else w.output) + w.prefix[first]
    else:
        on_gpu, first, out_b = n_layers, 0, 0
        stages = _stages(n_layers, gpus)
        stage_w = [w.layer_bytes(st) for st in stages]
        stage_w[0] += w.embedding
        stage_w[-1] += 0 if spec.tie_word_embeddings else w.output
        host = 0
    big = max(range(len(stage_w)), key=stage_w.__getitem__)
    return _Placement(
        weights=stage_w[big],
        kv_layers=len(stages[big]),
        head_on_largest=bool(out_b) and big == len(stage_w) - 1,
        gpu_layers=on_gpu,
        host_layers=first,
        host_weights=host,
        all_weights=sum(stage_w),
        stages=len(stages),
    )


class _Sizer:
    """Bytes on the largest GPU as plain numbers, for one config and layer split (what the searches evaluate).

    Everything that does not depend on the context and the number of sequences is fixed here once:
    the weights and overhead on the largest GPU, its share of the cache layers, and the activation
    formula's coefficients.
    """

    __slots__ = (
        "act_per_seq",
        "act_per_token",
        "batched_tokens",
        "buffer_fixed",
        "buffer_logits",
        "buffer_per_cell",
        "engine",
        "fixed_activations",
        "kv_layers",
        "layout",
        "n_layers",
        "n_ubatch",
        "overhead",
        "place",
        "tp",
        "weights",
    )

    def __init__(self, cfg: _Config, inp: InferenceMemoryInput, gpu_layers: int | None) -> None:
        spec, engine = cfg.spec, cfg.engine
        stages = inp.pipeline_stages if cfg.parallel == "tp" else 1  # tensor parallel inside each pipeline stage
        tp = inp.gpus // stages if cfg.parallel == "tp" else 1
        pp = inp.gpus if cfg.parallel == "pp" else stages
        self.tp = tp
        self.layout = kv_layout(spec, cfg.kv_dtype, tp)
        self.engine = engine
        self.batched_tokens, self.n_ubatch = inp.max_num_batched_tokens, inp.n_ubatch
        self.n_layers = spec.layers
        self.place: _Placement | None = None
        if engine.offloads_layers or pp > 1:
            self.place = _placement(cfg, pp, gpu_layers, llamacpp=engine.offloads_layers)
            self.weights, self.kv_layers = -(-self.place.weights // tp), self.place.kv_layers
        else:
            self.weights, self.kv_layers = math.ceil(cfg.weights.total / tp), spec.layers
        act = cfg.activations
        self.fixed_activations = act.fixed
        self.buffer_per_cell, self.buffer_fixed, self.buffer_logits = act.per_cell, act.rows, act.logits
        self.act_per_token, self.act_per_seq = act.per_token, act.per_seq
        self.overhead = engine.overhead(inp.gpus)

    def kv(self, ctx: int, seqs: int) -> tuple[int, int, int]:
        """(cache bytes of every layer on one rank, tokens per full layer, tokens per sliding layer)."""
        full, sliding = self.engine.kv_tokens(self.layout, ctx, seqs, self.batched_tokens, self.n_ubatch)
        return kv_bytes(self.layout, full, sliding, seqs), full, sliding

    def kv_on_largest(self, kv_all_layers: int) -> int:
        """The largest GPU's share of the cache (its stage's layers under a layer split)."""
        if self.kv_layers == self.n_layers:
            return kv_all_layers
        return round(kv_all_layers * self.kv_layers / self.n_layers)

    def activations(self, ctx: int, seqs: int, full_tokens: int) -> int:
        """Activation bytes per GPU (llama.cpp's compute buffer follows the padded n_ctx, ``full_tokens``)."""
        if self.fixed_activations is not None:
            return self.fixed_activations
        if self.buffer_per_cell:  # llama.cpp: max(logits, attention)
            return max(self.buffer_logits, self.buffer_per_cell * full_tokens + self.buffer_fixed)
        act = ctx * seqs * self.act_per_token + seqs * self.act_per_seq
        return -(-act // self.tp)

    def total(self, ctx: int, seqs: int) -> int:
        """The largest GPU's need for ``seqs`` sequences of ``ctx`` tokens (kv() and kv_on_largest() inlined:
        this is the searches' inner loop)."""
        lay = self.layout
        full, sliding = self.engine.kv_tokens(lay, ctx, seqs, self.batched_tokens, self.n_ubatch)
        kv = kv_bytes(lay, full, sliding, seqs)
        if self.kv_layers != self.n_layers:
            kv = round(kv * self.kv_layers / self.n_layers)
        return self.weights + kv + self.activations(ctx, seqs, full) + self.overhead


def _sizer(cfg: _Config, inp: InferenceMemoryInput, gpu_layers: int | None) -> _Sizer:
    """The config's sizer for ``gpu_layers`` (llama.cpp ``-ngl``; None: every layer), made once per value."""
    if gpu_layers is not None:
        gpu_layers = min(gpu_layers, cfg.spec.layers + 1)  # every -ngl above the layer count places the same
    found = cfg.sizers.get(gpu_layers)
    if found is None:
        found = cfg.sizers[gpu_layers] = _Sizer(cfg, inp, gpu_layers)
    return found


# Built once or twice per estimate (the searches use _Sizer.total, numbers only): plain slotted
# dataclasses; nothing changes them after construction.
@dataclass(slots=True)
class _Breakdown:
    """Per-GPU bytes of one inference configuration (validated as MemoryBreakdown once, at the end)."""

    weights: int
    kv_cache: int
    activations: int
    overhead: int

    @property
    def total(self) -> int:
        return self.weights + self.kv_cache + self.activations + self.overhead


@dataclass(slots=True)
class _KV:
    """The request's cache on one rank: bytes of every layer, tokens per full / sliding layer."""

    bytes: int
    full_tokens: int
    sliding_tokens: int
    layout: KVLayout


@dataclass(slots=True)
class _Need:
    """Numbers only: the formulas are written once, for the final configuration, by :func:`_terms`."""

    breakdown: _Breakdown
    kv: _KV
    cpu_bytes: int
    total_all_gpus: int
    kv_layers: int  # layers whose cache sits on the largest GPU
    head_on_largest: bool  # llama.cpp: the output head sits on the largest GPU


def _resolve_spec(inp: InferenceMemoryInput) -> ModelSpec:
    if inp.spec is not None:
        return inp.spec
    if inp.model is not None:
        return load_model_spec(inp.model)
    assert inp.params_b is not None
    return ModelSpec.custom(
        inp.params_b,
        layers=inp.layers,
        hidden_size=inp.hidden_size,
        num_heads=inp.num_heads,
        num_kv_heads=inp.num_kv_heads,
        head_dim=inp.head_dim,
        vocab_size=inp.vocab_size,
    )


def _need(cfg: _Config, inp: InferenceMemoryInput, ctx: int, seqs: int, gpu_layers: int | None = None) -> _Need:
    """Per-GPU need (largest GPU) for ``seqs`` sequences of ``ctx`` tokens, with the parts the result reports."""
    sizer = _sizer(cfg, inp, gpu_layers if cfg.engine.offloads_layers else None)
    kv_all, full, sliding = sizer.kv(ctx, seqs)
    kv_gpu = sizer.kv_on_largest(kv_all)
    act = sizer.activations(ctx, seqs, full)
    weights, overhead, n_layers, g = sizer.weights, sizer.overhead, cfg.spec.layers, inp.gpus
    place = sizer.place
    cpu = 0
    if cfg.engine.offloads_layers:
        assert place is not None
        cpu = place.host_weights + round(kv_all * place.host_layers / n_layers)
        all_gpus = place.all_weights + round(kv_all * place.gpu_layers / n_layers) + place.stages * (act + overhead)
    elif place is not None:  # layer split: each GPU (or tensor-parallel group) holds its own stage
        all_gpus = cfg.weights.total + kv_all * sizer.tp + g * (act + overhead)
    else:  # tensor parallel: identical ranks
        all_gpus = g * (weights + kv_gpu + act + overhead)
    return _Need(
        breakdown=_Breakdown(weights=weights, kv_cache=kv_gpu, activations=act, overhead=overhead),
        kv=_KV(kv_all, full, sliding, sizer.layout),
        cpu_bytes=cpu,
        total_all_gpus=all_gpus,
        kv_layers=sizer.kv_layers,
        head_on_largest=place is not None and place.head_on_largest,
    )


def _largest_within(
    f: Callable[[int], int], limit: int, lo: int, hi: int, known: tuple[int, int] | None = None
) -> int:
    """Largest n in [lo, hi] with f(n) ≤ limit (f non-decreasing), else lo - 1.

    ``known`` is a point (n, f(n)) already computed (the request itself): it narrows the bracket
    to one side of n without evaluating f there again.

    Memory grows almost linearly in context, batch and layers (with steps from block and cell
    rounding), so the next probe is interpolated between the bracket's ends, checked with its
    neighbour, and a plain halving step follows any probe that did not halve the bracket: a
    handful of evaluations instead of ~20 bisection steps, with bisection's worst case.
    """
    f_lo = f_hi = None
    if known is not None and lo <= known[0] <= hi:
        n0, v0 = known
        if v0 <= limit:
            if n0 == hi:
                return hi
            lo, f_lo = n0, v0
        elif n0 == lo:
            return lo - 1
        else:
            hi, f_hi = n0, v0
    if f_lo is None:
        f_lo = f(lo)
        if f_lo > limit:
            return lo - 1
    if f_hi is None:
        f_hi = f(hi)
        if f_hi <= limit:
            return hi
    halve = False
    while hi - lo > 1:  # invariant: f(lo) <= limit < f(hi)
        width = hi - lo
        interpolate = not halve and f_hi > f_lo
        probe = lo + (limit - f_lo) * width // (f_hi - f_lo) if interpolate else lo + width // 2
        probe = min(max(probe, lo + 1), hi - 1)
        value = f(probe)
        if value <= limit:
            lo, f_lo = probe, value
            if probe + 1 < hi:  # the interpolated point is usually the answer: confirm at once
                nxt = f(probe + 1)
                if nxt > limit:
                    return probe
                lo, f_lo = probe + 1, nxt
        else:
            hi, f_hi = probe, value
            if probe - 1 > lo:
                prev = f(probe - 1)
                if prev <= limit:
                    return probe - 1
                hi, f_hi = probe - 1, prev
        halve = hi - lo > width // 2
    return lo


@dataclass(frozen=True, slots=True)
class _Plan:
    """Everything about a request that does not depend on its context, batch or GPU (cached per setting)."""

    cfg: _Config
    assumptions: tuple[Note, ...]
    warnings: tuple[Note, ...]
    kv_bytes_per_token: int
    attention: str  # the model's attention kind, as named in the KV term
    terms: dict[str, Term] = field(default_factory=dict)  # terms fixed by the plan, made on first use


_PLANS: PerSpecCache[_Plan] = PerSpecCache()


def _plan(spec: ModelSpec, inp: InferenceMemoryInput) -> _Plan:
    """The request's resolved precision, parallelism and fixed notes, remembered per (spec object, settings).

    A session or the recommender sizes one model again and again for other contexts and GPUs;
    only the context/batch/GPU-dependent parts are recomputed.
    """
    key = (
        inp.precision,
        inp.kv_dtype,
        inp.engine,
        inp.gpus,
        inp.parallel,
        inp.pipeline_stages,
        inp.gpu_memory_utilization,
        inp.max_num_batched_tokens,
        inp.max_num_seqs,
        inp.profile_logits_all_tokens,
        inp.mem_fraction_static,
        inp.n_ubatch,
        inp.flash_attention,
    )
    return _PLANS.get(spec, key, lambda: _make_plan(spec, inp))


def _make_plan(spec: ModelSpec, inp: InferenceMemoryInput) -> _Plan:
    engine = get_engine(inp.engine)
    prec = resolve_precision(inp.precision or engine.default_precision(spec))
    kv_name = resolve_kv_dtype(inp.kv_dtype or engine.default_kv(spec, prec)).name
    kv_spec = resolve_kv_dtype(kv_name)
    if engine.name not in kv_spec.engines:
        offered = [k.name for k in _kv_for(engine.name)]
        raise ToolError(note("error.inference.kv_dtype_unsupported", engine=engine.name, kv_dtype=kv_name),
                        suggestions=[note("error.hint.kv_dtype", choices="/".join(offered))])
    warnings: list[Note] = []
    parallel = engine.resolve_split(inp.parallel, inp.gpus, warnings)
    stages = inp.pipeline_stages if parallel == "tp" else 1
    if parallel == "tp" and inp.gpus // stages > 1:
        check_tensor_parallel(spec, inp.gpus // stages)
    if stages > spec.layers or (parallel == "pp" and inp.gpus > spec.layers):
        raise ToolError(
            note("error.inference.too_many_stages", gpus=inp.gpus, layers=spec.layers),
            suggestions=[note("error.hint.at_most_gpus", gpus=spec.layers), note("error.hint.or_tp")],
        )
    act_bytes = 4 if prec.compute_precision == "fp32" else 2
    cfg = _Config(
        spec=spec,
        prec=prec,
        kv_dtype=kv_name,
        parallel=parallel,
        weights=_weight_parts(spec, prec),
        act_bytes=act_bytes,
        engine=engine,
        activations=engine.activations(spec, inp, act_bytes),
    )
    assumptions: list[Note] = list(spec.notes)
    if inp.precision is None:
        why = engine.precision_reason(spec)
        assumptions.append(note(f"inference.assume.precision_{why}", precision=prec.name))
    _explain_settings(inp, cfg, assumptions, warnings)
    per_token = kv_bytes_per_token(spec, kv_name, inp.gpus // stages if parallel == "tp" else 1)
    return _Plan(
        cfg=cfg,
        assumptions=tuple(assumptions),
        warnings=tuple(warnings),
        kv_bytes_per_token=per_token,
        attention=spec.attention.value,
    )


def estimate_inference_memory(inp: InferenceMemoryInput, *, limits: bool = True) -> InferenceMemoryResult:
    """Per-GPU memory of an inference deployment, the engine's KV budget and whether it fits.

    With a GPU, ``limits`` also finds ``max_context_tokens`` and ``max_concurrency``; callers that
    only need the verdict (the recommender) pass ``limits=False`` and get None there.
    """
    inp, split = _per_device(inp)
    spec = _resolve_spec(inp)
    plan = _plan(spec, inp)
    cfg = plan.cfg
    assumptions = [*split, *plan.assumptions]
    warnings = list(plan.warnings)
    _explain_request(inp, cfg, assumptions, warnings)

    gpu: GPU | None = None
    visible = inp.gpu_memory_bytes
    if inp.gpu:
        gpu, (seen, visible_note) = _catalog_gpu(inp.gpu)
        if visible is None:
            visible = seen
            assumptions.append(visible_note)
        _gpu_warnings(gpu, cfg.prec, cfg.kv_dtype, warnings)
        if gpu.form_factor == FormFactor.system and cfg.engine.offloads_layers and inp.n_gpu_layers is None:
            # unified memory: the 'system RAM' llama.cpp would spill to is the same memory, already counted
            inp = inp.model_copy(update={"n_gpu_layers": spec.layers})
    elif visible is not None:
        assumptions.append(note("inference.assume.gpu_memory_given", gib=visible / GiB))

    need = _need(cfg, inp, inp.context, inp.batch, inp.n_gpu_layers if cfg.engine.offloads_layers else None)
    budget: dict[str, object] = {}
    if visible is not None:
        budget, offloaded = _budget(cfg, inp, visible, need, assumptions, warnings, limits, plan.kv_bytes_per_token)
        if offloaded is not None:  # llama.cpp with layers in system RAM: the figures describe that split
            budget["all_layers_bytes"] = need.breakdown.total
            need = offloaded
    nb = need.breakdown
    total = nb.total
    if gpu is not None and gpu.form_factor == FormFactor.system and budget.get("fits") is False \
            and nb.total * inp.gpus <= UNIFIED_RAISABLE * gpu.memory_bytes:
        # short of the GPU's default share, not of the machine: more of the shared memory can be assigned
        warnings.append(note("inference.warn.raise_gpu_share", gpu=gpu.name, need_gb=nb.total / 1e9,
                             memory_gb=gpu.memory_gb,  # the label: a "512GB" Mac
                             command=f"sudo sysctl iogpu.wired_limit_mb={round(nb.total * inp.gpus / 2**20 * 1.05)}"))
    # Breakdown and terms go in as plain dicts: the result's validation checks them all in one pass.
    budget.update(
        {
            "model": spec.name,
            "engine": inp.engine,
            "precision": cfg.prec.name,
            "kv_dtype": cfg.kv_dtype,
            "context": inp.context,
            "batch": inp.batch,
            "gpus": inp.gpus,
            "parallel": cfg.parallel,
            "params": spec.params,
            "active_params": spec.active_params,
            "weights_total_bytes": cfg.weights.total,
            "kv_bytes_per_token": plan.kv_bytes_per_token,
            "total_bytes": need.total_all_gpus if inp.gpus > 1 else total,
            "per_gpu_bytes": total,
            "breakdown": {
                "weights": nb.weights,
                "kv_cache": nb.kv_cache,
                "activations": nb.activations,
                "overhead": nb.overhead,
            },
            "cpu_bytes": need.cpu_bytes,
            "terms": _terms(plan, inp, need, budget, visible),
            "assumptions": assumptions,
            "warnings": warnings,
            "gpu": gpu.name if gpu else None,
            "gpu_memory_bytes": visible,
        }
    )
    return InferenceMemoryResult.model_validate(budget)


_GPUS: dict[str, tuple[object, GPU, tuple[int, Note]]] = {}


def _catalog_gpu(name: str) -> tuple[GPU, tuple[int, Note]]:
    """Catalog GPU by name or alias, its engine-visible bytes and the note explaining them, remembered per
    name (and catalog object)."""
    catalog = load_catalog()
    hit = _GPUS.get(name)
    if hit is not None and hit[0] is catalog:
        return hit[1], hit[2]
    gpu = catalog.gpu(name)
    if len(_GPUS) >= 512:
        _GPUS.clear()
    _GPUS[name] = (catalog, gpu, _visible(gpu))
    return gpu, _GPUS[name][2]


def _per_device(inp: InferenceMemoryInput) -> tuple[InferenceMemoryInput, list[Note]]:
    """A package that software splits (a dual-die 910C) sized as its devices: N packages are N × devices GPUs,
    each with its share of the memory; the note says so."""
    if not inp.gpu or inp.gpu_memory_bytes is not None:
        return inp, []
    gpu, _ = _catalog_gpu(inp.gpu)
    if gpu.devices == 1:
        return inp, []
    seen, _ = _visible(device_view(gpu))
    split = inp.model_copy(update={"gpus": inp.gpus * gpu.devices, "gpu_memory_bytes": seen})
    return split, [note("inference.assume.devices", gpu=gpu.name, devices=gpu.devices,
                        device_gb=gpu.memory_gb / gpu.devices, packages=inp.gpus, count=split.gpus,
                        visible_gib=seen / GiB)]


def _visible(gpu: GPU) -> tuple[int, Note]:
    """``engine_visible_bytes`` with its explanation as a note (built here while tools.gpu_memory returns text)."""
    seen, explained = engine_visible_bytes(gpu)
    if isinstance(explained, Note):
        return seen, explained
    if gpu.gpu_assignable_gb is not None:  # a unified-memory system: the OS keeps part of the shared pool
        return seen, note("inference.assume.gpu_visible_unified", gpu=gpu.name, memory_gb=gpu.memory_gb,
                          assignable_gb=gpu.gpu_assignable_gb, visible_gib=seen / GiB)
    key = "gpu_visible_ecc" if inline_ecc_on(gpu) else "gpu_visible"
    return seen, note(f"inference.assume.{key}", gpu=gpu.name, memory_gb=gpu.memory_gb, visible_gib=seen / GiB)


def _kv_for(engine: str) -> list:
    from tools.precision import all_kv_dtypes

    return [k for k in all_kv_dtypes() if engine in k.engines]


def _explain_settings(inp: InferenceMemoryInput, cfg: _Config, assumptions: list[Note], warnings: list[Note]) -> None:
    """Notes that follow from the model, precision, engine and GPU count alone (cached in the plan)."""
    spec, prec = cfg.spec, cfg.prec
    if spec.attention.value == "none":
        warnings.append(note("inference.warn.not_autoregressive", model=spec.name))
    if spec.weight_bytes is not None and cfg.weights.total == spec.weight_bytes:
        assumptions.append(note("inference.assume.weights_exact", bytes=spec.weight_bytes))
    elif prec.family == "gguf" and (mixed := gguf_file_bytes(spec, prec.name)) is not None:
        assumptions.append(note("inference.assume.weights_per_tensor", precision=prec.name,
                                bits=mixed * 8 / spec.params))
    else:
        key = "inference.assume.weights_at" + ("" if prec.quantizes_embeddings else "_16bit")
        if prec.note:
            # the format's own description: a message of its own where one is written, else the text as is
            detail_id = f"inference.precision_note.{prec.name}"
            detail: str | Note = note(detail_id) if has("en", detail_id) else prec.note
            assumptions.append(note(key + "_note", precision=prec.name, bits=prec.bits_per_weight, detail=detail))
        else:
            assumptions.append(note(key, precision=prec.name, bits=prec.bits_per_weight))
    if spec.is_moe:
        assumptions.append(
            note(
                "inference.assume.moe_resident",
                experts=spec.num_experts,
                params_b=spec.params / 1e9,
                active_b=spec.active_params / 1e9,
            )
        )
    if prec.weight_only:
        assumptions.append(note("inference.assume.weight_only", precision=prec.name, compute=prec.compute_precision))
    cfg.engine.setting_notes(inp, prec, assumptions, warnings)
    if inp.gpus > 1 and cfg.parallel == "tp" and inp.pipeline_stages > 1:
        assumptions.append(note("inference.assume.tp_pp", gpus=inp.gpus, stages=inp.pipeline_stages,
                                tp=inp.gpus // inp.pipeline_stages))
    elif inp.gpus > 1:
        how = "tensor_parallel" if cfg.parallel == "tp" else "layer_split"
        assumptions.append(note(f"inference.assume.{how}", gpus=inp.gpus))
        if cfg.parallel == "tp" and spec.attention.value != "mla" and inp.gpus > spec.num_kv_heads:
            assumptions.append(
                note(
                    "inference.assume.kv_heads_replicated",
                    gpus=inp.gpus,
                    kv_heads=spec.num_kv_heads,
                    replicas=inp.gpus // spec.num_kv_heads,
                )
            )
        if cfg.parallel == "tp" and spec.attention.value == "mla":
            assumptions.append(note("inference.assume.mla_not_split"))


def _explain_request(inp: InferenceMemoryInput, cfg: _Config, assumptions: list[Note], warnings: list[Note]) -> None:
    """Notes that depend on the requested context and batch."""
    spec = cfg.spec
    cfg.engine.request_notes(inp, warnings)
    if spec.max_context and inp.context > spec.max_context:
        warnings.append(
            note("inference.warn.context_over_limit", context=inp.context, model=spec.name, limit=spec.max_context)
        )
    assumptions.append(_request_note(inp.batch, inp.context, spec.max_context))
    assumptions.extend(cfg.engine.request_assumptions(inp))


@lru_cache(maxsize=1024)
def _request_note(batch: int, context: int, max_context: int | None) -> Note:
    """The request's KV-cache assumption, remembered per request (the recommender asks again and again)."""
    if max_context:
        return note("inference.assume.kv_sized", batch=batch, context=context, max_context=max_context)
    return note("inference.assume.kv_sized_given", batch=batch, context=context)


UNIFIED_RAISABLE = 0.9  # of a unified-memory machine's RAM the GPU can be given when the OS keeps a little


def _gpu_warnings(gpu: GPU, prec: PrecisionSpec, kv_name: str, warnings: list[Note]) -> None:
    cc = float(gpu.compute_capability) if gpu.compute_capability else None
    if prec.compute_precision == "bf16" and cc is not None and cc < 8.0:
        warnings.append(note("inference.warn.no_bf16", gpu=gpu.name, cc=gpu.compute_capability))
    if prec.compute_precision in ("fp8", "fp4") and gpu.supports(prec.compute_precision) is False:
        warnings.append(
            note("inference.warn.no_tensor_path", gpu=gpu.name, compute=prec.compute_precision, precision=prec.name)
        )
    if kv_name == "fp8" and gpu.supports("fp8") is False:
        warnings.append(note("inference.warn.no_fp8_kv", gpu=gpu.name))


def _budget(
    cfg: _Config,
    inp: InferenceMemoryInput,
    visible: int,
    need: _Need,
    assumptions: list[Note],
    warnings: list[Note],
    limits: bool,
    per_token: int,
) -> tuple[dict[str, object], _Need | None]:
    """Fit check and engine budget fields for GPUs with ``visible`` bytes each, and the need of the offloaded
    split when the engine runs layers from system RAM because the whole model does not fit.

    With ``limits`` it also finds the longest context and the most sequences that fit: in closed
    form when the cache grows linearly with the context (vLLM, full attention only), by
    :func:`_largest_within` over :meth:`_Sizer.total` otherwise (sliding-window / hybrid layers,
    llama.cpp and transformers, whose buffers follow n_ctx), stepping over whole cache blocks or
    padded cells where the cache grows in steps (:func:`_longest_context`).
    """
    spec, engine = cfg.spec, cfg.engine
    out: dict[str, object] = {}
    layout = need.kv.layout
    no_kv = layout.attention_layers == 0 and layout.state_bytes_per_seq == 0
    # (bytes at a context, limit, bytes at the request's context) for the longest-context search
    search: tuple[Callable[[int], int], int, int | None] | None = None
    best: int | None = None
    nb = need.breakdown
    kv_need = nb.kv_cache
    step = engine.context_step(inp.batch)
    if engine.reserves:
        plan = engine.budget(visible, nb.weights, nb.activations, nb.overhead, kv_need, inp)
        reserved, kv_budget = plan.reserved, plan.kv_budget
        engine.budget_notes(visible, inp, assumptions)
        out["reserved_bytes"] = reserved
        out["kv_budget_bytes"] = kv_budget
        out["headroom_bytes"] = kv_budget - kv_need
        if no_kv:
            # Nothing is cached: the fit is weights + activation peak + overhead inside the reservation.
            fits = kv_budget >= 0
            assumptions.append(note("inference.assume.no_kv_cache", model=spec.name))
            if not fits:
                warnings.append(note("inference.warn.reservation_exceeded"))
        else:
            per_tok = per_token
            if cfg.parallel == "pp":
                per_tok = math.ceil(per_tok * kv_need / max(need.kv.bytes, 1))
            per_tok = max(1, per_tok)
            one = max(1, kv_need // inp.batch)  # bytes of one request at the context
            if kv_budget <= 0:
                tokens = 0
            elif layout.sliding_layers or layout.linear_layers:
                tokens = max(0, int(kv_budget * inp.context // one))
            else:
                tokens = kv_budget // per_tok
            unit = step[0] if step else 1  # cache blocks (vLLM) or single tokens (SGLang's page size 1)
            blocks = tokens // unit
            if unit > 1:
                out["kv_blocks"] = blocks
            out["kv_capacity_tokens"] = blocks * unit
            out["max_concurrency"] = round(kv_budget / one, 2) if kv_budget > 0 else 0.0
            fits = kv_budget >= kv_need and blocks * unit >= inp.context
            if kv_budget <= 0:
                warnings.append(note("inference.warn.no_kv_room"))
            if limits:
                cap = spec.max_context or MAX_CONTEXT_SEARCH
                best = _reserved_longest_context(cfg, inp, need, kv_budget, cap, unit)
                if best is None:
                    sizer = _sizer(cfg, inp, None)

                    def kv_at(c: int) -> int:
                        return sizer.kv_on_largest(sizer.kv(c, inp.batch)[0])

                    search = (kv_at, kv_budget, kv_need)

        engine.budget_warnings(visible, inp, warnings)
    else:
        total = nb.total
        fits = total <= visible
        kv_budget = visible - (total - kv_need)
        per_tok = max(1, per_token)
        if cfg.parallel == "pp":
            per_tok = max(1, math.ceil(per_tok * kv_need / max(need.kv.bytes, 1)))
        out["headroom_bytes"] = visible - total
        out["kv_budget_bytes"] = kv_budget
        out["kv_capacity_tokens"] = max(0, kv_budget // per_tok)

        if limits:
            sizer = _sizer(cfg, inp, None)
            ctx, seqs = inp.context, inp.batch

            def total_at_context(c: int) -> int:
                return sizer.total(c, seqs)

            def total_at_batch(b: int) -> int:
                return sizer.total(ctx, b)

            # the searches place every layer on the GPU; so does the request unless -ngl was given
            at_request = total if inp.n_gpu_layers is None else None
            search = (total_at_context, visible, at_request)
            batch_known = None if at_request is None else (seqs, at_request)
            most = _largest_within(total_at_batch, visible, 1, 1_000_000, known=batch_known)
            out["max_concurrency"] = float(max(0, most))
    if search is not None:
        f, limit, request_value = search
        known = None if request_value is None else (inp.context, request_value)
        # the cache grows in steps: 16-token blocks per sequence (vLLM), 256 cells for all slots (llama.cpp)
        best = _longest_context(f, limit, spec.max_context or MAX_CONTEXT_SEARCH, known, step)
    if best is not None:
        out["max_context_tokens"] = max(0, best)
        if engine.reserves and step and best > 0:
            out["max_context_tokens"] = best // step[0] * step[0] or best
        if spec.max_context and best >= spec.max_context:
            assumptions.append(note("inference.assume.context_capped", limit=spec.max_context))
    offloaded: _Need | None = None
    if engine.offloads_layers and not fits and inp.n_gpu_layers is None:
        on_gpu, offloaded = _offload(cfg, inp, visible, warnings)
        out.update(gpu_layers=on_gpu, offload_layers=spec.layers - on_gpu)
        fits = False  # it runs, but only with layers in system RAM
    elif engine.offloads_layers:
        on = spec.layers if inp.n_gpu_layers is None else min(inp.n_gpu_layers, spec.layers)
        out.update(gpu_layers=on, offload_layers=spec.layers - on)
    out["fits"] = bool(fits)
    if not fits and not engine.offloads_layers and not (engine.reserves and no_kv):
        warnings.append(_short_message(out, inp))
    return out, offloaded


def _longest_context(
    f: Callable[[int], int], limit: int, cap: int, known: tuple[int, int] | None, step: tuple[int, int] | None
) -> int:
    """Largest context in [1, cap] with f(context) ≤ limit (0 when none).

    With ``step = (unit, seqs)`` f depends on the context only through q = ⌈context × seqs / unit⌉ (whole
    cache blocks or padded cells), so it is flat over each run of contexts with the same q. When a step
    spans at least one context (seqs ≤ unit) the search runs over q, on a function without flat runs,
    and the answer is the last context of the largest q that fits: ⌊q·unit / seqs⌋.
    """
    if step is None or step[1] > step[0]:
        return max(0, _largest_within(f, limit, 1, cap, known=known))
    unit, seqs = step

    def last_context(q: int) -> int:
        return q * unit // seqs

    if known is not None:
        known = (-(-known[0] * seqs // unit), known[1])
    q = _largest_within(lambda q: f(last_context(q)), limit, 1, -(-cap * seqs // unit), known=known)
    return min(cap, last_context(q)) if q > 0 else 0


def _reserved_longest_context(cfg: _Config, inp: InferenceMemoryInput, need: _Need, budget: int, cap: int,
                              unit: int) -> int | None:
    """Longest context (≤ cap) whose paged KV cache (pages of ``unit`` tokens: vLLM's 16-token blocks,
    SGLang's single tokens) fits ``budget``, in closed form; None to search instead.

    With full attention only, the cache of ``batch`` sequences of c tokens is
    ``round(bytes_per_token_layer × layers × batch × unit·⌈c/unit⌉)`` (scaled by the largest stage's
    share of the layers under a layer split): a step function of k = ⌈c/unit⌉. k* = ⌊budget / cost
    of one page row⌋, nudged by ±1 against the exact rounded figure, gives the same answer as
    the search (the largest c with the cache ≤ budget is min(cap, unit·k*), 0 when k* = 0).
    """
    lay = need.kv.layout
    if lay.sliding_layers or lay.linear_layers or lay.state_bytes_per_seq:
        return None
    n_layers, share = cfg.spec.layers, need.kv_layers
    rows = lay.full_layers * inp.batch * unit  # layer-tokens per page of every sequence

    def cache(k: int) -> int:
        b = round(lay.bytes_per_token_layer * (rows * k))
        return b if share == n_layers else round(b * share / n_layers)

    k_max = math.ceil(cap / unit)
    per_k = lay.bytes_per_token_layer * rows * share / n_layers
    k = k_max if per_k <= 0 else min(k_max, int(budget // per_k))
    if k < 1:
        if cache(1) > budget:
            return 0
        k = 1
    while k > 1 and cache(k) > budget:
        k -= 1
    if k == 1 and cache(1) > budget:
        return 0
    while k < k_max and cache(k + 1) <= budget:
        k += 1
    return min(cap, unit * k)


def _offload(cfg: _Config, inp: InferenceMemoryInput, visible: int, warnings: list[Note]) -> tuple[int, _Need]:
    """llama.cpp: how many layers stay on the GPU(s) when VRAM is short (the rest run from RAM), and that split's
    need."""
    n = cfg.spec.layers

    def total_with_layers(k: int) -> int:
        return _sizer(cfg, inp, k).total(inp.context, inp.batch)

    k = _largest_within(total_with_layers, visible, 0, n)
    if k < 0:
        warnings.append(note("inference.warn.offload_none_fits"))
        k = 0
    need = _need(cfg, inp, inp.context, inp.batch, gpu_layers=k)
    warnings.append(
        note("inference.warn.offload", gpu_layers=k, layers=n, cpu_layers=n - k, host_gib=need.cpu_bytes / GiB)
    )
    return k, need


def _short_message(out: dict[str, object], inp: InferenceMemoryInput) -> Note:
    """'does not fit', with the longest context and the number of sequences that do fit where known."""
    ctx = out.get("max_context_tokens")
    conc = out.get("max_concurrency")
    batch, context = inp.batch, inp.context
    if ctx is not None and conc is not None:
        return note("inference.warn.short_both", batch=batch, max_context=_num(ctx), context=context,
                    concurrency=_num(conc))
    if ctx is not None:
        return note("inference.warn.short_context", batch=batch, max_context=_num(ctx))
    if conc is not None:
        return note("inference.warn.short_concurrency", context=context, concurrency=_num(conc))
    return note("inference.warn.short_request", batch=batch, context=context)


def _num(value: object) -> int | float:
    """A figure of the budget dict (ints and floats only), typed for a note's parameters."""
    assert isinstance(value, int | float)
    return value


def _terms(plan: _Plan, inp: InferenceMemoryInput, need: _Need, budget: dict[str, object],
           visible: int | None) -> list[object]:
    """The result's terms: plain dicts (validated with the result, in one pass), and the terms that the
    plan alone fixes as Term objects made once per plan."""
    cfg, bd = plan.cfg, need.breakdown
    attention = plan.attention
    terms: list[object] = [
        _weights_term(plan, inp, need),
        {
            "name": "kv_cache",
            "value": bd.kv_cache,
            "unit": "bytes",
            "formula": kv_formula(
                need.kv.layout,
                inp.engine,
                inp.context,
                inp.batch,
                need.kv.full_tokens,
                need.kv.sliding_tokens,
            ),
            "explain": note("inference.explain.kv_cache", batch=inp.batch, context=inp.context,
                            attention=note(f"attention.{attention}"), kv_dtype=cfg.kv_dtype),
        },
        _activation_term(plan, inp, need),
        _plan_term(plan, "overhead", lambda: _overhead_term(cfg.engine, inp.gpus, bd.overhead)),
    ]
    if need.cpu_bytes:
        terms.append(
            {
                "name": "cpu_ram",
                "value": need.cpu_bytes,
                "unit": "bytes",
                "formula": note("inference.formula.cpu_ram"),
                "explain": note("inference.explain.cpu_ram"),
            }
        )
    if budget.get("reserved_bytes") is not None:
        terms.append(
            {
                "name": f"{cfg.engine.name}_reservation",
                "value": float(budget["reserved_bytes"]),  # type: ignore[arg-type]
                "unit": "bytes",
                "formula": cfg.engine.reservation_formula(visible or 0, inp),
                "explain": note(f"inference.explain.{cfg.engine.name}_reservation"),
            }
        )
    if budget.get("kv_capacity_tokens") is not None:
        terms.append(
            {
                "name": "kv_capacity",
                "value": float(budget["kv_capacity_tokens"]),  # type: ignore[arg-type]
                "unit": "tokens",
                "formula": cfg.engine.kv_capacity_formula(),
                "explain": note("inference.explain.kv_capacity"),
            }
        )
    return terms


def _plan_term(plan: _Plan, name: str, make: Callable[[], Term]) -> Term:
    """A term fixed by the plan (llama.cpp weights: and the layer split), built once (Terms are frozen, so
    results can share it)."""
    term = plan.terms.get(name)
    if term is None:
        term = plan.terms[name] = make()
    return term


def _weights_term(plan: _Plan, inp: InferenceMemoryInput, need: _Need) -> object:
    cfg = plan.cfg
    spec, w = cfg.spec, cfg.weights

    def term(formula: Note) -> dict[str, object]:  # a plain dict: validated with the result
        return {
            "name": "weights",
            "value": need.breakdown.weights,
            "unit": "bytes",
            "formula": formula,
            "explain": note("inference.explain.weights_moe" if spec.is_moe else "inference.explain.weights",
                            precision=cfg.prec.name),
        }

    if cfg.engine.offloads_layers:  # fixed by the layer split (-ngl): one term per split
        head = need.head_on_largest
        return _plan_term(
            plan,
            f"weights {need.breakdown.weights} {need.kv_layers} {head}",
            lambda: Term(
                **term(
                    note("inference.formula.weights_llamacpp_head" if head else "inference.formula.weights_llamacpp",
                         kv_layers=need.kv_layers, layers=spec.layers, embedding_mib=w.embedding / MiB)
                )
            ),
        )

    def fixed() -> Term:  # the same for every request of this plan
        if cfg.parallel == "pp" and inp.gpus > 1:
            formula = note("inference.formula.weights_pp", kv_layers=need.kv_layers, layers=spec.layers)
        elif inp.gpus > 1:
            formula = note("inference.formula.weights_tp", total_gib=w.total / GiB, gpus=inp.gpus)
        else:
            formula = note("inference.formula.weights", params_b=spec.params / 1e9, bits=cfg.prec.bits_per_weight)
        return Term(**term(formula))

    return _plan_term(plan, "weights", fixed)


def _activation_term(plan: _Plan, inp: InferenceMemoryInput, need: _Need) -> object:
    cfg = plan.cfg

    def term(formula: Note) -> dict[str, object]:  # a plain dict: validated with the result
        return {"name": "activations", "value": need.breakdown.activations, "unit": "bytes", "formula": formula,
                "explain": note(f"inference.explain.activations_{cfg.engine.name}")}

    fixed = cfg.activations.formula
    if fixed is not None:
        return _plan_term(plan, "activations", lambda: Term(**term(fixed)))
    return term(cfg.engine.activation_formula(cfg.spec, inp, cfg.act_bytes, need.kv.full_tokens, cfg.parallel))


def _overhead_term(engine: InferenceEngine, gpus: int, value: int) -> Term:
    return Term(
        name="overhead",
        value=value,
        unit="bytes",
        formula=engine.overhead_formula(gpus, value),
        explain=note("inference.explain.overhead", engine=engine.label),
    )
