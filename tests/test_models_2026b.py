"""Models added in December 2026 (second batch) and checkpoint names that state their weight precision.

The expected numbers are typed in from each model's published config.json (the copy read is named in a comment
beside each row) and the parameter counts are re-derived here from those numbers, not read back from the
catalog. The second half checks that a checkpoint name ('GLM-5-FP8', 'Qwen3-32B-AWQ', 'qwen3:32b-q4_K_M') sizes
its weights at the precision it names on every path: the CLI, the tools a language model calls and the chat.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from advisor.cli import main
from advisor.nlu.rules import parse
from advisor.tool_trust import setup
from advisor.toolspec import catalog_model_id, run_tool
from knowledge import UnknownNameError, load_catalog
from knowledge.checkpoints import checkpoint
from knowledge.schema import AttentionKind
from tools.inference_memory import InferenceMemoryInput, estimate_inference_memory
from tools.kv_cache import kv_bytes_per_token, kv_layout
from tools.modelspec import ModelSpec
from tools.precision import resolve_precision

CATALOG = load_catalog()
AIC = "https://github.com/ai-dynamo/aiconfigurator/blob/main/aic-core/src/aiconfigurator_core/model_configs/"
AIC_OLD = "https://github.com/ai-dynamo/aiconfigurator/blob/19d098add98ab8ba2366c94795e9e886cdcc915c/src/aiconfigurator/model_configs/"

# id: (layers, hidden, FFN or expert width, heads, kv_heads, head_dim, vocab, tied, max_position_embeddings)
CONFIGS: dict[str, tuple[int, int, int, int, int, int, int, bool, int]] = {
    # AIC + Qwen--Qwen3.5-122B-A10B_config.json (text_config; moe_intermediate_size 1024)
    "qwen3.5-122b-a10b": (48, 3072, 1024, 32, 2, 256, 248320, False, 262144),
    # AIC + Qwen--Qwen3.5-35B-A3B_config.json
    "qwen3.5-35b-a3b": (40, 2048, 512, 16, 2, 256, 248320, False, 262144),
    # AIC + Qwen--Qwen3.5-27B_config.json
    "qwen3.5-27b": (64, 5120, 17408, 24, 4, 256, 248320, False, 262144),
    # hf:Qwen/Qwen3.5-9B/config.json text_config (as transcribed by loaders that read it)
    "qwen3.5-9b": (32, 4096, 12288, 16, 4, 256, 248320, False, 262144),
    # hf:Qwen/Qwen3.5-4B/config.json text_config
    "qwen3.5-4b": (32, 2560, 9216, 16, 4, 256, 248320, True, 262144),
    # hf:Qwen/Qwen3.5-2B/config.json text_config
    "qwen3.5-2b": (24, 2048, 6144, 8, 2, 256, 248320, True, 262144),
    # hf:Qwen/Qwen3.5-0.8B/config.json text_config
    "qwen3.5-0.8b": (24, 1024, 3584, 8, 2, 256, 248320, True, 262144),
    # AIC_OLD + zai-org--GLM-4.7-Flash_config.json (qk_nope 192 + rope 64 = 256)
    "glm-4.7-flash": (47, 2048, 1536, 20, 20, 256, 154880, False, 202752),
    # AIC_OLD (d921975) + moonshotai--Kimi-K2-Thinking_config.json (qk_nope 128 + rope 64 = 192)
    "kimi-k2-thinking": (61, 7168, 2048, 64, 64, 192, 163840, False, 262144),
    # AIC + Qwen--Qwen3-VL-235B-A22B-Instruct_config.json (text_config)
    "qwen3-vl-235b-a22b": (94, 4096, 1536, 64, 4, 128, 151936, False, 262144),
    # AIC + Qwen--Qwen3-VL-30B-A3B-Instruct_config.json
    "qwen3-vl-30b-a3b": (48, 2048, 768, 32, 4, 128, 151936, False, 262144),
    # AIC + Qwen--Qwen3-VL-8B-Instruct_config.json
    "qwen3-vl-8b": (36, 4096, 12288, 32, 8, 128, 151936, False, 262144),
    # https://github.com/ztxz16/fastllm/blob/master/Qwen3-Coder-30B-A3B-Instruct/config.json
    "qwen3-coder-30b-a3b": (48, 2048, 768, 32, 4, 128, 151936, False, 262144),
    # AIC + nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16_config.json (moe_intermediate_size 1856)
    "nemotron-3-nano-30b-a3b": (52, 2688, 1856, 32, 2, 128, 131072, False, 262144),
    # AIC + nvidia--NVIDIA-Nemotron-3-Super-120B-A12B-FP8_config.json (moe_intermediate_size 2688)
    "nemotron-3-super-120b-a12b": (88, 4096, 2688, 32, 2, 128, 131072, False, 262144),
    # hf:baidu/ERNIE-4.5-300B-A47B-PT/config.json as MindIE-LLM's atb_llm tests copy it
    "ernie-4.5-300b-a47b": (54, 8192, 3584, 64, 8, 128, 103424, True, 131072),
    # hf:baidu/ERNIE-4.5-21B-A3B-PT/config.json as MindIE-LLM and llm_memory_calculator copy it
    "ernie-4.5-21b-a3b": (28, 2560, 1536, 20, 4, 128, 103424, True, 131072),
    # hf:microsoft/Phi-4-reasoning/config.json: the phi-4 shape, max_position_embeddings 32768
    "phi-4-reasoning": (40, 5120, 17920, 40, 10, 128, 100352, False, 32768),
}
NEW_IDS = tuple(CONFIGS)

# id: (experts, per token, shared) from the same configs
MOES: dict[str, tuple[int, int, int]] = {
    "qwen3.5-122b-a10b": (256, 8, 1),
    "qwen3.5-35b-a3b": (256, 8, 1),
    "glm-4.7-flash": (64, 4, 1),
    "kimi-k2-thinking": (384, 8, 1),
    "qwen3-vl-235b-a22b": (128, 8, 0),
    "qwen3-vl-30b-a3b": (128, 8, 0),
    "qwen3-coder-30b-a3b": (128, 8, 0),
    "nemotron-3-nano-30b-a3b": (128, 6, 1),
    "nemotron-3-super-120b-a12b": (512, 22, 1),
    "ernie-4.5-300b-a47b": (64, 8, 0),
    "ernie-4.5-21b-a3b": (64, 6, 2),
}


@pytest.mark.parametrize("model_id", NEW_IDS)
def test_shape_matches_the_published_config(model_id: str) -> None:
    m = CATALOG.model(model_id)
    a = m.attention
    got = (m.layers, m.hidden_size, m.intermediate_size, a.num_heads, a.num_kv_heads, a.head_dim, m.vocab_size,
           m.tie_word_embeddings, m.max_context)
    assert got == CONFIGS[model_id]
    moe = (m.moe.num_experts, m.moe.experts_per_token, m.moe.shared_experts) if m.moe else None
    assert moe == MOES.get(model_id)


@pytest.mark.parametrize("model_id", NEW_IDS)
def test_new_entries_are_sourced_dated_and_named_in_chinese(model_id: str) -> None:
    m = CATALOG.model(model_id)
    assert m.as_of == dt.date(2026, 12, 6)
    assert f"hf:{m.hf_repo}/config.json" in m.sources
    assert any(s.startswith("https://") for s in m.sources)
    assert m.license and any("\u3400" <= ch <= "\u9fff" for a in m.aliases for ch in a)
    for name in (m.id, m.name, *m.aliases):
        assert CATALOG.model(name).id == m.id


# --- hybrid linear attention: Qwen3.5 Gated DeltaNet, Nemotron Mamba-2 ------------------------------------

def gdn_state(linear_layers: int, value_heads: int, key_heads: int = 16, dim: int = 128) -> int:
    """Gated DeltaNet state of one sequence at 2 B: recurrent value heads × key dim × value dim, plus the conv
    window of kernel 4 − 1 over the q, k and v channels."""
    return linear_layers * (value_heads * dim * dim + 3 * (2 * key_heads * dim + value_heads * dim)) * 2


@pytest.mark.parametrize(
    ("model_id", "full", "linear_value_heads"),
    [
        # full_attention_interval 4; linear_num_key_heads 16 everywhere; linear_num_value_heads per config
        ("qwen3.5-122b-a10b", 12, 64),
        ("qwen3.5-35b-a3b", 10, 32),
        ("qwen3.5-27b", 16, 48),
        ("qwen3.5-9b", 8, 32),
        ("qwen3.5-4b", 8, 32),
        ("qwen3.5-2b", 6, 16),
        ("qwen3.5-0.8b", 6, 16),
    ],
)
def test_qwen35_state_and_kv_from_config(model_id: str, full: int, linear_value_heads: int) -> None:
    layers, _, _, _, kv_heads, head_dim, _, _, _ = CONFIGS[model_id]
    spec = ModelSpec.from_catalog(model_id)
    lay = kv_layout(spec, "bf16")
    assert (lay.full_layers, lay.linear_layers) == (full, layers - full)
    assert lay.state_bytes_per_seq == gdn_state(layers - full, linear_value_heads)
    assert kv_bytes_per_token(spec, "bf16") == full * 2 * kv_heads * head_dim * 2


def test_qwen35_states_in_numbers() -> None:
    assert gdn_state(36, 64) == 78_151_680  # 122B-A10B
    assert gdn_state(24, 32) == 26_345_472  # 9B and 4B
    assert gdn_state(18, 16) == 10_100_736  # 2B and 0.8B
    # the 35B-A3B and 27B have the Qwen3.6 siblings' shapes
    for a, b in (("qwen3.5-35b-a3b", "qwen3.6-35b-a3b"), ("qwen3.5-27b", "qwen3.6-27b")):
        assert CATALOG.model(a).attention == CATALOG.model(b).attention


def mamba2_state(blocks: int, heads: int, head_dim: int = 64, state: int = 128, groups: int = 8) -> int:
    """Mamba-2 state of one sequence at 2 B: heads × head_dim × ssm_state_size, plus the conv window of kernel
    4 − 1 over the x, B and C channels."""
    return blocks * (heads * head_dim * state + 3 * (heads * head_dim + 2 * groups * state)) * 2


@pytest.mark.parametrize(
    ("model_id", "pattern", "mamba_heads"),
    [
        # hybrid_override_pattern of each config: M = Mamba-2, E = MoE, * = attention
        ("nemotron-3-nano-30b-a3b", "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME", 64),
        ("nemotron-3-super-120b-a12b",
         "MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME", 128),
    ],
)
def test_nemotron_hybrid_from_config(model_id: str, pattern: str, mamba_heads: int) -> None:
    m = CATALOG.model(model_id)
    assert len(pattern) == m.layers
    assert m.attention.kind == AttentionKind.hybrid
    assert m.attention.full_attention_layers == pattern.count("*")
    assert m.attention.linear_state_bytes_per_seq == mamba2_state(pattern.count("M"), mamba_heads)
    spec = ModelSpec.from_catalog(model_id)
    assert kv_bytes_per_token(spec, "bf16") == pattern.count("*") * 2 * 2 * 128 * 2


def test_mla_kv_of_the_new_mla_models() -> None:
    # kv_lora_rank 512 + qk_rope_head_dim 64 per layer at 2 B
    assert kv_bytes_per_token(ModelSpec.from_catalog("GLM-4.7-Flash"), "bf16") == 47 * 576 * 2 == 54_144
    assert kv_bytes_per_token(ModelSpec.from_catalog("Kimi-K2-Thinking"), "bf16") == 61 * 576 * 2


# --- parameter counts re-derived from the config numbers ---------------------------------------------------

def qwen35_checkpoint(h: int, layers: int, heads: int, kv: int, ffn: int, value_heads: int, tied: bool,
                      vision: tuple[int, int, int], moe: tuple[int, int, int] | None = None) -> float:
    """Billions of parameters in a Qwen3.5 checkpoint: language model, vision encoder and the one-layer MTP head."""
    vocab, hd, kd = 248_320, 256, 128
    gdn = h * (2 * 16 * kd + 2 * value_heads * kd) + 2 * h * value_heads + (2 * 16 * kd + value_heads * kd) * 4 \
        + 2 * value_heads + kd + value_heads * kd * h
    att = 2 * h * heads * hd + 2 * h * kv * hd + heads * hd * h + 2 * hd
    if moe:
        experts, width, shared = moe
        mlp = experts * 3 * h * width + 3 * h * shared + h + h * experts
    else:
        mlp = 3 * h * ffn
    full = layers // 4
    text = (layers - full) * gdn + full * att + layers * (mlp + 2 * h) + h + vocab * h * (1 if tied else 2)
    mtp = att + mlp + 2 * h + 2 * h * h + 3 * h
    depth, vh, vi = vision
    merger = 4 * vh
    vis = depth * (4 * vh * vh + 2 * vh * vi + vi + 9 * vh) + 3 * 2 * 16 * 16 * vh + vh + 2304 * vh \
        + 2 * vh + merger * merger + merger + merger * h + h
    return (text + mtp + vis) / 1e9


@pytest.mark.parametrize(
    ("model_id", "derived"),
    [
        ("qwen3.5-122b-a10b", qwen35_checkpoint(3072, 48, 32, 2, 0, 64, False, (27, 1152, 4304), (256, 1024, 1024))),
        ("qwen3.5-35b-a3b", qwen35_checkpoint(2048, 40, 16, 2, 0, 32, False, (27, 1152, 4304), (256, 512, 512))),
        ("qwen3.5-27b", qwen35_checkpoint(5120, 64, 24, 4, 17408, 48, False, (27, 1152, 4304))),
        ("qwen3.5-9b", qwen35_checkpoint(4096, 32, 16, 4, 12288, 32, False, (27, 1152, 4304))),
        ("qwen3.5-4b", qwen35_checkpoint(2560, 32, 16, 4, 9216, 32, True, (24, 1024, 4096))),
        ("qwen3.5-2b", qwen35_checkpoint(2048, 24, 8, 2, 6144, 16, True, (24, 1024, 4096))),
        ("qwen3.5-0.8b", qwen35_checkpoint(1024, 24, 8, 2, 3584, 16, True, (12, 768, 3072))),
    ],
)
def test_qwen35_parameters_are_the_checkpoints(model_id: str, derived: float) -> None:
    assert CATALOG.model(model_id).params_b == pytest.approx(derived, rel=0.01)


def test_the_qwen35_checkpoint_count_matches_a_published_index() -> None:
    # Qwen/Qwen3.6-27B (the Qwen3.5-27B shape): bf16 model.safetensors.index.json total_size 55.56 GB
    derived = qwen35_checkpoint(5120, 64, 24, 4, 17408, 48, False, (27, 1152, 4304))
    assert derived * 2 == pytest.approx(55.56, rel=0.01)
    assert ModelSpec.from_catalog("qwen3.5-27b").weight_bytes_at("bf16") / 1e9 == pytest.approx(55.56, rel=0.03)


def test_qwen3_coder_30b_weight_bytes_match_the_published_safetensors() -> None:
    # Qwen/Qwen3-Coder-30B-A3B-Instruct model.safetensors.index.json: "total_size": 61064245248 (bf16)
    spec = ModelSpec.from_catalog("Qwen3-Coder-30B-A3B-Instruct")
    assert spec.weight_bytes_at("bf16") == pytest.approx(61_064_245_248, rel=0.03)


def moe_total_and_active(layers: int, h: int, heads: int, kv: int, hd: int, vocab: int, tied: bool,
                         experts: int, k: int, width: int, shared: int = 0, dense_layers: int = 0,
                         dense_ffn: int = 0) -> tuple[float, float]:
    """(total, active) billions of a GQA MoE decoder with gated experts."""
    att = 2 * h * heads * hd + 2 * h * kv * hd
    expert = 3 * h * width
    emb = vocab * h * (1 if tied else 2)
    moe_layers = layers - dense_layers
    common = layers * att + dense_layers * 3 * h * dense_ffn + moe_layers * (shared * expert + h * experts) + emb
    return (common + moe_layers * experts * expert) / 1e9, (common + moe_layers * k * expert) / 1e9


@pytest.mark.parametrize(
    ("model_id", "derived", "rel_active"),
    [
        # Qwen3-VL-235B-A22B text: the Qwen3-235B-A22B shape; + 0.58B of vision encoder
        ("qwen3-vl-235b-a22b", moe_total_and_active(94, 4096, 64, 4, 128, 151936, False, 128, 8, 1536), 0.01),
        ("qwen3-vl-30b-a3b", moe_total_and_active(48, 2048, 32, 4, 128, 151936, False, 128, 8, 768), 0.02),
        ("qwen3-coder-30b-a3b", moe_total_and_active(48, 2048, 32, 4, 128, 151936, False, 128, 8, 768), 0.02),
        # ERNIE 4.5: moe_layer_start_index 3 (300B) / 1 (21B); dense FFN 28,672 / 12,288
        ("ernie-4.5-300b-a47b",
         moe_total_and_active(54, 8192, 64, 8, 128, 103424, True, 64, 8, 3584, 0, 3, 28672), 0.03),
        ("ernie-4.5-21b-a3b", moe_total_and_active(28, 2560, 20, 4, 128, 103424, True, 64, 6, 1536, 2, 1, 12288),
         None),
    ],
)
def test_moe_parameters_from_config(model_id: str, derived: tuple[float, float], rel_active: float | None) -> None:
    m = CATALOG.model(model_id)
    vision = 0.6 if m.kind == "vlm" else 0.0
    assert m.params_b == pytest.approx(derived[0] + vision, rel=0.03)
    if rel_active is not None:
        assert m.active_params_b == pytest.approx(derived[1], rel=rel_active)
    else:  # ERNIE-4.5-21B-A3B: 3.35B with the embeddings; the card says 3B activated
        assert 3.0 <= derived[1] <= 3.5 and m.active_params_b == 3.0


def test_nemotron_parameters_from_config() -> None:
    def count(h: int, pattern: str, mamba_heads: int, experts: int, k: int, width: int, shared: int,
              latent: int | None = None) -> tuple[float, float]:
        di = mamba_heads * 64
        conv = di + 2 * 8 * 128
        mamba = h * (2 * di + 2 * 8 * 128 + mamba_heads) + conv * 5 + 3 * mamba_heads + di + di * h + h
        att = h * 32 * 128 + 2 * h * 2 * 128 + 32 * 128 * h + h
        inner = latent or h
        base = h * experts + experts + 2 * h * shared + h + (2 * h * latent if latent else 0)
        emb = 2 * 131072 * h
        fixed = pattern.count("M") * mamba + pattern.count("*") * att + emb + h
        n = pattern.count("E")
        total, active = (fixed + n * (base + e * 2 * inner * width) for e in (experts, k))
        return total / 1e9, active / 1e9

    nano = count(2688, "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME", 64, 128, 6, 1856, 3712)
    super_ = count(4096, "MEMEMEM*EMEMEMEM*EMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEMEM*EMEMEMEM*EMEMEMEME",
                   128, 512, 22, 2688, 5376, latent=1024)
    for model_id, (total, active) in (("nemotron-3-nano-30b-a3b", nano), ("nemotron-3-super-120b-a12b", super_)):
        m = CATALOG.model(model_id)
        assert m.params_b == pytest.approx(total, rel=0.01)
        assert m.active_params_b == pytest.approx(active, rel=0.03)  # with the embeddings, as the cards say


def test_kimi_k2_thinking_ships_int4_like_k25() -> None:
    thinking, k25, k2 = (ModelSpec.from_catalog(n) for n in ("Kimi-K2-Thinking", "kimi-k2.5", "kimi-k2"))
    assert thinking.native_dtype == k25.native_dtype == "int4-g32"
    assert thinking.weight_bytes_at() == k25.weight_bytes_at()
    assert CATALOG.model("kimi k2").id == "kimi-k2" and k2.native_dtype == "fp8"


# --- same-shape point releases are aliases ------------------------------------------------------------------

@pytest.mark.parametrize(
    ("alias", "entry"),
    [
        ("GLM-4.7", "glm-4.6"),  # AIC_OLD zai-org--GLM-4.7-FP8_config.json: the GLM-4.6 numbers
        ("GLM4.7", "glm-4.6"),
        ("GLM-5.1", "glm-5"),  # AIC zai-org--GLM-5.1_config.json differs from GLM-5's only in transformers_version
        ("MiniMax-M2.5", "minimax-m2"),  # AIC MiniMaxAI--MiniMax-M2.5_config.json: the M2 shape
    ],
)
def test_same_shape_releases_are_aliases(alias: str, entry: str) -> None:
    assert CATALOG.model(alias).id == entry


def test_glm47_and_minimax_m25_configs_are_their_aliases_shapes() -> None:
    glm = CATALOG.model("GLM-4.7")  # 92 layers, 5120, 96/8 heads of 128, 160 experts top-8 + 1, vocab 151552
    assert (glm.layers, glm.hidden_size, glm.attention.num_heads, glm.attention.num_kv_heads, glm.vocab_size,
            glm.max_context) == (92, 5120, 96, 8, 151552, 202752)
    mm = CATALOG.model("MiniMax-M2.5")  # 62 layers, 3072, 48/8 heads of 128, 256 experts of 1536 top-8
    assert (mm.layers, mm.hidden_size, mm.attention.num_heads, mm.attention.num_kv_heads, mm.intermediate_size,
            mm.vocab_size, mm.max_context, mm.native_dtype) == (62, 3072, 48, 8, 1536, 200064, 196608, "fp8")


def test_phi4_reasoning_has_its_32k_window() -> None:
    assert CATALOG.model("Phi-4-reasoning").id == "phi-4-reasoning"
    assert CATALOG.model("Phi-4-reasoning-plus").max_context == 32_768
    assert CATALOG.model("phi-4").max_context == 16_384
    shape = ("layers", "hidden_size", "intermediate_size", "vocab_size", "attention", "params_b")
    assert all(getattr(CATALOG.model("phi-4"), f) == getattr(CATALOG.model("phi-4-reasoning"), f) for f in shape)


def test_deepseek_v4_is_not_catalogued() -> None:
    # its compressed + sliding attention (compress_ratios per layer) has no faithful form in the schema
    for name in ("DeepSeek-V4-Flash", "DeepSeek-V4-Pro"):
        with pytest.raises(UnknownNameError) as err:
            CATALOG.model(name)
        assert "DeepSeek-V3.2" in err.value.suggestions


# --- checkpoint names ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("name", "base", "precision"),
    [
        ("GLM-5-FP8", "GLM-5", "fp8"),
        ("Llama-4-Maverick-17B-128E-Instruct-FP8", "Llama-4-Maverick-17B-128E", "fp8"),
        ("Llama-3.3-70B-Instruct-FP8-Dynamic", "Llama-3.3-70B", "fp8"),
        ("Qwen3-32B-AWQ", "Qwen3-32B", "int4"),
        ("Qwen2.5-7B-Instruct-GPTQ-Int4", "Qwen2.5-7B", "int4"),
        ("Qwen2.5-7B-Instruct-GPTQ-Int8", "Qwen2.5-7B", "int8"),  # the bit width said last wins
        ("Llama-3.3-70B-Instruct-quantized.w8a8", "Llama-3.3-70B", "int8"),
        ("Qwen3-32B-W8A8", "Qwen3-32B", "int8"),
        ("gpt-oss-120b-MXFP4", "gpt-oss-120b", "mxfp4"),
        ("Qwen3-30B-A3B-NVFP4", "Qwen3-30B-A3B", "nvfp4"),
        ("unsloth/Llama-3.1-8B-Instruct-bnb-4bit", "unsloth/Llama-3.1-8B", "nf4"),
        ("Qwen3-8B-GGUF:Q4_K_M", "Qwen3-8B", "Q4_K_M"),
        ("qwen3:32b-q4_K_M", "qwen3:32b", "Q4_K_M"),
    ],
)
def test_checkpoint_names_are_read(name: str, base: str, precision: str) -> None:
    found = checkpoint(name)
    assert found is not None and (found.base, found.precision) == (base, precision)
    assert resolve_precision(found.precision)  # a precision the tools know


@pytest.mark.parametrize("name", ["Qwen3-32B-Instruct", "gpt-oss-120b", "phi-4", "fp8", "DeepSeek-V3", "bge-m3",
                                  "Kimi-K2-Thinking", "qwen3.5:35b", "Mistral-7B-v0.1"])
def test_plain_names_state_no_precision(name: str) -> None:
    assert checkpoint(name) is None


def weights(model: str, **kw: object) -> tuple[str, int]:
    r = estimate_inference_memory(InferenceMemoryInput(model=model, context=8192, **kw))  # type: ignore[arg-type]
    return r.precision, r.weights_total_bytes


@pytest.mark.parametrize(
    ("checkpoint_name", "model", "precision"),
    [
        ("GLM-5-FP8", "GLM-5", "fp8"),
        ("GLM-4.6-FP8", "GLM-4.6", "fp8"),
        ("Qwen3.5-397B-A17B-FP8", "Qwen3.5-397B-A17B", "fp8"),
        ("Qwen3.6-27B-FP8", "Qwen3.6-27B", "fp8"),
        ("Llama-4-Maverick-17B-128E-Instruct-FP8", "Llama-4-Maverick", "fp8"),
        ("GLM-4.7-FP8", "GLM-4.7", "fp8"),
        ("Qwen3.5-35B-A3B-FP8", "Qwen3.5-35B-A3B", "fp8"),
    ],
)
def test_fp8_checkpoints_size_at_about_half_their_bf16_model(checkpoint_name: str, model: str,
                                                             precision: str) -> None:
    fp8, bf16 = weights(checkpoint_name), weights(model)
    assert (fp8[0], bf16[0]) == (precision, "bf16")
    # half, plus the embeddings and LM head that stay 16-bit (Qwen3.6-27B: 2.5B of 27.8B)
    assert 0.49 < fp8[1] / bf16[1] < 0.55


def test_glm5_fp8_in_numbers_and_an_explicit_precision_wins() -> None:
    # 744B parameters: 1,488 GB at bf16, about 746 GB as the FP8 checkpoint
    assert weights("GLM-5")[1] == 1_488_000_000_000
    assert 744e9 < weights("GLM-5-FP8")[1] < 748e9
    assert weights("GLM-5-FP8", precision="bf16") == weights("GLM-5")


def test_native_checkpoint_names_keep_the_native_layout() -> None:
    assert weights("DeepSeek-V3-FP8") == weights("DeepSeek-V3")
    assert weights("Kimi-K2.5-INT4") == weights("Kimi-K2.5")  # int4-g32, not AWQ's group-128 int4
    assert weights("gpt-oss-120b-MXFP4") == weights("gpt-oss-120b")


def test_quantized_checkpoint_names_on_the_size_path() -> None:
    assert weights("Qwen3-32B-AWQ")[0] == "int4"
    assert weights("Qwen3-32B-W8A8")[0] == "int8"
    assert weights("qwen3:32b-q4_K_M")[0] == "Q4_K_M"


def test_cli_sizes_the_checkpoint_and_picks_llamacpp_for_gguf(capsys: pytest.CaptureFixture[str]) -> None:
    def size(*argv: str) -> dict[str, object]:
        assert main(["size", *argv, "--context", "8192", "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    fp8, bf16 = size("--model", "GLM-5-FP8"), size("--model", "GLM-5")
    assert (fp8["precision"], bf16["precision"]) == ("fp8", "bf16")
    assert 0.49 < fp8["weights_total_bytes"] / bf16["weights_total_bytes"] < 0.51  # type: ignore[operator]
    gguf = size("--model", "qwen3:32b-q4_K_M")
    assert (gguf["precision"], gguf["engine"]) == ("Q4_K_M", "llamacpp")


def test_tool_calls_size_the_checkpoint() -> None:
    assert catalog_model_id("GLM-5-FP8") == "glm-5-fp8" and catalog_model_id("GLM-5") == "glm-5"
    assert catalog_model_id("DeepSeek-V3-FP8") == "deepseek-v3"  # its native precision: nothing to keep
    fp8 = run_tool("size_inference", {"model": "GLM-5-FP8", "context": 8192}, by="llm").result
    bf16 = run_tool("size_inference", {"model": "GLM-5", "context": 8192}, by="llm").result
    assert (fp8["precision"], bf16["precision"]) == ("fp8", "bf16")
    assert 0.49 < fp8["weights_total_bytes"] / bf16["weights_total_bytes"] < 0.51
    perf = run_tool("perf_decode", {"model": "GLM-5-FP8", "gpu": "H200", "count": 8}, by="llm").result
    assert perf["compute_precision"] == "fp8"
    # a model's call naming the checkpoint states its precision, as the plan does
    assert setup("size_inference", {"model": "GLM-5-FP8"})["precision"] == "fp8"
    assert "precision" not in setup("size_inference", {"model": "GLM-5"})


@pytest.mark.parametrize(
    ("text", "model", "precision"),
    [
        ("GLM-5-FP8 用 H200 要几张？", "glm-5", "fp8"),
        ("Can Qwen3-32B-W8A8 run on a 4090?", "qwen3-32b", "int8"),
        ("Qwen2.5-72B-Instruct-AWQ on two 3090s", "qwen2.5-72b", "int4"),
        ("GLM-5-FP8 in bf16 on H200", "glm-5", "bf16"),  # a precision said wins over the name's
    ],
)
def test_the_chat_reads_the_checkpoint_the_same_way(text: str, model: str, precision: str) -> None:
    parsed = parse(text)
    assert (parsed.model, parsed.precision) == (model, precision)


def test_cli_sizes_an_uncatalogued_model_from_its_parameter_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["size", "--model", "DeepSeek-V4-Pro", "--context", "8192"]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "DeepSeek-V4-Pro" in err and "DeepSeek-V3" in err
    assert main(["size", "--model", "DeepSeek-V4-Pro", "--params", "1600B", "--context", "8192", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["model"] == "DeepSeek-V4-Pro" and data["params"] == 1_600_000_000_000
    assert any("not in the model catalog" in json.dumps(a) or "uncatalogued" in json.dumps(a)
               for a in data["assumptions"])
