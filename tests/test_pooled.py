"""Unlike cards used together (llama.cpp layer split): fit on their memory combined, speed at the pace of the bytes
each streams; checked against published llama.cpp figures and hand arithmetic."""

from __future__ import annotations

import pytest

from advisor.engine import Advisor
from tools.pooled import PooledInput, pooled_fit


def test_two_3090s_run_70b_q4_at_the_published_speed() -> None:
    # XiongjieDai GPU-Benchmarks-on-LLM-Inference: 2× RTX 3090, Llama-3-70B Q4_K_M, text generation 16.29 tokens/s
    r = pooled_fit(PooledInput(model="llama-3.1-70b", precision="Q4_K_M", cards=[{"gpu": "RTX 3090", "count": 2}]))
    assert r.fits
    assert r.tokens_per_s == pytest.approx(16.29, rel=0.15)


def test_memory_is_split_by_each_cards_share_and_the_sum_decides() -> None:
    r = pooled_fit(PooledInput(model="qwen2.5-14b", precision="Q5_K_M",
                               cards=[{"gpu": "RTX 2080 Ti", "count": 1}, {"gpu": "GTX 1080 Ti", "count": 1}]))
    assert sum(c.share for c in r.cards) == pytest.approx(1.0)
    assert r.usable_bytes == sum(c.usable_bytes for c in r.cards)
    assert r.fits == (r.need_bytes <= r.usable_bytes)
    # a 14B Q5_K_M GGUF is about 10.5 GB: more than either 11 GB card keeps after its buffers, less than both
    assert r.fits and r.need_bytes > max(c.usable_bytes for c in r.cards) * 0.9
    # the slower card (GTX 1080 Ti, 484 GB/s against 616) takes longer for the same share
    assert r.slowest == "GeForce GTX 1080 Ti 11GB"


def test_a_70b_q4_does_not_fit_a_16_plus_24_gb_pair() -> None:
    # 70B at Q4_K_M is a ~42.5 GB file: 16 GB + 24 GB cards (≈ 40 GB seen by the engine) are short
    r = pooled_fit(PooledInput(model="llama-3.1-70b", precision="Q4_K_M",
                               cards=[{"gpu": "RTX 4080", "count": 1}, {"gpu": "RTX 3090", "count": 1}]))
    assert not r.fits and r.headroom_bytes < 0


def test_owned_cards_named_together_are_answered_together() -> None:
    adv = Advisor()
    s = adv.new_session()
    r = adv.reply("家里有张2080ti 11G和一张1080ti 11G，两张一起能跑qwen2.5 14b吗？想用Q5的", s)
    assert r.text.startswith("**GeForce RTX 2080 Ti 11GB + GeForce GTX 1080 Ti 11GB 合起来能跑")
    assert "一张 GeForce RTX 2080 Ti 11GB 放不下" not in r.text  # no second verdict on one card of the pair
