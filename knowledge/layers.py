"""A model's layers by attention kind — the one description the KV cache, the speed model and the model cards
share (``tools.kv_cache.layer_groups`` builds it from a model spec, ``knowledge.cards`` from a catalog entry).

``full`` layers attend to (and cache) every token of the context, ``sliding`` layers at most their window,
``linear`` layers (Gated DeltaNet, Mamba) keep a constant state and attend to nothing. ``score_width`` is the
per-head width of the query·key and probability·value products: head_dim, Gemma 4's global head_dim on its
full layers, or MLA's latent + RoPE width (its absorbed kernels attend over the latent).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

LayerKind = Literal["full", "sliding", "linear"]
INDEXER_QUANT_BLOCK = 128  # DSA indexer key: one fp32 scale per 128 FP8 values
INDEXER_SCALE_BYTES = 4


def indexer_bytes_per_token_layer(index_head_dim: int) -> int:
    """Bytes the DSA lightning indexer caches per token and layer: FP8 keys plus one fp32 scale per block."""
    return index_head_dim + -(-index_head_dim // INDEXER_QUANT_BLOCK) * INDEXER_SCALE_BYTES


@dataclass(frozen=True, slots=True)
class LayerGroup:
    """Layers of one attention kind."""

    kind: LayerKind
    layers: int
    window: int | None = None
    score_width: int = 0

    def attended(self, context: int) -> int:
        """Tokens one new token attends to (and each layer caches) at ``context`` tokens."""
        if self.kind == "linear":
            return 0
        return min(context, self.window) if self.kind == "sliding" and self.window else context


def attention_layer_groups(kind: str, layers: int, *, head_dim: int, full_attention_layers: int | None = None,
                           sliding_window: int | None = None, global_head_dim: int | None = None,
                           kv_lora_rank: int | None = None, qk_rope_head_dim: int | None = None
                           ) -> tuple[LayerGroup, ...]:
    """The layer groups of a model with attention ``kind`` ('mha', 'gqa', 'mqa', 'mla', 'sliding', 'hybrid',
    'none'); ``full_attention_layers`` None means every layer is full."""
    if kind == "none":
        return (LayerGroup("linear", layers),)
    if kind == "mla":
        return (LayerGroup("full", layers, score_width=(kv_lora_rank or 0) + (qk_rope_head_dim or 0)),)
    full = full_attention_layers if full_attention_layers is not None else layers
    if kind == "sliding" and sliding_window:
        return (LayerGroup("full", full, score_width=global_head_dim or head_dim),
                LayerGroup("sliding", layers - full, sliding_window, head_dim))
    if kind == "hybrid":
        return (LayerGroup("full", full, score_width=head_dim), LayerGroup("linear", layers - full))
    return (LayerGroup("full", layers, score_width=head_dim),)
