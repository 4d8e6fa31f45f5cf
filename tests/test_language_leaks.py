"""Every kind of reply, in both languages, stays in its language: no CJK in English replies, no English
sentence in Chinese ones (names, units, model ids, engine and precision names aside)."""

from __future__ import annotations

import re

import pytest

from advisor import Advisor
from knowledge import load_catalog
from knowledge.offers import rental_offers, systems

# One conversation per reply kind, phrased in each language. Each turn's reply is checked.
CONVERSATIONS: dict[str, tuple[list[str], list[str]]] = {
    "inference fits": (["两张 4090 跑 llama 3.1 8b，32k 上下文，10 个并发"],
                       ["can two 4090s serve llama 3.1 8b with 32k context for 10 users"]),
    "inference does not fit + alternatives": (["一张 4090 跑 qwen2.5 72b int4 够吗"],
                                              ["is one 4090 enough for qwen2.5 72b int4"]),
    "detailed derivation": (["llama 3.1 70b fp8 推理，8k 上下文，一张 H100", "详细说说"],
                            ["llama 3.1 70b fp8 inference, 8k context, one H100", "show me the details"]),
    "training": (["用 4 张 A100 全参数微调 qwen2.5 7b，1B tokens 数据"],
                 ["full fine-tune qwen2.5 7b on 4 A100s with 1B tokens of data"]),
    "lora on a small card": (["想用我的4060ti 16g微调一下qwen 7b"], ["fine-tune qwen 7b with LoRA on my 4060 ti 16gb"]),
    "scientific": (["做 CFD 仿真，需要 FP64，预算 20 万"], ["CFD simulation, needs FP64, budget $30k"]),
    "recommend with budget": (["部署 qwen2.5 32b 推理，预算 10 万，买什么卡"],
                              ["serve qwen2.5 32b, budget $15k, which GPUs should I buy"]),
    "compare": (["比较一下 H100 和 H200", "跑 llama 3.1 70b fp8 呢"],
                ["compare H100 and H200", "and for llama 3.1 70b fp8?"]),
    "value": (["4090 和 L40S 哪个性价比高"], ["4090 or L40S, which is better value for money"]),
    "best value": (["性价比最高的卡是哪张"], ["which card is the best bang for the buck"]),
    "spec": (["H100 显存多大", "支持 FP8 吗"], ["how much memory does the H100 have", "does it support FP8"]),
    "build": (["4 张 4090 装塔式机箱，电源和插座够吗"], ["4 RTX 4090s in a tower case, is the PSU and outlet ok"]),
    "rent or buy": (["8 张 H100 租还是买，用 6 个月"], ["rent or buy 8 H100s for 6 months"]),
    "what a budget buys": (["预算 5 万能买什么卡"], ["what can I buy with $8k"]),
    "concept": (["什么是 KV 缓存"], ["what is the KV cache"]),
    "question first": (["我想买显卡"], ["I want to buy a GPU"]),
    "export": (["两张 4090 跑 llama 3.1 8b 4bit，32k 上下文，10 个并发", "导出方案"],
               ["two 4090s for llama 3.1 8b 4-bit, 32k context, 10 users", "export the plan"]),
}

_CJK = re.compile(r"[\u3400-\u9fff]")
# product and technical names that are the same in both languages
_NEUTRAL = re.compile(
    r"llama\.cpp / Ollama|llama\.cpp|Ollama|GGUF Q\d_K_M|Q\d_K_M|tokens/s|tokens|FlashAttention|"
    r"Tensor Cores?|NVLink bridge|KV cache|ZeRO-\d|FSDP|QLoRA|LoRA|AWQ|GPTQ|TFLOPS|GB/s|GiB|GB|PCIe|"
    r"Threadripper PRO|Xeon W|EPYC|micro-batch|nvidia-smi|CUDA|vLLM|SGLang|TensorRT-LLM|Transformers|"
    r"AI Enterprise|vGPU|RTX PRO|ROCm|oneAPI|Intel XPU|\[[^\]]+\]")


def _names() -> list[str]:
    cat = load_catalog()
    names = {g.name for g in cat.gpus} | {m.name for m in cat.models} | {p.name for p in cat.platforms}
    names |= {o.provider for o in rental_offers()} | {s.name for s in systems()}  # providers and systems by name
    return sorted(names, key=len, reverse=True)


def _english_runs(text: str) -> list[str]:
    for name in _names():
        text = text.replace(name, " ")
    text = _NEUTRAL.sub(" ", re.sub(r"`[^`]*`", " ", text))  # formulas in backticks are code
    return re.findall(r"[A-Za-z][A-Za-z'\-]+(?:[ ,]+[A-Za-z][A-Za-z'\-]+){2,}", text)


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


@pytest.mark.parametrize("kind", sorted(CONVERSATIONS))
def test_english_replies_have_no_chinese(adv: Advisor, kind: str) -> None:
    session = adv.new_session()
    for text in CONVERSATIONS[kind][1]:
        reply = adv.reply(text, session, lang="en")
        leaked = [line for line in reply.text.splitlines() if _CJK.search(line)]
        assert leaked == [], f"{kind}: {text!r}"


@pytest.mark.parametrize("kind", sorted(CONVERSATIONS))
def test_chinese_replies_have_no_english_sentences(adv: Advisor, kind: str) -> None:
    session = adv.new_session()
    for text in CONVERSATIONS[kind][0]:
        reply = adv.reply(text, session, lang="zh")
        assert _CJK.search(reply.text), f"{kind}: {text!r} got no Chinese reply"
        assert _english_runs(reply.text) == [], f"{kind}: {text!r}"


def test_the_detector_catches_what_it_should() -> None:
    assert _english_runs("每卡需要 26.3 GB，weights + activation peak exceed the reservation")
    assert not _english_runs("2 张 GeForce RTX 4090 用 llama.cpp / Ollama 跑 GGUF Q4_K_M，约 184 tokens/s")
