"""Software support per card, engine, model architecture and precision (knowledge/data/stack_support.toml) is a
gate in the recommender. References: vllm-ascend's 310P guide (Atlas 300I Duo: dense models in float16 or W8A8,
no AWQ/GPTQ, MoE early access, no MLA) and llama.cpp's CANN backend page (FP16, Q8_0 and Q4_0 only)."""

from __future__ import annotations

from knowledge.schema import AttentionKind
from knowledge.stack_support import unsupported
from tools.recommend import RecommendInput, recommend


def test_the_310p_runs_dense_models_in_fp16_or_w8a8_only() -> None:
    assert unsupported("atlas-300i-duo", "vllm", False, AttentionKind.gqa, "int8") is None
    assert unsupported("atlas-300i-duo", "vllm", False, AttentionKind.gqa, "int4") is not None  # no AWQ/GPTQ
    assert unsupported("atlas-300i-duo", "vllm", True, AttentionKind.mla, "int8") is not None  # DeepSeek: MoE + MLA
    assert unsupported("ascend-910b", "vllm", True, AttentionKind.mla, "int8") is None  # no limit recorded


def test_llama_cpp_on_ascend_takes_q4_0_not_k_quants() -> None:
    assert unsupported("ascend-910b", "llamacpp", False, AttentionKind.gqa, "q4_0") is None
    assert unsupported("ascend-910b", "llamacpp", False, AttentionKind.gqa, "q4_k_m") is not None
    assert unsupported("rtx-4090", "llamacpp", False, AttentionKind.gqa, "q4_k_m") is None


def test_deepseek_v3_in_int4_is_not_planned_on_the_300i_duo() -> None:
    rec = recommend(RecommendInput(workload="inference", model="deepseek-v3", precision="int4", budget_cny=500_000,
                                   region="cn", domestic_only=True))
    assert "atlas-300i-duo" not in {o.gpu_id for o in rec.options}
    why = next(r for r in rec.rejected if r.gpu_id == "atlas-300i-duo")
    assert why.stage == "constraint" and "vLLM" in why.reason.text and "dense" in why.reason.text


def test_a_dense_model_in_w8a8_is_still_offered_on_it() -> None:
    rec = recommend(RecommendInput(workload="inference", model="qwen2.5-32b", precision="int8", budget_cny=200_000,
                                   region="cn", domestic_only=True))
    assert "atlas-300i-duo" in {o.gpu_id for o in rec.options}
