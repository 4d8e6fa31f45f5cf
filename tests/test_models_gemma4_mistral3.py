"""Gemma 4 (31B dense, 26B-A4B MoE) and Mistral Large 3, and the schema fields Gemma 4 needed.

Gemma 4's full-attention (global) layers do not share the sliding layers' shape: head_dim 512
(``global_head_dim``) and their own KV-head count (``num_global_key_value_heads``). Their keys double as
values only in the weights (``attention_k_eq_v``: no v_proj); Transformers and vLLM still cache a K and a V
tensor per global layer, so both are counted.

Every expected number is worked out here by hand from the config values quoted in the comments
(huggingface/transformers models/gemma4/convert_gemma4_weights.py and the repositories' config.json;
Mistral Large 3's params.json), not read back from the catalog.
"""

from __future__ import annotations

import datetime as dt

import pytest
from pydantic import ValidationError

from knowledge import load_catalog
from knowledge.messages import render
from knowledge.schema import Attention, AttentionKind
from tools.errors import ToolError
from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory
from tools.kv_cache import kv_bytes_per_token, kv_cache_size, kv_layout, tokens_for_budget
from tools.modelspec import ModelSpec, check_tensor_parallel, valid_tp_sizes

CATALOG = load_catalog()

# --- Gemma 4 31B --------------------------------------------------------------------------------------------
# text_config: hidden 5376, 60 layers = (5 sliding + 1 full) × 10, 32 query heads; sliding layers 16 KV heads
# of head_dim 256, window 1024; global layers num_global_key_value_heads 4 of global_head_dim 512,
# attention_k_eq_v true; intermediate 21504; vocab 262144 (tied); max_position_embeddings 262144.
G31_SLIDING = 2 * 16 * 256 * 2  # K + V, bf16: 16,384 B per token and sliding layer
G31_GLOBAL = 2 * 4 * 512 * 2  # K + V of the global layer's own shape: 8,192 B
G31_PER_TOKEN = 50 * G31_SLIDING + 10 * G31_GLOBAL  # 819,200 + 81,920


def gemma4_text_params(hidden: int, vocab: int, heads: int, kv: int, gkv: int, sliding: int, full: int,
                       dense_mlp: int, experts: int = 0, expert_mlp: int = 0, routed: int | None = None) -> int:
    """Text-decoder parameters of a Gemma 4 config (norms left out: well under 0.01%).

    Sliding attention q, k, v, o at head 256; global attention q, k, o at head 512 (no v_proj: k = v);
    a gated MLP 3·h·I in every layer; with ``experts``, a router h·E and the routed experts (``routed`` of
    them for the active count); tied embeddings counted once."""
    attn_sliding = hidden * 256 * (2 * heads + 2 * kv)
    attn_global = hidden * 512 * (2 * heads + gkv)
    used = experts if routed is None else routed
    moe = (hidden * experts + used * 3 * hidden * expert_mlp) if experts else 0
    per_layer_ffn = 3 * hidden * dense_mlp + moe
    return vocab * hidden + sliding * attn_sliding + full * attn_global + (sliding + full) * per_layer_ffn


def test_gemma4_31b_shape_is_the_config() -> None:
    m = CATALOG.model("gemma-4-31b")
    a = m.attention
    assert (m.layers, m.hidden_size, m.intermediate_size, m.vocab_size, m.max_context) == (
        60, 5376, 21504, 262144, 262144)
    assert a.kind == AttentionKind.sliding
    assert (a.num_heads, a.num_kv_heads, a.head_dim, a.sliding_window, a.full_attention_layers) == (
        32, 16, 256, 1024, 10)
    assert (a.global_head_dim, a.global_num_kv_heads) == (512, 4)
    assert m.tie_word_embeddings and m.license == "Apache-2.0" and m.kind == "vlm"
    assert m.as_of == dt.date(2026, 12, 4) and m.sources


def test_gemma4_31b_kv_per_token_uses_the_global_layers_own_shape() -> None:
    spec = ModelSpec.from_catalog("gemma-4-31b")
    assert kv_bytes_per_token(spec, "bf16") == G31_PER_TOKEN == 901_120
    # the schema's single head_dim would have given 60 × 16,384 = 983,040 B: the global layers are smaller
    assert kv_bytes_per_token(spec, "bf16") != 60 * G31_SLIDING
    lay = kv_layout(spec, "bf16")
    assert (lay.full_layers, lay.sliding_layers, lay.sliding_window) == (10, 50, 1024)
    assert lay.bytes_per_token_layer == G31_SLIDING
    assert lay.global_bytes_per_token_layer == lay.full_bytes_per_token_layer == G31_GLOBAL
    assert lay.global_kv_heads_per_rank == 4
    # an 8-bit cache halves both kinds of layer
    assert kv_bytes_per_token(spec, "fp8") == 50 * 2 * 16 * 256 + 10 * 2 * 4 * 512 == 450_560


def test_gemma4_31b_cache_caps_only_the_sliding_layers() -> None:
    spec = ModelSpec.from_catalog("gemma-4-31b")
    # generic / transformers: global layers hold the whole context, sliding layers the 1,024-token window
    r = kv_cache_size(spec, context=32768, sequences=2, kv_dtype="bf16")
    assert r.bytes == 10 * 32768 * 2 * G31_GLOBAL + 50 * 1024 * 2 * G31_SLIDING
    assert (r.full_tokens, r.sliding_tokens) == (65536, 2048)
    text = render(r.formula, "en")
    assert "[global layers' own shape: 2 × 4 KV heads × 512 head_dim × 2 B]" in text
    assert "50 sliding layers × 2048 tokens (window 1024) × [2 × 16 KV heads × 256 head_dim × 2 B]" in text
    zh = render(r.formula, "zh")
    assert "全局层自有形状：2 × 4 个 KV 头 × 512 head_dim × 2 B" in zh and "× same" not in zh


def test_gemma4_31b_tensor_parallel_splits_each_layer_kind_by_its_own_heads() -> None:
    spec = ModelSpec.from_catalog("gemma-4-31b")
    # tp 4: sliding 16 / 4 = 4 KV heads per rank, global 4 / 4 = 1
    assert kv_bytes_per_token(spec, "bf16", tp=4) == 50 * 2 * 4 * 256 * 2 + 10 * 2 * 1 * 512 * 2
    # tp 8: sliding 2 heads per rank; the 4 global heads are replicated (one per rank), as vLLM does
    lay = kv_layout(spec, "bf16", tp=8)
    assert (lay.kv_heads_per_rank, lay.global_kv_heads_per_rank) == (2, 1)
    assert kv_bytes_per_token(spec, "bf16", tp=8) == 50 * 2 * 2 * 256 * 2 + 10 * 2 * 1 * 512 * 2 == 122_880
    # vLLM, tp 8, 8,192 tokens: global layers 512 blocks of 16; sliding layers min(1023 + 8192, 8192) tokens
    r = kv_cache_size(spec, context=8192, sequences=1, kv_dtype="bf16", tp=8, engine="vllm")
    assert r.bytes == 10 * 8192 * (2 * 1 * 512 * 2) + 50 * 8192 * (2 * 2 * 256 * 2)
    assert 8 in valid_tp_sizes(spec) and 3 not in valid_tp_sizes(spec)


def test_gemma4_tokens_for_budget_counts_global_layers_at_their_size() -> None:
    spec = ModelSpec.from_catalog("gemma-4-31b")
    budget = 10 * G31_GLOBAL * 1000 + 50 * G31_SLIDING * 1024  # 1,000 tokens at a context of 1,024
    # with context 1,024 the sliding layers cost every token too: per token 10·8,192 + 50·16,384
    assert tokens_for_budget(spec, budget, "bf16", context=1024) == budget // G31_PER_TOKEN


def test_gemma4_31b_weights_follow_from_the_config() -> None:
    params = gemma4_text_params(hidden=5376, vocab=262144, heads=32, kv=16, gkv=4, sliding=50, full=10,
                                dense_mlp=21504)
    assert params == 30_696_013_824  # the model card's "30.7B" (text decoder; ~550M vision encoder apart)
    m = CATALOG.model("gemma-4-31b")
    assert m.params_b == round(params / 1e9, 1) == 30.7
    spec = ModelSpec.from_catalog("gemma-4-31b")
    assert spec.weight_bytes_at("bf16") == 30_700_000_000 * 2


# --- Gemma 4 26B-A4B --------------------------------------------------------------------------------------
# text_config: hidden 2816, 30 layers = (5 sliding + 1 full) × 5, 16 query heads; sliding 8 KV heads of 256,
# global num_global_key_value_heads 2 of 512, attention_k_eq_v true; a dense MLP of 2112 in every layer beside
# 128 experts of moe_intermediate_size 704, top_k_experts 8; vocab 262144; window 1024.
G26_SLIDING = 2 * 8 * 256 * 2  # 8,192 B
G26_GLOBAL = 2 * 2 * 512 * 2  # 4,096 B


def test_gemma4_26b_a4b_shape_kv_and_weights() -> None:
    m = CATALOG.model("gemma-4-26b-a4b")
    a = m.attention
    assert (m.layers, m.hidden_size, m.intermediate_size, m.vocab_size) == (30, 2816, 704, 262144)
    assert (a.num_heads, a.num_kv_heads, a.head_dim, a.full_attention_layers) == (16, 8, 256, 5)
    assert (a.global_head_dim, a.global_num_kv_heads, a.sliding_window) == (512, 2, 1024)
    assert m.moe is not None and (m.moe.num_experts, m.moe.experts_per_token, m.moe.shared_experts) == (128, 8, 1)
    spec = ModelSpec.from_catalog("gemma4:26b")
    assert kv_bytes_per_token(spec, "bf16") == 25 * G26_SLIDING + 5 * G26_GLOBAL == 225_280
    total = gemma4_text_params(hidden=2816, vocab=262144, heads=16, kv=8, gkv=2, sliding=25, full=5,
                               dense_mlp=2112, experts=128, expert_mlp=704)
    active = gemma4_text_params(hidden=2816, vocab=262144, heads=16, kv=8, gkv=2, sliding=25, full=5,
                                dense_mlp=2112, experts=128, expert_mlp=704, routed=8)
    assert (total, active) == (25_232_441_344, 3_821_830_144)  # the card's 25.2B total, 3.8B active
    assert (m.params_b, m.active_params_b) == (round(total / 1e9, 1), round(active / 1e9, 1)) == (25.2, 3.8)
    assert spec.weight_bytes_at("bf16") == 25_200_000_000 * 2
    # tp 4: sliding 8 / 4 = 2 heads per rank, the 2 global heads replicated to 1 per rank
    assert kv_bytes_per_token(spec, "bf16", tp=4) == 25 * 2 * 2 * 256 * 2 + 5 * 2 * 1 * 512 * 2


def test_gemma4_fit_check_runs_through_the_global_layers() -> None:
    # vLLM on one H200: the reported cache is the hand-computed one (1 sequence of 65,536 tokens, bf16;
    # sliding layers keep min(1023 + 8192, 65536) = 9,215 tokens → ⌈9215/16⌉ + 1 = 577 blocks → 9,232 tokens)
    r = estimate_inference_memory(InferenceMemoryInput(model="gemma-4-31b", engine="vllm", gpu="h200-sxm",
                                                       context=65536, kv_dtype="bf16"))
    assert r.breakdown.kv_cache == 10 * 65536 * G31_GLOBAL + 50 * 9232 * G31_SLIDING
    assert r.kv_bytes_per_token == G31_PER_TOKEN


# --- Mistral Large 3 ----------------------------------------------------------------------------------------
# params.json: dim 7168, n_layers 61, n_heads 128, q_lora_rank 1536, kv_lora_rank 512, qk_nope_head_dim 128,
# qk_rope_head_dim 64, v_head_dim 128, hidden_dim 16384 (first_k_dense_replace 3), 128 experts of
# expert_hidden_dim 4096, num_experts_per_tok 4, 1 shared; vocab 131072; tied_embeddings false.
def mistral_large3_text_params(routed: int = 128) -> int:
    h, layers, dense, vocab = 7168, 61, 3, 131072
    attn = h * 1536 + 1536 * 128 * 192 + h * (512 + 64) + 512 * 128 * (128 + 128) + 128 * 128 * h
    expert = 3 * h * 4096
    moe_layer = h * 128 + (routed + 1) * expert  # router + routed + shared
    return 2 * vocab * h + layers * attn + dense * 3 * h * 16384 + (layers - dense) * moe_layer


def test_mistral_large3_is_modelled_like_deepseek_v3() -> None:
    m = CATALOG.model("Mistral Large 3")
    assert m.id == "mistral-large-3"
    a = m.attention
    assert a.kind == AttentionKind.mla
    assert (a.num_heads, a.head_dim, a.v_head_dim, a.kv_lora_rank, a.qk_rope_head_dim) == (128, 192, 128, 512, 64)
    assert (m.layers, m.hidden_size, m.intermediate_size, m.vocab_size, m.max_context) == (
        61, 7168, 4096, 131072, 262144)
    assert m.moe is not None and (m.moe.num_experts, m.moe.experts_per_token, m.moe.shared_experts) == (128, 4, 1)
    assert not m.tie_word_embeddings and m.native_dtype == "fp8" and m.license == "Apache-2.0"
    assert m.as_of == dt.date(2026, 12, 4)
    spec = ModelSpec.from_catalog("mistral-large-3")
    # one 576-value latent per token and layer, whatever the tensor parallelism
    assert kv_bytes_per_token(spec, "bf16") == 61 * (512 + 64) * 2 == 70_272
    assert kv_bytes_per_token(spec, "bf16", tp=8) == 70_272
    assert kv_bytes_per_token(spec, "fp8") == 61 * 576 == 35_136


def test_mistral_large3_weights() -> None:
    text = mistral_large3_text_params()
    assert text == 673_420_083_200  # the card's "673B params" language model
    # used per token: all but 124 routed experts in the 58 MoE layers, and without the input embedding
    active = mistral_large3_text_params(routed=4) - 131072 * 7168
    assert round(active / 1e9) == 39  # the card's "39B active"
    m = CATALOG.model("mistral-large-3")
    # the catalog keeps the card's totals with the 2.5B vision encoder: 675B, 41B active
    assert round(text / 1e9) + 2.5 == pytest.approx(m.params_b, abs=1)
    assert (m.params_b, m.active_params_b) == (675.0, 41.0)
    spec = ModelSpec.from_catalog("mistral-large-3")
    assert spec.weight_bytes_at("bf16") == 675_000_000_000 * 2
    # FP8 checkpoint: 1 B per parameter, the untied embedding and output matrices kept at 2 B
    emb = 2 * 131072 * 7168
    assert spec.weight_bytes_at("fp8") == (675_000_000_000 - emb) * 1 + emb * 2


# --- schema ------------------------------------------------------------------------------------------------


def test_global_shape_fields_need_sliding_attention_and_divide_the_heads() -> None:
    with pytest.raises(ValidationError):
        Attention(kind=AttentionKind.gqa, num_heads=32, num_kv_heads=8, head_dim=128, global_head_dim=256)
    with pytest.raises(ValidationError):
        Attention(kind=AttentionKind.sliding, num_heads=32, num_kv_heads=16, head_dim=256, sliding_window=1024,
                  full_attention_layers=10, global_num_kv_heads=3)
    ok = Attention(kind=AttentionKind.sliding, num_heads=32, num_kv_heads=16, head_dim=256, sliding_window=1024,
                   full_attention_layers=10, global_head_dim=512)
    assert ok.global_num_kv_heads is None  # the global layers then keep num_kv_heads


def test_global_head_dim_alone_keeps_the_kv_heads() -> None:
    base = ModelSpec.from_catalog("gemma-4-31b")
    spec = base.model_copy(update={"global_num_kv_heads": None})
    assert kv_bytes_per_token(spec, "bf16") == 50 * G31_SLIDING + 10 * 2 * 16 * 512 * 2


def test_tp_that_splits_no_global_heads_evenly_is_refused() -> None:
    spec = ModelSpec.from_catalog("gemma-4-31b").model_copy(update={"global_num_kv_heads": 3})
    with pytest.raises(ToolError):
        check_tensor_parallel(spec, 2)


# --- the Gemma 3 entries are unchanged ---------------------------------------------------------------------


@pytest.mark.parametrize(("name", "layers", "full", "kv", "head_dim"), [
    ("gemma-3-27b", 62, 10, 16, 128),
    ("gemma-3-12b", 48, 8, 8, 256),
    ("gemma-3-4b", 34, 5, 4, 256),
    ("gemma-2-9b", 42, 21, 8, 256),
])
def test_gemma2_and_3_cache_is_unchanged(name: str, layers: int, full: int, kv: int, head_dim: int) -> None:
    m = CATALOG.model(name)
    assert (m.attention.global_head_dim, m.attention.global_num_kv_heads) == (None, None)
    spec = ModelSpec.from_catalog(name)
    per_layer = 2 * kv * head_dim * 2
    assert kv_bytes_per_token(spec, "bf16") == layers * per_layer
    lay = kv_layout(spec, "bf16")
    assert lay.global_bytes_per_token_layer is None and lay.global_formula is None
    window = m.attention.sliding_window
    assert window is not None
    r = kv_cache_size(spec, context=32768, kv_dtype="bf16")
    assert r.bytes == full * 32768 * per_layer + (layers - full) * min(32768, window) * per_layer
    assert render(r.formula, "en").endswith(f"(window {window}) × same")
