"""Layers by attention kind (tools/kv_cache.layer_groups): one description shared by the KV cache and the
attention FLOPs of the speed model, checked against hand counts from the models' config.json files."""

from __future__ import annotations

import pytest

from tools.kv_cache import attention_flops_per_token, kv_layout, layer_groups
from tools.modelspec import load_model_spec


@pytest.mark.parametrize(("model", "groups"), [
    ("gemma-3-27b", [("full", 10, None, 128), ("sliding", 52, 1024, 128)]),  # 5 local : 1 global, window 1024
    ("gemma-4-31b", [("full", 10, None, 512), ("sliding", 50, 1024, 256)]),  # global layers have head_dim 512
    ("qwen3-next-80b-a3b", [("full", 12, None, 256), ("linear", 36, None, 0)]),  # 3 Gated DeltaNet : 1 attention
    ("deepseek-v3", [("full", 61, None, 512 + 64)]),  # MLA: latent 512 + RoPE 64
    ("llama-3.1-8b", [("full", 32, None, 128)]),
])
def test_layer_groups_match_the_configs(model: str, groups: list[tuple[str, int, int | None, int]]) -> None:
    spec = load_model_spec(model)
    assert [(g.kind, g.layers, g.window, g.score_width) for g in layer_groups(spec)] == groups
    lay = kv_layout(spec)  # the cache counts the same layers
    counts = {kind: layers for kind, layers, _, _ in groups}
    assert (lay.full_layers, lay.sliding_layers, lay.linear_layers) == (
        counts.get("full", 0), counts.get("sliding", 0), counts.get("linear", 0))


def test_attention_flops_count_what_each_kind_attends_to() -> None:
    gemma = load_model_spec("gemma-3-27b")  # 32 heads × 128
    assert attention_flops_per_token(gemma, 4096) == 4 * 32 * 128 * (10 * 4096 + 52 * 1024)
    assert attention_flops_per_token(gemma, 512) == 4 * 32 * 128 * 62 * 512  # inside the window: every layer
    qwen = load_model_spec("qwen3-next-80b-a3b")  # linear layers attend to nothing
    assert attention_flops_per_token(qwen, 4096) == 4 * 16 * 256 * 12 * 4096
    ds = load_model_spec("deepseek-v3")
    assert attention_flops_per_token(ds, 1000) == 4 * 128 * 576 * 61 * 1000


def test_model_cards_size_the_cache_from_the_same_layer_groups() -> None:
    """Gemma-3-27B: 62 layers, 16 KV heads × 128 at 16-bit = 8,192 B per token and layer; 10 global layers
    hold the full 131,072 tokens, 52 sliding layers their 1,024-token window: 8,192 × (10·131,072 + 52·1,024)
    = 11.17 GB. The card says what the sizing tool computes, for every layer kind."""
    from knowledge import load_catalog
    from knowledge.cards import model_card
    from tools.kv_cache import kv_cache_bytes

    cat = load_catalog()
    card = model_card(cat.model("gemma-3-27b"), "en").text
    assert "about 11.2 GB" in card and "sliding-window layers keep their window" in card
    assert kv_cache_bytes(load_model_spec("gemma-3-27b"), 131072) == 8192 * (10 * 131072 + 52 * 1024)
    for model in ("llama-3.1-8b", "deepseek-v3", "gemma-4-31b", "gpt-oss-120b"):
        spec = load_model_spec(model)
        figure = kv_cache_bytes(spec, spec.max_context) / 1e9
        assert f"about {round(figure, 1):g} GB" in model_card(cat.model(model), "en").text, model
