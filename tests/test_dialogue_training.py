"""Training / fine-tuning path in English and Chinese: method, data, deadline, and the numbers quoted."""

from __future__ import annotations

import pytest

from advisor import Advisor
from advisor.fmt import gb
from advisor.planner import TOKENS_PER_SAMPLE

try:
    from fakes.script import assert_grounded, calls, gb, one, recompute, turn
except ImportError:  # tests/ collected as a package
    from tests.fakes.script import assert_grounded, calls, gb, one, recompute, turn


@pytest.fixture(scope="module")
def adv() -> Advisor:
    return Advisor()


def test_english_qlora_on_a_3090(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "QLoRA qwen2.5-7b on a 3090?")
    assert r.lang == "en" and r.mode == "answer"
    size = one(r, "size_training")
    assert size.arguments["model"] == "qwen2.5-7b" and size.arguments["method"] == "qlora"
    assert size.arguments["gpu"] == "rtx-3090" and size.arguments["gpus"] == 1
    fresh = recompute(size)
    assert ("fits on" if fresh["fits"] else "does not fit") in r.text
    assert gb(fresh["per_gpu_bytes"]) in r.text
    # LoRA adapters are tiny next to the 7.62 B frozen parameters
    assert fresh["trainable_params"] < 0.02 * 7.62e9
    assert f"{fresh['trainable_params'] / 1e6:.1f}M" in r.text
    assert "gradients" in r.text.lower() and "optimizer" in r.text.lower()
    assert "data" in r.question.lower() and "done" in r.question.lower()
    assert "method" not in r.question.lower() and "which model" not in r.question.lower()
    assert_grounded(r, s)

    r = turn(adv, s, "about 50k samples, and it should be done within 2 days")
    assert s.profile.dataset_samples == 50_000 and s.profile.deadline_days == 2
    tt = one(r, "training_time")
    assert tt.arguments["tokens"] == 50_000 * TOKENS_PER_SAMPLE and tt.arguments["gpu"] == "rtx-3090"
    hours = recompute(tt)["hours"]
    assert (f"{hours:,.1f} hours" if hours < 48 else f"{hours / 24:,.1f} days") in r.text
    assert ("on time" if hours <= 48 else "too slow") in r.text
    assert f"{TOKENS_PER_SAMPLE} tokens per sample" in r.text  # the assumption is said
    assert "budget" in r.question.lower()
    assert_grounded(r, s)

    r = turn(adv, s, "what about full fine-tuning instead?")
    size = one(r, "size_training")
    assert size.arguments["method"] == "full"
    fresh = recompute(size)
    assert fresh["fits"] is False and "does not fit" in r.text  # 7.6 B × 16+ B/param >> 24 GB
    assert "Compared with the previous setup" in r.text
    assert calls(r, "recommend")
    assert_grounded(r, s)


def test_chinese_pretraining_with_everything_given(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "想从头预训练一个 llama 3.1 8b，1T tokens，30 天内训完，8 张 H100")
    assert r.lang == "zh" and s.profile.method == "pretrain"
    size = one(r, "size_training")
    assert size.arguments["method"] == "full" and size.arguments["gpus"] == 8 and size.arguments["zero_stage"] == 3
    tt = one(r, "training_time")
    assert tt.arguments == {"model": "llama-3.1-8b", "tokens": 1e12, "gpu": "h100-sxm", "count": 8}
    result = recompute(tt)
    # independent check: 6·N·D = 6 × 8.03e9 × 1e12 FLOPs
    assert result["flops"] == pytest.approx(6 * 8.03e9 * 1e12, rel=1e-3)
    days = result["hours"] / 24
    assert f"{days:,.1f} 天" in r.text or (days >= 100 and f"{days:,.0f} 天" in r.text)
    assert ("来得及" if days <= 30 else "来不及") in r.text
    for word in ("数据量", "训练完成", "训练方式"):
        assert word not in (r.question or "")  # all said up front
    assert "预算" in r.question
    assert_grounded(r, s)


def test_chinese_finetune_script_asks_method_then_data(adv: Advisor) -> None:
    s = adv.new_session()
    r = turn(adv, s, "我想做大模型微调")
    assert r.mode == "ask" and "模型" in r.question and "LoRA" in r.question
    r = turn(adv, s, "qwen2.5-14b，LoRA")
    size = one(r, "size_training")
    assert size.arguments["method"] == "lora" and size.arguments["model"] == "qwen2.5-14b"
    assert "gpu" not in size.arguments
    assert gb(recompute(size)["per_gpu_bytes"]) in r.text
    assert calls(r, "recommend")  # no GPU named: suggest configurations
    assert "数据量" in r.question and "多长时间" in r.question
    assert_grounded(r, s)


@pytest.mark.parametrize("text", ["full fine-tune Llama-3-8B on 2x RTX 3090", "两张3090全参微调 Llama-3-8B"])
def test_per_gpu_breakdown_adds_up_to_the_need(adv: Advisor, text: str) -> None:
    """The one-line breakdown lists parts that sum to the per-GPU need (the explained terms overlap: logits sit
    inside activations and the ZeRO-3 working set inside weights, so they are not added again)."""
    import re

    s = adv.new_session()
    r = turn(adv, s, text)
    size = recompute(one(r, "size_training"))
    line = next(ln for ln in r.text.splitlines() if ln.startswith(("Per GPU:", "每卡构成", "Made of:", "显存构成")))
    parts = [float(x) for x in re.findall(r"([\d.]+) GB", line)]
    assert len(parts) >= 4
    assert sum(parts) == pytest.approx(size["per_gpu_bytes"] / 1e9, abs=0.05 * len(parts))  # each shown to 0.1 GB


@pytest.mark.parametrize("text,word", [("8张H100训练一个7b模型，1T token，要多久？", "预训练"),
                                       ("train a 7B model on 1T tokens with 8 H100s, how long?", "pre-training")])
def test_a_trillion_token_run_is_sized_as_pre_training(adv: Advisor, text: str, word: str) -> None:
    """Fine-tuning sets are millions to a few billion tokens; 1T tokens with no method named is pre-training, which
    trains every weight (full), not LoRA — and the reply says which it assumed."""
    r = turn(adv, adv.new_session(), text)
    size = one(r, "size_training")
    assert size.arguments["method"] == "full"
    assumed = next(ln for ln in r.text.splitlines() if ln.startswith(("**假设**", "**Assumptions**")))
    assert word in r.text.splitlines()[0] and word in assumed


def test_owned_gpus_get_sharding_before_anything_is_bought(adv: Advisor) -> None:
    """LoRA on Llama-3.1-70B: the frozen BF16 base is 70.6e9 × 2 B ≈ 141 GB — a full copy per H100 (plain data
    parallel) cannot fit 80 GB, while FSDP / ZeRO-3 over 8 GPUs leaves ≈ 18 GB of it on each: the reply says so."""
    s = adv.new_session()
    r = turn(adv, s, "8 张 H100 做 Llama-3.1-70B 的 LoRA 微调，放得下吗")
    sharded = [c for c in calls(r, "size_training") if c.arguments.get("zero_stage") == 3]
    assert sharded and sharded[0].result["fits"] and sharded[0].result["per_gpu_bytes"] < 40e9
    assert "ZeRO-3 / FSDP" in r.text and "放得下" in r.text


def test_full_fine_tuning_on_two_24gb_cards_offers_optimizer_offload(adv: Advisor) -> None:
    """Full fine-tuning of an 8B with ZeRO-3 over 2 GPUs still holds 8 B × 18 B / 2 ≈ 72 GB of model states per
    GPU; moving the fp32 master weights and Adam states (12 B/param) to CPU RAM leaves the 16-bit weights and
    gradients sharded (≈ 16 GB per GPU) plus activations: it fits a 24 GB card, at the cost of host RAM."""
    s = adv.new_session()
    r = turn(adv, s, "Fine-tune Llama-3-8B with full fine-tuning on 2x RTX 4090")
    off = [c for c in calls(r, "size_training") if c.arguments.get("offload_optimizer")]
    assert off and off[0].result["fits"] and off[0].result["cpu_bytes"] > 96e9
    assert "optimizer offload to CPU RAM" in r.text


def test_full_fine_tuning_tries_checkpointing_before_changing_the_method(adv: Advisor) -> None:
    """Qwen2.5-14B full fine-tuning with ZeRO-3 over 4 × A100 80GB: model states 14.8e9 × 18 B / 4 ≈ 66 GB per
    GPU, plus ~20 GB of activations at 2,048 tokens without checkpointing — just over 80 GB; recomputing the
    activations leaves a few GB of them, so it fits and the user keeps full fine-tuning."""
    s = adv.new_session()
    r = turn(adv, s, "我们实验室已经有 4 张 A100 80GB，想全参数微调 Qwen2.5-14B，够吗")
    ckpt = [c for c in calls(r, "size_training") if c.arguments.get("recompute") == "full"
            and c.arguments.get("method") == "full"]
    assert ckpt and ckpt[0].result["fits"]
    lines = r.text.splitlines()
    first_fix = next(i for i, line in enumerate(lines) if line.startswith("**改用"))
    assert "梯度检查点" in lines[first_fix]


@pytest.mark.parametrize("conv", [("我有两张 3090，想微调一下 llama3 8b，全参能跑吗", "那用 lora 呢", "qlora 呢"),
                                  ("I have two 3090s, can I fully fine-tune llama 3 8b?", "what about lora?",
                                   "and qlora?")])
def test_a_lighter_method_offered_is_sized_as_asking_for_it_sizes_it(conv: tuple[str, str, str]) -> None:
    """'With LoRA it fits: 13.1 GB per GPU' and then, asked for LoRA, '20.4 GB per GPU': the offer carried the
    ZeRO-3 assumed for full fine-tuning. An offer and the turn that takes it up must say the same figure."""
    adv = Advisor(search_k=0)
    s = adv.new_session()
    first = adv.reply(conv[0], s)
    offered = {c.arguments["method"]: c.result["per_gpu_bytes"] for c in first.tool_calls
               if c.name == "size_training" and c.ok and c.arguments["method"] in ("lora", "qlora")}
    assert set(offered) == {"lora", "qlora"}
    for text, method in ((conv[1], "lora"), (conv[2], "qlora")):
        r = adv.reply(text, s)
        asked = next(c for c in r.tool_calls if c.name == "size_training" and c.arguments["method"] == method)
        assert asked.result["per_gpu_bytes"] == offered[method]
        assert gb(offered[method]) in first.text and gb(offered[method]) in r.text


def test_epochs_multiply_a_data_set_given_in_tokens() -> None:
    """'1 亿 token，训练 3 轮' was timed as one epoch (2.1 h). By hand: 6 × 8.03e9 parameters × 3e8 tokens
    = 1.445e19 FLOPs; 4 × A100 at 312 TFLOPS dense BF16 × MFU 0.4057 (the median of the published whole runs on
    A100: Llama 2 7B's 6·7e9·2e12 / (184,320 h · 3600 · 312e12)) = 5.06e14 FLOP/s → 28,540 s ≈ 7.9 h."""
    from advisor import Advisor

    adv = Advisor()
    session = adv.new_session()
    adv.reply("我想用 4 张 A100 80G 全参微调 Llama-3.1-8B", session)
    reply = adv.reply("数据集大概 1 亿 token，训练 3 轮要多久？", session)
    hours = 6 * 8.03e9 * 3e8 / (4 * 312e12 * 0.4057) / 3600
    assert f"{hours:.1f} 小时" in reply.text.splitlines()[0], reply.text.splitlines()[0]
