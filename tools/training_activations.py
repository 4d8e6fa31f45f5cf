"""Activation memory of training, re-derived for Llama-style decoder blocks.

Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models",
arXiv 2205.05198) count ``s·b·h·(34 + 5·a·s/h)`` bytes per GPT layer (fp16, with dropout and
GeLU, MLP width 4h). Modern Llama-style blocks differ: pre-RMSNorm, rotary embeddings,
grouped-query attention, a gated SwiGLU MLP of width ``I`` and no dropout. Counting, as the
paper does, every tensor autograd keeps for the backward pass (2 bytes per element in
bf16/fp16; ``e`` below is that element size), with s = sequence length, b = micro-batch,
h = hidden size, a = query heads, kv = kv_heads·head_dim, I = MLP width:

Attention sub-block
  * RMSNorm input (norm backward needs it)                         e·s·b·h
  * RMSNorm output = input of the Q/K/V projections                e·s·b·h
  * Q after RoPE and K after RoPE (QKᵀ backward; RoPE is a fixed
    linear map, so its own input need not be kept)                 e·s·b·(h + kv)
  * V (for the probabilities·V backward)                           e·s·b·kv
  * softmax probabilities, only without a fused attention kernel   e·a·s²·b
    (no dropout: Korthikanti's mask and dropout output, 3·a·s²·b, disappear)
  * attention output = input of the output projection              e·s·b·h
  → e·s·b·(4h + 2kv) + e·a·s²·b        (Korthikanti: 11·s·b·h + 5·a·s²·b)

MLP sub-block, y = W_down(SiLU(W_gate·x) ⊙ W_up·x)
  * RMSNorm input and output (= gate/up input)                     2·e·s·b·h
  * gate output G (SiLU backward), up output U and SiLU(G)
    (both needed by the product's backward)                        3·e·s·b·I
  * SiLU(G) ⊙ U = input of the down projection                     e·s·b·I
  → e·s·b·(2h + 4I)                    (Korthikanti: 19·s·b·h with I = 4h and GeLU)

Per layer, no recomputation, e = 2: ``s·b·(12h + 4kv + 8I) + 2·a·s²·b``; for Llama-3-8B
(kv = h/4, I = 3.5h) that is ``41·s·b·h + 2·a·s²·b`` against GPT's ``34·s·b·h + 5·a·s²·b``.

FlashAttention (or PyTorch SDPA's fused kernels) never stores the s² probabilities — it keeps
only a fp32 log-sum-exp per row (4·a·s·b, counted) and recomputes the rest. Selective
recomputation (Korthikanti §4.2) drops exactly the s² term too, so with a fused kernel it
changes nothing. Full recomputation keeps only each layer's input (e·s·b·h per layer) plus,
during the backward pass, one layer's activations being recomputed. Each layer's input is the
residual stream, which QLoRA keeps in fp32: PEFT's ``prepare_model_for_kbit_training`` casts the
embedding and the norms to fp32, so the hidden states added along the stream are fp32 as well.

Tensor parallelism t (Megatron): the four tensors around the norms (2 per sub-block) stay
replicated; Q, K, V, the attention output, G, U, SiLU(G), the product and the probabilities are
split across t (KV heads as ceil(kv_heads/t), at least one head). Sequence parallelism splits
the replicated ones along s as well, so everything is divided by t. MoE layers store, per
token, k routed expert passes (plus shared experts) of the MLP terms, and the router scores.
Outside the layers: the final norm's input and output (2·e·s·b·h) and the logits.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tools.inputs import ToolInput
from tools.result import Note, note
from tools.units import Bytes

Recompute = Literal["none", "selective", "full"]


class ActivationInput(ToolInput):
    """Shape of the model and of one micro-batch on one GPU."""

    model_config = ConfigDict(extra="forbid")

    layers: int = Field(ge=1)
    hidden: int = Field(ge=1)
    heads: int = Field(ge=1)
    kv_heads: int = Field(ge=1)
    head_dim: int = Field(ge=1)
    intermediate: int = Field(ge=1, description="MLP width (per expert for MoE)")
    vocab: int = Field(ge=1)
    seq: int = Field(ge=1)
    micro_batch: int = Field(ge=1)
    element_bytes: float = Field(2.0, gt=0, description="bytes of one stored activation (bf16/fp16 = 2)")
    residual_bytes: float | None = Field(None, gt=0, description="bytes of one element of the residual stream (each "
                                                                 "layer's input); default element_bytes")
    tp: int = Field(1, ge=1)
    sequence_parallel: bool = False
    recompute: Recompute = "none"
    flash_attention: bool = True
    experts_per_token: int = Field(0, ge=0, description="MoE routed experts per token (0 = dense)")
    num_experts: int = Field(0, ge=0)
    shared_experts: int = Field(0, ge=0)
    shared_intermediate: int | None = Field(None, ge=1, description="shared-expert width, if different")
    logits_bytes_per_element: float = Field(4.0, ge=0, description="fp32 logits")
    logits_copies: float = Field(
        2.0, ge=0, description="fp32 logits + their softmax/gradient at the loss peak; 0 for a fused loss"
    )


class ActivationEstimate(BaseModel):
    """Activation bytes on one GPU, by part."""

    model_config = ConfigDict(extra="forbid")

    per_layer_bytes: Bytes = Field(description="one layer, no recomputation")
    layers_bytes: Bytes = Field(description="all layers under the chosen recomputation")
    head_bytes: Bytes = Field(description="final norm input/output")
    logits_bytes: Bytes
    total_bytes: Bytes
    per_layer_formula: Note
    layers_formula: Note
    logits_formula: Note


def _per_layer(a: ActivationInput) -> tuple[float, Note]:
    """Bytes one layer keeps without recomputation (on one TP rank)."""
    s, b, h, e, t = a.seq, a.micro_batch, a.hidden, a.element_bytes, a.tp
    kv = math.ceil(a.kv_heads / t) * a.head_dim  # per rank, at least one head
    q_per_rank = h / t
    heads_per_rank = a.heads / t
    # Tensors next to the norms: replicated under plain TP, split under TP + SP.
    norm_side = 4 * h / (t if a.sequence_parallel else 1)
    # Attention tensors split by heads: Q, K, V, attention output; plus fp32 LSE with flash.
    attn_split = 2 * q_per_rank + 2 * kv
    lse = (4 / e) * heads_per_rank if a.flash_attention else 0.0
    if a.experts_per_token:
        passes = a.experts_per_token
        width = a.intermediate * passes + (a.shared_intermediate or a.intermediate) * a.shared_experts
        router = (4 / e) * a.num_experts  # fp32 router scores per token
        dispatch = float(h * passes)  # each routed copy of the token's hidden state
    else:
        width, router, dispatch = a.intermediate, 0.0, 0.0
    mlp_split = 4 * width / t + dispatch / t
    # The two norm inputs are the residual stream, which may be stored wider than the other tensors.
    wider = ((a.residual_bytes or e) - e) / e * 2 * h / (t if a.sequence_parallel else 1)
    elems_per_token = norm_side + wider + attn_split + lse + mlp_split + router
    probs = 0.0 if (a.flash_attention or a.recompute != "none") else heads_per_rank * s  # a·s per token
    total = e * s * b * (elems_per_token + probs)
    kv_txt = "kv" if t == 1 else "kv/t"
    norm_txt = "4h" if t == 1 else ("4h/t" if a.sequence_parallel else "4h")
    per_t = "/t" if t > 1 else ""
    formula = note(
        "training.formula.per_layer",
        norm=norm_txt,
        t=per_t,
        kv=kv_txt,
        moe=note("training.formula.per_layer_moe") if a.experts_per_token else "",
        probs=note("training.formula.per_layer_probs", t=per_t) if probs else "",
        lse=note("training.formula.per_layer_lse") if a.flash_attention else "",
    )
    return total, formula


def estimate_activations(a: ActivationInput) -> ActivationEstimate:
    """Activation bytes on one GPU for one micro-batch (see module docstring for the derivation)."""
    s, b, h, e, t = a.seq, a.micro_batch, a.hidden, a.element_bytes, a.tp
    layer, layer_formula = _per_layer(a)
    split = t if a.sequence_parallel else 1
    if a.recompute == "full":
        checkpoints = (a.residual_bytes or e) * s * b * h / split
        layers_total = a.layers * checkpoints + layer
        layers_formula = note("training.formula.layers_full", t="/t" if split > 1 else "")
    else:
        layers_total = a.layers * layer
        layers_formula = note("training.formula.layers_selective" if a.recompute == "selective"
                              else "training.formula.layers")
    head = 2 * e * s * b * h / split
    logits = s * b * a.vocab / t * a.logits_bytes_per_element * a.logits_copies
    logits_formula = note("training.formula.logits", t="/t" if t > 1 else "",
                          element_bytes=a.logits_bytes_per_element, copies=a.logits_copies)
    total = layers_total + head + logits
    return ActivationEstimate(
        per_layer_bytes=round(layer),
        layers_bytes=round(layers_total),
        head_bytes=round(head),
        logits_bytes=round(logits),
        total_bytes=round(total),
        per_layer_formula=layer_formula,
        layers_formula=layers_formula,
        logits_formula=logits_formula,
    )
