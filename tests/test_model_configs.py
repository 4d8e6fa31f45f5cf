"""Model catalog against the published configs.

The expected numbers below are typed in from each model's Hugging Face ``config.json``
(the file is named next to each row) or from published measurements, and the parameter
counts are re-derived here from the architecture, so a wrong catalog number fails.
"""

from __future__ import annotations

import pytest

from knowledge import UnknownNameError, load_catalog
from knowledge.resolve import variants
from knowledge.schema import AttentionKind, Model

CATALOG = load_catalog()
MODELS = CATALOG.models

# (layers, hidden, intermediate, heads, kv_heads, head_dim, vocab, tied) from config.json.
CONFIGS: dict[str, tuple[int, int, int, int, int, int, int, bool]] = {
    # hf:meta-llama/Llama-3.1-8B/config.json
    "llama-3.1-8b": (32, 4096, 14336, 32, 8, 128, 128256, False),
    # hf:meta-llama/Llama-3.1-70B/config.json
    "llama-3.1-70b": (80, 8192, 28672, 64, 8, 128, 128256, False),
    # hf:meta-llama/Llama-3.1-405B/config.json
    "llama-3.1-405b": (126, 16384, 53248, 128, 8, 128, 128256, False),
    # hf:meta-llama/Llama-3.2-1B/config.json (head_dim 64, tie_word_embeddings true)
    "llama-3.2-1b": (16, 2048, 8192, 32, 8, 64, 128256, True),
    # hf:meta-llama/Llama-3.2-3B/config.json
    "llama-3.2-3b": (28, 3072, 8192, 24, 8, 128, 128256, True),
    # hf:Qwen/Qwen2.5-72B-Instruct/config.json
    "qwen2.5-72b": (80, 8192, 29568, 64, 8, 128, 152064, False),
    # hf:Qwen/Qwen2.5-7B-Instruct/config.json
    "qwen2.5-7b": (28, 3584, 18944, 28, 4, 128, 152064, False),
    # hf:Qwen/Qwen2.5-0.5B/config.json
    "qwen2.5-0.5b": (24, 896, 4864, 14, 2, 64, 151936, True),
    # hf:Qwen/Qwen3-8B/config.json
    "qwen3-8b": (36, 4096, 12288, 32, 8, 128, 151936, False),
    # hf:Qwen/Qwen3-32B/config.json (head_dim 128 x 64 heads > hidden 5120)
    "qwen3-32b": (64, 5120, 25600, 64, 8, 128, 151936, False),
    # hf:mistralai/Mistral-7B-v0.3/config.json
    "mistral-7b-v0.3": (32, 4096, 14336, 32, 8, 128, 32768, False),
    # hf:mistralai/Mistral-Large-Instruct-2407/config.json
    "mistral-large-2": (88, 12288, 28672, 96, 8, 128, 32768, False),
    # hf:mistralai/Mistral-Small-24B-Instruct-2501/config.json
    "mistral-small-24b": (40, 5120, 32768, 32, 8, 128, 131072, False),
    # hf:microsoft/phi-4/config.json
    "phi-4": (40, 5120, 17920, 40, 10, 128, 100352, False),
    # hf:microsoft/Phi-3.5-mini-instruct/config.json (MHA, head_dim 96)
    "phi-3.5-mini": (32, 3072, 8192, 32, 32, 96, 32064, False),
    # hf:01-ai/Yi-1.5-34B/config.json
    "yi-1.5-34b": (60, 7168, 20480, 56, 8, 128, 64000, False),
    # hf:internlm/internlm2_5-7b-chat/config.json
    "internlm2.5-7b": (32, 4096, 14336, 32, 8, 128, 92544, False),
    # hf:google/gemma-2-9b/config.json (head_dim 256)
    "gemma-2-9b": (42, 3584, 14336, 16, 8, 256, 256000, True),
    # hf:google/gemma-3-27b-it/config.json text_config
    "gemma-3-27b": (62, 5376, 21504, 32, 16, 128, 262208, True),
    # hf:google/gemma-3-270m/config.json
    "gemma-3-270m": (18, 640, 2048, 4, 1, 256, 262144, True),
    # hf:THUDM/glm-4-9b-chat/config.json (num_layers, ffn_hidden_size, multi_query_group_num, kv_channels)
    "glm-4-9b": (40, 4096, 13696, 32, 2, 128, 151552, False),
    # hf:mistralai/Mixtral-8x7B-v0.1/config.json (per-expert intermediate)
    "mixtral-8x7b": (32, 4096, 14336, 32, 8, 128, 32000, False),
    # hf:openai/gpt-oss-120b/config.json
    "gpt-oss-120b": (36, 2880, 2880, 64, 8, 64, 201088, False),
    # hf:Qwen/Qwen3-30B-A3B/config.json (moe_intermediate_size 768)
    "qwen3-30b-a3b": (48, 2048, 768, 32, 4, 128, 151936, False),
}


@pytest.mark.parametrize("model_id", sorted(CONFIGS))
def test_shape_matches_published_config(model_id: str) -> None:
    m = CATALOG.model(model_id)
    layers, hidden, inter, heads, kv, hd, vocab, tied = CONFIGS[model_id]
    a = m.attention
    got = (m.layers, m.hidden_size, m.intermediate_size, a.num_heads, a.num_kv_heads, a.head_dim,
           m.vocab_size, m.tie_word_embeddings)
    assert got == (layers, hidden, inter, heads, kv, hd, vocab, tied)


def _kv_bytes_per_token(m: Model, dtype_bytes: int = 2) -> int:
    """KV cache per token with every layer holding the full context (GQA/MHA or MLA)."""
    a = m.attention
    if a.kind == AttentionKind.mla:
        assert a.kv_lora_rank and a.qk_rope_head_dim
        return m.layers * (a.kv_lora_rank + a.qk_rope_head_dim) * dtype_bytes
    return 2 * m.layers * a.num_kv_heads * a.head_dim * dtype_bytes


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # measurements.md row 5 (kvplan): 2 * 32 * 8 * 128 * 2
        ("Llama-3.1-8B", 131_072),
        # hf:meta-llama/Llama-3.1-70B/config.json: 2 * 80 layers * 8 kv * 128 * 2 B
        ("llama3.1:70b", 327_680),
        # hf:Qwen/Qwen2.5-72B-Instruct/config.json: 2 * 80 * 8 * 128 * 2
        ("qwen2.5:72b", 327_680),
        # hf:Qwen/Qwen2.5-7B-Instruct/config.json: 2 * 28 * 4 * 128 * 2
        ("qwen2.5:7b", 57_344),
        # hf:Qwen/Qwen3-32B/config.json: 2 * 64 * 8 * 128 * 2
        ("qwen3:32b", 262_144),
        # hf:Qwen/Qwen3-235B-A22B/config.json: 2 * 94 * 4 * 128 * 2
        ("qwen3:235b", 192_512),
        # hf:microsoft/Phi-3.5-mini-instruct/config.json: MHA 2 * 32 * 32 * 96 * 2
        ("phi3.5", 393_216),
        # hf:THUDM/glm-4-9b-chat/config.json: 2 * 40 * 2 * 128 * 2
        ("glm4:9b", 40_960),
        # hf:meta-llama/Llama-2-7b-hf/config.json: MHA 2 * 32 * 32 * 128 * 2
        ("llama2:7b", 524_288),
        # hf:deepseek-ai/DeepSeek-V3/config.json: 61 layers * (kv_lora_rank 512 + rope 64) * 2 B
        ("DeepSeek-V3", 70_272),
        # same architecture for R1
        ("deepseek-r1:671b", 70_272),
        # hf:openbmb/MiniCPM3-4B/config.json: 62 * (256 + 32) * 2
        ("MiniCPM3", 35_712),
        # hf:moonshotai/Kimi-K2-Instruct-0905/config.json: 61 * (512 + 64) * 2
        ("Kimi-K2", 70_272),
    ],
)
def test_kv_bytes_per_token_matches_config(name: str, expected: int) -> None:
    assert _kv_bytes_per_token(CATALOG.model(name)) == expected


def test_llama_31_8b_kv_matches_llama_cpp_measurement() -> None:
    # measurements.md row 4: Llama-3.1-8B, f16 KV, n_ctx 8192 -> 1024.00 MiB in llama.cpp
    m = CATALOG.model("llama3.1:8b")
    assert _kv_bytes_per_token(m) * 8192 == 1024 * 2**20


def test_llama_2_7b_kv_matches_llama_cpp_measurement() -> None:
    # measurements.md row 3: Llama-2-7B, f16 KV, n_ctx 2048 -> 1024.00 MiB (K 512 + V 512)
    assert _kv_bytes_per_token(CATALOG.model("Llama-2-7B")) * 2048 == 1024 * 2**20


def _dense_params(m: Model, qkv_bias: bool = False, norms_per_layer: int = 2) -> int:
    """Parameters of a SwiGLU/GeGLU decoder from its shape (embeddings, attention, MLP, norms)."""
    a = m.attention
    h, inter = m.hidden_size, m.intermediate_size
    assert inter is not None
    q_width, kv_width = a.num_heads * a.head_dim, a.num_kv_heads * a.head_dim
    attn = h * q_width + 2 * h * kv_width + q_width * h
    if qkv_bias:
        attn += q_width + 2 * kv_width
    mlp = 3 * h * inter
    per_layer = attn + mlp + norms_per_layer * h
    embeddings = m.vocab_size * h * (1 if m.tie_word_embeddings else 2)
    return m.layers * per_layer + embeddings + h


@pytest.mark.parametrize(
    ("model_id", "qkv_bias", "norms"),
    [
        ("llama-2-7b", False, 2),
        ("llama-3.1-8b", False, 2),
        ("llama-3.1-70b", False, 2),
        ("llama-3.1-405b", False, 2),
        ("llama-3.2-1b", False, 2),
        ("llama-3.2-3b", False, 2),
        ("qwen2.5-3b", True, 2),
        ("qwen2.5-7b", True, 2),
        ("qwen2.5-14b", True, 2),
        ("qwen2.5-32b", True, 2),
        ("qwen2.5-72b", True, 2),
        ("qwen3-4b", False, 2),
        ("qwen3-8b", False, 2),
        ("qwen3-14b", False, 2),
        ("qwen3-32b", False, 2),
        ("mistral-7b-v0.1", False, 2),
        ("mistral-7b-v0.3", False, 2),
        ("mistral-small-24b", False, 2),
        ("mistral-large-2", False, 2),
        ("phi-3.5-mini", False, 2),
        ("phi-4", False, 2),
        ("yi-1.5-34b", False, 2),
        ("internlm2.5-7b", False, 2),
        ("internlm2.5-20b", False, 2),
        ("gemma-2-9b", False, 4),
        ("gemma-2-27b", False, 4),
        ("glm-4-9b", True, 2),
        ("deepseek-r1-distill-qwen-32b", True, 2),
    ],
)
def test_dense_param_count_rederived_from_shape(model_id: str, qkv_bias: bool, norms: int) -> None:
    m = CATALOG.model(model_id)
    derived = _dense_params(m, qkv_bias=qkv_bias, norms_per_layer=norms)
    assert derived / 1e9 == pytest.approx(m.params_b, rel=0.01)


def test_llama_31_8b_exact_parameter_count() -> None:
    # 8,030,261,248 is the tensor total of meta-llama/Llama-3.1-8B safetensors.
    assert _dense_params(CATALOG.model("llama3.1:8b")) == 8_030_261_248


def test_mixtral_total_and_active_from_shape() -> None:
    m = CATALOG.model("mixtral:8x7b")
    assert m.moe is not None and (m.moe.num_experts, m.moe.experts_per_token) == (8, 2)
    a, h, inter = m.attention, m.hidden_size, m.intermediate_size
    assert inter is not None
    attn = 2 * h * a.num_heads * a.head_dim + 2 * h * a.num_kv_heads * a.head_dim
    expert = 3 * h * inter
    router = h * m.moe.num_experts
    embeddings = 2 * m.vocab_size * h
    total = m.layers * (attn + m.moe.num_experts * expert + router + 2 * h) + embeddings
    active = m.layers * (attn + m.moe.experts_per_token * expert + router + 2 * h) + embeddings
    assert total / 1e9 == pytest.approx(m.params_b, rel=0.01)  # Mistral: 46.7B
    assert active / 1e9 == pytest.approx(m.active_params_b, rel=0.02)  # Mistral: 12.9B


def test_deepseek_v3_total_and_active_from_config() -> None:
    m = CATALOG.model("deepseek-v3")
    a = m.attention
    assert (m.layers, m.hidden_size, m.vocab_size) == (61, 7168, 129280)
    assert (a.kind, a.kv_lora_rank, a.qk_rope_head_dim, a.v_head_dim) == (AttentionKind.mla, 512, 64, 128)
    assert m.moe is not None
    assert (m.moe.num_experts, m.moe.experts_per_token, m.moe.shared_experts) == (256, 8, 1)
    # Numbers not in the catalog schema, from hf:deepseek-ai/DeepSeek-V3/config.json:
    q_lora, qk_nope, dense_inter, dense_layers = 1536, 128, 18432, 3
    h, heads, n = m.hidden_size, a.num_heads, a.qk_rope_head_dim
    assert a.head_dim == qk_nope + n
    attn = (h * q_lora + q_lora * heads * (qk_nope + n)          # q down / up
            + h * (a.kv_lora_rank + n)                            # kv down (+ rope key)
            + a.kv_lora_rank * heads * (qk_nope + a.v_head_dim)   # kv up
            + heads * a.v_head_dim * h + q_lora + a.kv_lora_rank + 2 * h)
    expert = 3 * h * m.intermediate_size
    moe_layers = m.layers - dense_layers
    embeddings = 2 * m.vocab_size * h
    router = m.moe.num_experts * h
    total = (dense_layers * (attn + 3 * h * dense_inter)
             + moe_layers * (attn + (m.moe.num_experts + m.moe.shared_experts) * expert + router)
             + embeddings)
    active = (dense_layers * (attn + 3 * h * dense_inter)
              + moe_layers * (attn + (m.moe.experts_per_token + m.moe.shared_experts) * expert + router)
              + embeddings)
    assert total / 1e9 == pytest.approx(671, rel=0.01) and m.params_b == 671
    # DeepSeek quotes 37B activated; counting both embedding tables gives 37.6B.
    assert active / 1e9 == pytest.approx(m.active_params_b, rel=0.03)


def test_deepseek_r1_is_v3_architecture() -> None:
    v3, r1 = CATALOG.model("DeepSeek-V3"), CATALOG.model("DeepSeek-R1")
    assert v3.id != r1.id
    fields = ("layers", "hidden_size", "intermediate_size", "vocab_size", "attention", "moe", "params_b",
              "active_params_b", "native_dtype")
    assert all(getattr(v3, f) == getattr(r1, f) for f in fields)
    assert (r1.params_b, r1.active_params_b, r1.native_dtype) == (671, 37, "fp8")


def test_structural_facts_from_configs() -> None:
    # hf:meta-llama/Llama-3.1-70B/config.json
    m = CATALOG.model("Llama-3.1-70B-Instruct")
    assert (m.layers, m.attention.num_kv_heads) == (80, 8)
    # hf:Qwen/Qwen2.5-72B-Instruct/config.json
    m = CATALOG.model("qwen2.5 72b")
    a = m.attention
    assert (m.layers, a.num_heads, a.num_kv_heads, a.head_dim) == (80, 64, 8, 128)
    # hf:google/gemma-3-27b-it/config.json: sliding_window 1024, sliding_window_pattern 6
    m = CATALOG.model("gemma3:27b")
    assert (m.layers, m.attention.kind, m.attention.sliding_window) == (62, AttentionKind.sliding, 1024)
    # hf:mistralai/Mixtral-8x22B-Instruct-v0.1/config.json
    m = CATALOG.model("mixtral:8x22b")
    assert m.moe is not None and (m.moe.num_experts, m.moe.experts_per_token) == (8, 2)
    # hf:mistralai/Mistral-7B-v0.1/config.json: sliding_window 4096 on all 32 layers
    m = CATALOG.model("Mistral-7B-v0.1")
    assert (m.attention.sliding_window, m.attention.full_attention_layers) == (4096, 0)
    # Mistral-7B-v0.3 config: sliding_window null
    assert CATALOG.model("mistral:7b").attention.sliding_window is None


# Published local:global patterns -> number of global (full-attention) layers.
def _global_layers_gemma3(layers: int) -> int:
    return sum(1 for i in range(layers) if (i + 1) % 6 == 0)  # every 6th layer global


@pytest.mark.parametrize(
    ("name", "window", "expected_global"),
    [
        ("gemma-2-9b", 4096, 42 // 2),  # Gemma 2: layers alternate local/global
        ("gemma-2-27b", 4096, 46 // 2),
        ("gemma-3-270m", 512, _global_layers_gemma3(18)),
        ("gemma-3-1b", 512, _global_layers_gemma3(26)),
        ("gemma-3-4b", 1024, _global_layers_gemma3(34)),
        ("gemma-3-12b", 1024, _global_layers_gemma3(48)),
        ("gemma-3-27b", 1024, _global_layers_gemma3(62)),
        ("gpt-oss-20b", 128, 24 // 2),  # gpt-oss config layer_types alternate sliding/full
        ("gpt-oss-120b", 128, 36 // 2),
    ],
)
def test_sliding_window_patterns(name: str, window: int, expected_global: int) -> None:
    a = CATALOG.model(name).attention
    assert a.kind == AttentionKind.sliding
    assert (a.sliding_window, a.full_attention_layers) == (window, expected_global)


def test_gemma_3_27b_has_ten_global_layers() -> None:
    assert CATALOG.model("gemma-3-27b-it").attention.full_attention_layers == 10


def test_qwen3_next_hybrid_state_from_config() -> None:
    # hf:Qwen/Qwen3-Next-80B-A3B-Instruct/config.json: 48 layers, full_attention_interval 4,
    # linear_num_value_heads 32, linear_num_key_heads 16, key/value head dim 128, conv kernel 4.
    layers, interval = 48, 4
    linear_layers = layers - layers // interval
    recurrent = 32 * 128 * 128
    conv = (2 * 16 * 128 + 32 * 128) * (4 - 1)
    expected_state = linear_layers * (recurrent + conv) * 2
    m = CATALOG.model("Qwen3-Next-80B-A3B-Instruct")
    a = m.attention
    assert a.kind == AttentionKind.hybrid
    assert a.full_attention_layers == layers // interval == 12
    assert a.linear_state_bytes_per_seq == expected_state == 39_518_208
    assert (a.num_heads, a.num_kv_heads, a.head_dim) == (16, 2, 256)
    assert m.moe is not None
    assert (m.moe.num_experts, m.moe.experts_per_token, m.moe.shared_experts) == (512, 10, 1)


def test_gpt_oss_checkpoints_are_mxfp4() -> None:
    # OpenAI model card: checkpoint 60.8 GiB (120b) / 12.8 GiB (20b), MXFP4 experts at 4.25 bits.
    for name, checkpoint_gib in (("gpt-oss:120b", 60.8), ("gpt-oss:20b", 12.8)):
        m = CATALOG.model(name)
        assert m.native_dtype == "mxfp4"
        estimate_gib = m.params_b * 1e9 * 4.25 / 8 / 2**30
        # all-MXFP4 estimate undercounts the bf16 attention/embeddings by < 20 %
        assert 0.8 < estimate_gib / checkpoint_gib < 1.0


REQUIRED = [
    "Llama-3.1-8B", "Llama-3.1-70B", "Llama-3.1-405B", "Llama-3.2-1B", "Llama-3.2-3B", "Llama-3.3-70B",
    "Llama-4-Scout", "Llama-4-Maverick", "Qwen2.5-0.5B", "Qwen2.5-1.5B", "Qwen2.5-3B", "Qwen2.5-7B",
    "Qwen2.5-14B", "Qwen2.5-32B", "Qwen2.5-72B", "Qwen2.5-Coder-32B", "QwQ-32B", "Qwen3-0.6B", "Qwen3-1.7B",
    "Qwen3-4B", "Qwen3-8B", "Qwen3-14B", "Qwen3-32B", "Qwen3-30B-A3B", "Qwen3-235B-A22B",
    "Qwen3-Next-80B-A3B", "DeepSeek-V3", "DeepSeek-R1", "DeepSeek-R1-Distill-Qwen-7B",
    "DeepSeek-R1-Distill-Qwen-14B", "DeepSeek-R1-Distill-Qwen-32B", "DeepSeek-R1-Distill-Llama-8B",
    "DeepSeek-R1-Distill-Llama-70B", "Mistral-7B-v0.3", "Mistral-Small-24B", "Mistral-Large-2",
    "Mixtral-8x7B", "Mixtral-8x22B", "Gemma-2-9B", "Gemma-2-27B", "Gemma-3-4B", "Gemma-3-12B", "Gemma-3-27B",
    "Gemma-3-270M", "Phi-3.5-mini", "Phi-4", "GLM-4-9B", "GLM-4.5", "GLM-4.5-Air", "Yi-1.5-34B",
    "InternLM2.5-7B", "InternLM2.5-20B", "MiniCPM3-4B", "gpt-oss-20b", "gpt-oss-120b", "SDXL", "FLUX.1-dev",
    "Whisper large-v3", "bge-m3",
]


def test_catalog_covers_required_models() -> None:
    assert len(MODELS) >= 45
    missing = []
    for name in REQUIRED:
        try:
            CATALOG.model(name)
        except UnknownNameError:
            missing.append(name)
    assert not missing


def test_non_llm_kinds() -> None:
    sdxl = CATALOG.model("SDXL")
    assert (sdxl.kind, sdxl.attention.kind) == ("diffusion", AttentionKind.none)
    flux = CATALOG.model("FLUX.1-dev")
    assert (flux.kind, flux.params_b, flux.attention.kind) == ("diffusion", 12.0, AttentionKind.none)
    whisper = CATALOG.model("whisper-large-v3")
    assert (whisper.kind, whisper.params_b) == ("asr", 1.55)
    assert CATALOG.model("bge-m3").kind == "embedding"


@pytest.mark.parametrize(
    ("query", "model_id"),
    [
        ("llama3.1:70b", "llama-3.1-70b"),
        ("Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("qwen2.5 72b", "qwen2.5-72b"),
        ("qwen2.5:72b", "qwen2.5-72b"),
        ("Qwen2.5-72B-Instruct", "qwen2.5-72b"),
        ("通义千问2.5-72B", "qwen2.5-72b"),
        ("DeepSeek-R1", "deepseek-r1"),
        ("deepseek-r1:671b", "deepseek-r1"),
        ("深度求索 V3", "deepseek-v3"),
        ("deepseek-r1:70b", "deepseek-r1-distill-llama-70b"),
        ("deepseek-r1:7b", "deepseek-r1-distill-qwen-7b"),
        ("Meta-Llama-3-8B", "llama-3-8b"),
        ("llama3.1:8b", "llama-3.1-8b"),
        ("gemma3:270m", "gemma-3-270m"),
        ("gemma-3-27b-it", "gemma-3-27b"),
        ("qwen3:30b", "qwen3-30b-a3b"),
        ("gpt-oss:120b", "gpt-oss-120b"),
        ("mixtral:8x7b", "mixtral-8x7b"),
        ("llama4:maverick", "llama-4-maverick"),
    ],
)
def test_aliases_resolve(query: str, model_id: str) -> None:
    assert CATALOG.model(query).id == model_id


def test_every_model_resolves_by_id_name_and_aliases() -> None:
    for m in MODELS:
        for key in (m.id, m.name, *m.aliases):
            assert CATALOG.model(key).id == m.id, (key, m.id)


def test_aliases_unique_across_models() -> None:
    assert CATALOG.model_resolver.collisions() == {}
    owner: dict[str, str] = {}
    for m in MODELS:
        for key in {k for n in (m.id, m.name, *m.aliases) for k in variants(n)}:
            assert owner.setdefault(key, m.id) == m.id, f"{key!r}: {owner[key]} and {m.id}"


def test_unknown_model_gives_suggestions() -> None:
    with pytest.raises(UnknownNameError) as err:
        CATALOG.model("qwen2.5:720b")
    assert "did you mean" in str(err.value)
    assert "Qwen2.5-72B" in err.value.suggestions


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.id)
def test_provenance_and_consistency(model: Model) -> None:
    # Mistral's own format publishes params.json in place of config.json (Mistral Large 3)
    assert any(s.startswith("hf:") and s.endswith(("config.json", "params.json")) for s in model.sources), model.sources
    assert all(s.startswith(("hf:", "https://", "http://")) for s in model.sources), model.sources
    assert model.hf_repo and model.license
    if model.moe is not None:
        assert model.active_params_b is not None and model.active_params_b < model.params_b / 2
    else:
        assert model.active_params_b is None
    a = model.attention
    if a.kind in (AttentionKind.gqa, AttentionKind.mqa):
        assert a.num_kv_heads < a.num_heads
    if a.kind == AttentionKind.mha:
        assert a.num_kv_heads == a.num_heads
