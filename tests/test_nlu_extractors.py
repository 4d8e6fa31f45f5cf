"""The named slot extractors and the answer-kind rules on everyday phrasings (hand-labelled)."""

from __future__ import annotations

import pytest

from advisor.nlu import Kind, parse


@pytest.mark.parametrize(("text", "slot", "value"), [
    ("我的 1000W 电源带得动两张 4090 吗？", "psu_w", 1000),
    ("850W PSU, 7800X3D", "psu_w", 850),
    ("850W PSU, 7800X3D", "cpu_name", "7800X3D"),
    ("双路 EPYC 配 8 张 4090", "cpu", "epyc-9004-2p"),
    ("鲲鹏920 双路的服务器 插 4 张 910B", "cpu", "kunpeng-920-2p"),
    ("两台服务器 16 卡训练 70B", "nodes", 2),
    ("一台8卡H20能不能跑满血 DeepSeek V3", "nodes", 1),
    ("FSDP with gradient checkpointing on 4 A100", "sharding", "fsdp"),
    ("8卡A100 全参微调 llama 3.1 70b 开 ZeRO-3 够不够", "sharding", "zero3"),
    ("不开梯度检查点的话 lora 一个 8b 的模型要多少显存", "grad_checkpointing", False),
    ("I already own a PC, the budget is for the GPU only", "has_host", True),
    ("I already own a PC, the budget is for the GPU only", "budget_scope", "gpu_only"),
    ("不好意思 预算是整机的，不是只算显卡", "budget_scope", "system"),
    ("bf16 全参训练 qwen3-4b 单卡 5090 吃得消吗", "budget_scope", None),  # 单卡 is one card, not a budget scope
    ("no NVIDIA please, inference for 14b models", "excluded_vendors", ["nvidia"]),
    ("only L40S or H100, serving qwen2.5-72b", "allowed_gpus", ["l40s", "h100-sxm"]),
    ("家里是普通 10A 插座，会跳闸吗", "mains", "220v-10a"),
    ("Office circuit is 15A/120V so ~1800W max", "mains", "120v-15a"),
    ("每张限功耗到 250W 呢", "gpu_power_limit_w", 250),
    ("我们大概每天跑 10 个小时", "hours_per_day", 10),
    ("如果是全天 24 小时满载呢", "hours_per_day", 24),
    ("电费按 1 块钱一度算", "kwh_price", 1),
    ("ollama 跑 qwen3:8b 需要多大显存", "engine_hint", "llamacpp"),
    ("llama 4 scout 开到 1M 上下文 显存得多少", "context_tokens", 1_048_576),
    ("二三十个人用", "concurrency", 30),
    ("Our team of 5 wants a local coding assistant", "concurrency", 5),
    ("kv cache 也用 fp8 呢", "kv_dtype", "fp8"),
    ("kv cache 也用 fp8 呢", "precision", None),  # the cache's type, not the weights'
    ("vram needed for llama 3.2 3b in fp32 (old gpu, no fp16 support)", "precision", "fp32"),
    ("gemma3 27b q4 在24g的卡上能跑不", "precision", "Q4_K_M"),
    ("5千块以内 能买到啥玩 AI 的卡", "gpu_count", None),  # 块 here is money, not cards
    ("功耗不能超过 1500W，上三张 L40S 行不行", "power_limit_w", 1500),
    ("功耗不能超过 1500W，上三张 L40S 行不行", "budget", None),  # 1500W is watts, not 1500 万
    ("H100 PCIe 版功耗是不是只有350w", "power_limit_w", None),  # a spec, not a limit
])
def test_slot(text: str, slot: str, value: object) -> None:
    assert getattr(parse(text), slot) == value


@pytest.mark.parametrize(("text", "amount", "currency"), [
    ("不对，是一万五", 15_000, "CNY"), ("两万出头，学生党", 20_000, "CNY"), ("十来万能搞定吗", 100_000, "CNY"),
    ("预算三四万", 40_000, "CNY"), ("€2,000 for a GPU", 2_000, "EUR"), ("with a 100k budget?", 100_000, "USD"),
    ("budget ~€15k, EU lab", 15_000, "EUR"), ("预算 1.5w", 15_000, "CNY"),
])
def test_budget(text: str, amount: float, currency: str) -> None:
    budget = parse(text).budget
    assert budget is not None and (budget.amount, budget.currency) == (amount, currency)


def test_a_rejected_value_is_not_read() -> None:
    p = parse("I meant 8 GPUs, not 4")
    assert p.gpu_count == 8 and p.kind == Kind.correct
    assert parse("说错了，是 72B 不是 32B").params_b == 72


@pytest.mark.parametrize(("text", "kind"), [
    ("L40S 显存多大？带宽和功耗呢", Kind.spec),  # no earlier answer: '…呢' is a question of its own
    ("那 FP16 呢？", Kind.inform),
])
def test_what_if_words_need_an_earlier_answer(text: str, kind: Kind) -> None:
    assert parse(text, context=False).kind == kind
    assert parse("那 FP16 呢？").kind == Kind.whatif


@pytest.mark.parametrize(("text", "kind"), [
    ("what's the tdp of the rtx pro 6000 blackwell workstation edition", Kind.spec),
    ("what is MIG on the A100/H100", Kind.concept),
    ("H800 vs A800, what's actually different?", Kind.compare),
    ("one H200 or two L40S for serving a 70b at fp8", Kind.compare),
    ("EPYC 9654 有几条 PCIe 5.0 通道", Kind.spec),
    ("预算大概三万", Kind.inform),
    ("整机预算 1.5w，想跑 comfyui 出图，配啥", Kind.recommend),
    ("两周内要把 7B 模型在 200 亿 token 上训完，8 张 H100 来得及吗", Kind.speed),
    ("买卡还是租云服务器划算", Kind.rent_vs_buy),
    ("thanks!", Kind.chitchat),
])
def test_kind(text: str, kind: Kind) -> None:
    assert parse(text).kind == kind
