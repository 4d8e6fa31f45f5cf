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


def test_which_software_is_answered_from_the_stack_table() -> None:
    """'Which framework / does vLLM run on it?': the card's stack, what it runs, and the limits recorded."""
    from advisor.engine import Advisor
    from tests.fakes.script import turn

    adv = Advisor(search_k=0)
    r = turn(adv, adv.new_session(), "我有 Atlas 300I Duo，用什么推理框架跑 Qwen2.5-32B？vllm 支持吗")
    first = r.text.split("\n")[0]
    assert "CANN" in first and "MindIE" in first and "vllm-ascend" in first
    assert "vLLM 在它上面只支持稠密模型，精度限于 FP16/BF16/INT8" in first
    r = turn(adv, adv.new_session(), "Mac Studio M2 Ultra 192GB: does vLLM run on it for Llama-3.1-70B?")
    assert "vLLM does not run on it" in r.text.split("\n")[0]


def test_w8a8_is_eight_bit_and_a_precision_question_gets_its_answer() -> None:
    from advisor.engine import Advisor
    from advisor.nlu import parse
    from tests.fakes.script import turn

    assert parse("Can I run DeepSeek-R1-Distill-Qwen-32B on 910B in W8A8?").precision == "int8"
    assert parse("用 W8A8 量化跑 Qwen3-32B").precision == "int8"
    adv = Advisor(search_k=0)
    r = turn(adv, adv.new_session(), "My lab has a TITAN RTX. Can I do LoRA of Qwen2.5-7B on it in bf16? Does it even "
                                     "support bf16?")
    assert r.text.startswith("**No — TITAN RTX 24GB has no hardware BF16 path**")
