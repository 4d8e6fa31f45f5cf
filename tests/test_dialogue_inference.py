"""Inference path, in Chinese and English: the questions asked, the tools called, the numbers quoted."""

from __future__ import annotations

import pytest

from advisor import Advisor
from knowledge.messages import render

try:
    from fakes.script import assert_grounded, calls, gb, gib, one, recompute, turn
except ImportError:  # tests/ collected as a package
    from tests.fakes.script import assert_grounded, calls, gb, gib, one, recompute, turn


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


def test_opening_question_in_the_users_language(adv: Advisor) -> None:
    both = adv.greeting(adv.new_session())
    assert "预训练" in both.text and "推理服务" in both.text and "科学计算" in both.text
    assert "pre-training" in both.text and "inference serving" in both.text and "scientific computing" in both.text
    zh = adv.greeting(adv.new_session(lang="zh"))
    assert "科学计算" in zh.text and "scientific" not in zh.text
    en = adv.reply("hello", adv.new_session())
    assert en.mode == "opening" and "scientific computing" in en.question and "科学计算" not in en.text


def test_chinese_inference_script(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "我们想部署一个推理服务")
    assert r.mode == "ask" and r.tool_calls == []
    assert "模型" in r.question and "精度" in r.question
    assert s.profile.use_case == "inference"

    r = turn(adv, s, "llama 3.1 8b，fp16")
    size = one(r, "size_inference")
    assert size.arguments["model"] == "llama-3.1-8b" and size.arguments["precision"] == "fp16"
    assert size.arguments["context"] == 8192 and size.arguments["batch"] == 1  # stated defaults
    fresh = recompute(size)
    assert gb(fresh["per_gpu_bytes"]) in r.text and gib(fresh["per_gpu_bytes"]) in r.text
    # independent check: 8.03 B parameters × 2 bytes (FP16) = 16.06 GB of weights
    assert gb(8.03e9 * 2) in r.text
    assert "上下文按 8,192 tokens 计" in r.text  # the assumption is said
    assert "上下文" in r.question and "并发" in r.question and "模型" not in r.question
    assert r.citations and all(f"[{c.id}]" in r.text for c in r.citations)
    assert "KV 缓存" in r.text and "权重" in r.text and "开销" in r.text
    assert_grounded(r, s)

    r = turn(adv, s, "32k 上下文，20 个并发")
    size = one(r, "size_inference")
    assert (size.arguments["context"], size.arguments["batch"]) == (32_768, 20)
    fresh = recompute(size)
    assert gb(fresh["per_gpu_bytes"]) in r.text and gb(fresh["breakdown"]["kv_cache"]) in r.text
    assert "预算" in r.question
    assert_grounded(r, s)

    r = turn(adv, s, "预算十万")
    rec = one(r, "recommend")
    assert rec.arguments["budget_cny"] == 100_000 and rec.arguments["concurrency"] == 20
    rec_result = recompute(rec)
    if rec_result["options"]:
        top = rec_result["options"][0]
        assert top["gpu"] in r.text and f"¥{top['total_price_cny']:,.0f}" in r.text
    else:  # nothing passes at this budget: the reply says so and why (budget reasons first)
        assert "没有找到合适的配置" in r.text
        budget_reasons = [render(x["reason"], "zh") for x in rec_result["rejected"] if x["stage"] == "budget"]
        assert not budget_reasons or any(reason in r.text for reason in budget_reasons)
    assert "CUDA" in r.question or "信创" in r.question
    assert_grounded(r, s)

    r = turn(adv, s, "不依赖 CUDA，也没有信创要求")
    assert s.profile.cuda_required is False and s.profile.domestic is False
    assert "GPU" in r.question or "服务器" in r.question  # existing hardware next
    asked_before = list(s.asked)
    r = turn(adv, s, "没有")
    assert s.profile.existing == []
    assert all(slot not in asked_before for slot in s.pending)  # nothing asked twice


def test_issue_example_two_4090s_for_70b_4bit(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "70b 模型 4bit 跑推理 两张4090够不够")
    assert r.lang == "zh" and r.mode == "answer"
    size = one(r, "size_inference")
    assert size.arguments["gpu"] == "rtx-4090" and size.arguments["gpus"] == 2
    assert size.arguments["precision"] == "int4" and size.arguments["model"] == "llama-3.1-70b"
    fresh = recompute(size)
    assert fresh["fits"] is False
    # the requested vLLM 4-bit configuration is a plain "no"; only the llama.cpp GGUF figure beside it may
    # say "fits" (tests/test_dialogue_quality.py checks that one against its own tool result)
    assert "放不下" in r.text and "放得下" not in r.text.split("GGUF")[0]
    assert gb(fresh["per_gpu_bytes"]) in r.text and gb(-fresh["headroom_bytes"]) in r.text
    assert "Llama-3.1-70B" in r.text  # the assumed architecture for a bare '70b' is named
    # no speed for the vLLM configuration that does not fit; the one speed is llama.cpp's, which fits
    assert [c.arguments["precision"] for c in calls(r, "perf_decode")] == ["Q4_K_M"]
    assert calls(r, "recommend")  # alternatives that do fit
    assert one(r, "check_build").result["ok"] is False
    assert "上下文" in r.question and "模型" not in r.question and "精度" not in r.question
    assert_grounded(r, s)


def test_english_everything_up_front_is_not_asked_again(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "We want to serve Qwen2.5-72B in FP8 to 50 concurrent users with 32k context on 4x H100 SXM")
    assert r.lang == "en" and r.mode == "answer"
    size = one(r, "size_inference")
    assert size.arguments == {"model": "qwen2.5-72b", "context": 32_768, "batch": 50, "gpus": 4, "engine": "vllm",
                              "precision": "fp8", "gpu": "h100-sxm"}
    fresh = recompute(size)
    verdict = "fits" if fresh["fits"] else "does not fit"
    assert verdict in r.text
    if fresh["fits"]:
        perf = one(r, "perf_decode")
        speed = recompute(perf)["tokens_per_s"]
        assert (f"{speed:,.1f} tokens/s" if speed < 100 else f"{speed:,.0f} tokens/s") in r.text
    for slot_word in ("model", "precision", "context", "concurrent"):
        assert slot_word not in (r.question or "").lower()
    assert "budget" in r.question.lower()
    assert_grounded(r, s)


def test_english_gguf_on_a_single_card_uses_llama_cpp_accounting(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "can I run llama 3.1 8b Q4_K_M on one RTX 4060 Ti 16GB? 8k context, just me")
    size = one(r, "size_inference")
    assert size.arguments["engine"] == "llamacpp" and size.arguments["precision"] == "Q4_K_M"
    assert size.arguments["gpu"] == "rtx-4060-ti-16gb"
    fresh = recompute(size)
    assert gb(fresh["per_gpu_bytes"]) in r.text
    assert ("fits" if fresh["fits"] else "does not fit") in r.text
    assert_grounded(r, s)
