"""KV cache against hand-derived sizes from published model configs and engine logs."""

from __future__ import annotations

import pytest

from knowledge.schema import AttentionKind
from tools.errors import ToolError
from tools.kv_cache import kv_bytes_per_token, kv_cache_bytes, kv_cache_size, kv_heads_per_rank
from tools.modelspec import ModelSpec

MiB = 2**20


def llama31_8b() -> ModelSpec:
    # meta-llama/Llama-3.1-8B config.json: 32 layers, 32 heads, 8 KV heads, head_dim 128.
    return ModelSpec.custom(
        8.03,
        name="Llama-3.1-8B",
        layers=32,
        hidden_size=4096,
        num_heads=32,
        num_kv_heads=8,
        head_dim=128,
        vocab_size=128256,
        intermediate_size=14336,
        max_context=131072,
    )


def llama2_7b() -> ModelSpec:
    # meta-llama/Llama-2-7b-hf config.json: MHA, 32 layers × 32 heads × 128.
    return ModelSpec.custom(
        6.74,
        name="Llama-2-7B",
        layers=32,
        hidden_size=4096,
        num_heads=32,
        num_kv_heads=32,
        head_dim=128,
        vocab_size=32000,
        intermediate_size=11008,
    )


def deepseek_v3() -> ModelSpec:
    # deepseek-ai/DeepSeek-V3 config.json: 61 layers, kv_lora_rank 512, qk_rope_head_dim 64, 128 heads.
    return ModelSpec.custom(
        671,
        name="DeepSeek-V3",
        layers=61,
        hidden_size=7168,
        num_heads=128,
        num_kv_heads=128,
        head_dim=192,
        vocab_size=129280,
        kv_lora_rank=512,
        qk_rope_head_dim=64,
        active_params_b=37,
        num_experts=256,
        experts_per_token=8,
    )


def gemma3_27b() -> ModelSpec:
    # google/gemma-3-27b-it text config: 62 layers, 16 KV heads × 128, sliding window 1024,
    # sliding_window_pattern 6 (every 6th layer global → 62 // 6 = 10 global layers).
    return ModelSpec.custom(
        27.4,
        name="Gemma-3-27B",
        layers=62,
        hidden_size=5376,
        num_heads=32,
        num_kv_heads=16,
        head_dim=128,
        vocab_size=262208,
        sliding_window=1024,
        full_attention_layers=10,
    )


def test_gqa_per_token_llama31_8b_row5() -> None:
    # measurements.md row 5 (kvplan): 131,072 B/token = 2 (K,V) · 32 layers · 8 KV heads · 128 · 2 B.
    assert kv_bytes_per_token(llama31_8b(), "bf16") == 2 * 32 * 8 * 128 * 2 == 131_072


def test_gqa_per_token_from_catalog_entry() -> None:
    assert kv_bytes_per_token(ModelSpec.from_catalog("llama-3.1-8b"), "bf16") == 131_072


def test_mha_is_four_times_gqa_for_llama_class() -> None:
    assert kv_bytes_per_token(llama2_7b(), "fp16") == 2 * 32 * 32 * 128 * 2 == 4 * 131_072


def test_mla_deepseek_v3_is_latent_not_heads() -> None:
    spec = deepseek_v3()
    assert spec.attention == AttentionKind.mla
    # 61 layers × (512 latent + 64 rope) × 2 B; NOT 2 · 128 heads · 192 · 61 · 2 (= 5.99 MB).
    assert kv_bytes_per_token(spec, "bf16") == 61 * 576 * 2 == 70_272
    # The latent is not split by tensor parallelism: every rank keeps all of it.
    assert kv_bytes_per_token(spec, "bf16", tp=8) == 70_272


def test_mla_from_catalog_if_present() -> None:
    spec = ModelSpec.from_catalog("deepseek-v3")
    assert kv_bytes_per_token(spec, "bf16") == 70_272


def test_sliding_window_gemma3_at_32k_by_hand() -> None:
    spec = gemma3_27b()
    ctx = 32_768
    per_layer_token = 2 * 16 * 128 * 2  # K and V, 16 KV heads × 128, bf16
    by_hand = 10 * ctx * per_layer_token + 52 * 1024 * per_layer_token  # globals hold 32k, locals 1024
    assert kv_cache_bytes(spec, ctx, 1, "bf16") == by_hand
    naive = 62 * ctx * per_layer_token
    assert by_hand < naive / 5  # the calculators that ignore the window are > 5× too high here


def test_sliding_window_below_window_costs_every_layer() -> None:
    spec = gemma3_27b()
    assert kv_cache_bytes(spec, 512, 1, "bf16") == 62 * 512 * 2 * 16 * 128 * 2


def test_tp_divides_kv_heads_then_replicates() -> None:
    spec = llama31_8b()
    assert kv_bytes_per_token(spec, "bf16", tp=2) == 131_072 // 2
    assert kv_bytes_per_token(spec, "bf16", tp=8) == 2 * 32 * 1 * 128 * 2
    # tp 16 > 8 KV heads: each rank still keeps one head (floor of 1), replicated twice.
    assert kv_heads_per_rank(spec, 16) == (1, 2)
    assert kv_bytes_per_token(spec, "bf16", tp=16) == 2 * 32 * 1 * 128 * 2 == 16_384


def test_tp_that_does_not_divide_kv_heads_is_an_error() -> None:
    with pytest.raises(ToolError) as exc:
        kv_bytes_per_token(llama31_8b(), "bf16", tp=3)
    assert any("tp=1, 2, 4, 8" in s for s in exc.value.suggestions)


def test_user_context_not_model_maximum() -> None:
    spec = llama31_8b()
    assert kv_cache_bytes(spec, 8192, 1, "bf16") == 8192 * 131_072
    assert kv_cache_bytes(spec, 8192, 4, "bf16") == 4 * 8192 * 131_072


def test_vllm_rounds_each_sequence_to_16_token_blocks() -> None:
    spec = llama31_8b()
    assert kv_cache_bytes(spec, 1000, 3, "bf16", engine="vllm") == 3 * 63 * 16 * 131_072


def test_llamacpp_kv_rows_3_and_4() -> None:
    # measurements.md row 3: Llama-2-7B, n_ctx 2048, f16 → KV 1024.00 MiB (K 512 + V 512).
    assert kv_cache_bytes(llama2_7b(), 2048, 1, "fp16", engine="llamacpp") == 1024 * MiB
    # row 4: Llama-3.1-8B, 4 parallel sequences × 2048 = n_ctx 8192 shared ring → 1024.00 MiB.
    assert kv_cache_bytes(llama31_8b(), 2048, 4, "fp16", engine="llamacpp") == 1024 * MiB


def test_llamacpp_quantised_kv() -> None:
    # q8_0 = 34 B per 32 elements: 1024 MiB of f16 (2 B) becomes 1024 · 17/32 MiB.
    assert kv_cache_bytes(llama2_7b(), 2048, 1, "q8_0", engine="llamacpp") == 1024 * MiB * 17 // 32
    assert kv_cache_bytes(llama2_7b(), 2048, 1, "q4_0", engine="llamacpp") == 1024 * MiB * 9 // 32


def test_llamacpp_pads_cells_to_256() -> None:
    assert kv_cache_size(llama31_8b(), 1000, 1, "fp16", engine="llamacpp").full_tokens == 1024


def test_hybrid_linear_layers_hold_constant_state() -> None:
    base = llama31_8b()
    hybrid = base.with_updates(
        attention=AttentionKind.hybrid, full_attention_layers=8, linear_state_bytes_per_seq=50 * MiB
    )
    small = kv_cache_bytes(hybrid, 1024, 2, "bf16")
    large = kv_cache_bytes(hybrid, 2048, 2, "bf16")
    per_token = 8 * 2 * 8 * 128 * 2  # only 8 attention layers store tokens
    assert small == 2 * 1024 * per_token + 2 * 50 * MiB
    assert large - small == 2 * 1024 * per_token  # the state does not grow with context


def test_fp8_halves_bf16() -> None:
    spec = llama31_8b()
    assert kv_cache_bytes(spec, 4096, 1, "fp8") * 2 == kv_cache_bytes(spec, 4096, 1, "bf16")


def test_bad_context_is_an_error() -> None:
    with pytest.raises(ToolError):
        kv_cache_bytes(llama31_8b(), 0, 1, "bf16")


def test_tokens_for_budget_inverts_the_cache_size() -> None:
    from tools.kv_cache import tokens_for_budget

    assert tokens_for_budget(llama31_8b(), 1 * 2**30, "bf16") == 2**30 // 131_072 == 8192
    # Sliding layers only cost their window: at 32k context a Gemma-3 token costs its global share plus
    # the locals' 1024-token window spread over the context.
    spec = gemma3_27b()
    per_layer = 2 * 16 * 128 * 2
    per_token = 10 * per_layer + 52 * per_layer * 1024 / 32_768
    assert tokens_for_budget(spec, 10 * 2**30, "bf16", context=32_768) == int(10 * 2**30 // per_token)
