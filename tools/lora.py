"""LoRA trainable parameters, computed from the model's projection shapes.

A rank-r adapter on a linear map d_in → d_out adds A (r × d_in) and B (d_out × r):
``r·(d_in + d_out)`` parameters. For a Llama-style block the projections are
q: h → a·d, k and v: h → kv·d, o: a·d → h, gate and up: h → I, down: I → h
(a = query heads, kv = KV heads, d = head_dim, I = MLP width). MoE blocks have one
gate/up/down per expert.
"""

from __future__ import annotations

from collections.abc import Iterable

from tools.errors import ToolError
from tools.modelspec import ModelSpec
from tools.result import note

ATTENTION_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj")
MLP_TARGETS = ("gate_proj", "up_proj", "down_proj")
ALL_TARGETS = ATTENTION_TARGETS + MLP_TARGETS
_ALIASES = {
    "all": ALL_TARGETS,
    "all-linear": ALL_TARGETS,
    "attention": ATTENTION_TARGETS,
    "attn": ATTENTION_TARGETS,
    "mlp": MLP_TARGETS,
    "q": ("q_proj",),
    "k": ("k_proj",),
    "v": ("v_proj",),
    "o": ("o_proj",),
    "gate": ("gate_proj",),
    "up": ("up_proj",),
    "down": ("down_proj",),
}


def resolve_targets(targets: Iterable[str]) -> tuple[str, ...]:
    """Canonical projection names from names or groups ('all', 'attention', 'mlp', 'q', …)."""
    out: list[str] = []
    for raw in targets:
        key = raw.strip().lower()
        names = _ALIASES.get(key) or ((key,) if key in ALL_TARGETS else None)
        if names is None:
            raise ToolError(
                note("error.lora.unknown_target", name=repr(raw)), suggestions=["all", "attention", "mlp", *ALL_TARGETS]
            )
        out += [n for n in names if n not in out]
    if not out:
        raise ToolError(note("error.lora.no_target"), suggestions=["all"])
    return tuple(out)


def mlp_width(spec: ModelSpec) -> int:
    """MLP width per expert: the spec's value, else solved from the parameter count.

    Dense: P = embeddings + L·(attention + 3·h·I) → I. MoE: the routed experts not used per
    token account for P − P_active = L·(E − k)·3·h·I.
    """
    h, L = spec.hidden_size, spec.layers
    if spec.is_moe and spec.num_experts and spec.experts_per_token and spec.params > spec.active_params:
        idle = spec.num_experts - spec.experts_per_token
        return max(1, round((spec.params - spec.active_params) / (L * idle * 3 * h)))
    if spec.intermediate_size:
        return spec.intermediate_size
    emb = spec.embedding_params * (1 if spec.tie_word_embeddings else 2)
    attn = h * spec.head_dim * (2 * spec.num_heads + 2 * spec.num_kv_heads)
    return max(1, round((spec.params - emb - L * attn) / (3 * h * L)))


def projection_shapes(spec: ModelSpec) -> dict[str, tuple[int, int, int]]:
    """(d_in, d_out, copies per layer) of each adaptable projection."""
    h, d = spec.hidden_size, spec.head_dim
    q_out = spec.num_heads * d
    kv_out = spec.num_kv_heads * d
    v_out = spec.num_kv_heads * (spec.v_head_dim or d)
    inter = mlp_width(spec)
    experts = spec.num_experts if spec.is_moe and spec.num_experts else 1
    return {
        "q_proj": (h, q_out, 1),
        "k_proj": (h, kv_out, 1),
        "v_proj": (h, v_out, 1),
        "o_proj": (spec.num_heads * (spec.v_head_dim or d), h, 1),
        "gate_proj": (h, inter, experts),
        "up_proj": (h, inter, experts),
        "down_proj": (inter, h, experts),
    }


def lora_trainable_params(spec: ModelSpec, rank: int, targets: Iterable[str] = ("all",)) -> int:
    """Σ over targeted projections of r·(d_in + d_out) × copies, times the number of layers."""
    if rank < 1:
        raise ToolError(note("error.lora.rank", rank=rank))
    shapes = projection_shapes(spec)
    per_layer = sum(rank * (shapes[t][0] + shapes[t][1]) * shapes[t][2] for t in resolve_targets(targets))
    return per_layer * spec.layers


def largest_linear_params(spec: ModelSpec) -> int:
    """Parameters of the largest single projection inside a block (dequantisation scratch)."""
    return max(d_in * d_out for d_in, d_out, _ in projection_shapes(spec).values())
