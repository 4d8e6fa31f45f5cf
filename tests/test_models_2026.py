"""Models added for December 2026 and the two schema gaps they needed (INT4 weights, the DSA indexer cache).

Every expected number is worked out here by hand from the published config.json values quoted in the
comments, not read back from the catalog.
"""

from __future__ import annotations

import datetime as dt

import pytest
from pydantic import ValidationError

from knowledge import load_catalog
from knowledge.messages import render
from knowledge.schema import Attention, AttentionKind, Model
from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory
from tools.kv_cache import kv_bytes_per_token, kv_cache_size, kv_layout
from tools.modelspec import ModelSpec
from tools.precision import native_precision, resolve_precision

CATALOG = load_catalog()
NEW_IDS = (
    "qwen3.6-35b-a3b", "qwen3.6-27b", "qwen3.5-397b-a17b", "qwen3-235b-a22b-2507", "qwen3-30b-a3b-2507",
    "qwen3-4b-2507", "deepseek-v3.2", "glm-5", "kimi-k2-0711", "kimi-k2.5", "kimi-k2.6",
)


def gdn_state_bytes(linear_layers: int, key_heads: int, value_heads: int, key_dim: int, value_dim: int,
                    conv_kernel: int = 4, element_bytes: int = 2) -> int:
    """Gated DeltaNet state of one sequence: recurrent (value heads × key dim × value dim) plus the conv
    window ((kernel − 1) × (q, k and v channels)), per linear layer, at ``element_bytes``."""
    recurrent = value_heads * key_dim * value_dim
    conv = (conv_kernel - 1) * (2 * key_heads * key_dim + value_heads * value_dim)
    return linear_layers * (recurrent + conv) * element_bytes


# --- DeepSeek Sparse Attention: MLA latent + lightning-indexer key --------------------------------------

# deepseek-ai/DeepSeek-V3.2 config.json: 61 layers, kv_lora_rank 512, qk_rope_head_dim 64, index_head_dim 128.
# The indexer key is FP8 (1 B per value) with one fp32 scale per 128 values: 128 + 4 = 132 B per token-layer.
V32_LATENT_16 = (512 + 64) * 61 * 2  # 70,272 B: the same as DeepSeek-V3
V32_INDEXER = (128 * 1 + 4) * 61  # 8,052 B


def test_deepseek_v32_kv_per_token_counts_the_indexer_key() -> None:
    spec = ModelSpec.from_catalog("DeepSeek-V3.2")
    assert kv_bytes_per_token(spec, "bf16") == V32_LATENT_16 + V32_INDEXER == 78_324
    # the FP8 latent in the sparse kernels' layout (512 FP8 + 16 B of scales + RoPE 64 in bf16); the indexer is FP8
    assert kv_bytes_per_token(spec, "fp8") == (512 + 16 + 128) * 61 + V32_INDEXER == 48_068
    # every tensor-parallel rank keeps the whole latent and the whole indexer key
    assert kv_bytes_per_token(spec, "bf16", tp=8) == 78_324


def test_deepseek_v32_is_not_deepseek_v3() -> None:
    assert CATALOG.model("DeepSeek-V3.2").id == "deepseek-v3.2"
    assert CATALOG.model("DeepSeek-V3.2-Exp").id == "deepseek-v3.2"
    assert CATALOG.model("DeepSeek-V3.1").id == "deepseek-v3"
    v3 = ModelSpec.from_catalog("deepseek-v3")
    assert kv_bytes_per_token(v3, "bf16") == V32_LATENT_16
    assert kv_layout(v3, "bf16").indexer_bytes_per_token_layer == 0


def test_dsa_indexer_is_in_the_generic_and_the_vllm_totals() -> None:
    spec = ModelSpec.from_catalog("deepseek-v3.2")
    per_token_layer = 576 * 2 + 132
    generic = kv_cache_size(spec, context=1000, sequences=2, kv_dtype="bf16", engine="generic")
    assert generic.bytes == 61 * 2 * 1000 * per_token_layer
    # vLLM: 16-token blocks, ceil(1000 / 16) = 63 blocks per sequence
    vllm = kv_cache_size(spec, context=1000, sequences=2, kv_dtype="bf16", tp=8, engine="vllm")
    assert vllm.bytes == 61 * 2 * 63 * 16 * per_token_layer
    for lang in ("en", "zh"):
        text = render(vllm.formula, lang)
        assert "128" in text and "512" in text


def test_glm5_kv_per_token() -> None:
    # zai-org/GLM-5 config.json: 78 layers, kv_lora_rank 512, qk_rope_head_dim 64, index_head_dim 128.
    spec = ModelSpec.from_catalog("GLM-5")
    assert kv_bytes_per_token(spec, "bf16") == 78 * ((512 + 64) * 2 + 132) == 100_152
    m = CATALOG.model("glm-5")
    assert (m.params_b, m.active_params_b, m.max_context) == (744.0, 40.0, 202_752)
    assert m.moe is not None and (m.moe.num_experts, m.moe.experts_per_token, m.moe.shared_experts) == (256, 8, 1)


def test_indexer_is_only_modelled_on_mla() -> None:
    with pytest.raises(ValidationError, match="indexer_head_dim"):
        Attention(kind=AttentionKind.gqa, num_heads=8, num_kv_heads=2, head_dim=128, indexer_head_dim=128)


# --- INT4-native Kimi weights ----------------------------------------------------------------------------

# moonshotai/Kimi-K2.5 config.json: vocab 163,840 × hidden 7,168, untied; routed experts INT4 in groups of
# 32 with a bf16 scale = 4 + 16/32 = 4.5 bits; the embedding and lm_head stay 16-bit.
KIMI_EMB = 163_840 * 7_168 * 2  # parameters of embed_tokens + lm_head
KIMI_INT4_BYTES = round((1_040e9 - KIMI_EMB) * 4.5 / 8 + KIMI_EMB * 2)


def test_kimi_k25_weights_are_counted_at_int4() -> None:
    m = CATALOG.model("Kimi K2.5")
    assert m.native_dtype == "int4"
    spec = ModelSpec.from_catalog("kimi-k2.5")
    assert spec.native_dtype == native_precision("int4") == "int4-g32"
    assert resolve_precision(spec.native_dtype).bits_per_weight == 4.5
    assert spec.weight_bytes_at() == KIMI_INT4_BYTES
    assert 585e9 < KIMI_INT4_BYTES < 592e9  # the published checkpoint is ~595 GB
    # the block-FP8 K2 of the same size needs ~1.04 TB: INT4 is a little over half of it
    fp8 = ModelSpec.from_catalog("kimi-k2").weight_bytes_at()
    assert 0.55 < spec.weight_bytes_at() / fp8 < 0.58


def test_kimi_int4_reaches_the_inference_memory_result() -> None:
    r = estimate_inference_memory(InferenceMemoryInput(model="kimi-k2.6", gpu="h200-sxm", gpus=8, context=32768))
    assert r.precision == "int4-g32"
    assert abs(r.breakdown.weights * 8 - KIMI_INT4_BYTES) <= 8  # tensor parallel: an eighth on each GPU


def test_kimi_first_release_and_0905_contexts() -> None:
    # Kimi-K2-Instruct (July 2025): YaRN factor 32 over 4,096 = 131,072; the 0905 update: factor 64 = 262,144
    assert CATALOG.model("moonshotai/Kimi-K2-Instruct").max_context == 131_072
    assert CATALOG.model("Kimi-K2-Instruct-0905").max_context == 262_144
    assert CATALOG.model("kimi k2").id == "kimi-k2"
    assert CATALOG.model("Kimi K2.6").max_context == CATALOG.model("Kimi K2.5").max_context == 262_144


def test_native_dtype_accepts_int4_and_nothing_made_up() -> None:
    base = CATALOG.model("kimi-k2.5").model_dump()
    assert Model.model_validate({**base, "native_dtype": "int4"}).native_dtype == "int4"
    with pytest.raises(ValidationError):
        Model.model_validate({**base, "native_dtype": "int3"})


# --- Qwen3.5 / Qwen3.6 hybrid Gated DeltaNet ----------------------------------------------------------------

@pytest.mark.parametrize(
    ("name", "layers", "full", "key_heads", "value_heads", "kv_heads"),
    [
        # Qwen/Qwen3.6-35B-A3B: 40 layers, full_attention_interval 4, linear 16 key / 32 value heads of 128
        ("Qwen3.6-35B-A3B", 40, 10, 16, 32, 2),
        # Qwen/Qwen3.6-27B: 64 layers, linear 16 key / 48 value heads of 128; attention 24 Q / 4 KV
        ("Qwen3.6-27B", 64, 16, 16, 48, 4),
        # Qwen/Qwen3.5-397B-A17B: 60 layers, linear 16 key / 64 value heads of 128; attention 32 Q / 2 KV
        ("Qwen3.5-397B-A17B", 60, 15, 16, 64, 2),
    ],
)
def test_qwen_gdn_state_and_kv(name: str, layers: int, full: int, key_heads: int, value_heads: int,
                               kv_heads: int) -> None:
    state = gdn_state_bytes(layers - full, key_heads, value_heads, 128, 128)
    spec = ModelSpec.from_catalog(name)
    lay = kv_layout(spec, "bf16")
    assert (lay.full_layers, lay.linear_layers) == (full, layers - full)
    assert lay.state_bytes_per_seq == state
    # head_dim 256 on the full-attention layers only
    per_token = full * 2 * kv_heads * 256 * 2
    assert kv_bytes_per_token(spec, "bf16") == per_token
    size = kv_cache_size(spec, context=4096, sequences=3, kv_dtype="bf16")
    assert size.bytes == 3 * 4096 * per_token + 3 * state


def test_qwen36_35b_state_in_numbers() -> None:
    # 30 × (32 × 128 × 128 + 3 × 8,192) × 2 B
    assert gdn_state_bytes(30, 16, 32, 128, 128) == 32_931_840
    assert CATALOG.model("qwen3.6-35b-a3b").attention.linear_state_bytes_per_seq == 32_931_840
    m = CATALOG.model("qwen3.6:35b")
    assert m.moe is not None and (m.moe.num_experts, m.moe.experts_per_token, m.moe.shared_experts) == (256, 8, 1)
    assert (m.hidden_size, m.intermediate_size, m.vocab_size, m.max_context) == (2048, 512, 248_320, 262_144)


# --- Qwen3 2507 -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("alias", "entry", "original"),
    [
        ("Qwen3-235B-A22B-Instruct-2507", "qwen3-235b-a22b-2507", "qwen3-235b-a22b"),
        ("Qwen3-235B-A22B-Thinking-2507", "qwen3-235b-a22b-2507", "qwen3-235b-a22b"),
        ("Qwen3-30B-A3B-Instruct-2507", "qwen3-30b-a3b-2507", "qwen3-30b-a3b"),
        ("Qwen3-4B-Instruct-2507", "qwen3-4b-2507", "qwen3-4b"),
    ],
)
def test_2507_checkpoints_have_the_native_256k_window(alias: str, entry: str, original: str) -> None:
    new, old = CATALOG.model(alias), CATALOG.model(original)
    assert new.id == entry
    assert new.max_context == 262_144 and old.max_context == 131_072
    assert not any("2507" in a for a in old.aliases)
    # same shape as the first release
    same = ("layers", "hidden_size", "intermediate_size", "vocab_size", "params_b", "attention", "moe")
    assert all(getattr(new, f) == getattr(old, f) for f in same)


# --- every new entry ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("model_id", NEW_IDS)
def test_new_entries_are_sourced_and_dated(model_id: str) -> None:
    m = CATALOG.model(model_id)
    assert m.as_of == dt.date(2026, 12, 4)
    assert any(s.startswith("hf:") and s.endswith("config.json") for s in m.sources)
    assert any(s.startswith("https://") for s in m.sources)
    assert m.aliases and any(re_cjk(a) for a in m.aliases)


def re_cjk(text: str) -> bool:
    return any("\u3400" <= ch <= "\u9fff" for ch in text)
