"""Time to first token for users who send prompts over time: the M/D/1 wait on prefill, checked by hand."""

from __future__ import annotations

import pytest

from knowledge import load_catalog
from tools.latency import LoadInput, ttft_under_load
from tools.modelspec import load_model_spec
from tools.perf import DecodeInput, PrefillInput, estimate_decode, estimate_prefill


def _load(gpu: str, count: int, users: int, think: float = 30.0) -> LoadInput:
    return LoadInput(model=load_model_spec("llama-3.1-70b"), gpu=load_catalog().gpu(gpu), count=count, users=users,
                     prompt_tokens=2048, answer_tokens=300, think_s=think)


def test_the_wait_is_the_m_d_1_queue_on_one_prompts_prefill() -> None:
    """S = one prompt's prefill; a user asks every 300 ÷ (decode ÷ users) + 30 s; u = users ÷ interval × S;
    mean time to first token = S × (1 + u / (2(1 − u)))."""
    inp = _load("h100-sxm", 4, 200)
    r = ttft_under_load(inp)
    s = estimate_prefill(PrefillInput(model=inp.model, gpu=inp.gpu, count=4, precision="bf16",
                                      prompt_tokens=2048)).ttft_s
    each = estimate_decode(DecodeInput(model=inp.model, gpu=inp.gpu, count=4, precision="bf16", context=2348,
                                       batch=200)).tokens_per_s / 200
    u = 200 / (300 / each + 30) * s
    assert 0 < u < 1
    assert r.ttft_s == pytest.approx(s * (1 + u / (2 * (1 - u))), rel=1e-3)
    assert r.ttft_one_s < r.ttft_s < 1.0  # well under the burst of 200 prompts at one instant


def test_one_unhurried_user_waits_one_prefill_and_a_flood_saturates() -> None:
    alone = ttft_under_load(_load("h100-sxm", 4, 1, think=600))
    assert alone.ttft_s == pytest.approx(alone.ttft_one_s, rel=0.01)
    flood = ttft_under_load(_load("rtx-4090", 4, 5000, think=0))
    assert flood.prefill_utilisation >= 1 and flood.ttft_s is None
