"""Grounding by meaning, from a table of explanations a model might write after a computed answer.

Two turns, both computed by the tools: Llama-3.1-8B in FP16 on one RTX 4090 for 10 users at 8k does NOT fit
(needs 28.3 GB per GPU; the card is 24 GB, 25.2 GB seen by the engine, 23.2 GB in vLLM's reservation), and
Qwen2.5-7B at 8k for one user DOES fit (needs 17.5 GB). The evidence is what the engine uses: this turn's tool
results, the computed answer's text and the named card's own memory — never the user's words.

Every wrong explanation must be rejected (a number in the wrong role or unit, an invented figure, a wrong verdict,
figures written in words, Chinese numerals, backticks, glued to a name, year-like, the user's false claim), and
every right one kept.
"""

from __future__ import annotations

import pytest

from advisor.engine import Advisor
from advisor.grounding import Evidence, check

NO_FIT = "Can one RTX 4090 run Llama-3.1-8B in FP16 with 8k context for 10 users?"
FIT = "Can one RTX 4090 run Qwen2.5-7B in BF16 at 8k context for one user?"


def _evidence(question: str) -> tuple[Evidence, bool]:
    """The evidence the engine would hold for an explanation of this turn: its own computed answer and calls."""
    adv = Advisor(search_k=0)
    session = adv.new_session()
    reply = adv.reply(question, session)
    size = next(c for c in reply.tool_calls if c.name == "size_inference")
    body = reply.text.removesuffix(reply.question or "")
    return adv._evidence(session, reply.tool_calls, reply.citations, body), bool(size.result["fits"])


WRONG_NO_FIT = [
    # roles swapped or wrong (need vs capacity)
    "It does not fit: it needs 23.2 GB, but only 28.3 GB is usable.",
    "It does not fit: the card only has 28.3 GB, and the model requires 23.2 GB.",
    "It does not fit because the RTX 4090 only has 16 GB.",
    "It does not fit: the 4090 has just 12 GB of memory.",
    "It does not fit; the model needs 24 GB per GPU.",
    "It does not fit; it requires 25.2 GB while the card offers 24 GB.",
    "It does not fit: it needs 48 GB per GPU.",
    # invented or slipped figures
    "It does not fit: it needs 30.5 GB per GPU.",
    "It does not fit: short by 9.8 GB.",
    "It does not fit; the KV cache alone takes 12.4 GB.",
    "It does not fit; decoding would run at 250 tokens/s on two cards.",
    "It does not fit: 26.4 GB needed, reported as GB.",
    "It does not fit; a second card costing $1,800 would fix it.",
    "It does not fit; it draws 2000 W from the wall.",
    # the verdict
    "It fits on the RTX 4090 with room to spare.",
    "Yes, one RTX 4090 runs it comfortably.",
    "It does not fit on one card, but it fits easily once you lower the context.",
    "The memory is enough for ten users.",
    "No problem: the weights take 16.1 GB and everything fits.",
    # written in words, Chinese numerals, backticks, glued to a name, year-like
    "It does not fit: the card has sixteen gigabytes.",
    "It does not fit; you would need forty-eight gigabytes.",
    "It does not fit; the model needs `33 GB` per GPU.",
    "It does not fit on the RTX 4090-96GB.",
    "It does not fit on an H100-500GB either.",
    "It does not fit; plan for 2048 W of power.",
    # the user's false claim
    "It does not fit even with the 96 GB your card has.",
    "It does not fit, although your 4090 has 48 GB.",
]
WRONG_NO_FIT_ZH = [
    "放不下：需要 23.2 GB，但可用只有 28.3 GB。",
    "放不下：4090 只有 16 GB 显存。",
    "放不下，这张卡只有 12 GB。",
    "放不下，每卡需要 24 GB。",
    "放不下：需要 25.2 GB，而卡有 24 GB。",
    "放不下，每卡需要 48 GB。",
    "放不下：每卡需要 30.5 GB。",
    "放不下，缺口 9.8 GB。",
    "放不下，KV 缓存就占 12.4 GB。",
    "放不下，两张卡每秒能生成 250 tokens/s。",
    "放不下，再买一张要 ¥12,000。",
    "放不下，整机功耗 2000 W。",
    "放得下，一张 4090 完全没问题。",
    "可以跑，显存足够。",
    "一张卡不够，但降低上下文就能跑。",
    "没问题，权重只占 16.1 GB，能装下。",
    "放不下：这张卡只有十六 GB。",
    "放不下，需要四十八 GB。",
    "放不下，每卡需要 `33 GB`。",
    "RTX 4090-96GB 放不下。",
    "H100-500GB 也放不下。",
    "放不下，你的卡有 96 GB 也不行。",
    "放不下，即使你的 4090 有 48 GB。",
    "放不下，需要两千瓦供电。",
]
RIGHT_NO_FIT = [
    "It does not fit: the model needs 28.3 GB per GPU, while vLLM can use only 23.2 GB of the card.",
    "It does not fit because 28.3 GB is needed per GPU and only 23.2 GB is usable.",
    "It does not fit. The weights take 16.1 GB and the KV cache for ten users takes 10.7 GB.",
    "It does not fit: the RTX 4090 has 24 GB, of which the engine sees 25.2 GB as bytes and reserves 23.2 GB.",
    "It does not fit — the cache for 10 users at 8,192 tokens is what tips it over.",
    "It won't fit on one card: 28.3 GB needed against 23.2 GB available.",
    "It does not fit; the 16.1 GB of weights leave too little room for the cache.",
    "The card has 24 GB, but the model needs 28.3 GB per GPU, so it does not fit.",
    "It does not fit: short of memory by about 5.1 GB against vLLM's reservation.",
    "It does not fit. Fewer users or a shorter context would shrink the cache.",
    "It does not fit; the weights alone are 16.1 GB.",
    "It cannot fit: needs 28.3 GB, usable 23.2 GB.",
]
RIGHT_NO_FIT_ZH = [
    "放不下：每卡需要 28.3 GB，而 vLLM 只能用其中的 23.2 GB。",
    "放不下，因为需要 28.3 GB，可用只有 23.2 GB。",
    "放不下。权重占 16.1 GB，10 个并发的 KV 缓存占 10.7 GB。",
    "放不下：RTX 4090 有 24 GB 显存，需要 28.3 GB。",
    "放不下，主要是 10 个并发、每个 8,192 tokens 的 KV 缓存太大。",
    "一张卡放不下：需要 28.3 GB，可用 23.2 GB。",
    "放不下，16.1 GB 的权重之外留给缓存的空间不够。",
    "放不下；减少并发或缩短上下文能让 KV 缓存变小。",
    "放不下，权重本身就有 16.1 GB。",
    "放不下：需要约 28.3 GB 显存。",
]
WRONG_FIT = [
    "It does not fit on the RTX 4090.",
    "It will not fit: it needs 28.3 GB.",
    "It fits: it needs 23.2 GB of the 17.5 GB usable.",
    "It fits, but the card only has 16 GB.",
    "It fits with 17.5 GB needed on a 48 GB card.",
    "It fits; it needs 19.4 GB per GPU.",
    "It fits and generates 500 tokens/s.",
    "It fits in sixteen gigabytes.",
    "It fits; the model needs `12 GB`.",
    "It fits on the RTX 4090-48GB.",
    "It fits, and your 96 GB card has room to spare.",
    "It fits; budget 2000 W for the box.",
]
WRONG_FIT_MORE = [
    "It fits: only 12 GB of the card is usable.",
    "It fits; the RTX 4090 has 32 GB.",
    "It fits with a need of 25 GB per GPU.",
    "It fits: it requires just 9 GB.",
    "It fits and runs at 900 tokens/s.",
    "It fits; the engine sees 40 GB.",
    "It fits on the 20 GB that vLLM reserves.",
    "It fits, with forty gigabytes free.",
    "它放得下：显存只有 12 GB 也够用。",
    "放得下，这张卡有 32 GB。",
]
WRONG_FIT_ZH = [
    "放不下，这张卡不够。",
    "放不下：需要 28.3 GB。",
    "放得下：需要 23.2 GB，可用 17.5 GB。",
    "放得下，但这张卡只有 16 GB。",
    "放得下，每卡需要 19.4 GB。",
    "放得下，速度 500 tokens/s。",
    "放得下，只需要十二 GB。",
    "放得下，每卡需要 `12 GB`。",
    "RTX 4090-48GB 放得下。",
    "放得下，整机功耗两千瓦。",
]
RIGHT_FIT = [
    "It fits: 17.5 GB needed per GPU, 23.2 GB usable in vLLM's reservation.",
    "It fits on one RTX 4090, which has 24 GB.",
    "Yes, it fits with about 5.7 GB to spare.",
    "It fits comfortably for one user at 8,192 tokens.",
    "It fits: the model needs 17.5 GB per GPU.",
    "One card is enough; 17.5 GB of the 23.2 GB usable is taken.",
    "It fits. More users would grow the KV cache.",
    "It fits within the 23.2 GB that vLLM reserves.",
    "The RTX 4090's 24 GB is enough here.",
    "It fits; the engine sees 25.2 GB on the card.",
]
RIGHT_FIT_ZH = [
    "放得下：每卡需要 17.5 GB，vLLM 可用 23.2 GB。",
    "一张 RTX 4090（24 GB）就放得下。",
    "放得下，余量约 5.7 GB。",
    "放得下，1 个并发、8,192 tokens 上下文没问题。",
    "放得下：每卡需要 17.5 GB。",
    "一张卡就够了，可用 23.2 GB 中用掉 17.5 GB。",
    "放得下；并发多了 KV 缓存会变大。",
    "放得下，在 vLLM 预留的 23.2 GB 以内。",
]


@pytest.fixture(scope="module")
def no_fit() -> tuple[Evidence, bool]:
    ev, fits = _evidence(NO_FIT)
    assert fits is False
    return ev, fits


@pytest.fixture(scope="module")
def fit() -> tuple[Evidence, bool]:
    ev, fits = _evidence(FIT)
    assert fits is True
    return ev, fits


def test_the_table_is_as_large_as_promised() -> None:
    wrong = WRONG_NO_FIT + WRONG_NO_FIT_ZH + WRONG_FIT + WRONG_FIT_MORE + WRONG_FIT_ZH
    right = RIGHT_NO_FIT + RIGHT_NO_FIT_ZH + RIGHT_FIT + RIGHT_FIT_ZH
    assert len(wrong) >= 80 and len(right) >= 40


@pytest.mark.parametrize("text", WRONG_NO_FIT + WRONG_NO_FIT_ZH)
def test_wrong_explanations_of_a_no_fit_are_rejected(no_fit: tuple[Evidence, bool], text: str) -> None:
    assert not check(text, *no_fit).ok, text


@pytest.mark.parametrize("text", RIGHT_NO_FIT + RIGHT_NO_FIT_ZH)
def test_right_explanations_of_a_no_fit_are_kept(no_fit: tuple[Evidence, bool], text: str) -> None:
    report = check(text, *no_fit)
    assert report.ok, (text, report.bad_numbers, report.verdict_conflict)


@pytest.mark.parametrize("text", WRONG_FIT + WRONG_FIT_MORE + WRONG_FIT_ZH)
def test_wrong_explanations_of_a_fit_are_rejected(fit: tuple[Evidence, bool], text: str) -> None:
    assert not check(text, *fit).ok, text


@pytest.mark.parametrize("text", RIGHT_FIT + RIGHT_FIT_ZH)
def test_right_explanations_of_a_fit_are_kept(fit: tuple[Evidence, bool], text: str) -> None:
    report = check(text, *fit)
    assert report.ok, (text, report.bad_numbers, report.verdict_conflict)


# Two cards: Qwen2.5-32B in FP8 at 8k for one user fits on two RTX 4090s — 21.0 GB per GPU (weights 17.2 GB
# each), 41.9 GB across both, weights 34.3 GB in all. A per-GPU figure said of both cards, or the reverse, is wrong.
TWO_CARDS = "Can two RTX 4090s run Qwen2.5-32B in FP8 with 8k context for one user?"
WRONG_SCOPE = [
    "It fits: it needs 41.9 GB per GPU.",
    "It fits; each card needs 34.3 GB.",
    "It fits, with 41.9 GB on each card.",
    "It fits: 21.0 GB across both cards.",
    "It fits; the two cards need 21.0 GB combined.",
    "放得下：每卡需要 41.9 GB。",
    "放得下，单卡要 34.3 GB。",
    "放得下，两张卡合计需要 21.0 GB。",
]
RIGHT_SCOPE = [
    "It fits: 21.0 GB per GPU, 41.9 GB across both cards.",
    "It fits; the weights total 34.3 GB, about 17.2 GB per card.",
    "It fits with 21.0 GB needed on each card.",
    "放得下：每卡需要 21.0 GB，两张卡合计 41.9 GB。",
    "放得下，权重共 34.3 GB，每卡 17.2 GB。",
]


@pytest.fixture(scope="module")
def two_cards() -> tuple[Evidence, bool]:
    ev, fits = _evidence(TWO_CARDS)
    assert fits is True
    return ev, fits


@pytest.mark.parametrize("text", WRONG_SCOPE)
def test_a_figure_for_the_wrong_number_of_gpus_is_rejected(two_cards: tuple[Evidence, bool], text: str) -> None:
    assert not check(text, *two_cards).ok, text


@pytest.mark.parametrize("text", RIGHT_SCOPE)
def test_per_gpu_and_all_gpu_figures_in_their_place_are_kept(two_cards: tuple[Evidence, bool], text: str) -> None:
    report = check(text, *two_cards)
    assert report.ok, (text, report.bad_numbers, report.verdict_conflict)


# Parts of the need: in the no-fit case above the weights take 16.1 GB and ten users' KV cache 10.7 GB.
WRONG_PART = [
    "It does not fit: the weights need 10.7 GB and the KV cache 16.1 GB.",
    "It does not fit; the KV cache alone takes 16.1 GB.",
    "It does not fit: 10.7 GB of weights plus the cache is too much.",
    "放不下：权重 10.7 GB，KV 缓存 16.1 GB。",
    "放不下，KV 缓存就占了 16.1 GB。",
]
RIGHT_PART = [
    "It does not fit: the weights need 16.1 GB and the KV cache 10.7 GB.",
    "It does not fit; 10.7 GB of KV cache on top of 16.1 GB of weights is too much.",
    "放不下：权重 16.1 GB，KV 缓存 10.7 GB。",
]


@pytest.mark.parametrize("text", WRONG_PART)
def test_one_part_of_the_need_said_as_another_is_rejected(no_fit: tuple[Evidence, bool], text: str) -> None:
    assert not check(text, *no_fit).ok, text


@pytest.mark.parametrize("text", RIGHT_PART)
def test_the_parts_of_the_need_in_their_place_are_kept(no_fit: tuple[Evidence, bool], text: str) -> None:
    report = check(text, *no_fit)
    assert report.ok, (text, report.bad_numbers, report.verdict_conflict)


def _turn_evidence(question: str) -> Evidence:
    adv = Advisor(search_k=0)
    session = adv.new_session()
    reply = adv.reply(question, session)
    body = reply.text.removesuffix(reply.question or "")
    return adv._evidence(session, reply.tool_calls, reply.citations, body)


# Speed: Qwen2.5-7B on one RTX 4090 for 8 users generates about 402 tokens/s in all, 50.2 tokens/s per request.
SPEED = "How fast is Qwen2.5-7B on one RTX 4090 for 8 users at 4k context?"
WRONG_RATE = [
    "Each user gets about 402 tokens/s.",
    "In total the card generates 50.2 tokens/s for all users.",
    "每个用户大约 402 tokens/s。",
    "总吞吐约 50 tokens/s。",
]
RIGHT_RATE = [
    "About 402 tokens/s in total; each user sees about 50 tokens/s.",
    "Per user it is about 50 tokens/s.",
    "总吞吐约 402 tokens/s，每个用户约 50 tokens/s。",
]

# Prices: $6,000 for Qwen2.5-14B for 4 users — first option 2× RTX 3090: the cards $1,500, the host $2,500,
# $4,000 in all.
PRICES = "I have $6,000 for a machine to serve Qwen2.5-14B to 4 users. Which GPU should I buy?"
WRONG_PRICE = [
    "The cards alone cost $4,000.",
    "With the host it comes to $1,500.",
    "The host adds $4,000.",
    "整机约 $1,500。",
    "仅显卡就要 $4,000。",
    "Each card costs $1,500.",
    "再加一张 3090 要 $1,500。",
]
RIGHT_PRICE = [
    "The cards alone cost $1,500; with the host the total is $4,000.",
    "Two RTX 3090s come to $4,000 including the host, of which the host is $2,500.",
    "整机合计 $4,000，其中主机 $2,500，两张 3090 共 $1,500。",
    "Each RTX 3090 card costs about $750, so two come to $1,500 before the host.",
]


@pytest.fixture(scope="module")
def speed() -> Evidence:
    return _turn_evidence(SPEED)


@pytest.fixture(scope="module")
def prices() -> Evidence:
    return _turn_evidence(PRICES)


@pytest.mark.parametrize("text", WRONG_RATE)
def test_a_per_request_speed_said_as_the_total_or_back_is_rejected(speed: Evidence, text: str) -> None:
    assert not check(text, speed).ok, text


@pytest.mark.parametrize("text", RIGHT_RATE)
def test_speeds_in_their_place_are_kept(speed: Evidence, text: str) -> None:
    report = check(text, speed)
    assert report.ok, (text, report.bad_numbers)


@pytest.mark.parametrize("text", WRONG_PRICE)
def test_a_price_with_or_without_the_host_in_the_wrong_place_is_rejected(prices: Evidence, text: str) -> None:
    assert not check(text, prices).ok, text


@pytest.mark.parametrize("text", RIGHT_PRICE)
def test_prices_in_their_place_are_kept(prices: Evidence, text: str) -> None:
    report = check(text, prices)
    assert report.ok, (text, report.bad_numbers)


# Brackets, roles and card counts, as a class. Llama-3.1-70B in FP16 on two RTX 4090s does NOT fit: each card
# needs 74.9 GB (its weights alone 70.6 GB) and vLLM may use 23.2 GB of it; three cards (layers split) do not fit
# either. A figure in brackets is read like any other; a need said as a capacity or back fails; a count of cards
# must be one the tools sized (or priced), and 'would be enough' must not be below the least count that fits.
TWO_CARDS_70B = "Can two RTX 4090s run Llama-3.1-70B in FP16 with 8k context?"
WRONG_CLASS = [
    "It does not fit: it needs [77 GB] per GPU.",
    "It does not fit: it needs (77 GB) per GPU.",
    "It does not fit: it needs [23.2 GB] per GPU but has [74.9 GB].",
    "放不下：每卡需要【23.2 GB】，可用【74.9 GB】。",
    "It does not fit: the card provides 74.9 GB while the model requires 23.2 GB.",
    "It does not fit: the RTX 4090 comes with 74.9 GB, the model takes 23.2 GB.",
    "It does not fit: 74.9 GB of memory per card is available, yet 23.2 GB is required.",
    "It does not fit: with 74.9 GB of VRAM per card, it needs 23.2 GB.",
    "It does not fit: its memory is 74.9 GB and its need is 23.2 GB.",
    "放不下：显存为 74.9 GB，需要 23.2 GB。",
    "放不下：单卡显存 74.9 GB，模型要 23.2 GB。",
    "放不下：模型占用 23.2 GB 显存，卡提供 74.9 GB。",
    "It does not fit: two RTX 4090s would be enough.",
    "It does not fit on two cards; four would be enough.",
    "It does not fit: 2× RTX 4090 would be enough with a shorter context.",
    "It does not fit now, but three RTX 4090s would be enough.",
    "It does not fit; eight H100s would be enough.",
    "放不下，不过两张 4090 其实足够。",
    "放不下，换成四张 4090 就够了。",
]
RIGHT_CLASS = [
    "It does not fit: it needs [74.9 GB] per GPU but has [23.2 GB].",
    "It does not fit: it needs 74.9 GB per GPU (the card offers 23.2 GB).",
    "放不下：每卡需要【74.9 GB】，可用【23.2 GB】。",
    "It does not fit: the card provides 23.2 GB while the model requires 74.9 GB.",
    "It does not fit: 23.2 GB of memory per card is available, yet 74.9 GB is required.",
    "It does not fit: the model requires 74.9 GB (69.8 GiB) per GPU, and the card provides only 23.2 GB.",
    "放不下：单卡显存 23.2 GB，模型要 74.9 GB。",
    "放不下：模型需要 74.9 GB，RTX 4090 显存为 24 GB，vLLM 可用 23.2 GB。",
    "It does not fit on two RTX 4090s: the weights alone need 70.6 GB per card.",
    "两张 4090 放不下：每卡需要 74.9 GB。",
    "Two RTX 4090s are not enough: each needs 74.9 GB.",
    "双卡也放不下，每卡需要 74.9 GB。",
    "It does not fit on two RTX 4090s; two RTX PRO 6000 Blackwell Max-Q cards would be enough.",
    "It does not fit on 2× RTX 4090; see the RTX PRO 6000 Blackwell Workstation Edition in the ranking.",
]
# … and Qwen2.5-32B in FP8 on two RTX 4090s (TWO_CARDS above) fits, on two cards: one is not enough
WRONG_COUNT_FIT = [
    "It fits, and one RTX 4090 would be enough.",
    "一张 4090 就够了。",
    "单卡就够。",
    "It fits on four RTX 4090s.",
    "It fits: 8× RTX 4090 would be enough.",
]
RIGHT_COUNT_FIT = [
    "Two RTX 4090s are enough: 21.0 GB per GPU.",
    "两张 4090 就够了，每卡 21.0 GB。",
    "It fits on 2× RTX 4090.",
    "双卡就够。",
    "It fits on two RTX 4090s; one card would not be enough.",
]


@pytest.fixture(scope="module")
def two_cards_70b() -> tuple[Evidence, bool]:
    ev, fits = _evidence(TWO_CARDS_70B)
    assert fits is False
    return ev, fits


@pytest.mark.parametrize("text", WRONG_CLASS)
def test_bracketed_figures_swapped_roles_and_wrong_card_counts_are_rejected(
        two_cards_70b: tuple[Evidence, bool], text: str) -> None:
    assert not check(text, *two_cards_70b).ok, text


@pytest.mark.parametrize("text", RIGHT_CLASS)
def test_bracketed_figures_roles_and_card_counts_in_their_place_are_kept(
        two_cards_70b: tuple[Evidence, bool], text: str) -> None:
    report = check(text, *two_cards_70b)
    assert report.ok, (text, report.bad_numbers, report.verdict_conflict)


@pytest.mark.parametrize("text", WRONG_COUNT_FIT)
def test_a_card_count_below_what_fits_or_never_sized_is_rejected(two_cards: tuple[Evidence, bool], text: str) -> None:
    assert not check(text, *two_cards).ok, text


@pytest.mark.parametrize("text", RIGHT_COUNT_FIT)
def test_the_card_count_that_fits_is_kept(two_cards: tuple[Evidence, bool], text: str) -> None:
    report = check(text, *two_cards)
    assert report.ok, (text, report.bad_numbers, report.verdict_conflict)
