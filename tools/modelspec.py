"""The architecture numbers the memory and speed calculators need, from any source.

A :class:`ModelSpec` comes from the catalog (:meth:`ModelSpec.from_catalog`), from a few
numbers the user gives (:meth:`ModelSpec.custom`), or from the user's own files — a GGUF
header or a Hugging Face ``config.json`` with safetensors headers (``tools.model_files``),
in which case the weight bytes are exact instead of estimated.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from knowledge import UnknownNameError, load_catalog
from knowledge.checkpoints import checkpoint
from knowledge.paths import expand_user
from knowledge.resolve import shown_name
from knowledge.schema import AttentionKind, Model
from tools.errors import ToolError
from tools.gguf_mix import gguf_file_bytes
from tools.precision import native_precision, resolve_precision
from tools.result import Note, note

Source = Literal["catalog", "custom", "gguf", "hf"]
_CATALOG_SPECS_MAX = 512


# The largest value each architecture number may take: far above any real model (2T parameters, 10M-token
# contexts, 256k vocabularies), far below what would overflow, exhaust memory or print 1e23 GB. One table for
# specs read from the user's files, custom shapes (CLI, chat, API) and the ModelSpec fields themselves.
SPEC_LIMITS: dict[str, int] = {
    "params": 10**14,  # 100,000 B, the params_b limit of the size tools
    "active_params": 10**14,
    "layers": 10_000,
    "hidden_size": 1_000_000,
    "intermediate_size": 10_000_000,
    "vocab_size": 100_000_000,
    "max_context": 1 << 30,
    "num_heads": 10_000,
    "num_kv_heads": 10_000,
    "head_dim": 100_000,
    "v_head_dim": 100_000,
    "kv_lora_rank": 100_000,
    "qk_rope_head_dim": 100_000,
    "sliding_window": 1 << 30,
    "full_attention_layers": 10_000,
    "linear_state_bytes_per_seq": 10**13,
    "indexer_head_dim": 100_000,
    "global_head_dim": 100_000,
    "global_num_kv_heads": 10_000,
    "num_experts": 100_000,
    "experts_per_token": 100_000,
    "weight_bytes": 10**15,
    "embedding_bytes": 10**15,
    "output_bytes": 10**15,
}


class ModelSpec(BaseModel):
    """Architecture and size of one model. Counts are plain integers (parameters, not billions)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    source: Source
    params: int = Field(gt=0, le=SPEC_LIMITS["params"], description="total parameters (all experts)")
    active_params: int = Field(gt=0, le=SPEC_LIMITS["active_params"],
                               description="parameters used per token (MoE: routed subset)")
    layers: int = Field(ge=1, le=SPEC_LIMITS["layers"])
    hidden_size: int = Field(ge=1, le=SPEC_LIMITS["hidden_size"])
    intermediate_size: int | None = Field(None, ge=1, le=SPEC_LIMITS["intermediate_size"])
    vocab_size: int = Field(ge=1, le=SPEC_LIMITS["vocab_size"])
    max_context: int | None = Field(None, ge=1, le=SPEC_LIMITS["max_context"])
    attention: AttentionKind
    num_heads: int = Field(ge=1, le=SPEC_LIMITS["num_heads"])
    num_kv_heads: int = Field(ge=1, le=SPEC_LIMITS["num_kv_heads"])
    head_dim: int = Field(ge=1, le=SPEC_LIMITS["head_dim"])
    v_head_dim: int | None = Field(None, ge=1, le=SPEC_LIMITS["v_head_dim"])
    kv_lora_rank: int | None = Field(None, ge=1, le=SPEC_LIMITS["kv_lora_rank"])
    qk_rope_head_dim: int | None = Field(None, ge=1, le=SPEC_LIMITS["qk_rope_head_dim"])
    sliding_window: int | None = Field(None, ge=1, le=SPEC_LIMITS["sliding_window"])
    full_attention_layers: int | None = Field(
        None, ge=0, le=SPEC_LIMITS["full_attention_layers"],
        description="layers attending over the whole context; the others are sliding or linear")
    linear_state_bytes_per_seq: int | None = Field(None, ge=0, le=SPEC_LIMITS["linear_state_bytes_per_seq"])
    indexer_head_dim: int | None = Field(
        None, ge=1, le=SPEC_LIMITS["indexer_head_dim"],
        description="DSA lightning-indexer key width cached per token and layer (FP8 + fp32 scale)")
    global_head_dim: int | None = Field(
        None, ge=1, le=SPEC_LIMITS["global_head_dim"],
        description="head size of the full-attention layers when it differs from head_dim (Gemma 4)")
    global_num_kv_heads: int | None = Field(
        None, ge=1, le=SPEC_LIMITS["global_num_kv_heads"],
        description="KV heads of the full-attention layers when they differ from num_kv_heads (Gemma 4)")
    num_experts: int | None = Field(None, ge=2, le=SPEC_LIMITS["num_experts"])
    experts_per_token: int | None = Field(None, ge=1, le=SPEC_LIMITS["experts_per_token"])
    tie_word_embeddings: bool = False
    native_dtype: str = "bf16"
    # Exact figures read from the user's files (None when estimated).
    weight_bytes: int | None = Field(None, ge=0, le=SPEC_LIMITS["weight_bytes"],
                                     description="exact bytes of all tensors in the files")
    weight_precision: str | None = Field(None, description="precision of the files, e.g. 'Q4_K_M', 'bf16'")
    embedding_bytes: int | None = Field(None, ge=0, le=SPEC_LIMITS["embedding_bytes"],
                                        description="exact bytes of the token-embedding tensor")
    output_bytes: int | None = Field(None, ge=0, le=SPEC_LIMITS["output_bytes"],
                                     description="exact bytes of the output (lm_head) tensor")
    layer_bytes: tuple[int, ...] | None = Field(None, description="exact bytes per transformer block")
    tensor_types: dict[str, int] = Field(default_factory=dict, description="tensor count per storage type")
    notes: tuple[Note, ...] = Field((), description="how figures were obtained (assumptions)")

    @model_validator(mode="after")
    def _check(self) -> ModelSpec:
        for kv in (self.num_kv_heads, self.global_num_kv_heads):
            if kv and self.num_heads % kv:
                raise ToolError(note("error.spec.heads_multiple", heads=self.num_heads, kv_heads=kv))
        if self.active_params > self.params:
            raise ToolError(note("error.spec.active_params"))
        if self.attention == AttentionKind.mla and not (self.kv_lora_rank and self.qk_rope_head_dim):
            raise ToolError(note("error.spec.mla_fields"))
        if self.full_attention_layers is not None and self.full_attention_layers > self.layers:
            raise ToolError(note("error.spec.full_attention_layers"))
        return self

    # --- derived figures -------------------------------------------------------------
    @property
    def params_b(self) -> float:
        return self.params / 1e9

    @property
    def is_moe(self) -> bool:
        return bool(self.num_experts)

    @property
    def embedding_params(self) -> int:
        """Parameters of the token-embedding matrix (vocab × hidden)."""
        return self.vocab_size * self.hidden_size

    @property
    def has_exact_bytes(self) -> bool:
        return self.weight_bytes is not None

    def weight_bytes_at(self, precision: str | None = None) -> int:
        """Weight bytes at ``precision``.

        Exact from the user's files when ``precision`` is None or the files' own. A GGUF mix is sized per
        tensor (``tools.gguf_mix``). Otherwise params × bits/8; formats that keep ``embed_tokens``/``lm_head``
        in 16-bit (AWQ, GPTQ, NF4, FP8, int8 checkpoints) count those matrices at 2 B/param.
        """
        if self.weight_bytes is not None and (precision is None or _same_precision(precision, self.weight_precision)):
            return self.weight_bytes
        spec = resolve_precision(precision or self.weight_precision or self.native_dtype)
        if spec.family == "gguf" and (mixed := gguf_file_bytes(self, spec.name)) is not None:
            return mixed
        if spec.quantizes_embeddings:
            return round(self.params * spec.bits_per_weight / 8)
        emb = min(self.embedding_params * (1 if self.tie_word_embeddings else 2), self.params // 2)
        return round((self.params - emb) * spec.bits_per_weight / 8 + emb * 2)

    # --- constructors ----------------------------------------------------------------
    @classmethod
    def from_catalog(cls, name: str) -> ModelSpec:
        """Spec of a catalog model by name or alias (raises knowledge.UnknownNameError). A checkpoint name
        ('GLM-5-FP8', 'Qwen3-32B-AWQ') gives the model's spec with its files' precision (:func:`checkpoint_precision`).

        Specs are immutable, so each catalog entry's spec is built once and shared (the cache
        follows the catalog object: a reloaded catalog gets fresh specs).
        """
        catalog = load_catalog()
        hit = _CATALOG_SPECS.get(name) if isinstance(name, str) else None
        if hit is not None and hit[0] is catalog:
            return hit[1]
        model = catalog.model(name)
        spec = _as_checkpoint(cls.from_model(model), model, name)
        if len(_CATALOG_SPECS) >= _CATALOG_SPECS_MAX:
            _CATALOG_SPECS.clear()
        _CATALOG_SPECS[name] = (catalog, spec)
        return spec

    @classmethod
    def from_model(cls, m: Model) -> ModelSpec:
        a = m.attention
        kind = a.kind
        if kind == AttentionKind.mqa or (kind == AttentionKind.mha and a.num_kv_heads < a.num_heads):
            kind = AttentionKind.gqa if a.num_kv_heads > 1 else AttentionKind.mqa
        return cls(
            name=m.name,
            source="catalog",
            params=round(m.params_b * 1e9),
            active_params=round(m.active_b * 1e9),
            layers=m.layers,
            hidden_size=m.hidden_size,
            intermediate_size=m.intermediate_size,
            vocab_size=m.vocab_size,
            max_context=m.max_context,
            attention=kind,
            num_heads=a.num_heads,
            num_kv_heads=a.num_kv_heads,
            head_dim=a.head_dim,
            v_head_dim=a.v_head_dim,
            kv_lora_rank=a.kv_lora_rank,
            qk_rope_head_dim=a.qk_rope_head_dim,
            sliding_window=a.sliding_window,
            full_attention_layers=a.full_attention_layers,
            linear_state_bytes_per_seq=a.linear_state_bytes_per_seq,
            indexer_head_dim=a.indexer_head_dim,
            global_head_dim=a.global_head_dim,
            global_num_kv_heads=a.global_num_kv_heads,
            num_experts=m.moe.num_experts if m.moe else None,
            experts_per_token=m.moe.experts_per_token if m.moe else None,
            tie_word_embeddings=m.tie_word_embeddings,
            native_dtype=native_precision(m.native_dtype),
            notes=(note("inference.spec.catalog", id=m.id, sources=", ".join(m.sources)),),
        )

    @classmethod
    def custom(
        cls,
        params_b: float,
        *,
        name: str | None = None,
        active_params_b: float | None = None,
        layers: int | None = None,
        hidden_size: int | None = None,
        num_heads: int | None = None,
        num_kv_heads: int | None = None,
        head_dim: int | None = None,
        vocab_size: int | None = None,
        intermediate_size: int | None = None,
        max_context: int | None = None,
        num_experts: int | None = None,
        experts_per_token: int | None = None,
        kv_lora_rank: int | None = None,
        qk_rope_head_dim: int | None = None,
        sliding_window: int | None = None,
        full_attention_layers: int | None = None,
        native_dtype: str = "bf16",
    ) -> ModelSpec:
        """A model described by its size and whatever architecture numbers the user knows.

        Missing numbers come from the nearest Llama-style reference shape (see
        ``REFERENCE_SHAPES``), with the layer count scaled to the parameter count; each
        default used is recorded in ``notes``.
        """
        if not (params_b > 0 and math.isfinite(params_b)) or params_b * 1e9 > SPEC_LIMITS["params"]:
            raise ToolError(note("error.spec.params_range", params_b=params_b))
        layers = arch_number("layers", layers)
        hidden_size = arch_number("hidden_size", hidden_size)
        num_heads = arch_number("num_heads", num_heads)
        num_kv_heads = arch_number("num_kv_heads", num_kv_heads)
        head_dim = arch_number("head_dim", head_dim)
        vocab_size = arch_number("vocab_size", vocab_size)
        intermediate_size = arch_number("intermediate_size", intermediate_size)
        max_context = arch_number("max_context", max_context)
        num_experts = arch_number("num_experts", num_experts, 2)
        experts_per_token = arch_number("experts_per_token", experts_per_token)
        kv_lora_rank = arch_number("kv_lora_rank", kv_lora_rank)
        qk_rope_head_dim = arch_number("qk_rope_head_dim", qk_rope_head_dim)
        sliding_window = arch_number("sliding_window", sliding_window)
        full_attention_layers = arch_number("full_attention_layers", full_attention_layers, 0)
        params = round(params_b * 1e9)
        base = _nearest_shape(params_b)
        ref = _fit_embedding(base, params, hidden_size, vocab_size)
        notes: list[Note] = []
        used: list[str] = []

        def pick(value: int | None, key: str, default: int) -> int:
            if value is not None:
                return value
            used.append(f"{key}={default}")
            return default

        ratio = params_b / ref.params_b
        # layers grow with the size, up to the most any model has (a 100,000 B model is still a valid request)
        scaled_layers = ref.layers if abs(math.log(ratio)) < 0.1 else min(SPEC_LIMITS["layers"],
                                                                            max(1, round(ref.layers * ratio)))
        hidden = pick(hidden_size, "hidden", ref.hidden)
        heads = pick(num_heads, "heads", ref.heads if hidden_size is None else max(1, hidden // 128))
        kv = pick(
            num_kv_heads,
            "kv_heads",
            min(ref.kv_heads, heads) if heads % min(ref.kv_heads, heads) == 0 else heads,
        )
        hd = pick(head_dim, "head_dim", hidden // heads if hidden % heads == 0 else ref.head_dim)
        n_layers = pick(layers, "layers", scaled_layers)
        vocab = pick(vocab_size, "vocab", ref.vocab)
        inter = intermediate_size if intermediate_size is not None else ref.intermediate
        if used:
            shape: str | Note = (
                base.label
                if ref is base
                else note("inference.spec.shape_narrowed", label=base.label, hidden=ref.hidden, vocab=ref.vocab)
            )
            notes.append(
                note("inference.spec.custom_defaults", defaults=", ".join(used), shape=shape, params_b=params_b)
            )
        kind = AttentionKind.mha if kv == heads else (AttentionKind.mqa if kv == 1 else AttentionKind.gqa)
        if kv_lora_rank:
            kind = AttentionKind.mla
            if not qk_rope_head_dim:
                qk_rope_head_dim = 64
                notes.append(note("inference.spec.mla_rope"))
        elif sliding_window:
            kind = AttentionKind.sliding
            if full_attention_layers is None:
                full_attention_layers = n_layers // 6
                notes.append(note("inference.spec.sliding_pattern"))
        active = round(active_params_b * 1e9) if active_params_b else params
        return cls(
            name=name or f"{params_b:g}B",  # a size with no name: the buyer's own model, said as its size
            source="custom",
            params=params,
            active_params=min(active, params),
            layers=n_layers,
            hidden_size=hidden,
            intermediate_size=inter,
            vocab_size=vocab,
            max_context=max_context,
            attention=kind,
            num_heads=heads,
            num_kv_heads=kv,
            head_dim=hd,
            kv_lora_rank=kv_lora_rank,
            qk_rope_head_dim=qk_rope_head_dim if kv_lora_rank else None,
            sliding_window=sliding_window if not kv_lora_rank else None,
            full_attention_layers=full_attention_layers,
            num_experts=num_experts,
            experts_per_token=experts_per_token,
            native_dtype=native_dtype,
            notes=tuple(notes),
        )

    def with_updates(self, **changes: object) -> ModelSpec:
        """A validated copy with some fields changed."""
        return ModelSpec.model_validate({**self.model_dump(), **changes})


_CATALOG_SPECS: dict[str, tuple[object, ModelSpec]] = {}


def checkpoint_precision(name: str, model: Model) -> str | None:
    """The weight precision the checkpoint name ``name`` of ``model`` states, as tools.precision names it
    ('GLM-5-FP8' → 'fp8', 'Qwen3-32B-AWQ' → 'int4', 'qwen3:32b-q4_K_M' → 'Q4_K_M'); the model's own storage
    layout when the name states its native dtype ('Kimi-K2.5-INT4' → 'int4-g32'). None when the name states no
    precision or one the tools do not know. The one reading of checkpoint names (``knowledge.checkpoints``) that
    the CLI, the tool calls and the chat share."""
    found = checkpoint(name)
    if found is None:
        return None
    try:
        precision = resolve_precision(found.precision).name
    except ToolError:
        return None
    return native_precision(model.native_dtype) if precision == model.native_dtype else precision


def _as_checkpoint(spec: ModelSpec, model: Model, name: str) -> ModelSpec:
    """``spec`` sized as the checkpoint ``name`` names it: its files' precision when that is not the model's own
    ('GLM-5-FP8' is FP8 weights of the BF16 GLM-5), with a note saying so; ``spec`` itself otherwise."""
    precision = checkpoint_precision(name, model)
    if precision is None or precision == spec.native_dtype:
        return spec
    said = note("inference.checkpoint.named", name=shown_name(name), model=model.name, precision=precision)
    return spec.with_updates(weight_precision=precision, notes=(*spec.notes, said))

V = TypeVar("V")


class PerSpecCache(Generic[V]):
    """Values derived from an immutable spec, remembered per (spec object, key) and bounded in size.

    Keyed by the object's identity (and checked against it, so a reused id never returns a stale value):
    a catalog spec is one shared object, a custom spec simply misses.
    """

    def __init__(self, limit: int = 1024):
        self._store: dict[tuple[int, Hashable], tuple[ModelSpec, V]] = {}
        self._limit = limit

    def get(self, spec: ModelSpec, key: Hashable, make: Callable[[], V]) -> V:
        full = (id(spec), key)
        hit = self._store.get(full)
        if hit is not None and hit[0] is spec:
            return hit[1]
        value = make()
        if len(self._store) >= self._limit:
            self._store.clear()
        self._store[full] = (spec, value)
        return value


class ReferenceShape(BaseModel):
    model_config = ConfigDict(frozen=True)

    label: str
    params_b: float
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int


# Published configs of common dense GQA models (Hugging Face config.json of each).
REFERENCE_SHAPES: tuple[ReferenceShape, ...] = (
    ReferenceShape(
        label="Llama-3.2-1B",
        params_b=1.24,
        layers=16,
        hidden=2048,
        heads=32,
        kv_heads=8,
        head_dim=64,
        intermediate=8192,
        vocab=128256,
    ),
    ReferenceShape(
        label="Llama-3.2-3B",
        params_b=3.21,
        layers=28,
        hidden=3072,
        heads=24,
        kv_heads=8,
        head_dim=128,
        intermediate=8192,
        vocab=128256,
    ),
    ReferenceShape(
        label="Llama-3.1-8B",
        params_b=8.03,
        layers=32,
        hidden=4096,
        heads=32,
        kv_heads=8,
        head_dim=128,
        intermediate=14336,
        vocab=128256,
    ),
    ReferenceShape(
        label="Qwen2.5-14B",
        params_b=14.7,
        layers=48,
        hidden=5120,
        heads=40,
        kv_heads=8,
        head_dim=128,
        intermediate=13824,
        vocab=152064,
    ),
    ReferenceShape(
        label="Qwen2.5-32B",
        params_b=32.8,
        layers=64,
        hidden=5120,
        heads=40,
        kv_heads=8,
        head_dim=128,
        intermediate=27648,
        vocab=152064,
    ),
    ReferenceShape(
        label="Llama-3.1-70B",
        params_b=70.6,
        layers=80,
        hidden=8192,
        heads=64,
        kv_heads=8,
        head_dim=128,
        intermediate=28672,
        vocab=128256,
    ),
    ReferenceShape(
        label="Llama-3.1-405B",
        params_b=405.9,
        layers=126,
        hidden=16384,
        heads=128,
        kv_heads=8,
        head_dim=128,
        intermediate=53248,
        vocab=128256,
    ),
)


def _nearest_shape(params_b: float) -> ReferenceShape:
    return min(REFERENCE_SHAPES, key=lambda s: abs(math.log(params_b / s.params_b)))


def arch_number(key: str, value: object, minimum: int = 1, *, label: str | None = None) -> int | None:
    """An architecture number given by a user or read from a file, as an int from ``minimum`` to
    ``SPEC_LIMITS[key]`` (None stays None); ToolError naming ``label`` (default ``key``) otherwise — never an
    OverflowError, a 1e23 GB table or a range() that exhausts memory."""
    if value is None:
        return None
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    maximum = SPEC_LIMITS.get(key, SPEC_LIMITS["params"])
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        shown = repr(value)[:40]
        raise ToolError(
            note("error.spec.arch_number", name=label or key, minimum=minimum, maximum=maximum, value=shown),
            suggestions=[note("error.hint.arch_from_config", name=key)] if label is None else [],
        )
    return value


def _fit_embedding(
    ref: ReferenceShape, params: int, hidden_size: int | None, vocab_size: int | None
) -> ReferenceShape:
    """``ref`` with its default width and vocabulary shrunk so that embeddings + head stay under the model.

    A 0.1 B model cannot have Llama-3.2-1B's 2048 × 128k embedding (263 M parameters). When the
    defaults' untied embedding and head (2·vocab·hidden) reach the model's size, the defaulted
    dimensions are scaled (by the same factor when both are defaulted) so they take at most half
    of it; numbers the user gave are kept.
    """
    hidden = hidden_size or ref.hidden
    vocab = vocab_size or ref.vocab
    if 2 * hidden * vocab < params or (hidden_size is not None and vocab_size is not None):
        return ref
    target = params / 4  # vocab × hidden, so that embedding + head ≤ params / 2
    if hidden_size is None and vocab_size is None:
        f = math.sqrt(target / (hidden * vocab))
        hidden = max(64, int(hidden * f) // 64 * 64)
        vocab = max(256, int(target / hidden) // 256 * 256)
    elif hidden_size is None:
        hidden = max(64, int(target / vocab) // 64 * 64)
    else:
        vocab = max(256, int(target / hidden) // 256 * 256)
    heads = max(1, hidden // 64)
    return ref.model_copy(
        update={
            "label": f"{ref.label} narrowed to hidden {hidden}, vocab {vocab}",
            "hidden": hidden,
            "vocab": vocab,
            "heads": heads,
            "kv_heads": min(ref.kv_heads, heads),
            "head_dim": 64,
            "intermediate": min(ref.intermediate, 4 * hidden),
        }
    )


def _same_precision(a: str, b: str | None) -> bool:
    if b is None:
        return False
    try:
        return resolve_precision(a).name == resolve_precision(b).name
    except ToolError:
        return a.lower() == b.lower()


def estimate_params(
    *,
    layers: int,
    hidden: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    intermediate: int,
    vocab: int,
    tie_embeddings: bool = False,
    num_experts: int | None = None,
    experts_per_token: int | None = None,
    moe_intermediate: int | None = None,
    shared_experts: int = 0,
) -> tuple[int, int]:
    """(total, active) parameters of a Llama-style decoder (SwiGLU MLP, no biases).

    attention = hidden·head_dim·(2·heads + 2·kv_heads); MLP = 3·hidden·intermediate per
    expert; embeddings vocab·hidden (twice unless tied); norms ignored (< 0.01 %).
    """
    attn = hidden * head_dim * (2 * heads + 2 * kv_heads)
    emb = vocab * hidden * (1 if tie_embeddings else 2)
    if num_experts:
        per_expert = 3 * hidden * (moe_intermediate or intermediate)
        shared = 3 * hidden * (moe_intermediate or intermediate) * shared_experts
        router = hidden * num_experts
        total = emb + layers * (attn + router + shared + per_expert * num_experts)
        active = emb + layers * (attn + router + shared + per_expert * (experts_per_token or 1))
        return total, active
    total = emb + layers * (attn + 3 * hidden * intermediate)
    return total, total


def load_model_spec(ref: str) -> ModelSpec:
    """A catalog name (or Hugging Face repo id), or a path to a GGUF file, a config.json or a model folder."""
    if _looks_like_path(ref):
        return _spec_from_files(ref)
    try:
        return ModelSpec.from_catalog(ref)
    except UnknownNameError:
        if "/" not in ref:
            if _is_dir(ref):  # a model folder in the working directory
                return _spec_from_files(ref)
            raise
        catalog = load_catalog()
        for m in catalog.models:
            if m.hf_repo and m.hf_repo.lower() == ref.strip().lower():
                return ModelSpec.from_model(m)
        try:
            return ModelSpec.from_catalog(ref.rstrip("/").rsplit("/", 1)[-1])
        except UnknownNameError:
            shown = ref if len(ref) <= 60 else ref[:57] + "…"
            raise ToolError(
                note("error.spec.not_path_nor_model", name=repr(shown)),
                suggestions=[note("error.hint.check_path"), note("error.hint.catalog_example")],
            ) from None


def _spec_from_files(ref: str) -> ModelSpec:
    from tools.model_files import spec_from_path

    try:
        return spec_from_path(Path(ref))  # spec_from_path expands "~"
    except OSError as exc:  # a name the file system rejects (too long, NUL byte) or cannot read
        shown = ref if len(ref) <= 60 else ref[:57] + "…"
        raise ToolError(
            note("error.spec.cannot_read_files", path=repr(shown), detail=exc.strerror or type(exc).__name__),
            suggestions=[note("error.hint.check_path"), note("error.hint.catalog_example")],
        ) from None


def _is_dir(ref: str) -> bool:
    if len(ref) > 255:
        return False
    try:
        return Path(ref).is_dir()
    except (OSError, ValueError):
        return False


def _looks_like_path(ref: str) -> bool:
    """True for a GGUF/config.json name, or a path that exists (a model folder); no stat otherwise.

    Catalog names and Hugging Face repo ids ("org/name") are tried against the catalog first; a
    name with a path separator is a path only when it exists. Over-long names (10 KB of text) are
    never paths.
    """
    if ref.endswith((".gguf", ".json")):
        return True
    if not (os.sep in ref or "/" in ref or ref.startswith(("~", ".")) or (os.altsep and os.altsep in ref)):
        return False
    try:
        return expand_user(ref).exists()
    except (OSError, ValueError):  # name too long, NUL byte
        return False


def _kv_uneven(spec: ModelSpec, tp: int) -> int | None:
    """The KV-head count (of any layer kind) that ``tp`` neither divides nor is a multiple of; None if none."""
    if spec.attention == AttentionKind.mla:
        return None
    for kv in (spec.num_kv_heads, spec.global_num_kv_heads):
        if kv and kv % tp and tp % kv:
            return kv
    return None


def valid_tp_sizes(spec: ModelSpec, limit: int = 64) -> list[int]:
    """Tensor-parallel sizes that split both the query heads and the KV heads cleanly."""
    out = []
    for tp in range(1, limit + 1):
        if spec.num_heads % tp:
            continue
        if _kv_uneven(spec, tp) is not None:
            continue
        out.append(tp)
    return out


def check_tensor_parallel(spec: ModelSpec, tp: int) -> None:
    """Raise ToolError unless ``tp`` divides the attention heads (and KV heads, or is a multiple of them)."""
    if tp < 1:
        raise ToolError(note("error.tp.at_least_one", tp=tp))
    if tp == 1:
        return
    heads_ok = spec.num_heads % tp == 0
    uneven = _kv_uneven(spec, tp)
    if heads_ok and uneven is None:
        return
    ok = valid_tp_sizes(spec, limit=max(tp, 16))
    suggestion = [note("error.hint.use_tp", sizes=", ".join(str(t) for t in ok if t > 1 and t <= 16) or "1")]
    if spec.num_heads % tp:
        raise ToolError(
            note("error.tp.heads", tp=tp, heads=spec.num_heads, model=spec.name),
            suggestions=[*suggestion, note("error.hint.pipeline")],
        )
    if uneven is not None:
        raise ToolError(
            note("error.tp.kv_heads_uneven", tp=tp, kv_heads=uneven, model=spec.name),
            suggestions=suggestion,
        )
