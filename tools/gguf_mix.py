"""GGUF file size per tensor: the storage type llama.cpp's quantizer gives each tensor of a quant mix.

A mix name (Q4_K_M, Q5_K_M, …) names a base type, but llama.cpp stores some tensors wider (facts from its
``llama-quant.cpp``, ``llama_tensor_get_type``):

* ``output.weight`` — and the embedding when it is tied to it — in Q6_K (Q8_0 files keep Q8_0);
* an untied ``token_embd`` in the base type;
* ``attn_v`` and ``ffn_down`` in Q6_K on the "more bits" layers of Q4_K_M and Q5_K_M: the first and last
  eighth of the layers and every third layer between (i < L/8, i ≥ 7L/8 or (i − L/8) mod 3 = 2);
* Q3_K_M: ``attn_v`` Q5_K on the first two layers and Q4_K after, ``ffn_down`` Q5_K on the first sixteenth and
  Q4_K after, ``attn_output`` Q4_K; Q2_K: ``attn_v`` Q4_K (Q3_K below 4 query heads per KV head), ``ffn_down``
  and ``attn_output`` Q3_K; Q4_K_S: ``attn_v`` Q5_K on the first 4 layers, ``ffn_down`` Q5_K on the first eighth;
  IQ4_XS: ``attn_v`` Q5_K when 4 or more query heads share a KV head;
* models of exactly 8 experts (Mixtral): ``attn_v`` and ``attn_k`` in Q8_0, ``attn_output`` in Q5_K for the
  K-quant mixes; 70B-class models: an ``attn_v`` left at Q3_K/Q4_K goes to Q5_K;
* norms, biases and the MoE router stay F32;
* a tensor whose rows (its input width) are not a multiple of 256 cannot hold a 256-value K-quant block and
  falls back: Q2_K/Q3_K → Q4_0, Q4_K → Q5_0, Q5_K → Q5_1, Q6_K → Q8_0, IQ4_XS → IQ4_NL (Qwen2.5-72B's
  29,568-wide ``ffn_down``, every tensor of Gemma-3-1B's 1,152-wide layers).

The tensor shapes come from the spec: attention from heads × head_dim, the MLP — dense or all experts — is what
the parameter count leaves, a third of it ``ffn_down`` (MLA and hybrid attention layers fall in with it).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from tools.precision import resolve_precision

if TYPE_CHECKING:
    from tools.modelspec import ModelSpec

# 256-value block types and the 32-value type a tensor of another row width gets instead.
_FALLBACK = {"Q2_K": "Q4_0", "Q3_K": "Q4_0", "Q4_K": "Q5_0", "Q5_K": "Q5_1", "Q6_K": "Q8_0", "IQ4_XS": "IQ4_NL"}


@cache
def _type_bits(kind: str) -> float:
    """Bits per weight of a ggml storage type (its block's bytes × 8 / values): the precision table's base."""
    return resolve_precision(kind).base_bits_per_weight


def _bits(kind: str, row: int) -> float:
    """Bits per weight of ``kind`` for a tensor whose rows hold ``row`` values."""
    return _type_bits(_FALLBACK[kind] if kind in _FALLBACK and row % 256 else kind)
# Mix → base type; mixes not listed here are sized by their bits per weight alone.
BASE = {"Q8_0": "Q8_0", "Q6_K": "Q6_K", "Q5_K_M": "Q5_K", "Q4_K_M": "Q4_K", "Q4_K_S": "Q4_K", "Q4_0": "Q4_0",
        "IQ4_XS": "IQ4_XS", "Q3_K_M": "Q3_K", "Q2_K": "Q2_K"}
_K_QUANT_8_EXPERTS = {"Q2_K", "Q3_K_M", "Q4_K_S", "Q4_K_M", "IQ4_XS"}  # attn_output Q5_K with 8 experts


def more_bits(layer: int, layers: int) -> bool:
    """The layers Q4_K_M and Q5_K_M store attn_v and ffn_down wider (C integer division, as llama.cpp)."""
    eighth = layers // 8
    return layer < eighth or layer >= 7 * layers // 8 or (layer - eighth) % 3 == 2


def _attn_v(mix: str, layer: int, spec: ModelSpec) -> str:
    base = BASE[mix]
    gqa = spec.num_heads // max(spec.num_kv_heads, 1)
    kind = {"Q2_K": "Q4_K" if gqa >= 4 else "Q3_K",
            "Q3_K_M": "Q5_K" if layer < 2 else "Q4_K",
            "IQ4_XS": "Q5_K" if gqa >= 4 else base,
            "Q4_K_S": "Q5_K" if layer < 4 else base}.get(mix, base)
    if mix in ("Q4_K_M", "Q5_K_M") and more_bits(layer, spec.layers):
        kind = "Q6_K"
    if 60e9 <= spec.params <= 80e9 and kind in ("Q3_K", "Q4_K"):
        kind = "Q5_K"
    return "Q8_0" if spec.num_experts == 8 else kind


def _ffn_down(mix: str, layer: int, layers: int) -> str:
    if mix in ("Q4_K_M", "Q5_K_M"):
        return "Q6_K" if more_bits(layer, layers) else BASE[mix]
    if mix == "Q3_K_M":
        return "Q5_K" if layer < layers // 16 else "Q4_K"
    if mix == "Q2_K":
        return "Q3_K"
    if mix == "Q4_K_S" and layer < layers // 8:
        return "Q5_K"
    return BASE[mix]


def gguf_file_bytes(spec: ModelSpec, mix: str) -> int | None:
    """Bytes of a ``mix`` GGUF of ``spec`` with each tensor at the type llama.cpp gives it; None for a mix
    without a per-tensor rule here (its bits per weight apply)."""
    if mix not in BASE:
        return None
    base = BASE[mix]
    h, layers = spec.hidden_size, spec.layers
    vocab = spec.vocab_size * h
    head = "Q8_0" if mix == "Q8_0" else "Q6_K"
    total = vocab * _bits(head, h) + (0 if spec.tie_word_embeddings else vocab * _bits(base, h))
    q_width, kv_width = spec.num_heads * spec.head_dim, spec.num_kv_heads * spec.head_dim
    v_width = spec.num_kv_heads * (spec.v_head_dim or spec.head_dim)
    plain = spec.attention.value not in ("mla", "hybrid", "none")
    attn = (2 * h * q_width + h * kv_width + h * v_width) if plain else 0
    norms = layers * 2 * h + h
    router = layers * h * (spec.num_experts or 0)
    mlp = max(spec.params - vocab * (1 if spec.tie_word_embeddings else 2) - layers * attn - norms - router, 0)
    mlp_layer = mlp / layers  # MLA and hybrid attention fall in here too (a few % of their parameters)
    width = spec.intermediate_size or h  # ffn_down's rows (per expert for MoE)
    k_type = "Q8_0" if spec.num_experts == 8 else base
    o_type = "Q5_K" if spec.num_experts == 8 and mix in _K_QUANT_8_EXPERTS else \
        {"Q2_K": "Q3_K", "Q3_K_M": "Q4_K"}.get(mix, base)
    for i in range(layers):
        if plain:
            total += (h * q_width * _bits(base, h) + h * kv_width * _bits(k_type, h)
                      + h * v_width * _bits(_attn_v(mix, i, spec), h) + q_width * h * _bits(o_type, q_width))
        total += mlp_layer * (2 / 3 * _bits(base, h) + 1 / 3 * _bits(_ffn_down(mix, i, layers), width))
    total += (norms + router) * _type_bits("F32")
    return round(total / 8)
