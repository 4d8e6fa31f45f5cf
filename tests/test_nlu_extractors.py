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
    # speech-to-text digits and glued counts
    ("两张三零九零跑七十b现存够不够", "gpus", [("rtx-3090", 2)]),
    ("72b q4 vram needed 3x3090", "gpus", [("rtx-3090", 3)]),
    ("building a 4x used 3090 rig, is one 1600W PSU enough?", "gpus", [("rtx-3090", 4)]),
    # owned hardware, hosts and nodes in forum and procurement phrasing
    ("我们有四张四零九零，全量微调 8b 要多少显存", "existing", [("rtx-4090", 4)]),
    ("our lab has 4x A100 40G. can they serve a 70b model in bf16?", "existing", [("a100-pcie-40gb", 4)]),
    ("课题组有台双路 EPYC 9754 的服务器，空了两个槽", "has_host", True),
    ("机房一个柜子就给 8kW，塞两台 8 卡 4090 行不行", "nodes", 2),
    ("For a 2-node MI300X setup (8 GPUs each), is 200Gb Ethernet adequate?", "nodes", 2),
    ("不要 A 卡，预算 20 万", "excluded_vendors", ["amd"]),
    ("Intel's out, and it has to run CUDA", "excluded_vendors", ["intel"]),
    # context and users in long posts
    ("预计同时在线 40 人左右，单次对话不会超过 16k，显存要准备多少", "concurrency", 40),
    ("预计同时在线 40 人左右，单次对话不会超过 16k，显存要准备多少", "context_tokens", 16_384),
    ("hosting Llama 3.3 70B for approx. 150 staff at FP8", "head_count", 150),
    ("hosting Llama 3.3 70B for approx. 150 staff at FP8", "concurrency", 30),  # a small group's worth at peak
    ("OOMing at 4k seq len on my 3090", "context_tokens", 4096),
    # system RAM, and a card's memory is not RAM
    ("两张3090，内存64G够不够", "system_ram_gb", 64),
    ("A100 80G内存多大", "system_ram_gb", None),
    # a scientific code named
    ("AlphaFold2 跑预测要多大显存", "sci_code", "alphafold"),
    ("VASP 用什么卡", "sci_code", "vasp"),
    # R1 distills by size: Qwen bases except the 8B and 70B (Llama); DeepSeek's model cards
    ("deepseek r1 蒸馏的那个三十二b 推里要多少现存", "model", "deepseek-r1-distill-qwen-32b"),
    ("qlora 训 deepseek-r1 蒸馏 70b 那个 24g 够呗", "model", "deepseek-r1-distill-llama-70b"),
    ("满血 R1 要几张 H20", "model", "deepseek-r1"),
    # a context or prompt length is not money; a count needs no FP64 in front of it
    ("大概二三十个人同时用，上下文 32k 左右", "budget", None),
    ("serving only. peak is ~120 simultaneous users, prompts stay under 4k", "context_tokens", 4096),
    ("Kindly share the FP64 number of A100 80GB", "gpus", [("a100-sxm-80gb", 1)]),
    ("9950X 配俩 5090，1500W 电源够用不", "gpus", [("rtx-5090", 2)]),
    ("昇腾 910B 一台八卡，部署 qwen3-235b-a22b", "gpus", [("ascend-910b", 8)]),
    ("need to serve qwen 2.5 72b at fp8 for around 25 analysts", "concurrency", 25),
    ("a 12gb card for sdxl", "card_memory_gb", 12),
])
def test_slot(text: str, slot: str, value: object) -> None:
    got = getattr(parse(text), slot)
    if slot in ("gpus", "existing"):
        got = [(g.gpu, g.count) for g in got or []]
    assert got == value


@pytest.mark.parametrize(("text", "amount", "currency"), [
    ("不对，是一万五", 15_000, "CNY"), ("两万出头，学生党", 20_000, "CNY"), ("十来万能搞定吗", 100_000, "CNY"),
    ("预算三四万", 40_000, "CNY"), ("€2,000 for a GPU", 2_000, "EUR"), ("with a 100k budget?", 100_000, "USD"),
    ("budget ~€15k, EU lab", 15_000, "EUR"), ("预算 1.5w", 15_000, "CNY"),
    ("預算 2 萬人民幣左右，該買哪張顯卡？", 20_000, "CNY"),  # traditional characters, read via OpenCC t2s
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
    ("群里有人知道 H200 NVL 是几个 W 的吗🤔", Kind.spec),
    ("mi250x fp64 tflops", Kind.spec),
    ("兄弟们 gpt-oss-120b 单张 96G 的卡能塞下不 🙏", Kind.size_inference),
    ("老哥们 手里一张 5080 想跑个 14b 的 q4 能行不", Kind.size_inference),
    ("Could you advise the total GPU memory required for Llama 3.3 70B at FP8?", Kind.size_inference),
    ("做 WRF 天气预报模拟，需要 FP64，预算 40 万，有没有合适的 GPU", Kind.recommend),
    ("租 H100 一小时 15 块，一年下来是不是还不如直接买？", Kind.rent_vs_buy),
    ("ok now try it with 3 nodes", Kind.whatif),
    ("打错字了 上下文是 16k", Kind.correct),
    ("dump the whole plan to a CSV", Kind.export),
    ("这个不算了 咱从头捋一遍", Kind.reset),
    ("补充说明：本项目须符合信创要求，整机预算额度 260 万元。", Kind.inform),
])
def test_kind(text: str, kind: Kind) -> None:
    assert parse(text).kind == kind

