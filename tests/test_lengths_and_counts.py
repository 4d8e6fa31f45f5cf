"""Numbers that describe something else than they first look like (blind batch n, 2026-12-06).

- A length in tokens is a context, never people or a training set: 'users at 32k ctx', '并发 32k 上下文',
  'a 100k token的文档', 'the doc is only 32k tokens'.
- 'N×<card>' before node/server/box counts cards per machine: 'an 8x A100 80GB node' is one machine of eight.
- Pre-training a model 'like Llama' trains one's own architecture of the size said, not a catalog model.
- A deadline past 256 cards is met with whole nodes, not refused.
"""

from __future__ import annotations

import pytest

from advisor.engine import Advisor
from advisor.nlu import parse


@pytest.mark.parametrize(("text", "context"), [
    ("we want to serve DeepSeek-V3 in FP8 on one 8xH100 box. how many concurrent users at 32k ctx?", 32768),
    ("并发 32k 上下文", 32768),
])
def test_a_length_in_tokens_is_never_a_count_of_users(text: str, context: int) -> None:
    said = parse(text)
    assert said.context_tokens == context and said.concurrency != 32000


@pytest.mark.parametrize(("text", "context"), [
    ("我们用8卡A100 80G跑llama3.1 70b bf16，vllm，塞一个100k token的文档进去，首字大概要等多久", 100_000),
    ("and if the doc is only 32k tokens on the H200?", 32768),
    ("如果文档只有10k token呢，还是H100", 10_000),
])
def test_a_text_sent_whole_sets_the_context_not_a_training_set(text: str, context: int) -> None:
    said = parse(text)
    assert said.context_tokens == context and said.dataset_tokens is None and said.use_case != "training"


def test_cards_written_with_an_x_before_one_node_are_that_nodes_cards() -> None:
    said = parse("how long to pretrain a 1.3B model on 26B tokens on an 8x A100 80GB node?")
    assert said.nodes is None and said.gpus[0].count == 8


def test_pretraining_a_model_like_a_family_is_the_size_said() -> None:
    said = parse("planning a 64x H100 cluster. how long to pretrain a 7B llama-style model on 2T tokens?")
    assert said.model is None and said.params_b == 7.0


def test_a_deadline_past_256_cards_is_met_with_whole_nodes() -> None:
    """By hand: 6 · 7e9 · 2e12 FLOPs at 0.2422 of 989.4 TFLOPS is 97,280 GPU-hours; in 14 days that is 290 cards,
    so 37 nodes of eight (296)."""
    adv = Advisor()
    s = adv.new_session()
    adv.reply("planning a 64x H100 cluster. how long to pretrain a 7B llama-style model on 2T tokens?", s)
    r = adv.reply("if we had to finish in 14 days, how many H100s do we need?", s)
    assert r.text.splitlines()[0].startswith("**296× H100 SXM 80GB**")


def test_a_training_batch_said_is_the_micro_batch_sized_and_kept_in_follow_ups() -> None:
    """'seq len 2048 batch 4' was sized at micro-batch 1; the follow-up 'seq拉到8k呢，batch还是4' keeps batch 4."""
    adv = Advisor()
    s = adv.new_session()
    first = adv.reply("研一，组里就一张4090 24g，想qlora微调qwen2.5-7b，seq len 2048 batch 4，显存够不？", s)
    then = adv.reply("那seq拉到8k呢，batch还是4", s)
    for r, seq in ((first, 2048), (then, 8192)):
        size = next(c for c in r.tool_calls if c.name == "size_training" and not c.call_id.startswith("alt_"))
        assert (size.arguments["micro_batch"], size.arguments["seq"]) == (4, seq)
        assert "micro-batch 4" in r.text


def test_a_quantisation_written_against_chinese_is_read() -> None:
    """'qwen2.5-32b awq做客服' was sized in bf16: the format glued to Chinese text is still the format."""
    assert parse("准备用一张L40S跑qwen2.5-32b awq做客服").precision == "int4"


def test_a_speed_with_many_long_sequences_is_timed_where_their_cache_lives() -> None:
    """50 sequences of 8,192 tokens of Qwen2.5-32B (64 layers × 8 KV heads × 128 × 2 × 2 B = 256 KiB a token) need
    about 107 GB of cache besides ~20 GB of Q4_K_M weights: one 48 GB card holds neither, so llama.cpp runs layers
    from system RAM — the speed must say so, not the all-on-GPU figure."""
    from knowledge import load_catalog
    from tools.modelspec import ModelSpec
    from tools.perf import DecodeInput, estimate_decode

    d = estimate_decode(DecodeInput(model=ModelSpec.from_catalog("qwen2.5-32b"), gpu=load_catalog().gpu("l40s"),
                                    precision="Q4_K_M", context=8192, batch=50, engine="llamacpp"))
    assert d.placement == "cpu"
