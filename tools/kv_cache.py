"""KV-cache size for the attention a model really has, per GPU.

Per token and layer (element size ``b`` of the cache dtype):

* MHA/GQA/MQA: ``2 · n_kv_heads · head_dim · b`` (K and V; ``v_head_dim`` when V differs);
* MLA (DeepSeek): ``(kv_lora_rank + qk_rope_head_dim) · b`` — one latent, not × heads, and
  not split by tensor parallelism (every rank keeps the whole latent);
* DSA (DeepSeek-V3.2, GLM-5) adds the lightning indexer's key to every MLA layer:
  ``index_head_dim`` FP8 bytes plus one fp32 scale per 128 values (128 + 4 = 132 B), whatever
  the cache dtype of the latent — vLLM, SGLang and TensorRT-LLM all keep it this way. Its FP8
  latent is stored as the sparse kernels read it: 512 FP8 values, one fp32 scale per 128 of them
  and the 64 RoPE values in bf16 (656 B, vLLM's ``fp8_ds_mla``; SGLang's default for these models);
* sliding-window layers (Gemma 2/3/4, gpt-oss, Mistral-7B-v0.1) hold at most the window;
* Gemma 4's full-attention (global) layers have their own shape: ``2 · global_kv_heads ·
  global_head_dim · b`` (31B: 4 KV heads of 512 beside the sliding layers' 16 of 256). Their
  keys double as values in the weights (``attention_k_eq_v``), yet Transformers and vLLM still
  cache a K and a V tensor (V is the raw key projection, normalised without RoPE), so both count;
* linear-attention / SSM layers hold a constant state per sequence.

Under tensor parallelism each rank holds ``max(1, n_kv_heads / tp)`` KV heads: when tp
exceeds the KV heads, heads are replicated and the per-GPU cache stops shrinking.

Engines allocate differently: vLLM pages in 16-token blocks per sequence; llama.cpp has one
``n_ctx`` ring shared by all parallel slots (padded to 256 cells), with an extra, smaller
ring for sliding-window layers.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from knowledge.layers import (
    INDEXER_QUANT_BLOCK,
    INDEXER_SCALE_BYTES,
    LayerGroup,
    attention_layer_groups,
    indexer_bytes_per_token_layer,
)
from knowledge.names import EngineName
from knowledge.schema import AttentionKind
from tools.errors import ToolError
from tools.modelspec import ModelSpec, PerSpecCache
from tools.precision import kv_bytes_per_element, resolve_kv_dtype
from tools.result import Note, note
from tools.units import Bytes, BytesF, Tokens

Engine = Literal[EngineName, "generic"]
VLLM_BLOCK_SIZE = 16  # vllm/config/cache.py DEFAULT_BLOCK_SIZE
LLAMACPP_CTX_PAD = 256  # llama.cpp pads the KV cells to a multiple of 256


class KVLayout(BaseModel):
    """How a model's layers store context on one tensor-parallel rank."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kv_dtype: str
    bytes_per_element: BytesF
    full_layers: int = Field(description="layers storing every token of the context")
    sliding_layers: int = Field(description="layers storing at most `sliding_window` tokens")
    linear_layers: int = Field(description="layers with a constant recurrent state per sequence")
    sliding_window: Tokens | None
    kv_heads_per_rank: int = Field(description="KV heads one rank stores (1 for MLA's latent)")
    replicas: int = Field(description="ranks holding a copy of each KV head (1 = no replication)")
    bytes_per_token_layer: BytesF = Field(
        description="cache bytes per token per attention layer, one rank (the sliding layers' when the global "
        "layers have their own shape)"
    )
    global_bytes_per_token_layer: BytesF | None = Field(
        None, description="cache bytes per token of each full-attention layer when its shape differs (Gemma 4); "
        "None: bytes_per_token_layer"
    )
    global_kv_heads_per_rank: int | None = Field(None, description="KV heads one rank stores in a global layer")
    global_formula: Note | None = Field(None, description="the global layers' bytes per token, as a formula")
    indexer_bytes_per_token_layer: BytesF = Field(
        0, description="of which the DSA indexer key (FP8 + scales); 0 without DSA"
    )
    state_bytes_per_seq: Bytes = Field(description="linear/SSM state per sequence, all such layers")
    formula: Note = Field(description="cache bytes per token and layer, as a formula")

    @property
    def attention_layers(self) -> int:
        return self.full_layers + self.sliding_layers

    @property
    def full_bytes_per_token_layer(self) -> float:
        """Cache bytes per token of one full-attention layer on one rank."""
        if self.global_bytes_per_token_layer is None:
            return self.bytes_per_token_layer
        return self.global_bytes_per_token_layer


def _divisors(n: int) -> str:
    return ", ".join(str(t) for t in range(1, n + 1) if n % t == 0)


def kv_heads_per_rank(spec: ModelSpec, tp: int = 1, kv: int | None = None) -> tuple[int, int]:
    """(KV heads per rank, replicas) of ``kv`` heads (default: the spec's). Raises ToolError when tp neither
    divides nor is a multiple."""
    if tp < 1:
        raise ToolError(note("error.tp.at_least_one", tp=tp))
    if spec.attention == AttentionKind.mla:
        return 1, tp
    kv = kv or spec.num_kv_heads
    if tp <= kv:
        if kv % tp:
            raise ToolError(
                note("error.tp.kv_heads", tp=tp, kv_heads=kv, model=spec.name),
                suggestions=[note("error.hint.use_tp", sizes=_divisors(kv))],
            )
        return kv // tp, 1
    # More ranks than KV heads: every rank keeps one head (llm-analysis floor of 1; vLLM replicates).
    return 1, math.ceil(tp / kv)


def layer_groups(spec: ModelSpec) -> tuple[LayerGroup, ...]:
    """The model's layers by attention kind (``knowledge.layers``), shared by the KV cache (:func:`kv_layout`),
    the speed model's attention FLOPs and the model cards."""
    return attention_layer_groups(
        spec.attention.value, spec.layers, head_dim=spec.head_dim, full_attention_layers=spec.full_attention_layers,
        sliding_window=spec.sliding_window, global_head_dim=spec.global_head_dim, kv_lora_rank=spec.kv_lora_rank,
        qk_rope_head_dim=spec.qk_rope_head_dim)


def attention_flops_per_token(spec: ModelSpec, context: int) -> int:
    """QKᵀ and probabilities·V of one new token over ``context`` cached tokens: 4 · heads · width · attended
    tokens, summed over the layer groups."""
    return sum(4 * spec.num_heads * g.score_width * g.layers * g.attended(context) for g in layer_groups(spec))


_LAYOUTS: PerSpecCache[KVLayout] = PerSpecCache()


def kv_layout(spec: ModelSpec, kv_dtype: str = "fp16", tp: int = 1) -> KVLayout:
    """Per-rank storage pattern of the cache for ``spec`` (see the module docstring).

    Specs and layouts are immutable, so a layout is computed once per (spec object, dtype, tp).
    """
    return _LAYOUTS.get(spec, (kv_dtype, tp), lambda: _kv_layout(spec, kv_dtype, tp))


def _kv_layout(spec: ModelSpec, kv_dtype: str, tp: int) -> KVLayout:
    name = resolve_kv_dtype(kv_dtype).name
    b = kv_bytes_per_element(kv_dtype)
    heads, replicas = kv_heads_per_rank(spec, tp)
    indexer = 0
    if spec.attention == AttentionKind.mla:
        width = (spec.kv_lora_rank or 0) + (spec.qk_rope_head_dim or 0)
        per_layer = width * b
        formula = note("inference.formula.kv_layout_mla", rank=spec.kv_lora_rank, rope=spec.qk_rope_head_dim, b=b)
        if spec.indexer_head_dim and b == 1:  # the sparse-attention kernels' FP8 layout
            rank, rope = spec.kv_lora_rank or 0, spec.qk_rope_head_dim or 0
            scales = -(-rank // INDEXER_QUANT_BLOCK) * INDEXER_SCALE_BYTES
            per_layer = rank + scales + rope * 2
            formula = note("inference.formula_dsa.kv_layout_mla_fp8", rank=rank, scales=scales, rope=rope)
        if spec.indexer_head_dim:
            indexer = indexer_bytes_per_token_layer(spec.indexer_head_dim)
            per_layer += indexer
            formula = note(
                "inference.formula_dsa.kv_layout_mla_dsa",
                latent=formula,
                dim=spec.indexer_head_dim,
                scale=indexer - spec.indexer_head_dim,
            )
    else:
        v_dim = spec.v_head_dim or spec.head_dim
        per_layer = heads * (spec.head_dim + v_dim) * b
        if v_dim == spec.head_dim:
            formula = note("inference.formula.kv_layout", heads=heads, head_dim=spec.head_dim, b=b)
        else:
            formula = note("inference.formula.kv_layout_kv", heads=heads, head_dim=spec.head_dim, v_dim=v_dim, b=b)
    count = {g.kind: g.layers for g in layer_groups(spec)}
    full, sliding, linear = count.get("full", 0), count.get("sliding", 0), count.get("linear", 0)
    window = spec.sliding_window if "sliding" in count else None
    global_per_layer: float | None = None
    global_heads: int | None = None
    global_formula: Note | None = None
    if "sliding" in count:
        if spec.global_head_dim or spec.global_num_kv_heads:
            g_dim = spec.global_head_dim or spec.head_dim
            global_heads = kv_heads_per_rank(spec, tp, spec.global_num_kv_heads)[0]
            global_per_layer = 2 * global_heads * g_dim * b
            global_formula = note("inference.formula_global.kv_layout_global", heads=global_heads, head_dim=g_dim,
                                  b=b)
    elif spec.attention == AttentionKind.none:  # not an autoregressive transformer: nothing cached
        linear = 0
        formula = note("inference.formula.kv_none")
    state = (spec.linear_state_bytes_per_seq or 0) if linear else 0
    return KVLayout(
        kv_dtype=name,
        bytes_per_element=b,
        full_layers=full,
        sliding_layers=sliding,
        linear_layers=linear,
        sliding_window=window,
        kv_heads_per_rank=heads,
        replicas=replicas,
        bytes_per_token_layer=per_layer,
        global_bytes_per_token_layer=global_per_layer,
        global_kv_heads_per_rank=global_heads,
        global_formula=global_formula,
        indexer_bytes_per_token_layer=indexer,
        state_bytes_per_seq=state,
        formula=formula,
    )


def kv_bytes_per_token(spec: ModelSpec, kv_dtype: str = "fp16", tp: int = 1) -> int:
    """Cache bytes one token adds on one rank, over all attention layers (before any window cap)."""
    lay = kv_layout(spec, kv_dtype, tp)
    if lay.global_bytes_per_token_layer is None:
        return round(lay.bytes_per_token_layer * lay.attention_layers)
    return round(lay.global_bytes_per_token_layer * lay.full_layers + lay.bytes_per_token_layer * lay.sliding_layers)


class KVCacheSize(BaseModel):
    """KV cache of one configuration, on one rank."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bytes: Bytes = Field(ge=0)
    full_tokens: Tokens = Field(description="tokens held by each full-attention layer (all sequences)")
    sliding_tokens: Tokens = Field(description="tokens held by each sliding-window layer (all sequences)")
    state_bytes: Bytes = Field(ge=0)
    layout: KVLayout
    formula: Note


def kv_cache_size(
    spec: ModelSpec,
    context: int,
    sequences: int = 1,
    kv_dtype: str = "fp16",
    tp: int = 1,
    engine: Engine = "generic",
    *,
    max_num_batched_tokens: int = 8192,
    n_ubatch: int = 512,
) -> KVCacheSize:
    """KV cache for ``sequences`` concurrent sequences of ``context`` tokens each, on one rank.

    vLLM rounds each sequence up to 16-token blocks and keeps ``min(window − 1 +
    max_num_batched_tokens, context)`` (+1 block) for sliding layers; llama.cpp sizes one ring of
    ``n_ctx = context × sequences`` cells (padded to 256), its sliding ring at ``window ×
    sequences + n_ubatch``; transformers/generic hold exactly ``context`` (window) tokens.
    """
    if context < 1 or sequences < 1:
        raise ToolError(note("error.kv.context_sequences", context=context, sequences=sequences))
    lay = kv_layout(spec, kv_dtype, tp)
    full_tokens, sliding_tokens = kv_tokens(lay, engine, context, sequences, max_num_batched_tokens, n_ubatch)
    return KVCacheSize(
        bytes=kv_bytes(lay, full_tokens, sliding_tokens, sequences),
        full_tokens=full_tokens,
        sliding_tokens=sliding_tokens,
        state_bytes=lay.state_bytes_per_seq * sequences,
        layout=lay,
        formula=kv_formula(lay, engine, context, sequences, full_tokens, sliding_tokens),
    )


def kv_tokens(
    lay: KVLayout, engine: Engine, context: int, sequences: int, max_num_batched_tokens: int, n_ubatch: int
) -> tuple[int, int]:
    """Tokens each full-attention layer and each sliding layer holds, all sequences together (the engine's
    allocation rule: ``tools.engines``)."""
    from tools.engines import get_engine

    return get_engine(engine).kv_tokens(lay, context, sequences, max_num_batched_tokens, n_ubatch)


def kv_bytes(lay: KVLayout, full_tokens: int, sliding_tokens: int, sequences: int) -> int:
    """Cache bytes on one rank for the token counts of :func:`kv_tokens` plus the recurrent state."""
    if lay.global_bytes_per_token_layer is None:
        cells = lay.full_layers * full_tokens + lay.sliding_layers * sliding_tokens
        cache = round(lay.bytes_per_token_layer * cells)
    else:
        cache = round(lay.global_bytes_per_token_layer * lay.full_layers * full_tokens
                      + lay.bytes_per_token_layer * lay.sliding_layers * sliding_tokens)
    return cache + lay.state_bytes_per_seq * sequences


def kv_formula(lay: KVLayout, engine: Engine, context: int, sequences: int, full_tokens: int, sliding: int) -> Note:
    """The formula of :func:`kv_cache_size` for one configuration (``full_tokens``/``sliding`` from
    :func:`kv_tokens`), as an ``inference.formula.kv_*`` note."""
    from tools.engines import get_engine

    how = get_engine(engine).kv_tokens_formula(context, sequences, full_tokens)
    if lay.global_formula is not None:  # the global layers have their own shape: each kind shows its own
        per_token = lay.global_formula
        swa = note("inference.formula_global.kv_sliding_own", layers=lay.sliding_layers, tokens=sliding,
                   window=lay.sliding_window, per_token=lay.formula)
    else:
        per_token = lay.formula
        swa = note("inference.formula.kv_sliding", layers=lay.sliding_layers, tokens=sliding,
                   window=lay.sliding_window)
    return note(
        "inference.formula.kv_full",
        layers=lay.full_layers,
        tokens=how,
        per_token=per_token,
        sliding=swa if lay.sliding_layers else "",
        linear=note("inference.formula.kv_linear", layers=lay.linear_layers, state=lay.state_bytes_per_seq,
                    sequences=sequences) if lay.linear_layers else "",
    )


def kv_cache_bytes(
    spec: ModelSpec,
    context: int,
    sequences: int = 1,
    kv_dtype: str = "fp16",
    tp: int = 1,
    engine: Engine = "generic",
    **engine_options: int,
) -> int:
    """Bytes of KV cache on one rank; see :func:`kv_cache_size` for the engine rules."""
    return kv_cache_size(spec, context, sequences, kv_dtype, tp, engine, **engine_options).bytes


def tokens_for_budget(
    spec: ModelSpec, budget_bytes: float, kv_dtype: str = "fp16", tp: int = 1, context: int | None = None
) -> int:
    """How many cached tokens fit in ``budget_bytes`` on one rank.

    Full-attention layers cost every token; sliding layers cost only the window per
    sequence, so with ``context`` given their cost is spread over the context.
    """
    lay = kv_layout(spec, kv_dtype, tp)
    per_token = lay.full_bytes_per_token_layer * lay.full_layers
    if lay.sliding_layers:
        ctx = context or (lay.sliding_window or 1)
        share = min(ctx, lay.sliding_window or ctx) / ctx
        per_token += lay.bytes_per_token_layer * lay.sliding_layers * share
    if per_token <= 0:
        return 0
    return max(0, int(budget_bytes // per_token))


def pad(n: int, multiple: int) -> int:
    """``n`` rounded up to a multiple of ``multiple``."""
    return ((n + multiple - 1) // multiple) * multiple
